"""The actuator's modes and guardrails: each one is shown stopping an action.

The RM here is an in-memory double of the real one's levers (a read and a send
per kind) under the advisor's own read-before-write Writer; what the real RM
does is shown by tests/cluster/test_write_*.py.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from _snapshots import TS, app, container, node, snapshot

from yarn_advisor.advisor.act.actuator import RESYNC_S, Actuator, build_actuator
from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    AppState,
    ConfUpdate,
    ContainerStatus,
    NodeLabels,
    NodeResource,
    Payload,
    Priority,
    Queue,
    previous_from_json,
    value_from_json,
)
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import ActuatorSettings, Scope
from yarn_advisor.connectors.errors import StandbyError, UnavailableError

NOW = TS / 1000 + 5
APP, OTHER = "application_1_0001", "application_1_0002"
CID = "container_1_0001_01_000002"
N1, N2 = "h1:8041", "h2:8041"


class FakeRM:
    """An in-memory RM's levers: current values by (kind, target); counts every send
    and live check. The read-before-write over it is the advisor's own Writer."""

    def __init__(self, down: Exception | None = None) -> None:
        self.values: dict[tuple[Kind, str], Payload] = {
            (Kind.SET_APP_PRIORITY, APP): Priority(0), (Kind.SET_APP_PRIORITY, OTHER): Priority(0),
            (Kind.MOVE_APP_QUEUE, APP): Queue("root.etl"),
            (Kind.UPDATE_NODE_RESOURCE, N1): NodeResource(8192, 8),
            (Kind.REPLACE_NODE_LABELS, N1): NodeLabels(()),
            (Kind.SIGNAL_CONTAINER, CID): ContainerStatus("RUNNING", N1),
            (Kind.KILL_APP, APP): AppState("RUNNING"),
        }
        self.conf: dict[str, str] = {}
        self.sent: list[tuple[str, str, Any]] = []  # (kind, target, value as JSON)
        self.down = down

    def ensure_active(self) -> None:
        if self.down:
            raise self.down

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        if isinstance(value, ConfUpdate):
            return ConfUpdate.of({k: self.conf.get(f"{target}/{k}") for k, _ in value.items})
        return self.values.get((kind, target))

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        if isinstance(value, NodeLabels) and len(value.labels) > 1:  # as the real lever
            raise ValueError("a node carries at most one partition label")
        self.sent.append((kind.value, target, value.to_json()))
        if isinstance(value, ConfUpdate):
            for k, v in value.items:
                self.conf[f"{target}/{k}"] = str(v)
        else:
            self.values[(kind, target)] = value
        return {"status": 200}


def snap(**kw: Any) -> Snapshot:
    apps = [app(APP, queue="root.etl", name="etl-nightly"),
            app(OTHER, queue="root.adhoc", name="adhoc-query")]
    nodes = [node(N1), node(N2)]
    s = snapshot(nodes, apps, [container(CID, APP, N1, (1024, 1), 1)])
    return dataclasses.replace(s, **kw) if kw else s


def rec(kind: str = "set_app_priority", target: str = APP, value: Any = 5,
        previous: Any = "default", policy: str = "haste") -> Recommendation:
    """A recommendation from the JSON forms of its value and previous value (by
    default priority 0 for a priority, none for the others)."""
    k = Kind(kind)
    if previous == "default":
        previous = 0 if k is Kind.SET_APP_PRIORITY else None
    return Recommendation(k, target, value_from_json(k, value), policy,
                          Explanation("test.rule", "because"), previous_from_json(k, previous))


def make(tmp_path: Path, rm: FakeRM | None = None, dry_run: bool = False,
         per_policy: dict[str, bool | None] | None = None, **settings: Any) -> Actuator:
    base = {"cooldown_s": 0.0, **settings}
    return Actuator(ActuatorSettings(**base), Journal(tmp_path / "journal.jsonl"),
                    Writer(rm if rm is not None else FakeRM()), dry_run, per_policy or {},
                    clock=lambda: NOW)


def phases(a: Actuator) -> list[tuple[str, str | None]]:
    return [(e.phase.value, e.reason) for e in a.journal.entries()]


