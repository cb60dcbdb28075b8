"""ANACRAC's part of the decision table (precision mode; docs/decision-table.md). Pure.

``anacrac.rules``: each application rule (the paper's Table 4) with hosts or a
``tasks_maximum`` becomes a table rule matched on application type, queue and
tag (the RM matches them at the first container, before the advisor has seen
the application: a node label written a cycle later came too late for the
tasks already placed); a rule that names the application by a regular
expression is listed per application seen. Node awareness (Eq 1): admit only
the rule's hosts (the snapshot's nodes whose host or id it names); container
awareness (Eq 2-3): at most ``tasks_maximum`` containers of the app per node,
its AM not counted. Rules keep their order: the first that matches applies.
"""

from __future__ import annotations

from yarn_advisor.advisor.model.decision_table import (
    Allow,
    AppDecisions,
    Cap,
    Decisions,
    Match,
    Reason,
    RequestDecision,
    Rule,
)
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, Reads
from yarn_advisor.advisor.policies.anacrac.inputs import in_hosts, rule_for
from yarn_advisor.advisor.policies.anacrac.params import Params
from yarn_advisor.advisor.policies.anacrac.params import Rule as AppRule

RULES = "anacrac.rules"
LIVE = frozenset({"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING"})


def plan(snapshot: Snapshot, result: PolicyResult[object], params: Params, reads: Reads,
         kinds: frozenset[str]) -> Decisions:
    """ANACRAC's decisions of the ``kinds`` asked for."""
    if RULES not in kinds:
        return Decisions()
    rules: list[Rule] = []
    apps: dict[str, AppDecisions] = {}
    for r in params.rules:
        decision = _decision(r, snapshot)
        if decision is None:
            continue
        if r.app_name is None:
            rules.append(Rule(Match(r.app_type, r.queue, r.tag), (decision,)))
            continue
        for app in snapshot.apps:  # first match wins, as in the policy
            if app.state in LIVE and app.id not in apps and rule_for(app, params.rules) is r:
                apps[app.id] = AppDecisions(None, (decision,))
    return Decisions(apps=apps, rules=tuple(rules))


def _decision(r: AppRule, snapshot: Snapshot) -> RequestDecision | None:
    allow = cap = None
    if r.hosts:
        nodes = frozenset(n.id for n in snapshot.nodes if in_hosts(r, n.id, n.host))
        allow = Allow(nodes, Reason.ANACRAC_HOST)
    if r.tasks_maximum is not None:
        cap = Cap(r.tasks_maximum, Reason.ANACRAC_CAP)
    if allow is None and cap is None:
        return None
    return RequestDecision(None, allow=allow, cap=cap)
