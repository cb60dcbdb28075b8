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
from dataclasses import replace

from yarn_advisor.advisor.policies.opera.bulk import node_update_lend
from yarn_advisor.advisor.policies.opera.core import ZERO, Slot, Vec
from yarn_advisor.advisor.policies.opera.inputs import Group


def overflow(rooms: Iterable[Vec], groups: Sequence[Group], min_demand: Vec) -> dict[str, int]:
    """Per group key, how many of its pending tasks do not fit the unallocated
    ``rooms`` (one GA per node of one partition) when the groups take them in
    order: the lending round itself (:func:`~.bulk.node_update_lend`, with its scan
    bound) on copies of the groups, with nothing to lend (OA = 0)."""
    copies = [replace(g) for g in groups]
    lane: deque[Group] = deque(c for c in copies if c.left > 0)
    for room in rooms:
        if not lane:
            break
        node_update_lend(Slot(room, ZERO), lane, deque(), min_demand)
    return {c.key: c.left for c in copies}
