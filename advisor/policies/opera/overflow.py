"""Which pending tasks the RM can place without OPERA: the sidecar's lending guard.

Inside the RM (the paper) a task goes opportunistic only on the node whose
heartbeat finds no guaranteed room for it. From outside, OPERA raises a node's
capacity and the RM then places *any* task there, short or long. On a cluster
with unallocated room that only moves work onto memory that is idle now and
may not stay idle: on a simulated day of Facebook jobs on a 1.6 %-busy cluster
lending where room was free led to 378 containers killed for memory, for no
gain. So, before a round, the pending groups are placed on the unallocated
room (GA) of their partition's nodes, in queue order, group-wise (the same
strict fit as Alg 2); only what does not fit there may be lent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from yarn_advisor.advisor.policies.opera.bulk import MAX_MISSES, fit_count
from yarn_advisor.advisor.policies.opera.core import Vec, below
from yarn_advisor.advisor.policies.opera.inputs import Group


def overflow(rooms: Iterable[Vec], groups: Sequence[Group], min_demand: Vec) -> dict[str, int]:
    """Per group key, how many of its pending tasks do not fit the unallocated
    ``rooms`` (one GA per node of one partition) when the groups take them in
    order. A node whose room fits none of ``MAX_MISSES`` groups in a row is left
    (as in :func:`~.bulk.node_update_lend`), so the count may be slightly high."""
    left = {g.key: g.left for g in groups}
    lane: deque[Group] = deque(g for g in groups if g.left > 0)
    for room in rooms:
        while lane and left[lane[0].key] <= 0:
            lane.popleft()
        if not lane:
            break
        misses = 0
        for g in lane:
            if below(room, min_demand):
                break
            n = left[g.key]
            if n <= 0:
                continue
            d = g.task.demand
            k = min(n, fit_count(d, room))
            if k:
                room = (room[0] - d[0] * k, room[1] - d[1] * k)
                left[g.key] = n - k
                misses = 0
            else:
                misses += 1
                if misses >= MAX_MISSES:
                    break
    return left
