"""OPERA's lending scan (``bulk.node_update_lend``) and its bound, ``MAX_MISSES``.

Its contract: on one node, the groups are taken in queue order (only the
eligible ones once GA is spent), each takes what fits of GA, then, if
eligible, of OA (at most ``lend_cap``); the scan stops after ``MAX_MISSES``
groups *in a row* that took nothing (groups already served are passed over
and do not count), or when neither GA nor OA has room for the smallest
demand. Served groups at the front leave both queues. Short of the bound,
the result is Alg 2 applied one task at a time over the whole queue; the
bound is what keeps a big cluster's cycle cheap: a node with room for none
of the queue looks at ``MAX_MISSES`` groups, not all of them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yarn_advisor.advisor.policies.opera import bulk
from yarn_advisor.advisor.policies.opera import core as oc
from yarn_advisor.advisor.policies.opera.inputs import Group

MAX_MISSES = bulk.MAX_MISSES  # read once: the tests' expectations stay fixed
ROOM = (2048.0, 4.0)  # GA and OA of a node with some room
TOO_BIG = ((4096.0, 1.0), (1024.0, 8.0))  # each above ROOM in one resource
FITS = (1024.0, 1.0)
MIN_DEMAND = (1024.0, 1.0)  # the componentwise minimum of the demands above


def group(i: int, demand: oc.Vec, left: int = 1, eligible: bool = False) -> Group:
    return Group(f"g{i}", f"app{i}", 1, oc.Task(f"g{i}", demand, eligible), left, "", "")


def misfits(n: int, start: int = 0) -> list[Group]:
    """``n`` groups that fit nowhere on a ``ROOM`` node (yet above the minimum demand)."""
    return [group(start + i, TOO_BIG[i % 2]) for i in range(n)]


def lend(groups: list[Group], ga: oc.Vec = ROOM, oa: oc.Vec = ROOM,
         min_demand: oc.Vec = MIN_DEMAND) -> tuple[str, oc.Slot, deque[Group], deque[Group]]:
    """One node's call, on queues built as ``Queue.in_order`` builds them."""
    q = deque(groups)
    short = deque(g for g in groups if g.task.eligible)
    slot = oc.Slot(ga, oa)
    return bulk.node_update_lend(slot, q, short, min_demand), slot, q, short


# --- the bound ------------------------------------------------------------------


@pytest.mark.parametrize(("n_misfits", "reached"),
                         [(0, True), (MAX_MISSES - 1, True), (MAX_MISSES, False),
                          (10 * MAX_MISSES, False)])
def test_the_scan_stops_after_max_misses_groups_in_a_row_that_fit_nowhere(
        n_misfits: int, reached: bool) -> None:
    target = group(-1, FITS)
    branch, slot, _, _ = lend([*misfits(n_misfits), target])
    assert (target.left == 0) is reached
    assert slot.assigned == ([(target.task, "normal")] if reached else [])
    assert branch == "nothing_lent"  # a normal assignment lends nothing


def test_misses_count_in_a_row_a_group_that_takes_something_resets_them() -> None:
    # 20 runs of MAX_MISSES - 1 misfits, each followed by a group that fits (1 MiB, so
    # all 20 fit in ROOM): 1,280 misfits in all, never MAX_MISSES in a row
    queue: list[Group] = []
    hits = []
    for r in range(20):
        queue += misfits(MAX_MISSES - 1, start=r * MAX_MISSES)
        hits.append(group(r * MAX_MISSES + MAX_MISSES - 1, (1.0, 0.1)))
        queue.append(hits[-1])
    _, slot, _, _ = lend(queue)
    assert all(h.left == 0 for h in hits)
    assert len(slot.assigned) == 20


def test_groups_already_served_are_passed_over_and_are_not_misses() -> None:
    served = [group(1000 + i, TOO_BIG[0], left=0) for i in range(500)]
    after_served = group(-1, FITS)
    lend([*misfits(MAX_MISSES - 2), *served, *misfits(1, start=2000), after_served])
    assert after_served.left == 0  # MAX_MISSES - 1 misses: 500 served groups did not count
    cut = group(-2, FITS)
    lend([*misfits(MAX_MISSES - 1), *served, *misfits(1, start=2000), cut])
    assert cut.left == 1  # ...nor did they reset the count: MAX_MISSES misfits in a row


def test_served_groups_at_the_front_leave_both_queues() -> None:
    done = [group(i, FITS, left=0, eligible=i % 2 == 0) for i in range(6)]
    waiting = group(99, TOO_BIG[0], eligible=True)
    _, _, q, short = lend([*done, waiting])
    assert list(q) == [waiting] and list(short) == [waiting]


@dataclass(slots=True)
class CountedGroup(Group):
    """A group that records each scan that looks at its task."""

    def __getattribute__(self, name: str) -> object:
        if name == "task":
            LOOKED.add(object.__getattribute__(self, "key"))
        return object.__getattribute__(self, name)


LOOKED: set[str] = set()


