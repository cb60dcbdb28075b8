"""OPERA's Alg 4 one task at a time, as printed: the oracle ``bulk.node_update_multi_bulk``
is checked against (test-only; production assigns a group's tasks in bulk)."""

from __future__ import annotations

from yarn_advisor.advisor.policies.opera.core import (
    NextTask,
    Reserved,
    Slot,
    Vec,
    assign,
    below,
)


def node_update_multi(
    slot: Slot,
    reserved: list[Reserved],
    next_task: NextTask,
    min_demand: Vec,
    eps_r: int,
    eps_s: int,
) -> str:
    """Alg 4 on one heartbeat; ``reserved`` (FIFO) is updated in place."""
    if below(slot.ga, min_demand) and below(slot.oa, min_demand):
        return "no_resources"
    for tr in list(reserved):
        if assign(slot, tr.task):
            reserved.remove(tr)
        else:
            tr.skip += 1
            if tr.skip > eps_s:
                return "skip_limit"
    while len(reserved) <= eps_r and max((r.skip for r in reserved), default=0) <= eps_s:
        t = next_task()
        if t is None:
            return "queue_empty"
        if assign(slot, t):
            for tr in reserved:
                tr.skip += 1
        else:
            reserved.append(Reserved(t, 1))
    return "queue_limit"