def blocked_by(tmp_path: Path, reason: str, recs: list[Recommendation] | None = None,
               s: Snapshot | None = None, rm: FakeRM | None = None, **settings: Any) -> FakeRM:
    """Act once; assert the last recommendation was blocked for ``reason``, nothing sent."""
    rm = rm or FakeRM()
    a = make(tmp_path, rm, **settings)
    recs = recs or [rec()]
    counts = a.act(recs, s or snap())
    last = recs[-1]
    assert counts.get((last.kind, last.policy, "blocked"), 0) >= 1, counts
    assert phases(a)[-1] == ("blocked", reason)
    assert a.blocked[reason] >= 1
    return rm


def test_enforce_applies_and_journals_intent_then_result(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    size = {"memory_mb": 1024, "vcores": 1}
    assert a.act([rec(), rec("advise_container_size", value=size)], snap()) == {
        ("set_app_priority", "haste", "applied"): 1,
        ("advise_container_size", "haste", "advisory"): 1}
    assert rm.sent == [("set_app_priority", APP, 5)]
    intent, result = a.journal.entries()
    assert (intent.phase, intent.previous, intent.mode, intent.rule) == (
        Phase.INTENT, 0, "enforce", "test.rule")
    assert (result.outcome, result.observed) == ("applied", 5)


def test_dry_run_is_the_default_and_sends_nothing(tmp_path: Path) -> None:
    rm = FakeRM()
    a = build_actuator(load(None, {"state_dir": str(tmp_path)}), None)
    a.writer, a.clock = Writer(rm), lambda: NOW
    assert a.act([rec()], snap()) == {("set_app_priority", "haste", "dry_run"): 1}
    assert rm.sent == []
    (only,) = a.journal.entries()
    assert (only.phase, only.previous, only.value) == (Phase.DRY_RUN, 0, 5)
    assert a.journal.path == tmp_path / "journal.jsonl"


def test_per_policy_dry_run_overrides_enforce(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, per_policy={"haste": True})
    counts = a.act([rec(), rec(target=OTHER, policy="other")], snap())
    assert counts == {("set_app_priority", "haste", "dry_run"): 1,
                      ("set_app_priority", "other", "applied"): 1}
    assert rm.sent == [("set_app_priority", OTHER, 5)]


def test_build_actuator_reads_the_policy_sections(tmp_path: Path) -> None:
    cfg = load(None, {"dry_run": False, "state_dir": str(tmp_path),
                      "policies": {"haste": {"dry_run": True}}})
    a = build_actuator(cfg, None)
    assert not a.enforcing("haste") and not a.enforcing("matchmaking")  # no writer: replay
    a.writer = FakeRM()
    assert not a.enforcing("haste") and a.enforcing("matchmaking")


def test_kill_switch_config(tmp_path: Path) -> None:
    blocked_by(tmp_path, "kill_switch", kill_switch=True)


def test_kill_switch_file(tmp_path: Path) -> None:
    stop = tmp_path / "STOP"
    rm = FakeRM()
    a = make(tmp_path, rm, kill_switch_file=str(stop))
    stop.touch()
    a.act([rec()], snap())
    stop.unlink()
    a.act([rec(target=OTHER)], snap())
    assert phases(a)[0] == ("blocked", "kill_switch")
    assert rm.sent == [("set_app_priority", OTHER, 5)]


def test_kill_switch_signal(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    old = signal.getsignal(signal.SIGUSR1), signal.getsignal(signal.SIGUSR2)
    try:
        a.install_signal_handlers()
        os.kill(os.getpid(), signal.SIGUSR1)
        a.act([rec()], snap())
        os.kill(os.getpid(), signal.SIGUSR2)
        a.act([rec(target=OTHER)], snap())
    finally:
        signal.signal(signal.SIGUSR1, old[0])
        signal.signal(signal.SIGUSR2, old[1])
    assert phases(a)[0] == ("blocked", "kill_switch")
    assert rm.sent == [("set_app_priority", OTHER, 5)]


def test_stale_snapshot(tmp_path: Path) -> None:
    blocked_by(tmp_path, "stale_snapshot", s=snap(taken_at=TS - 600_000),
               max_snapshot_age_s=120)


def test_rm_standby_in_the_snapshot(tmp_path: Path) -> None:
    s = snap()
    s = dataclasses.replace(s, cluster=dataclasses.replace(s.cluster, ha_state="STANDBY"))
    blocked_by(tmp_path, "rm_not_active", s=s)


def restarted(started_on: int, running: int, at: float) -> Snapshot:
    """The test snapshot as an RM started at ``started_on`` shows it at ``at``, with
    ``running`` of its two NodeManagers registered again."""
    s = snap(taken_at=int(at * 1000))
    return dataclasses.replace(s, cluster=dataclasses.replace(s.cluster, started_on=started_on),
                               nodes=s.nodes[:running])


def test_rm_restart_holds_writes_while_the_nodemanagers_resync(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    now = [NOW]
    a.clock = lambda: now[0]
    assert a.act([rec()], restarted(1, 2, now[0]))[("set_app_priority", "haste", "applied")]
    for _ in range(2):  # the RM restarted, one NodeManager is back: a partial view
        now[0] += 5
        blocked_by_resync = a.act([rec(target=OTHER)], restarted(2, 1, now[0]))
        assert blocked_by_resync == {("set_app_priority", "haste", "blocked"): 1}
        assert phases(a)[-1] == ("blocked", "rm_resync")
    now[0] += 5
    a.act([rec(target=OTHER)], restarted(2, 2, now[0]))  # both back: writes resume
    assert rm.sent == [("set_app_priority", APP, 5), ("set_app_priority", OTHER, 5)]


def test_rm_resync_hold_ends_after_its_limit_even_if_a_node_never_returns(
        tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    now = [NOW]
    a.clock = lambda: now[0]
    a.act([rec()], restarted(1, 2, now[0]))
    now[0] += 1
    a.act([rec(target=OTHER)], restarted(2, 1, now[0]))
    assert phases(a)[-1] == ("blocked", "rm_resync")
    now[0] += RESYNC_S + 1
    a.act([rec(target=OTHER)], restarted(2, 1, now[0]))
    assert phases(a)[-1][0] == "result" and rm.sent[-1] == ("set_app_priority", OTHER, 5)
    now[0] += 1  # a node lost without a restart is no resync: nothing held
    a.act([rec(target=APP, value=7, previous=5)], restarted(2, 0, now[0]))
    assert rm.sent[-1] == ("set_app_priority", APP, 7)


@pytest.mark.parametrize(("error", "reason"), [(StandbyError("no active RM"), "rm_standby"),
                                               (UnavailableError("refused"), "rm_unavailable")])
def test_rm_standby_or_unreachable_right_now(tmp_path: Path, error: Exception,
                                             reason: str) -> None:
    rm = blocked_by(tmp_path, reason, recs=[rec(), rec(target=OTHER)], rm=FakeRM(down=error))
    assert rm.sent == []


def test_unknown_and_kill_like_kinds(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        rec("reboot_node", N1, True)  # no such kind: it cannot even be recommended
    blocked_by(tmp_path / "a", "out_of_scope", recs=[rec("add_cluster_labels", "cluster", ["x"])],
               nodes=Scope(allow=["h1*"]))
    blocked_by(tmp_path / "b", "kill_like_disabled",
               recs=[rec("signal_container", CID, "GRACEFUL_SHUTDOWN", None)])
    blocked_by(tmp_path / "c", "kill_like_disabled", recs=[rec("kill_app", APP, "KILLED")])
    rm = FakeRM()
    a = make(tmp_path / "d", rm, allow_kill_like=True)
    a.act([rec("signal_container", CID, "GRACEFUL_SHUTDOWN", None)], snap())
    assert rm.sent == [("signal_container", CID, "GRACEFUL_SHUTDOWN")]


@pytest.mark.parametrize(("scope", "r"), [
    ({"queues": Scope(allow=["root.adhoc"])}, rec()),
    ({"queues": Scope(deny=["etl"])}, rec()),
    ({"apps": Scope(deny=["etl-*"])}, rec()),
    ({"apps": Scope(allow=[OTHER])}, rec()),
    ({"queues": Scope(deny=["root.default"])}, rec("move_app_queue", APP, "default", "root.etl")),
    ({"nodes": Scope(deny=["h1"])}, rec("update_node_resource", N1, {"memory_mb": 12288})),
    ({"nodes": Scope(allow=["h2*"])}, rec("replace_node_labels", N1, ["x"], [])),
    ({"queues": Scope(allow=["root.etl"])},
     rec("update_scheduler_conf", "scheduler", {"yarn.scheduler.capacity.node-locality-delay": 5})),
    ({"queues": Scope(deny=["root.adhoc"])},
     rec("update_scheduler_conf", "root.adhoc", {"maximum-capacity": 60})),
    ({"allow_kill_like": True, "nodes": Scope(deny=[N1])},
     rec("signal_container", CID, "GRACEFUL_SHUTDOWN", None)),
])
def test_out_of_scope(tmp_path: Path, scope: dict[str, Any], r: Recommendation) -> None:
    blocked_by(tmp_path, "out_of_scope", recs=[r], **scope)


def test_in_scope_passes(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, queues=Scope(allow=["etl", "root.adhoc"]), apps=Scope(deny=["x*"]))
    a.act([rec(), rec("update_scheduler_conf", "root.adhoc", {"maximum-capacity": 60}, None)],
          snap())
    assert len(rm.sent) == 2


def test_unknown_target(tmp_path: Path) -> None:
    blocked_by(tmp_path, "unknown_target", recs=[rec(target="application_9_0009")])


def test_cooldown_per_target(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, cooldown_s=300)
    a.act([rec(value=5)], snap())
    a.act([rec(value=7, previous=5), rec(target=OTHER)], snap())
    assert phases(a)[2] == ("blocked", "cooldown")
    assert rm.sent == [("set_app_priority", APP, 5), ("set_app_priority", OTHER, 5)]


def test_a_target_another_policy_just_wrote_is_left_alone(tmp_path: Path) -> None:
    # found on the real cluster: HaSTE set an app to 5, ANACRAC back to 10, and again
    # whenever the cooldown let either through
    rm = FakeRM()
    a = make(tmp_path, rm, target_window_s=600)
    a.act([rec(value=5, policy="haste")], snap())
    a.act([rec(value=10, previous=5, policy="anacrac")], snap())
    assert phases(a)[-1] == ("blocked", "policy_conflict")
    a.act([rec(value=7, previous=5, policy="haste")], snap())  # its own target: allowed
    assert rm.sent == [("set_app_priority", APP, 5), ("set_app_priority", APP, 7)]
    # a restart remembers who wrote it (the journal)
    again = make(tmp_path, rm, target_window_s=600)
    again.act([rec(value=10, previous=7, policy="anacrac")], snap())
    assert phases(again)[-1] == ("blocked", "policy_conflict")
    assert len(rm.sent) == 2


def test_max_actions_per_target(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, max_actions_per_target=2)
    for v in (3, 6, 9):
        a.act([rec(value=v, previous=None)], snap())
    assert [s[2] for s in rm.sent] == [3, 6]
    assert phases(a)[-1] == ("blocked", "max_per_target")


def test_max_actions_per_cycle(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, max_actions_per_cycle=1)
    assert a.act([rec(), rec(target=OTHER)], snap()) == {
        ("set_app_priority", "haste", "applied"): 1, ("set_app_priority", "haste", "blocked"): 1}
    assert phases(a)[-1] == ("blocked", "max_per_cycle")


def test_max_per_cycle_also_bounds_dry_run(tmp_path: Path) -> None:
    a = make(tmp_path, dry_run=True, max_actions_per_cycle=1)
    assert a.act([rec(), rec(target=OTHER)], snap()) == {
        ("set_app_priority", "haste", "dry_run"): 1, ("set_app_priority", "haste", "blocked"): 1}


def test_min_change_against_the_snapshot(tmp_path: Path) -> None:
    blocked_by(tmp_path / "a", "min_change", recs=[rec(value=1, previous=0)],
               min_priority_delta=2)
    blocked_by(tmp_path / "b", "min_change", recs=[rec(
        "update_node_resource", N1, {"memory_mb": 8600, "vcores": 8},
        {"memory_mb": 8192, "vcores": 8})], min_change_fraction=0.1)
    blocked_by(tmp_path / "c", "min_change", recs=[rec(
        "update_scheduler_conf", "scheduler", {"yarn.scheduler.capacity.node-locality-delay": 41},
        {"yarn.scheduler.capacity.node-locality-delay": "40"})])


def test_min_change_against_the_live_value(tmp_path: Path) -> None:
    """The snapshot said 0, the RM says 4 by now: 4 -> 5 is too small; nothing sent."""
    rm = FakeRM()
    rm.values[(Kind.SET_APP_PRIORITY, APP)] = Priority(4)
    a = make(tmp_path, rm, min_priority_delta=2)
    assert a.act([rec(value=5, previous=0)], snap()) == {
        ("set_app_priority", "haste", "blocked"): 1}
    assert rm.sent == []
    (only,) = a.journal.entries()
    assert (only.reason, only.previous) == ("min_change", 4)


def test_already_there_is_a_noop(tmp_path: Path) -> None:
    rm = FakeRM()
    rm.values[(Kind.SET_APP_PRIORITY, APP)] = Priority(5)
    a = make(tmp_path, rm)
    assert a.act([rec(value=5, previous=0)], snap()) == {("set_app_priority", "haste", "noop"): 1}
    assert rm.sent == []


def test_a_restart_keeps_cooldowns(tmp_path: Path) -> None:
    rm = FakeRM()
    make(tmp_path, rm, cooldown_s=300).act([rec()], snap())
    again = make(tmp_path, rm, cooldown_s=300)
    again.act([rec(value=8, previous=5)], snap())
    assert phases(again)[-1] == ("blocked", "cooldown")
    assert len(rm.sent) == 1


def test_a_rollback_holds_the_target(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, rollback_hold_s=600)
    # another process (yarn-advisor rollback) journals a restore of APP's priority
    Journal(tmp_path / "journal.jsonl").append(Entry(
        id="r1", phase=Phase.INTENT, policy="rollback", kind=Kind.SET_APP_PRIORITY,
        target=APP, value=0, previous=5, rollback_of="x", ts=NOW - 10))
    a.act([rec(), rec(target=OTHER)], snap())
    assert phases(a)[1] == ("blocked", "rollback_hold")
    assert rm.sent == [("set_app_priority", OTHER, 5)]


def test_counters_by_outcome_and_reason(tmp_path: Path) -> None:
    a = make(tmp_path, max_actions_per_cycle=1)
    a.act([rec(), rec(target=OTHER)], snap())
    a.act([rec(target=OTHER)], snap())
    assert a.totals == {("set_app_priority", "haste", "applied"): 2,
                        ("set_app_priority", "haste", "blocked"): 1}
    assert a.blocked == {"max_per_cycle": 1}


def test_a_repeated_block_is_counted_but_journaled_once(tmp_path: Path) -> None:
    a = make(tmp_path, kill_switch=True)
    for _ in range(3):
        a.act([rec()], snap())
    a.act([rec(value=6)], snap())
    assert a.blocked == {"kill_switch": 4}
    assert [e.value for e in a.journal.entries()] == [5, 6]


def test_a_value_the_lever_cannot_send_is_invalid_not_a_crash(tmp_path: Path) -> None:
    """Two partition labels on one node: the lever refuses before sending; the
    cycle's other writes go on."""
    rm = FakeRM()
    a = make(tmp_path, rm)
    counts = a.act([rec("replace_node_labels", N1, ["a", "b"]), rec(target=OTHER)], snap())
    assert counts == {("replace_node_labels", "haste", "invalid"): 1,
                      ("set_app_priority", "haste", "applied"): 1}
    assert rm.sent == [("set_app_priority", OTHER, 5)]


def test_blocked_lines_per_cycle_are_bounded_and_the_rest_summed_up(tmp_path: Path) -> None:
    from yarn_advisor.advisor.act.actuator import BLOCKED_LINES_PER_CYCLE

    apps = [app(f"application_1_{i:04d}", queue="root.etl") for i in range(300)]
    s = snapshot([node(N1)], apps, [])
    a = make(tmp_path, dry_run=True, max_actions_per_cycle=10)
    recs = [rec(target=x.id, value=7) for x in apps]
    counts = a.act(recs, s)
    assert counts == {("set_app_priority", "haste", "dry_run"): 10,
                      ("set_app_priority", "haste", "blocked"): 290}
    entries = a.journal.entries()
    one_by_one = [e for e in entries if e.phase is Phase.BLOCKED and e.count is None]
    (summary,) = [e for e in entries if e.count is not None]
    assert len(one_by_one) == BLOCKED_LINES_PER_CYCLE
    assert (summary.reason, summary.count, summary.target) == (
        "max_per_cycle", 290 - BLOCKED_LINES_PER_CYCLE, "*")
    assert a.blocked == {"max_per_cycle": 290}  # every block is still counted


@pytest.mark.parametrize(("kw", "kind", "words"), [
    ({"scheduler_type": "fairScheduler"}, "set_app_priority", "does not order"),
    ({"rm_conf": {"yarn.cluster.max-application-priority": "0"}}, "set_app_priority",
     "caps every application priority at 0"),
    ({"scheduler_type": "fifoScheduler"}, "update_scheduler_conf", "no scheduler-conf"),
])
def test_a_lever_the_rm_cannot_honour_is_blocked_and_said_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, kw: dict[str, Any], kind: str,
        words: str) -> None:
    value: Any = 5 if kind == "set_app_priority" else {"x": "1"}
    target = APP if kind == "set_app_priority" else "scheduler"
    rm = FakeRM()
    a = make(tmp_path, rm)
    for _ in range(2):
        a.act([rec(kind, target, value), rec("update_node_resource", N1,
                                             {"memory_mb": 9216, "vcores": 8})], snap(**kw))
    assert rm.sent == [("update_node_resource", N1, {"memory_mb": 9216, "vcores": 8})]
    assert a.blocked["lever_unavailable"] == 2
    (entry,) = [e for e in a.journal.entries() if e.reason == "lever_unavailable"]
    assert entry.error is not None and words in entry.error
    assert sum(words in r.getMessage() for r in caplog.records) == 1


def test_a_priority_the_rm_has_is_not_blocked(tmp_path: Path) -> None:
    rm = FakeRM()
    make(tmp_path, rm).act([rec()], snap(rm_conf={"yarn.cluster.max-application-priority": "10"}))
    assert rm.sent == [("set_app_priority", APP, 5)]


class CappingRM(FakeRM):
    """Accepts any priority and keeps the cluster's maximum, as the RM does."""

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        answer = super().send(kind, target, value)
        if isinstance(value, Priority):
            self.values[(kind, target)] = Priority(min(value.value, 3))
        return answer


def test_a_write_the_rm_did_not_keep_is_not_held(tmp_path: Path) -> None:
    a = make(tmp_path, CappingRM())
    assert a.act([rec(value=5)], snap()) == {("set_app_priority", "haste", "not_held"): 1}
    assert a.journal.entries()[-1].observed == 3
    tmp_path.joinpath("b").mkdir()
    b = make(tmp_path / "b", CappingRM())
    assert b.act([rec(value=2)], snap()) == {("set_app_priority", "haste", "applied"): 1}


def test_limits_per_kind(tmp_path: Path) -> None:
    kinds = {"update_node_resource": {"cooldown_s": 60, "max_actions_per_target": 30}}
    a = make(tmp_path, cooldown_s=300, kinds=kinds)
    a.clock = lambda: NOW + 61  # past the node's cooldown, within the default one
    first = [rec("update_node_resource", N1, {"memory_mb": 9216, "vcores": 8}),
             rec(target=APP, value=5)]
    a.act(first, snap())
    a.clock = lambda: NOW + 130
    again = [rec("update_node_resource", N1, {"memory_mb": 10240, "vcores": 8}),
             rec(target=APP, value=7)]
    counts = a.act(again, snap(taken_at=TS + 130_000))
    assert counts[(Kind.UPDATE_NODE_RESOURCE, "haste", "applied")] == 1
    assert counts[(Kind.SET_APP_PRIORITY, "haste", "blocked")] == 1  # 300 s cooldown
    with pytest.raises(Exception, match="unknown kind"):
        load(None, {"actuator": {"kinds": {"reboot": {"cooldown_s": 1}}}})


def test_going_back_to_the_original_value_is_never_rate_limited(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm, cooldown_s=300, max_actions_per_target=1)
    up = {"memory_mb": 12288, "vcores": 8}
    back = {"memory_mb": 8192, "vcores": 8}
    a.act([rec("update_node_resource", N1, up)], snap())
    # another raise right away is held by the cooldown; the return to 8192 is not
    counts = a.act([rec("update_node_resource", N1, {"memory_mb": 16384, "vcores": 8})], snap())
    assert counts[(Kind.UPDATE_NODE_RESOURCE, "haste", "blocked")] == 1
    counts = a.act([rec("update_node_resource", N1, back)], snap())
    assert counts[(Kind.UPDATE_NODE_RESOURCE, "haste", "applied")] == 1
    assert rm.values[(Kind.UPDATE_NODE_RESOURCE, N1)].to_json() == back
    # a restarted actuator knows the origin from the journal
    rm2 = FakeRM()
    tmp_path.joinpath("b").mkdir()
    b = make(tmp_path / "b", rm2, cooldown_s=300, max_actions_per_target=1)
    b.act([rec("update_node_resource", N1, up)], snap())
    c = make(tmp_path / "b", rm2, cooldown_s=300, max_actions_per_target=1)
    counts = c.act([rec("update_node_resource", N1, back)], snap())
    assert counts[(Kind.UPDATE_NODE_RESOURCE, "haste", "applied")] == 1


def test_the_configs_lever_kinds_are_the_actuators() -> None:
    from yarn_advisor.config.schema import LEVER_KINDS
    assert set(LEVER_KINDS) == {k.value for k in Kind if not k.advisory}


def test_the_memory_forgets_an_origin_once_no_guardrail_reads_it(tmp_path: Path) -> None:
    """A target's times dropped by the per-target window (shorter than the cooldown)
    while a later guard blocked it left its origin behind for good: the per-target
    maps grew with every application ever seen (+75 MB for 200,000)."""
    now = [NOW]
    a = Actuator(ActuatorSettings(cooldown_s=7200.0, target_window_s=3600.0,
                                  max_actions_per_cycle=1),
                 Journal(tmp_path / "journal.jsonl"), Writer(FakeRM()), False, {},
                 clock=lambda: now[0])

    def at(t: float, recs: list[Recommendation]) -> None:
        now[0] = NOW + t
        a.act(recs, snap(taken_at=int(now[0] * 1000)))

    key = (Kind.SET_APP_PRIORITY, APP)
    at(0, [rec(value=5)])
    assert key in a.memory.origins
    at(5000, [rec(target=OTHER), rec(value=7, previous=5)])  # APP: max_per_cycle
    assert phases(a)[-1] == ("blocked", "max_per_cycle")
    at(8000, [])  # past the cooldown: nothing reads APP's memory any more
    assert key not in a.memory.origins and key not in a.memory.owners
    assert key not in a.memory.times


def test_the_levers_the_rm_cannot_honour_are_said_once_at_start(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # No recommendation at all: the first cycle already says which levers cannot hold
    # (once each, however many cycles), and once more when one comes back.
    caplog.set_level(logging.INFO, "yarn_advisor")
    a = make(tmp_path)
    capped = snap(rm_conf={"yarn.cluster.max-application-priority": "0"})
    for _ in range(3):
        a.act([], capped)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1
    assert "set_app_priority" in said[0]
    assert "yarn rmadmin -refreshClusterMaxPriority" in said[0] and "no RM restart" in said[0]
    a.act([], snap(rm_conf={"yarn.cluster.max-application-priority": "10"}))
    assert "can take effect again" in caplog.records[-1].getMessage()
    a.act([], snap(scheduler_type="fairScheduler"))
    news = [r.getMessage() for r in caplog.records[len(said) + 1:]]
    assert sorted(m.split()[0] for m in news) == ["set_app_priority", "update_scheduler_conf"]
