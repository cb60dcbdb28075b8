"""The issue's outside check: a minute into the default-paced replay.

``yarn-advisor run --replay examples/recordings/short-stream --config
examples/anacrac-rules.yaml`` at its default pace (a cycle, then 5 s), a real
Prometheus scraping it every second; about a minute after the advisor started,
every panel query of every dashboard (Grafana variables filled in) returns data
as an instant query, except the ``PENDING`` ones. The other module replays fast
and checks early and late moments from Prometheus's history; this one checks the
minute a user (or a reviewer) sees first.

The minute is Prometheus's own time series, not a minute of waiting: the advisor
replays the cycles as ``run`` does (its server answering ``/metrics`` over HTTP
between cycles), each cycle placed at the moment the default pace puts it; each
scrape Prometheus would make in that minute (every second, the answer of the
latest cycle before it) is written as OpenMetrics, backfilled into a TSDB with
``promtool tsdb create-blocks-from openmetrics``, and a real Prometheus started
on that TSDB answers the queries at the minute.
"""

from __future__ import annotations

import math
import subprocess
import time
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import JOB, RECORDING, RULES_CONFIG, SCRAPE_S, tool
from prometheus_client.parser import text_string_to_metric_families
from promserver import PrometheusServer
from test_dashboards_prometheus import evaluate

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.ha.coordinator import per_advisor_config
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
from yarn_advisor.advisor.observe.server import AdvisorServer
from yarn_advisor.connectors.replay import open_recording

pytestmark = pytest.mark.deploy

MINUTE_S = 60.0
PACE_S = 5.0  # `run --replay` sleeps min(sense.interval_s, 5 s) after each cycle (cmd_run)
STARTUP_S = 3.0  # from starting `yarn-advisor run` to its server and first cycle (about 2 s)
INSTANCE = "127.0.0.1:9135"
OM_TYPES = {"counter": "counter", "gauge": "gauge", "histogram": "histogram",
            "summary": "summary", "info": "info", "stateset": "stateset",
            "untyped": "unknown", "unknown": "unknown"}


def _get_metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return str(resp.read().decode())


def paced_answers() -> tuple[list[tuple[float, str]], int]:
    """What ``/metrics`` answers after each cycle of the default-paced replay, with the
    moment (seconds after the start) it starts answering so; and the cycles replayed."""
    cfg = per_advisor_config(load_config(RULES_CONFIG, {"server": {"port": 0}}))
    recording = open_recording(RECORDING)
    advisor = replay_advisor(recording, cfg)
    server = AdvisorServer(advisor, "127.0.0.1", 0, cfg.sense.interval_s, cfg).start()
    try:
        answers = [(STARTUP_S, _get_metrics(server.port))]  # serving before the first cycle
        at, cycles = STARTUP_S, 0
        for report in replay_cycles(advisor, recording):
            assert report.outcome == "ok", report.reason
            at += sum(report.step_seconds.values())  # the cycle's own time, as measured
            answers.append((at, _get_metrics(server.port)))
            cycles += 1
            at += PACE_S
            if at > MINUTE_S + PACE_S:
                break
        return answers, cycles
    finally:
        server.close()


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def _labels(labels: dict[str, str]) -> str:
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return "{" + ",".join(f'{k}="{esc(v)}"' for k, v in sorted(labels.items())) + "}"


def openmetrics(answers: list[tuple[float, str]], t0: float, until_s: float) -> str:
    """The scrapes of one job, every SCRAPE_S from ``t0`` to ``t0 + until_s``, as
    OpenMetrics with timestamps (``up`` and the job's target labels, as a scrape adds)."""
    target = {"job": JOB, "instance": INSTANCE}
    types: dict[str, str] = {"up": "gauge"}
    helps: dict[str, str] = {"up": "the scrape succeeded"}
    series: dict[str, dict[tuple[str, str], list[tuple[float, float]]]] = defaultdict(
        lambda: defaultdict(list))
    parsed = [(at, list(text_string_to_metric_families(text))) for at, text in answers]
    for i in range(int(until_s / SCRAPE_S) + 1):
        s = i * SCRAPE_S
        ts = t0 + s
        seen = [families for at, families in parsed if at <= s]
        series["up"][("up", _labels(target))].append((ts, 1.0 if seen else 0.0))
        if not seen:
            continue
        for family in seen[-1]:
            if family.name.endswith("_created"):
                continue  # 0.0.4 renders created times as gauges of their own; unused
            types[family.name] = OM_TYPES[family.type]
            helps[family.name] = family.documentation
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                key = (sample.name, _labels({**sample.labels, **target}))
                series[family.name][key].append((ts, sample.value))
    lines = []
    for name in sorted(series):
        lines.append(f"# TYPE {name} {types[name]}")
        if helps.get(name):
            lines.append(f"# HELP {name} {helps[name].replace(chr(10), ' ')}")
        for (sample, labels), points in sorted(series[name].items()):
            lines.extend(f"{sample}{labels} {_value(v)} {ts:.3f}" for ts, v in points)
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def minute(workdir: Path) -> Iterator[tuple[float, int, PrometheusServer]]:
    """(the run's start, the cycles of its first minute, Prometheus on that minute)."""
    promtool = tool("promtool")
    tool("prometheus")
    run_dir = workdir / "one-minute"
    run_dir.mkdir()
    answers, cycles = paced_answers()
    t0 = float(int(time.time()) - 3600)  # an hour ago: a closed block, within retention
    source = run_dir / "scrapes.om"
    source.write_text(openmetrics(answers, t0, MINUTE_S))
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source),
                           str(run_dir / "prometheus" / "data")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with PrometheusServer(run_dir / "prometheus", {}, scrape_interval_s=SCRAPE_S) as server:
        yield t0, cycles, server


def test_every_panel_query_returns_data_a_minute_in(
        minute: tuple[float, int, PrometheusServer]) -> None:
    t0, cycles_replayed, prom = minute
    at = t0 + MINUTE_S
    up = prom.query(f'up{{job="{JOB}"}}', at=at)
    assert up and up[0]["value"][1] == "1", up
    scraped = prom.query(f'sum(yarn_advisor_cycles_total{{job="{JOB}"}})', at=at)
    cycles = int(float(scraped[0]["value"][1])) if scraped else 0
    # a cycle every 5 s from about 3 s on: 12 in the minute (the 13th comes after it)
    assert 10 <= cycles <= 12 and cycles <= cycles_replayed, (cycles, cycles_replayed)
    results = evaluate(prom, t0, ranged=False, at=at)
    empty, errors, with_data, pending, total = [], [], 0, 0, 0
    for queries, ev in results.values():
        for pq in queries:
            total += 1
            if pq.expr in ev.errors:
                errors.append(f"{pq}: {ev.errors[pq.expr]}")
            elif ev.instant[pq.expr]:
                with_data += 1
            elif pq.pending:
                pending += 1
            else:
                empty.append(str(pq))
    print(f"\na minute in: {cycles} cycles scraped; "
          f"{with_data}/{total} queries return data, {pending} pending return nothing")
    assert not errors, "\n".join(errors)
    assert not empty, "no data a minute in:\n" + "\n".join(empty)
