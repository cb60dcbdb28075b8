"""Matchmaking's part of the decision table (precision mode; docs/decision-table.md). Pure.

``matchmaking.local_only``: every unfinished application with pending
node-level asks may place them only where one of them is local, or on a node
the markers have marked (Tables 1-2: a node that had free room and no local
work at the last heartbeat round, the cycle). The RM checks "local" itself at
each attempt (the request's own host asks), so only the markers are as old as
the cycle. A request without host asks (AMs, reduces) is never restricted.
"""

from __future__ import annotations

from yarn_advisor.advisor.model.decision_table import (
    AppDecisions,
    Decisions,
    LocalOnly,
    Reason,
    RequestDecision,
)
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, Reads
from yarn_advisor.advisor.policies.matchmaking.inputs import ACTIVE
from yarn_advisor.advisor.policies.matchmaking.params import Params
from yarn_advisor.advisor.policies.matchmaking.state import State

LOCAL_ONLY = "matchmaking.local_only"


def plan(snapshot: Snapshot, result: PolicyResult[object], params: Params, reads: Reads,
         kinds: frozenset[str]) -> Decisions:
    """Matchmaking's decisions of the ``kinds`` asked for."""
    state = result.next_state
    if LOCAL_ONLY not in kinds or not isinstance(state, State):
        return Decisions()
    marked = frozenset(n for n, m in state.markers.items() if m == 0)
    decision = (RequestDecision(None, local_only=LocalOnly(Reason.MATCHMAKING_NONLOCAL, marked)),)
    apps = {a.id: AppDecisions(None, decision) for a in snapshot.apps
            if a.state in ACTIVE and any(_node_ask(r.resource_name) and r.num_containers > 0
                                         for r in a.resource_requests)}
    return Decisions(apps=apps)


def _node_ask(name: str) -> bool:
    return name != "*" and not name.startswith("/")
