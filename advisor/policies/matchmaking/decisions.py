"""Matchmaking's part of the decision table (precision mode; docs/decision-table.md). Pure.

``matchmaking.local_only``: in every leaf queue (a table rule, so an
application submitted between two cycles has it at once), a request with
host asks is placed only where one of them is local, until it has been
skipped ``rounds`` x RUNNING nodes attempts in a row: each node gets its local
chance in a heartbeat round before the request goes non-local -- the paper's
rule without a hand-tuned delay, and without YARN's cap of
node-locality-delay at the node count (a skipped attempt is not a missed
scheduling opportunity: YARN's own delay counts only what the plug-in
admits). The RM checks "local" itself at each attempt. A request without host
asks (AMs, reduces) is never restricted. With ``plugin_markers`` the nodes the
last cycle marked (Tables 1-2) also take non-local maps at once; measured
worse (loadgen: 91.5 % local against 98.0 % without; the marks are a cycle
old, and a marked node stays open to every non-local map for the whole cycle).
"""

from __future__ import annotations

from yarn_advisor.advisor.model.decision_table import (
    Decisions,
    LocalOnly,
    Match,
    Reason,
    RequestDecision,
    Rule,
)
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, Reads
from yarn_advisor.advisor.policies.matchmaking.params import Params
from yarn_advisor.advisor.policies.matchmaking.state import State

LOCAL_ONLY = "matchmaking.local_only"


def plan(snapshot: Snapshot, result: PolicyResult[object], params: Params, reads: Reads,
         kinds: frozenset[str]) -> Decisions:
    """Matchmaking's decisions of the ``kinds`` asked for."""
    state = result.next_state
    if LOCAL_ONLY not in kinds or not isinstance(state, State):
        return Decisions()
    marked = frozenset(n for n, m in state.markers.items() if m == 0) \
        if params.plugin_markers else frozenset()
    running = sum(n.state == "RUNNING" for n in snapshot.nodes)
    decision = (RequestDecision(None, local_only=LocalOnly(
        Reason.MATCHMAKING_NONLOCAL, marked, max(1, params.rounds * running))),)
    leaves = sorted({q.name for q in snapshot.queues if q.is_leaf})
    return Decisions(rules=tuple(Rule(Match(queue=leaf), decision) for leaf in leaves))
