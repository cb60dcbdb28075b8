"""The advisor senses the RM plug-in: its MBean (recorded from a real 3.4.2 RM running the
jar, tests/fixtures/rm-plugin-jmx) parsed into a PluginStatus, read only while precision
mode is on (``sense.rm_plugin: auto``), exported as metrics and shown in /healthz."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.wiring import reads_plugin
from yarn_advisor.advisor.model.decision_table import Reason
from yarn_advisor.advisor.model.plugin import FALLBACKS
from yarn_advisor.advisor.observe.metrics import AdvisorCollector
from yarn_advisor.advisor.observe.server import AdvisorServer
from yarn_advisor.connectors import jmx as jmxp
from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.jmx.client import RM_PLUGIN_BEAN

if TYPE_CHECKING:
    from conftest import ReplayRun

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "rm-plugin-jmx"


def recorded(name: str) -> tuple[dict[str, Any], Any]:
    """The recorded answer's envelope and its body, decoded."""
    envelope = json.loads((RECORDED / f"{name}.json").read_text())
    assert envelope["status"] == 200 and "3.4.2" in envelope["provenance"]
    return envelope, json.loads(envelope["body"])


def test_the_recorded_bean_of_an_rm_applying_a_table() -> None:
    _, body = recorded("applying")
    raw = body["beans"][0]
    assert raw["name"] == RM_PLUGIN_BEAN
    got = jmxp.plugin_status(jmxp.parse_beans(body))
    assert got is not None and got.applying and got.table_status == "ok"
    assert (got.table_seq, got.table_leader, got.table_version) == (1, "test-advisor", 1)
    # every reason and every fall-back, by name; the totals the RM gives are their sums
    assert set(got.vetoes) == {r.value for r in Reason}
    assert set(got.fallbacks) == set(FALLBACKS)
    assert sum(got.vetoes.values()) == raw["Vetoes"] and got.vetoes["anacrac.host"] > 0
    assert sum(got.fallbacks.values()) == raw["Fallbacks"]
    assert got.admits > 0 and got.polls_ok > 0


def test_the_recorded_bean_after_the_table_was_withdrawn() -> None:
    _, body = recorded("withdrawn")
    got = jmxp.plugin_status(jmxp.parse_beans(body))
    _, before = recorded("applying")
    earlier = jmxp.plugin_status(jmxp.parse_beans(before))
    assert got is not None and earlier is not None
    assert got.table_status == "withdrawn" and not got.applying
    assert (got.table_seq, got.table_age_ms, got.table_leader) == (-1, -1, "")
    assert got.vetoes["anacrac.host"] >= earlier.vetoes["anacrac.host"]  # counters stay


def test_an_rm_without_the_plugin_and_a_bean_without_its_status() -> None:
    assert jmxp.plugin_status(jmxp.parse_beans({"beans": []})) is None
    _, body = recorded("applying")
    broken = {k: v for k, v in body["beans"][0].items() if k != "TableStatus"}
    with pytest.raises(ParseError, match="TableStatus"):
        jmxp.plugin_status([broken])


@pytest.mark.parametrize(("mode", "precision", "reads"), [
    ("auto", False, False), ("auto", True, True), ("on", False, True), ("off", True, False)])
def test_the_sensor_reads_the_bean_while_precision_mode_is_on(mode: str, precision: bool,
                                                              reads: bool) -> None:
    cfg = load_config(None, {"sense": {"rm_plugin": mode}, "precision": {"enabled": precision}})
    assert reads_plugin(cfg) is reads


def with_plugin(run: ReplayRun, name: str) -> CycleReport:
    report = run.reports[-1]
    assert report.snapshot is not None
    status = jmxp.plugin_status(jmxp.parse_beans(recorded(name)[1]))
    return replace(report, snapshot=replace(report.snapshot, plugin=status))


def scrape(report: CycleReport, run: ReplayRun) -> str:
    registry = CollectorRegistry()
    registry.register(AdvisorCollector(lambda: report, run.advisor.totals))
    return generate_latest(registry).decode()


def test_the_plugins_counters_are_exported(recorded_replay: ReplayRun) -> None:
    report = with_plugin(recorded_replay, "applying")
    assert report.snapshot is not None and report.snapshot.plugin is not None
    p = report.snapshot.plugin
    text = scrape(report, recorded_replay)
    assert "yarn_advisor_rm_plugin_table_seq 1.0" in text
    assert 'yarn_advisor_rm_plugin_table_status{status="ok"} 1.0' in text
    vetoes = p.vetoes["anacrac.host"]
    assert f'yarn_advisor_rm_plugin_vetoes_total{{reason="anacrac.host"}} {vetoes:.1f}' in text
    assert 'yarn_advisor_rm_plugin_vetoes_total{reason="opera.lent_room"}' in text
    for why in FALLBACKS:
        assert f'yarn_advisor_rm_plugin_fallbacks_total{{reason="{why}"}}' in text
    assert f'yarn_advisor_rm_plugin_polls_total{{outcome="ok"}} {p.polls_ok:.1f}' in text
    # without the plug-in's source there is no such series
    assert "rm_plugin" not in scrape(recorded_replay.reports[-1], recorded_replay)


def test_healthz_shows_what_the_plugin_applies(recorded_replay: ReplayRun) -> None:
    advisor = Advisor(sensor=None, engine=None, actuator=recorded_replay.advisor.actuator)  # type: ignore[arg-type]
    server = AdvisorServer(advisor, "127.0.0.1", 0, 0.0)  # never started: health() only
    try:
        advisor.latest = replace(with_plugin(recorded_replay, "applying"), outcome="ok")
        _, body = server.health()
        assert body["plugin"]["table_status"] == "ok" and body["plugin"]["table_seq"] == 1
        assert body["plugin"]["published_seq"] is None  # this advisor publishes no table
        assert body["plugin"]["vetoes"] > 0
        advisor.latest = with_plugin(recorded_replay, "withdrawn")
        assert server.health()[1]["plugin"]["table_age_s"] is None
        advisor.latest = recorded_replay.reports[-1]
        assert "plugin" not in server.health()[1]
    finally:
        server.httpd.server_close()
