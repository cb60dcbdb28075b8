"""``yarn-advisor rollback`` against the real RM: restores, is journaled, holds the target."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from _cluster_writes import actuator_for, rec, records
from yarnmini import MiniCluster

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.cli.rollback import register
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.wiring import build_sensor
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ConfUpdate
from yarn_advisor.connectors.rm.write import RMLevers

pytestmark = pytest.mark.cluster
LIGHT_SENSE = {"mapreduce": {"enabled": False}, "nm_jmx": {"enabled": False}, "rm_jmx": False}
DELAY = "yarn.scheduler.capacity.node-locality-delay"
MAX_CAP = "yarn.scheduler.capacity.root.adhoc.maximum-capacity"


@pytest.fixture(autouse=True)
def leave_the_cluster_as_found(mini_cluster: MiniCluster) -> Iterator[None]:
    """A failing test must not leave the shared cluster changed."""
    yield
    writer = Writer(RMLevers(build_sensor(load(None, {"rm": {"urls": [mini_cluster.rm_url]}}))
                             .connectors.rm))
    conf = Kind.UPDATE_SCHEDULER_CONF
    writer.apply(conf, "scheduler", ConfUpdate.of({DELAY: "40"}))
    writer.apply(conf, "root.adhoc", ConfUpdate.of({"maximum-capacity": "100"}))


def setup(cluster: MiniCluster, tmp_path: Path) -> tuple[Path, Actuator]:
    raw = {"rm": {"urls": [cluster.rm_url]}, "sense": LIGHT_SENSE, "dry_run": False,
           "state_dir": str(tmp_path / "state"), "actuator": {"cooldown_s": 0}}
    path = tmp_path / "advisor.yaml"
    path.write_text(yaml.safe_dump(raw))
    cfg = load(path)
    return path, actuator_for(cfg, build_sensor(cfg).connectors.rm)


def act(cluster: MiniCluster, a: Actuator, target: str, value: dict[str, Any]) -> str:
    cfg = load(None, {"rm": {"urls": [cluster.rm_url]}, "sense": LIGHT_SENSE})
    snap = build_sensor(cfg).sense(int(time.time() * 1000))
    (outcome,) = {k[2] for k in a.act([rec("update_scheduler_conf", target, value)], snap)}
    return outcome


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    parser = argparse.ArgumentParser(prog="yarn-advisor")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["rollback", *argv, "--json"])
    code = args.handler(args)
    text = capsys.readouterr().out
    return code, json.loads(text) if text else None


def conf(cluster: MiniCluster) -> dict[str, str]:
    rm = build_sensor(load(None, {"rm": {"urls": [cluster.rm_url]}})).connectors.rm
    return {p["name"]: p["value"] for p in rm.get("/ws/v1/cluster/scheduler-conf")["property"]}


def test_rollback_since_restores_oldest_values_and_holds_them(
        mini_cluster: MiniCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, a = setup(mini_cluster, tmp_path)
    assert act(mini_cluster, a, "scheduler", {DELAY: 7}) == "applied"
    assert act(mini_cluster, a, "scheduler", {DELAY: 9}) == "applied"
    assert act(mini_cluster, a, "root.adhoc", {"maximum-capacity": 60}) == "applied"
    assert (conf(mini_cluster)[DELAY], conf(mini_cluster)[MAX_CAP]) == ("9", "60")

    code, out = cli(capsys, "--since", "1h", "--config", str(path), "--dry-run")
    assert code == 0 and [s["outcome"] for s in out["steps"]] == ["dry_run"] * 3
    assert (conf(mini_cluster)[DELAY], conf(mini_cluster)[MAX_CAP]) == ("9", "60")

    code, out = cli(capsys, "--since", "1h", "--config", str(path))
    assert code == 0 and out["ok"] is True
    assert [(s["target"], s["value"], s["outcome"]) for s in out["steps"]] == [
        ("root.adhoc", {"maximum-capacity": "100"}, "applied"),
        ("scheduler", {DELAY: "7"}, "applied"),
        ("scheduler", {DELAY: "40"}, "applied")]
    assert (conf(mini_cluster)[DELAY], conf(mini_cluster)[MAX_CAP]) == ("40", "100")
    undone = [r for r in records(a.journal) if r["policy"] == "rollback"
              and r["phase"] == "intent"]
    assert len(undone) == 3 and all(r["rollback_of"] for r in undone)

    # already rolled back: nothing more to do
    code, out = cli(capsys, "--since", "1h", "--config", str(path))
    assert code == 0 and out["steps"] == []
    # and the running daemon leaves the restored target alone for a while
    assert act(mini_cluster, a, "scheduler", {DELAY: 9}) == "blocked"
    assert conf(mini_cluster)[DELAY] == "40"


def test_rollback_one_action(mini_cluster: MiniCluster, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    path, a = setup(mini_cluster, tmp_path)
    assert act(mini_cluster, a, "scheduler", {DELAY: 11}) == "applied"
    (action,) = a.journal.actions()
    code, out = cli(capsys, "--action", action.id, "--config", str(path))
    assert code == 0 and [s["rollback_of"] for s in out["steps"]] == [action.id]
    assert conf(mini_cluster)[DELAY] == "40"
    code, _ = cli(capsys, "--action", "no-such-id", "--config", str(path))
    assert code == 2
