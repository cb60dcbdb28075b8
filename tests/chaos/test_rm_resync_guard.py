"""The actuator's ``rm_resync`` guard on its own (no cluster): after the RM's start
time changes between two cycles (a restart or a failover), writes wait until as many
nodes are RUNNING as before, for ``RESYNC_S`` at most. test_rm_restart_nm_loss.py
shows it on the real RM (there the advisor wrote in all 41 cycles of the 20 s the
NodeManagers took to re-register)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from yarn_advisor.advisor.act.actuator import RESYNC_S, Actuator
from yarn_advisor.advisor.act.journal import Journal
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ConfUpdate
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import (
    ClusterInfo,
    ClusterMetrics,
    Node,
    Resources,
    Snapshot,
)
from yarn_advisor.config.schema import ActuatorSettings

T0 = 1_700_000_000.0
Z = Resources()
REC = Recommendation(Kind.UPDATE_SCHEDULER_CONF, "scheduler", ConfUpdate.of({"k": "7"}), "test",
                     Explanation("test.write", "a write"), None)


def snap(at: float, started_on: int, running: int) -> Snapshot:
    nodes = tuple(Node(f"h{i}:1", f"h{i}", "/r", "RUNNING", f"h{i}:8042", (), Resources(8, 8),
                       Z, Resources(8, 8), 0, None) for i in range(running))
    metrics = ClusterMetrics(0, 0, 0, 0, 0, 0, Z, Z, Z, Z, 0, 0, 0, running, running, 0, 0, 0)
    info = ClusterInfo(1, "STARTED", "ACTIVE", "3.4.2", "3.4.2", started_on)
    return Snapshot(int(at * 1000), "http://rm", info, metrics, nodes, (), (), ())


def outcome(a: Actuator, s: Snapshot) -> str:
    a.clock = lambda: s.taken_at / 1000
    ((_, _, out),) = a.act([REC], s).keys()
    return out


def test_writes_wait_for_the_nodes_after_an_rm_restart(tmp_path: Path) -> None:
    a = Actuator(ActuatorSettings(cooldown_s=0, max_actions_per_target=1000),
                 Journal(tmp_path / "j.jsonl"))
    first = int(T0 * 1000) - 3_600_000
    assert outcome(a, snap(T0, first, 2)) == "dry_run"
    assert outcome(a, snap(T0 + 1, first, 1)) == "dry_run"   # a node lost: no restart
    restarted = int(T0 * 1000) + 5_000
    assert outcome(a, snap(T0 + 10, restarted, 0)) == "blocked"
    assert outcome(a, snap(T0 + 11, restarted, 0)) == "blocked"
    assert a.blocked["rm_resync"] == 2
    assert outcome(a, snap(T0 + 12, restarted, 1)) == "dry_run"  # as many as before
    # a failover (another start time) with nodes that never come back: RESYNC_S at most
    other = restarted + 1
    assert outcome(a, snap(T0 + 20, other, 0)) == "blocked"
    assert outcome(a, snap(T0 + 20 + RESYNC_S - 1, other, 0)) == "blocked"
    assert outcome(a, snap(T0 + 20 + RESYNC_S, other, 0)) == "dry_run"


def test_the_first_cycle_and_an_unknown_start_time_are_not_held(tmp_path: Path) -> None:
    a = Actuator(ActuatorSettings(cooldown_s=0, max_actions_per_target=1000),
                 Journal(tmp_path / "j.jsonl"))
    assert outcome(a, snap(T0, int(T0 * 1000) - 1000, 0)) == "dry_run"
    s = snap(T0 + 1, 0, 0)
    assert outcome(a, replace(s)) == "dry_run"
