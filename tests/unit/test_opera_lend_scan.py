"""OPERA's lending scan (``bulk.node_update_lend``) skips the arithmetic for a group
whose demand was already seen not to fit the room as it stands. These tests check
that it gives exactly what the plain scan (one ``fit_count`` per group, kept here as
the oracle) gives: the same charges in the same order, the same groups left, the
same lend caps and the same branch, node after node over one shared queue."""

from __future__ import annotations

import math
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from yarn_advisor.advisor.policies.opera import core as oc
from yarn_advisor.advisor.policies.opera.bulk import (
    MAX_MISSES,
    _charge,
    fit_count,
    node_update_lend,
)
from yarn_advisor.advisor.policies.opera.inputs import Group


def plain_scan(slot: oc.Slot, groups: deque[Group], short: deque[Group],
               min_demand: oc.Vec) -> str:
    """The scan before the miss cache: every group's fit computed afresh."""
    if oc.below(slot.ga, min_demand) and oc.below(slot.oa, min_demand):
        return "no_resources"
    for lane in (groups, short):
        while lane and lane[0].left <= 0:
            lane.popleft()
    misses = 0
    for g in (short if oc.below(slot.ga, min_demand) else groups):
        if g.left <= 0:
            continue
        t = g.task
        kn = min(g.left, fit_count(t.demand, slot.ga))
        if kn:
            _charge(slot, t, kn, True)
        ko = min(g.left - kn, g.lend_cap, fit_count(t.demand, slot.oa)) if t.eligible else 0
        if ko:
            _charge(slot, t, ko, False)
            g.lend_cap -= ko
        g.left -= kn + ko
        misses = 0 if kn + ko else misses + 1
        if misses >= MAX_MISSES:
            break
        if oc.below(slot.oa, min_demand) and oc.below(slot.ga, min_demand):
            break
    return "lent" if slot.lent != (0.0, 0.0) else "nothing_lent"


SIZES = [(1024.0, 1.0), (2048.0, 1.0), (4096.0, 2.0), (8192.0, 4.0), (1536.0, 0.0),
         (3072.0, 1.0)]
group_st = st.tuples(st.sampled_from(SIZES), st.booleans(), st.integers(0, 40),
                     st.sampled_from([1 << 62, 0, 1, 3, 10, -2]))
room_st = st.tuples(st.integers(-4, 40).map(lambda k: k * 512.0),
                    st.one_of(st.integers(-1, 16).map(float), st.just(math.inf)))
node_st = st.tuples(room_st, room_st)


def _queue(spec: list[tuple[oc.Vec, bool, int, int]]) -> tuple[deque[Group], deque[Group]]:
    gs = [Group(f"g{i}", f"app{i}", 1, oc.Task(f"g{i}", d, eligible), left, "", "", cap)
          for i, (d, eligible, left, cap) in enumerate(spec)]
    return deque(gs), deque(g for g in gs if g.task.eligible)


def _run(scan: object, spec: list[tuple[oc.Vec, bool, int, int]],
         nodes: list[tuple[oc.Vec, oc.Vec]], min_demand: oc.Vec) -> list[object]:
    groups, short = _queue(spec)
    everything = list(groups)
    out: list[object] = []
    for ga, oa in nodes:
        slot = oc.Slot(ga, oa)
        branch = scan(slot, groups, short, min_demand)  # type: ignore[operator]
        out.append((branch, slot.ga, slot.oa, slot.lent,
                    [(t.key, how) for t, how in slot.assigned]))
    out.append([(g.key, g.left, g.lend_cap) for g in everything])
    out.append(([g.key for g in groups], [g.key for g in short]))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(group_st, min_size=1, max_size=150), st.lists(node_st, min_size=1, max_size=12))
def test_lend_scan_matches_the_plain_scan(spec: list[tuple[oc.Vec, bool, int, int]],
                                          nodes: list[tuple[oc.Vec, oc.Vec]]) -> None:
    min_demand = (min(d[0] for d, *_ in spec), min(d[1] for d, *_ in spec))
    assert _run(node_update_lend, spec, nodes, min_demand) == _run(
        plain_scan, spec, nodes, min_demand)


def test_many_misses_then_a_fit_is_served_the_same_way() -> None:
    # 70 groups too big for the node, then one that fits: both stop at MAX_MISSES
    spec = [((8192.0, 4.0), True, 5, 1 << 62)] * 70 + [((1024.0, 1.0), True, 3, 1 << 62)]
    nodes = [((4096.0, 4.0), (6144.0, 6.0)), ((16384.0, 8.0), (2048.0, 2.0))]
    got = _run(node_update_lend, spec, nodes, (1024.0, 1.0))
    assert got == _run(plain_scan, spec, nodes, (1024.0, 1.0))
    assert got[0][0] == "nothing_lent" and got[0][4] == []  # stopped before the fitting group
    assert got[1][0] == "nothing_lent" and len(got[1][4]) > 0  # the big node serves the head
