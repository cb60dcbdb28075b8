"""The harm watchdog's application signals: AM attempts that failed, containers the RM
preempted, and runs slower than the same job's recent runs, each counted only on the
targets of the policy that changed them (and, for slow runs, only where it raised them).
The apps' sensed fields come from the RM's app body (tests/unit/test_rm_app_fields.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from _snapshots import app
from test_actuator import APP, N1, NOW, OTHER, FakeRM, rec, snap
from test_watchdog import make

from yarn_advisor.advisor.act.app_harm import JOBS_KEPT, RUNS_KEPT, AppHarm
from yarn_advisor.advisor.act.journal import Phase
from yarn_advisor.advisor.act.watchdog import Signal
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import NodeResource, Priority
from yarn_advisor.advisor.model.snapshot import App, Snapshot
from yarn_advisor.config.schema import WatchdogSettings


def apps(s: Snapshot, **by_id: dict[str, Any]) -> Snapshot:
    """``s`` with some of its apps' fields replaced (by app id)."""
    return dataclasses.replace(s, apps=tuple(
        dataclasses.replace(a, **by_id.get(a.id, {})) for a in s.apps))


def trips(a: Any) -> list[tuple[str, str, str, int]]:
    return [(e.policy, e.reason, e.target, e.count) for e in a.journal.entries()
            if e.phase is Phase.TRIPPED]


