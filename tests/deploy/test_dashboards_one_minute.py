"""The issue's outside check, exactly: a minute into the default-paced replay.

``yarn-advisor run --replay examples/recordings/short-stream --config
examples/anacrac-rules.yaml`` (plus ``--port 0``: a free port) at its default
pace, a real Prometheus scraping it; about a minute after the advisor started,
every panel query of every dashboard (Grafana variables filled in) returns data
as an instant query, except the ``PENDING`` ones. The other module replays fast
and checks early and late moments from Prometheus's history; this one checks the
wall-clock minute a user (or a reviewer) sees first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    JOB,
    RECORDING,
    RULES_CONFIG,
    SCRAPE_S,
    RunningAdvisor,
    start_advisor,
    stop_advisor,
    tool,
)
from promserver import PrometheusServer
from test_dashboards_prometheus import evaluate

pytestmark = pytest.mark.deploy

MINUTE_S = 60.0


@pytest.fixture(scope="module")
def minute_run(workdir: Path) -> Iterator[tuple[RunningAdvisor, PrometheusServer]]:
    tool("prometheus")
    run_dir = workdir / "one-minute"
    run_dir.mkdir()
    advisor = start_advisor(run_dir, ["--replay", str(RECORDING), "--config", str(RULES_CONFIG)])
    try:
        with PrometheusServer(run_dir / "prometheus", {JOB: [advisor.address]},
                              scrape_interval_s=SCRAPE_S) as server:
            yield advisor, server
    finally:
        stop_advisor(advisor.proc)


def test_every_panel_query_returns_data_a_minute_in(
        minute_run: tuple[RunningAdvisor, PrometheusServer]) -> None:
    advisor, prom = minute_run
    time.sleep(max(0.0, advisor.started_at + MINUTE_S - time.time()))
    assert advisor.proc.poll() is None, advisor.log_text()[-3000:]
    cycles = prom.query(f'sum(yarn_advisor_cycles_total{{job="{JOB}"}})')
    results = evaluate(prom, advisor, ranged=False)
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
    print(f"\na minute in: {cycles[0]['value'][1] if cycles else 0} cycles scraped; "
          f"{with_data}/{total} queries return data, {pending} pending return nothing")
    assert not errors, "\n".join(errors)
    assert not empty, "no data a minute in:\n" + "\n".join(empty)
