"""Every query of every dashboard panel returns data from a real Prometheus.

The advisor replays the short-stream recording (real traffic of the test
cluster) with the example ANACRAC rules; Debian's Prometheus scrapes it every
second. The test reads helm/yarn-advisor/dashboards/*.json (whatever metric
names they use), fills Grafana's variables the way Grafana would (each query
variable from its ``label_values`` on this Prometheus, ``All`` as its
allValue, ``$__rate_interval`` as four scrape intervals) and evaluates each
panel query through the HTTP API: early in the run (after about as many cycles
as a minute of the default replay pace makes) and after the last cycle, as an
instant and as a range query over the whole run.

Queries on metrics the advisor does not export yet are listed in ``PENDING``
with what is missing; they must return nothing, so the list shrinks as soon
as a metric lands (the test then says which entry to remove).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import CHART, JOB, SCRAPE_S, RunningAdvisor
from promserver import PrometheusServer, PromQLError

pytestmark = pytest.mark.deploy

DASHBOARDS = sorted((CHART / "dashboards").glob("*.json"))
TOTAL_CYCLES = 45  # examples/recordings/short-stream/recording.json
EARLY_CYCLES = 11  # what a minute of the default replay pace (about 5 s a cycle) makes
RUN_TIMEOUT_S = 120.0

# A query containing one of these is expected to return nothing (yet): the
# metric or label is not exported, or its series appear only after an event
# the replay does not have. Each entry says what the advisor needs.
PENDING: dict[str, str] = {}
# A query containing one of these may return nothing early in the run (its
# series appear with the first event) but must return data at the end: the
# advisor should export these series at 0 from its first cycle on.
EARLY_GAPS: dict[str, str] = {}


@dataclass
class PanelQuery:
    board: str
    panel: str
    expr: str

    @property
    def pending(self) -> list[str]:
        return [why for key, why in PENDING.items() if key in self.expr]

    @property
    def early_gap(self) -> bool:
        return any(key in self.expr for key in EARLY_GAPS)

    def __str__(self) -> str:
        return f"{self.board} / {self.panel}: {self.expr}"


@dataclass
class Evaluation:
    """What each query of one dashboard returned at one moment."""

    instant: dict[str, int] = field(default_factory=dict)
    ranged: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def board_json(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def panel_queries(board: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            out.append((str(panel["title"]), str(target["expr"])))
    return out


def variable_values(board: dict[str, Any], prom: PrometheusServer,
                    builtins: dict[str, str]) -> dict[str, str]:
    """Each query variable as Grafana would fill it (``All`` when it has it)."""
    values = dict(builtins)
    for var in board["templating"]["list"]:
        if var["type"] != "query":
            continue
        query = fill(str(var["query"]), values)
        found = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query)
        assert found, f"{board['title']}: variable {var['name']}: not label_values(): {query}"
        options = prom.label_values(found.group(2), found.group(1))
        assert options, f"{board['title']}: variable ${var['name']} lists nothing ({query})"
        values[var["name"]] = (var.get("allValue") or ".*") if var.get("includeAll") \
            else options[0]
    return values


def fill(expr: str, values: dict[str, str]) -> str:
    for name in sorted(values, key=len, reverse=True):
        expr = expr.replace(f"${{{name}}}", values[name]).replace(f"${name}", values[name])
    return expr


def evaluate(prom: PrometheusServer, started_at: float, ranged: bool,
             at: float | None = None) -> dict[str, tuple[list[PanelQuery], Evaluation]]:
    """Every panel query at time ``at`` (default now); with ``ranged`` also as a range
    query from the advisor's start (``started_at``) to ``at``."""
    now = time.time() if at is None else at
    builtins = {"__rate_interval": f"{int(4 * SCRAPE_S)}s", "__interval": f"{int(SCRAPE_S)}s",
                "__range": f"{int(now - started_at) + 1}s"}
    out: dict[str, tuple[list[PanelQuery], Evaluation]] = {}
    for path in DASHBOARDS:
        board = board_json(path)
        values = variable_values(board, prom, builtins)
        queries, ev = [], Evaluation()
        for panel, raw in panel_queries(board):
            pq = PanelQuery(board["title"], panel, fill(raw, values))
            left = re.findall(r"\$\{?\w+", pq.expr)
            assert not left, f"{pq}: variables left unfilled: {left}"
            queries.append(pq)
            try:
                ev.instant[pq.expr] = len(prom.query(pq.expr, at=now))
                if ranged:
                    ev.ranged[pq.expr] = len(prom.query_range(
                        pq.expr, started_at, now, step_s=SCRAPE_S))
            except PromQLError as exc:
                ev.errors[pq.expr] = str(exc)
        out[path.name] = (queries, ev)
    return out


