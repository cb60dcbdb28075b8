"""Alg 4 (multi-chance reservation) over request *groups* of identical tasks,
and Alg 2 without reservations (:func:`node_update_lend`, the sidecar default).

Same answer as Alg 4 of the paper fed the
groups' tasks one by one (a property test checks it), but the consecutive
identical tasks at the head of the queue are assigned in one step: with
Alg 2's strict test, the number of units of demand ``d`` that fit one after
the other in ``X`` is the largest ``k`` with ``k * d < X`` in every resource
(:func:`fit_count`). A node with room for thousands of tasks then costs a
few steps instead of thousands, which keeps a 10,000-node cycle cheap.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Protocol

from yarn_advisor.advisor.policies.opera.core import Reserved, Slot, Task, Vec, assign, below
from yarn_advisor.advisor.policies.opera.inputs import Group

UNBOUNDED = 1 << 62


class Pool(Protocol):
    """The head of a node's task queue (GetNextTaskFromQueue, group-wise)."""

    def peek(self) -> tuple[Task, int] | None:
        """The next task, not taken yet, and how many identical ones its group has."""
        ...

    def take(self, n: int) -> None:
        """Take ``n`` tasks of the head group."""
        ...


def fit_count(d: Vec, avail: Vec) -> int:
    """How many tasks of demand ``d`` pass ``d < avail`` one after the other."""
    k = UNBOUNDED
    for i in (0, 1):
        have, need = avail[i], d[i]
        if have == math.inf:
            continue
        if need > 0:
            n = math.ceil(have / need) - 1
            if n < k:
                k = n
        elif have <= 0:
            return 0
    return k if k > 0 else 0


def _charge(slot: Slot, t: Task, k: int, normal: bool) -> None:
    d = (t.demand[0] * k, t.demand[1] * k)
    if normal:
        slot.ga = (slot.ga[0] - d[0], slot.ga[1] - d[1])
    else:
        slot.lent = (slot.lent[0] + d[0], slot.lent[1] + d[1])
    slot.oa = (slot.oa[0] - d[0], slot.oa[1] - d[1])
    slot.assigned.extend([(t, "normal" if normal else "opportunistic")] * k)


def node_update_multi_bulk(
    slot: Slot, reserved: list[Reserved], pool: Pool, min_demand: Vec, eps_r: int, eps_s: int
) -> str:
    """Alg 4 on one heartbeat, group-wise; ``reserved`` is updated in place."""
    if below(slot.ga, min_demand) and below(slot.oa, min_demand):
        return "no_resources"
    for tr in list(reserved):
        if assign(slot, tr.task):
            reserved.remove(tr)
        else:
            tr.skip += 1
            if tr.skip > eps_s:
                return "skip_limit"
    max_skip = max((r.skip for r in reserved), default=0)
    while True:
        if len(reserved) > eps_r or max_skip > eps_s:
            return "queue_limit"
        head = pool.peek()
        if head is None:
            return "queue_empty"
        t, cap = head
        if reserved:
            cap = min(cap, eps_s - max_skip + 1)  # assignments before maxSkip > eps_s
        kn = min(cap, fit_count(t.demand, slot.ga))
        if kn:
            _charge(slot, t, kn, True)
        ko = min(cap - kn, fit_count(t.demand, slot.oa)) if t.eligible else 0
        if ko:
            _charge(slot, t, ko, False)
        if kn + ko:
            pool.take(kn + ko)
            for tr in reserved:
                tr.skip += kn + ko
            if reserved:
                max_skip += kn + ko
            continue
        pool.take(1)  # the head task fits nowhere: reserve it
        reserved.append(Reserved(t, 1))
        max_skip = max(max_skip, 1)


# groups in a row that fit nowhere on a node before its scan stops: a node with room
# for none of them would otherwise walk the whole queue (10k nodes x 5k groups)
MAX_MISSES = 64


def node_update_lend(slot: Slot, groups: deque[Group], short: deque[Group],
                     min_demand: Vec) -> str:
    """Alg 2 over the queue, group-wise, without reservations: each group in queue
    order takes what fits of GA (normal), then, if eligible, of OA (lent); a group
    that fits nowhere is passed over, not reserved (the RM serves it from normal
    capacity when some frees). Once GA is spent only the eligible groups
    (``short``, a sub-sequence of ``groups`` in the same order) are looked at."""
    if below(slot.ga, min_demand) and below(slot.oa, min_demand):
        return "no_resources"
    for lane in (groups, short):  # served groups leave the front: linear over the nodes
        while lane and lane[0].left <= 0:
            lane.popleft()
    misses = 0
    # demands that fit none of GA (OA) as they stand: fit_count is a pure function of
    # (demand, room) and the room changes only when something is charged, so a group of
    # a demand seen not to fit is a miss without the arithmetic (most of a big cluster's
    # scan is such misses); both sets are emptied whenever the room changes
    no_ga: set[Vec] = set()
    no_oa: set[Vec] = set()
    for g in (short if below(slot.ga, min_demand) else groups):
        left = g.left
        if left <= 0:
            continue
        t = g.task
        d = t.demand
        if d in no_ga and (not t.eligible or (d in no_oa and g.lend_cap >= 0)):
            misses += 1  # fits neither GA nor OA: kn = ko = 0, nothing changes
            if misses >= MAX_MISSES:  # the node's room fits none of the next groups
                break
            continue
        if d in no_ga:
            kn = 0
        else:
            kn = min(left, fit_count(d, slot.ga))
            if kn:
                _charge(slot, t, kn, True)
                no_ga.clear()
                no_oa.clear()
            else:
                no_ga.add(d)
        if not t.eligible:
            ko = 0
        elif d in no_oa:
            ko = min(left - kn, g.lend_cap, 0)
        else:
            fit = fit_count(d, slot.oa)
            if not fit:
                no_oa.add(d)
            ko = min(left - kn, g.lend_cap, fit)
        if ko:
            _charge(slot, t, ko, False)
            g.lend_cap -= ko
            no_ga.clear()
            no_oa.clear()
        g.left = left - (kn + ko)
        misses = 0 if kn + ko else misses + 1
        if misses >= MAX_MISSES:  # the node's room fits none of the next groups: enough
            break
        if not (kn or ko):
            continue  # nothing charged: the room is as it was when last checked below
        if below(slot.oa, min_demand) and below(slot.ga, min_demand):
            break
    return "lent" if slot.lent != (0.0, 0.0) else "nothing_lent"
