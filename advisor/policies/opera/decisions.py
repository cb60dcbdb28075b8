"""OPERA's part of the decision table (precision mode; docs/decision-table.md). Pure.

``opera.lending``: OPERA lends a node's measured idle room by raising its
schedulable resource (``update_node_resource``); YARN then fills the raise
with any task. The table tells the plug-in how much of each raised node is
lent (the value this cycle asks for, else the node's current size, minus its
real capacity) and who may use it: the pending request groups the classifier
calls short (OPERA's eligible tasks), so long tasks stay out of room that
contention may take back.
"""

from __future__ import annotations

from yarn_advisor.advisor.model.decision_table import Borrower, Decisions, Lending
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import NodeResource, Payload
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, Reads
from yarn_advisor.advisor.policies.opera.inputs import memory_only, pending_groups
from yarn_advisor.advisor.policies.opera.params import Params
from yarn_advisor.advisor.policies.opera.state import State

LENDING = "opera.lending"


def plan(snapshot: Snapshot, result: PolicyResult[object], params: Params, reads: Reads,
         kinds: frozenset[str]) -> Decisions:
    """OPERA's decisions of the ``kinds`` asked for."""
    state = result.next_state
    if LENDING not in kinds or not isinstance(state, State) or not state.bases:
        return Decisions()
    asked = {r.target: _size(r.value) for r in result.recommendations
             if r.kind is Kind.UPDATE_NODE_RESOURCE}
    groups = pending_groups(snapshot, reads.predictions, params.min_confidence,
                            memory_only(snapshot, params.resource_calculator),
                            any_task=params.lend_to == "any")
    borrowers = frozenset(Borrower(g.app_id, g.priority) for g in groups if g.task.eligible)
    nodes: dict[str, Lending] = {}
    for node in snapshot.nodes:
        base = state.bases.get(node.id)
        if base is None:
            continue
        size = asked.get(node.id) or (node.total.memory_mb, node.total.vcores)
        mem, vc = max(0, size[0] - int(base[0])), max(0, size[1] - int(base[1]))
        if mem or vc:
            nodes[node.id] = Lending(mem, vc, borrowers)
    return Decisions(nodes=nodes)


def _size(value: Payload) -> tuple[int, int] | None:
    """``(memory_mb, vcores)`` of an ``update_node_resource`` value (None: not both set)."""
    if not isinstance(value, NodeResource) or value.memory_mb is None or value.vcores is None:
        return None
    return value.memory_mb, value.vcores