def cycles(prom: PrometheusServer) -> int:
    result = prom.query(f'sum(yarn_advisor_cycles_total{{job="{JOB}"}})')
    return int(float(result[0]["value"][1])) if result else 0


def first_time_at(prom: PrometheusServer, advisor: RunningAdvisor, n: int) -> float:
    """When Prometheus had first scraped ``n`` cycles (from its own history)."""
    series = prom.query_range(f'sum(yarn_advisor_cycles_total{{job="{JOB}"}})',
                              advisor.started_at, time.time(), step_s=SCRAPE_S)
    assert series, "no cycles scraped"
    return next(float(t) for t, v in series[0]["values"] if float(v) >= n)


def wait_cycles(prom: PrometheusServer, advisor: RunningAdvisor, n: int) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while cycles(prom) < n:
        assert advisor.proc.poll() is None, advisor.log_text()[-3000:]
        assert time.monotonic() < deadline, f"fewer than {n} cycles scraped in {RUN_TIMEOUT_S}s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def results(replay_prometheus: PrometheusServer, replay_advisor: RunningAdvisor
            ) -> dict[str, dict[str, tuple[list[PanelQuery], Evaluation]]]:
    """Every dashboard query evaluated after its last cycle, and at the moment of the
    run (from Prometheus's history) when the advisor had made EARLY_CYCLES cycles."""
    wait_cycles(replay_prometheus, replay_advisor, TOTAL_CYCLES)
    time.sleep(3 * SCRAPE_S)  # the last cycle's gauges scraped more than once
    end = evaluate(replay_prometheus, replay_advisor.started_at, ranged=True)
    at = first_time_at(replay_prometheus, replay_advisor, EARLY_CYCLES) + SCRAPE_S
    early = evaluate(replay_prometheus, replay_advisor.started_at, ranged=False, at=at)
    return {"early": early, "end": end}


def test_there_are_five_dashboards() -> None:
    uids = [board_json(p)["uid"] for p in DASHBOARDS]
    assert len(uids) == 5 and len(set(uids)) == 5, uids


def test_prometheus_scrapes_the_advisor(replay_prometheus: PrometheusServer,
                                        replay_advisor: RunningAdvisor) -> None:
    up = replay_prometheus.wait_for(f'up{{job="{JOB}"}} == 1', timeout_s=15)
    assert up, replay_prometheus.active_targets()
    assert up[0]["metric"]["instance"] == replay_advisor.address


@pytest.mark.parametrize("name", [p.name for p in DASHBOARDS])
def test_every_panel_query_returns_data(name: str, results: dict[str, Any]) -> None:
    failures = []
    for moment in ("early", "end"):
        queries, ev = results[moment][name]
        for pq in queries:
            if pq.expr in ev.errors:
                failures.append(f"[{moment}] {pq}: Prometheus refused it: {ev.errors[pq.expr]}")
                continue
            got = [ev.instant[pq.expr]] + ([ev.ranged[pq.expr]] if moment == "end" else [])
            if pq.pending:
                if moment == "end" and any(got):
                    failures.append(f"{pq}: returns data now; remove its PENDING entry "
                                    f"({'; '.join(pq.pending)})")
            elif not all(got) and not (moment == "early" and pq.early_gap):
                failures.append(f"[{moment}] {pq}: no data (instant, range: {got})")
    assert not failures, "\n".join(failures)


def test_pending_entries_are_used() -> None:
    exprs = [expr for p in DASHBOARDS for _, expr in panel_queries(board_json(p))]
    unused = [key for key in (*PENDING, *EARLY_GAPS) if not any(key in e for e in exprs)]
    assert not unused, f"PENDING or EARLY_GAPS entries no dashboard query uses: {unused}"


def test_early_gaps_are_still_gaps(results: dict[str, Any]) -> None:
    """An EARLY_GAPS entry whose queries all return data early is stale: remove it."""
    filled = []
    for key, why in EARLY_GAPS.items():
        counts = [ev.instant[pq.expr] for queries, ev in results["early"].values()
                  for pq in queries if key in pq.expr and pq.expr in ev.instant]
        if counts and all(counts):
            filled.append(f"{key} ({why})")
    assert not filled, f"these return data early now; remove them from EARLY_GAPS: {filled}"
