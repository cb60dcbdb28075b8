"""RM HA and faults against real servers: a real standby RM, a dead address."""

from __future__ import annotations

import socket
import time

import pytest
from yarnmini import MiniCluster

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor
from yarn_advisor.connectors.errors import StandbyError

pytestmark = pytest.mark.cluster


def dead_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def advisor_for(*urls: str, history: str | None = None) -> Advisor:
    cfg = load(None, {"rm": {"urls": list(urls), "history_url": history,
                             "retry": {"attempts": 2, "base_delay_s": 0.05}}})
    return build_advisor(cfg, build_sensor(cfg), persist=False)


def test_follows_the_active_rm_past_a_standby_and_a_dead_one(
        mini_cluster: MiniCluster, standby_url: str) -> None:
    advisor = advisor_for(dead_url(), standby_url, mini_cluster.rm_url,
                          history=mini_cluster.jhs_url)
    report = advisor.run_once()
    assert report.outcome == "ok", report.reason
    assert report.snapshot is not None
    assert report.snapshot.rm_url == mini_cluster.rm_url
    assert report.snapshot.cluster.ha_state == "ACTIVE"


def test_only_a_standby_rm_skips_the_cycle(standby_url: str) -> None:
    advisor = advisor_for(standby_url)
    report = advisor.run_once()
    assert report.outcome == "skipped"
    assert report.reason.startswith("standby"), report.reason
    assert report.snapshot is None and not report.actions
    assert advisor.totals.cycles["skipped"] == 1


def test_standby_answers_other_paths_without_data(standby_url: str) -> None:
    """A real standby answers data paths with 307 + Refresh (no active RM known);
    the client re-resolves, finds no active RM and says so: never data."""
    sensor = build_sensor(load(None, {"rm": {"urls": [standby_url]}}))
    rm = sensor.connectors.rm
    rm._active = standby_url  # as if it had been active a moment ago (a failover)
    with pytest.raises(StandbyError, match="STANDBY"):
        rm.get("/ws/v1/cluster/apps")
    assert rm._active is None


def test_active_rm_down_then_back(mini_cluster: MiniCluster, standby_url: str) -> None:
    """With the active unreachable and only a standby left, cycles are skipped;
    when an active RM answers again, the next cycle senses normally."""
    advisor = advisor_for(dead_url(), standby_url)
    assert advisor.run_once().outcome == "skipped"
    advisor.sensor.connectors.rm.urls.append(mini_cluster.rm_url)
    time.sleep(0.1)
    report = advisor.run_once()
    assert report.outcome == "ok", report.reason
    assert advisor.totals.cycles == {"skipped": 1, "ok": 1}
