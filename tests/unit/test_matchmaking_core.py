"""matchmaking.core (locality markers, Eq 1) and the scripted-heartbeat oracle of the tests."""

from __future__ import annotations

import pytest
from _matchmaking_sim import Heartbeat, SimJob, compare_with_delay, simulate

from yarn_advisor.advisor.policies.matchmaking.core import locality_rate, step_markers


def test_eq1_locality_rate() -> None:
    assert locality_rate(3, 4) == 0.75
    assert locality_rate(0, 0) is None


# --- Tables 1-2 on the marker state machine ----------------------------------------------


def test_marker_first_miss_marks_second_miss_allows_a_non_local_task() -> None:
    s1 = step_markers({}, {"a": False, "b": True}, reset=False)
    assert s1.markers == {"a": 0, "b": 1}
    assert (s1.newly_marked, s1.local_hits, s1.eligible_nonlocal) == (("a",), ("b",), ())
    s2 = step_markers(s1.markers, {"a": False, "b": True}, reset=False)
    assert s2.markers == {"a": 0, "b": 2}
    assert s2.eligible_nonlocal == ("a",)
    s3 = step_markers(s2.markers, {"a": True}, reset=False)  # b offered nothing: unchanged
    assert s3.markers == {"a": 1, "b": 2}


def test_new_job_clears_all_markers() -> None:
    s = step_markers({"a": 0, "b": 3}, {"a": False}, reset=True)
    assert s.markers == {"a": 0}  # cleared, then a's first miss marks it again
    assert s.eligible_nonlocal == ()


# --- the simulator's branches ---------------------------------------------------------------


def _round(nodes: list[str], t0: float, slots: int = 1, dt: float = 0.01) -> list[Heartbeat]:
    return [Heartbeat(t0 + i * dt, n, slots) for i, n in enumerate(nodes)]


def test_matchmaking_relaxes_job_order_for_local_tasks() -> None:
    jobs = [SimJob("j1", 0.0, (frozenset({"b"}),)), SimJob("j2", 0.0, (frozenset({"a"}),))]
    r = simulate("matchmaking", jobs, _round(["a", "b"], 0.0))
    assert [(a.node, a.job, a.local) for a in r.assignments] == [
        ("a", "j2", True),
        ("b", "j1", True),
    ]
    fifo = simulate("fifo", jobs, _round(["a", "b"], 0.0))
    assert [(a.node, a.job, a.local) for a in fifo.assignments] == [
        ("a", "j1", False),
        ("b", "j2", False),
    ]


def test_matchmaking_waits_one_round_then_one_non_local_task_per_heartbeat() -> None:
    # the input lives on "c", which never has a free slot
    jobs = [SimJob("j", 0.0, (frozenset({"c"}),) * 3)]
    script = _round(["a", "b"], 0.0, slots=2) + _round(["a", "b"], 3.0, slots=2)
    r = simulate("matchmaking", jobs, script)
    assert all(a.time >= 3.0 for a in r.assignments)  # first round: both nodes only marked
    assert [(a.node, a.local) for a in r.assignments] == [("a", False), ("b", False)]
    assert r.unassigned == 1  # two free slots each, but one non-local task per heartbeat
    delay0 = simulate("delay", jobs, script, delay=0.0)
    assert len(delay0.assignments) == 3  # delay scheduling may take several at once


def test_job_arrival_resets_markers() -> None:
    j1 = SimJob("j1", 0.0, (frozenset({"z"}),))
    j2 = SimJob("j2", 2.0, (frozenset({"z"}),))
    script = [Heartbeat(0.0, "a"), Heartbeat(2.5, "a"), Heartbeat(5.0, "a")]
    r = simulate("matchmaking", [j1, j2], script)
    # t=0 marks a; j2 arrives at 2 and clears the marker, so t=2.5 only marks again
    assert [(a.time, a.job) for a in r.assignments] == [(5.0, "j1")]
    without_j2 = simulate("matchmaking", [j1], script)
    assert [(a.time, a.job) for a in without_j2.assignments] == [(2.5, "j1")]


def test_local_hit_then_miss_in_the_same_heartbeat_marks_the_node() -> None:
    jobs = [SimJob("j", 0.0, (frozenset({"a"}), frozenset({"z"})))]
    r = simulate("matchmaking", jobs, [Heartbeat(0.0, "a", 2), Heartbeat(3.0, "a", 1)])
    assert [(a.time, a.local) for a in r.assignments] == [(0.0, True), (3.0, False)]


def test_delay_waits_d_before_non_local() -> None:
    jobs = [SimJob("j", 0.0, (frozenset({"z"}),))]
    script = [Heartbeat(t, "a") for t in (0.0, 1.0, 2.0, 3.0)]
    r = simulate("delay", jobs, script, delay=2.0)
    assert [(a.time, a.local, a.wait) for a in r.assignments] == [(2.0, False, 2.0)]


# --- the paper's example: a 5-map job on a 100-node cluster -------------------------------

NODES = [f"n{i:02d}" for i in range(100)]
# 3 replicas per block, all on the last 15 nodes to heartbeat (85 nodes hold no input)
FIVE_MAPS = SimJob("small", 0.0, tuple(frozenset(NODES[85 + 3 * k : 88 + 3 * k]) for k in range(5)))
HEARTBEAT = 3.0  # seconds, as in the paper's cluster


def _rounds(n: int) -> list[Heartbeat]:
    return [
        Heartbeat(r * HEARTBEAT + i * HEARTBEAT / 100, node)
        for r in range(n)
        for i, node in enumerate(NODES)
    ]


def test_five_map_job_on_100_nodes() -> None:
    script = _rounds(3)
    fifo = simulate("fifo", [FIVE_MAPS], script)
    assert fifo.locality_rate == 0.0  # the first five nodes to heartbeat take all five maps
    assert {a.node for a in fifo.assignments} == set(NODES[:5])
    mm = simulate("matchmaking", [FIVE_MAPS], script)
    assert mm.locality_rate == 1.0 and mm.unassigned == 0
    assert mm.mean_wait is not None and mm.mean_wait < HEARTBEAT  # all in the first round


@pytest.mark.parametrize("d, rate", [(0.0, 0.0), (1.0, 0.0), (2.5, 0.0), (2.6, 1.0), (4.5, 1.0)])
def test_five_map_job_delay_scheduling_depends_on_d(d: float, rate: float) -> None:
    cmp = compare_with_delay([FIVE_MAPS], _rounds(3), d)
    assert cmp["delay"].locality_rate == rate
    assert cmp["matchmaking"].locality_rate == 1.0
    assert cmp["fifo"].locality_rate == 0.0
    delay_wait, mm_wait = cmp["delay"].mean_wait, cmp["matchmaking"].mean_wait
    assert delay_wait is not None and mm_wait is not None
    if rate == 1.0:
        assert delay_wait == pytest.approx(mm_wait)  # at a well-tuned D they coincide