# --- AM failures -----------------------------------------------------------------------
def test_am_attempts_failing_after_a_priority_raise_trip_the_policy(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    first = apps(snap(), **{APP: {"am_attempt": 1, "am_node_id": N1},
                            OTHER: {"am_attempt": 1}})
    assert a.act([rec(policy="haste")], first) == {(Kind.SET_APP_PRIORITY, "haste", "applied"): 1}
    assert rm.values[(Kind.SET_APP_PRIORITY, APP)] == Priority(5)
    a.act([], apps(first, **{APP: {"am_attempt": 2, "priority": 5}}))
    assert a.enforcing("haste")  # one failed attempt: below am_failures (2)
    a.act([], apps(first, **{APP: {"am_attempt": 3, "priority": 5}}))
    assert trips(a) == [("haste", "am_failures", APP, 2)]
    assert a.trips == {("haste", Signal.AM_FAILURES): 1}
    assert not a.enforcing("haste")
    assert rm.values[(Kind.SET_APP_PRIORITY, APP)] == Priority(0)  # rolled back


def test_am_failures_of_apps_no_policy_changed_do_not_trip(tmp_path: Path) -> None:
    a = make(tmp_path, FakeRM())
    first = apps(snap(), **{APP: {"am_attempt": 1}, OTHER: {"am_attempt": 1}})
    a.act([rec(policy="haste")], first)
    a.act([], apps(first, **{OTHER: {"am_attempt": 4}}))
    assert a.enforcing("haste") and not trips(a)


def test_an_am_that_failed_on_a_node_the_policy_enlarged_counts(tmp_path: Path) -> None:
    a = make(tmp_path, FakeRM())
    first = apps(snap(), **{OTHER: {"am_attempt": 1, "am_node_id": N1}})
    a.act([rec("update_node_resource", N1, {"memory_mb": 12288, "vcores": 8},
               policy="opera")], first)
    # its next attempt runs elsewhere: the failed one ran on N1
    a.act([], apps(first, **{OTHER: {"am_attempt": 3, "am_node_id": "h2:8041"}}))
    assert trips(a) == [("opera", "am_failures", N1, 2)]


# --- preemptions -------------------------------------------------------------------------
def test_preemptions_in_a_queue_the_policy_reconfigured_trip_it(tmp_path: Path) -> None:
    a = make(tmp_path, FakeRM(), preemptions=4)
    first = snap()
    cut = rec("update_scheduler_conf", "root.etl", {"maximum-capacity": "50"},
              previous=None, policy="anacrac")
    assert a.act([cut], first) == {(Kind.UPDATE_SCHEDULER_CONF, "anacrac", "applied"): 1}
    a.act([], apps(first, **{OTHER: {"preempted_containers": 9}}))  # root.adhoc: not its
    assert a.enforcing("anacrac")
    a.act([], apps(first, **{APP: {"preempted_containers": 3},
                             OTHER: {"preempted_containers": 9}}))
    assert a.enforcing("anacrac")
    a.act([], apps(first, **{APP: {"preempted_containers": 5},
                             OTHER: {"preempted_containers": 9}}))
    assert trips(a) == [("anacrac", "preemptions", "root.etl", 5)]


# --- slow runs -----------------------------------------------------------------------------
def run(i: int, elapsed_s: float, name: str = "etl-nightly") -> App:
    return dataclasses.replace(app(f"application_1_{100 + i:04d}", queue="root.etl", name=name),
                               elapsed_time=int(elapsed_s * 1000))


def history(a: Any, s: Snapshot, n: int = 3) -> None:
    """``n`` earlier runs of etl-nightly, 100 s each, seen live and then gone."""
    for i in range(n):
        a.act([], dataclasses.replace(s, apps=(*s.apps, run(i, 100))))
        a.act([], s)


def slow_on_n1(s: Snapshot, elapsed_s: float, first: int = 10) -> Snapshot:
    """Two live etl-nightly runs at ``elapsed_s``, each with a container on N1."""
    runs = (run(first, elapsed_s), run(first + 1, elapsed_s))
    extra = tuple(dataclasses.replace(s.containers[0], id=f"container_1_{r.id[-4:]}_01_000002",
                                      app_id=r.id) for r in runs)
    return dataclasses.replace(s, apps=(*s.apps, *runs), containers=(*s.containers, *extra))


def test_runs_slowed_on_a_node_the_policy_enlarged_trip_it(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    s = snap()
    history(a, s)
    a.act([rec("update_node_resource", N1, {"memory_mb": 12288, "vcores": 8},
               policy="opera")], s)
    enlarged = dataclasses.replace(s, nodes=tuple(
        dataclasses.replace(n, total=dataclasses.replace(n.total, memory_mb=12288))
        if n.id == N1 else n for n in s.nodes))
    a.act([], slow_on_n1(enlarged, 150))  # 1.5 x the median: not slowed
    assert a.enforcing("opera")
    a.act([], slow_on_n1(enlarged, 260, first=20))  # 2.6 x, 160 s beyond
    assert trips(a) == [("opera", "slow_jobs", N1, 2)]
    assert rm.values[(Kind.UPDATE_NODE_RESOURCE, N1)] == NodeResource(8192, 8)


def test_runs_a_policy_lowered_are_not_its_harm(tmp_path: Path) -> None:
    """HaSTE lowers an app's priority on purpose: its slow-down is the intent."""
    rm = FakeRM()
    a = make(tmp_path, rm)
    s = snap()
    history(a, s)
    slow = slow_on_n1(s, 400)
    for r in slow.apps[2:]:
        rm.values[(Kind.SET_APP_PRIORITY, r.id)] = Priority(3)
    lower = [rec(target=r.id, value=0, previous=3, policy="haste") for r in slow.apps[2:]]
    a.act(lower, slow)
    a.act([], slow_on_n1(s, 400, first=20))
    assert a.enforcing("haste") and not trips(a)
    # the same slow runs after a raise are its harm
    rm = FakeRM()
    b = make(tmp_path / "raise", rm)
    history(b, s)
    fast = slow_on_n1(s, 90, first=30)
    for r in fast.apps[2:]:
        rm.values[(Kind.SET_APP_PRIORITY, r.id)] = Priority(0)
    b.act([rec(target=r.id, value=7, policy="haste") for r in fast.apps[2:]], fast)
    raised = apps(slow_on_n1(s, 400, first=30),
                  **{r.id: {"priority": 7} for r in fast.apps[2:]})
    b.act([], raised)
    assert [t[:2] for t in trips(b)] == [("haste", "slow_jobs")]


def test_a_job_needs_its_recent_runs_before_it_can_be_slow() -> None:
    harm = AppHarm(WatchdogSettings())
    s = snap()
    for i in range(2):
        harm.observe(dataclasses.replace(s, apps=(*s.apps, run(i, 100))), NOW)
        harm.observe(s, NOW)
    harm.observe(dataclasses.replace(s, apps=(*s.apps, run(5, 1000))), NOW)
    assert not harm.slowed  # 2 runs kept, slow_min_runs is 3
    assert harm.runs("u", "etl-nightly") == (100_000, 100_000)


def test_the_runs_kept_are_bounded() -> None:
    harm = AppHarm(WatchdogSettings())
    s = snap()
    for i in range(RUNS_KEPT + 3):
        harm.observe(dataclasses.replace(s, apps=(*s.apps, run(i, 100 + i))), NOW)
        harm.observe(s, NOW)
    assert len(harm.runs("u", "etl-nightly")) == RUNS_KEPT
    assert harm.runs("u", "etl-nightly")[-1] == (100 + RUNS_KEPT + 2) * 1000
    many = tuple(run(i, 10, name=f"job-{i}") for i in range(JOBS_KEPT + 5))
    harm.observe(dataclasses.replace(s, apps=(*s.apps, *many)), NOW)
    harm.observe(s, NOW)
    assert len(harm._runs) == JOBS_KEPT
    assert not harm.runs("u", "job-0") and harm.runs("u", f"job-{JOBS_KEPT + 4}")