def test_on_a_large_cluster_where_nothing_fits_each_node_looks_at_max_misses_groups() -> None:
    n_nodes, n_groups = 2_000, 5_000
    groups: list[Group] = [CountedGroup(f"g{i}", f"app{i}", 1,
                                        oc.Task(f"g{i}", TOO_BIG[i % 2], i % 3 == 0), 1, "", "")
                           for i in range(n_groups)]
    last = CountedGroup("last", "app-last", 1, oc.Task("last", FITS, True), 1, "", "")
    groups.append(last)
    q = deque(groups)
    short = deque(g for g in groups if g.task.eligible)
    looked = []
    for _ in range(n_nodes):  # as advice.py does: every node of the partition, same queues
        LOOKED.clear()
        slot = oc.Slot(ROOM, ROOM)
        assert bulk.node_update_lend(slot, q, short, MIN_DEMAND) == "nothing_lent"
        looked.append(len(LOOKED))
        assert slot.assigned == []
    # without the bound each node would look at all 5,001 groups and the last one, which
    # fits, would be served by the first node: 10 million looks instead of 128,000
    assert looked == [MAX_MISSES] * n_nodes
    assert last.left == 1
    assert len(q) == n_groups + 1  # nothing served, nothing dropped


def test_a_node_whose_ga_is_spent_scans_only_the_short_groups() -> None:
    # GA spent: the long groups cannot take anything and are not looked at, so
    # MAX_MISSES of them in front of a short group do not end the scan
    longs = misfits(MAX_MISSES)
    short_one = group(-1, FITS, eligible=True)
    branch, slot, _, _ = lend([*longs, short_one], ga=(0.0, 0.0))
    assert short_one.left == 0 and slot.assigned == [(short_one.task, "opportunistic")]
    assert branch == "lent" and slot.lent == FITS


# --- short of the bound: Alg 2 one task at a time ----------------------------------


def alg2_one_by_one(slot: oc.Slot, groups: list[Group], min_demand: oc.Vec,
                    bound: int | None) -> bool:
    """The oracle: Alg 2's ``assign`` task by task over the queue, at most ``lend_cap``
    lent per group; with ``bound``, stopping after that many groups in a row that took
    nothing. Returns whether the bound cut the scan."""
    if oc.below(slot.ga, min_demand) and oc.below(slot.oa, min_demand):
        return False
    lane = [g for g in groups if g.task.eligible] if oc.below(slot.ga, min_demand) else groups
    misses = 0
    for g in lane:
        if g.left <= 0:
            continue
        took = 0
        while g.left > 0:
            if oc.normal_assign(slot, g.task):
                pass
            elif g.lend_cap > 0 and oc.opportunistic_assign(slot, g.task):
                g.lend_cap -= 1
            else:
                break
            g.left -= 1
            took += 1
        misses = 0 if took else misses + 1
        if bound is not None and misses >= bound:
            return True
    return False


DEMANDS = st.sampled_from([(512.0, 1.0), (1024.0, 1.0), (1536.0, 2.0), (4096.0, 1.0),
                           (1024.0, 8.0), (3072.0, 3.0), (8192.0, 4.0)])


@st.composite
def queues(draw: st.DrawFn) -> list[tuple[oc.Vec, int, bool, int]]:
    """Long stretches of misfits (so that the bound is reached in some cases)."""
    out = []
    for _ in range(draw(st.integers(0, 6))):
        out += [((8192.0, 16.0), 1, False, 1)] * draw(st.integers(0, MAX_MISSES + 8))
        out += draw(st.lists(st.tuples(DEMANDS, st.integers(0, 5), st.booleans(),
                                       st.integers(0, 4)), max_size=8))
    return out


def build(spec: list[tuple[oc.Vec, int, bool, int]]) -> list[Group]:
    return [Group(f"g{i}", "a", 1, oc.Task(f"g{i}", d, e), left, "", "", cap)
            for i, (d, left, e, cap) in enumerate(spec)]


def outcome(slot: oc.Slot, groups: list[Group]) -> object:
    return (slot.ga, slot.oa, slot.lent, slot.assigned,
            [(g.key, g.left, g.lend_cap) for g in groups])


@settings(max_examples=300, deadline=None)
@given(spec=queues(),
       ga=st.tuples(st.sampled_from([0.0, 1024.0, 6144.0]), st.sampled_from([0.0, 2.0, 6.0])),
       extra=st.tuples(st.sampled_from([0.0, 2048.0, 8192.0]), st.sampled_from([0.0, 4.0])))
def test_the_result_is_alg2_task_by_task_cut_at_the_bound(
        spec: list[tuple[oc.Vec, int, bool, int]], ga: oc.Vec, extra: oc.Vec) -> None:
    oa = (ga[0] + extra[0], ga[1] + extra[1])
    demands = [d for d, *_ in spec] or [(512.0, 1.0)]
    min_demand = (min(d[0] for d in demands), min(d[1] for d in demands))
    got_groups = build(spec)
    got = oc.Slot(ga, oa)
    bulk.node_update_lend(got, deque(got_groups), deque(g for g in got_groups if g.task.eligible),
                          min_demand)
    cut_groups, full_groups = build(spec), build(spec)
    cut, full = oc.Slot(ga, oa), oc.Slot(ga, oa)
    was_cut = alg2_one_by_one(cut, cut_groups, min_demand, MAX_MISSES)
    alg2_one_by_one(full, full_groups, min_demand, None)
    assert outcome(got, got_groups) == outcome(cut, cut_groups)
    if not was_cut:  # short of the bound: the same as scanning the whole queue
        assert outcome(got, got_groups) == outcome(full, full_groups)
