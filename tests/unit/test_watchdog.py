"""The harm watchdog of enforce mode: harm after the advisor acts trips the policy
that caused it (dry-run, journaled, counted) and rolls its live changes back."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from _snapshots import TS, task
from test_actuator import APP, N1, N2, NOW, FakeRM, rec, snap

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.journal import Journal, Phase
from yarn_advisor.advisor.act.memory import GuardMemory
from yarn_advisor.advisor.act.watchdog import Signal, Watchdog
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import NodeResource
from yarn_advisor.advisor.model.snapshot import Snapshot, Task
from yarn_advisor.config.schema import ActuatorSettings, WatchdogSettings
from yarn_advisor.connectors.errors import HTTPStatusError

RAISE = {"memory_mb": 12288, "vcores": 8}


def make(tmp_path: Path, rm: FakeRM, dry_run: bool = False, **watch: Any) -> Actuator:
    settings = ActuatorSettings(cooldown_s=0.0, watchdog=WatchdogSettings(
        **{"task_failures": 3, **watch}))
    return Actuator(settings, Journal(tmp_path / "journal.jsonl"), Writer(rm), dry_run, {},
                    clock=lambda: NOW, watchdog=Watchdog(settings.watchdog))


def failed(node: str, n: int, state: str = "FAILED", first: int = 0) -> list[Task]:
    return [dataclasses.replace(task(APP, first + i, "MAP", state), node_id=node)
            for i in range(n)]


def raised(tmp_path: Path, **watch: Any) -> tuple[Actuator, FakeRM]:
    """OPERA has raised N1 (enforce mode, the write applied)."""
    rm = FakeRM()
    a = make(tmp_path, rm, **watch)
    counts = a.act([rec("update_node_resource", N1, RAISE, policy="opera")], snap())
    assert counts == {(Kind.UPDATE_NODE_RESOURCE, "opera", "applied"): 1}
    assert rm.values[(Kind.UPDATE_NODE_RESOURCE, N1)] == NodeResource(12288, 8)
    return a, rm


def later(s: Snapshot, **kw: Any) -> Snapshot:
    return dataclasses.replace(s, taken_at=TS + 1000, **kw)


def test_task_failures_on_a_raised_node_trip_opera_and_roll_the_node_back(
        tmp_path: Path) -> None:
    a, rm = raised(tmp_path)
    a.act([], later(snap(), finished_tasks=tuple(failed(N1, 3))))
    assert rm.values[(Kind.UPDATE_NODE_RESOURCE, N1)] == NodeResource(8192, 8)  # restored
    trip = [e for e in a.journal.entries() if e.phase is Phase.TRIPPED]
    assert [(e.policy, e.reason, e.target, e.count) for e in trip] == [
        ("opera", "task_failures", N1, 3)]
    assert not a.enforcing("opera") and a.enforcing("haste")
    assert a.trips == {("opera", Signal.TASK_FAILURES): 1}
    # the restored node is held; another is only journaled as what it would have done
    counts = a.act([rec("update_node_resource", N1, RAISE, policy="opera"),
                    rec("update_node_resource", N2, RAISE, policy="opera")], snap())
    assert counts == {(Kind.UPDATE_NODE_RESOURCE, "opera", "blocked"): 1,
                      (Kind.UPDATE_NODE_RESOURCE, "opera", "dry_run"): 1}
    assert ("blocked", "rollback_hold") in [(e.phase.value, e.reason)
                                            for e in a.journal.entries()]


def test_failures_everywhere_are_not_the_policys_doing(tmp_path: Path) -> None:
    a, rm = raised(tmp_path)
    tasks = failed(N1, 3) + failed(N2, 3, "KILLED", first=10)
    a.act([], later(snap(), finished_tasks=tuple(tasks)))
    assert a.enforcing("opera") and not a.trips
    assert rm.values[(Kind.UPDATE_NODE_RESOURCE, N1)] == NodeResource(12288, 8)


def test_failures_before_the_change_or_below_the_threshold_do_not_trip(
        tmp_path: Path) -> None:
    a, _ = raised(tmp_path)
    a.act([], later(snap(), finished_tasks=tuple(failed(N1, 2))))
    assert a.enforcing("opera")
    a.act([], later(snap(), finished_tasks=tuple(failed(N1, 1, first=5))))
    assert not a.enforcing("opera")  # 3 within the window, counted across cycles


def test_a_changed_node_that_turns_unhealthy_trips(tmp_path: Path) -> None:
    a, rm = raised(tmp_path)
    s = snap()
    sick = tuple(dataclasses.replace(n, state="UNHEALTHY") if n.id == N1 else n
                 for n in s.nodes)
    a.act([], later(s, nodes=sick))
    assert a.trips == {("opera", Signal.UNHEALTHY_NODES): 1}
    assert rm.values[(Kind.UPDATE_NODE_RESOURCE, N1)] == NodeResource(8192, 8)


def test_writes_the_rm_refuses_trip_the_policy(tmp_path: Path) -> None:
    class Refusing(FakeRM):
        def send(self, kind: Kind, target: str, value: Any) -> Any:
            raise HTTPStatusError(403, "forbidden", f"/ws/v1/cluster/apps/{target}/priority")

    a = make(tmp_path, Refusing(), refused_writes=2)
    for _ in range(2):
        assert a.act([rec(policy="haste")], snap()) == {
            (Kind.SET_APP_PRIORITY, "haste", "refused"): 1}
    a.act([], snap())
    assert a.trips == {("haste", Signal.REFUSED_WRITES): 1}
    assert not a.enforcing("haste")


def test_a_trip_survives_a_restart_and_a_new_leader(tmp_path: Path) -> None:
    a, rm = raised(tmp_path)
    a.act([], later(snap(), finished_tasks=tuple(failed(N1, 3))))
    again = make(tmp_path, rm)  # the same journal, read at start
    assert not again.enforcing("opera")
    state = GuardMemory.from_json(a.memory.to_json())  # what HA saves and a new leader merges
    fresh = GuardMemory()
    fresh.merge(state)
    assert fresh.is_tripped("opera", NOW) and not fresh.is_tripped("opera", NOW + 86401)


def test_dry_run_and_a_disabled_watchdog_never_trip(tmp_path: Path) -> None:
    a, _ = raised(tmp_path, enabled=False)
    a.act([], later(snap(), finished_tasks=tuple(failed(N1, 5))))
    assert a.enforcing("opera") and not a.trips
    dry = make(tmp_path / "dry", FakeRM(), dry_run=True)
    dry.act([rec("update_node_resource", N1, RAISE, policy="opera")], snap())
    dry.act([], later(snap(), finished_tasks=tuple(failed(N1, 5))))
    assert not dry.trips
    assert not [e for e in dry.journal.entries() if e.phase is Phase.TRIPPED]


def test_failed_apps_with_failures_on_changed_nodes_trip(tmp_path: Path) -> None:
    a, _ = raised(tmp_path, task_failures=10)
    a.act([], later(snap()))  # the watchdog reads the RM's appsFailed once
    s = snap()
    s = later(s, finished_tasks=tuple(failed(N1, 1)),
              metrics=dataclasses.replace(s.metrics, apps_failed=2))
    a.act([], s)
    assert a.trips == {("opera", Signal.FAILED_APPS): 1}
