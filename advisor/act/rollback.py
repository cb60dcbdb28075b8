"""Which journaled actions a rollback undoes, and the writes that undo each (pure).

``select`` picks the actions (one by id, or every one sent since a time,
newest first, leaving out rollbacks and what was already rolled back);
``inverse`` turns one action into the typed writes that restore what it
changed. The writes themselves go through the actuator
(:meth:`~yarn_advisor.advisor.act.actuator.Actuator.rollback`), under
rollback's own rules.
"""

from __future__ import annotations

from yarn_advisor.advisor.act.journal import Action
from yarn_advisor.advisor.act.outcomes import Outcome
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    ClusterLabels,
    Payload,
    previous_from_json,
    value_from_json,
)

Step = tuple[Kind, str, Payload]  # (kind, target, value to restore)
DONE = frozenset({Outcome.APPLIED.value, Outcome.NOOP.value})


def select(actions: list[Action], since: float | None = None,
           action_id: str | None = None) -> list[Action]:
    """The actions to undo, newest first."""
    if action_id is not None:
        return [a for a in actions if a.id == action_id]
    undone = {a.rollback_of for a in actions if a.rollback_of and a.outcome in DONE}
    picked = [a for a in actions
              if a.sent and a.policy != "rollback" and a.id not in undone
              and a.outcome != Outcome.REFUSED and a.ts >= (since or 0.0)]
    return sorted(picked, key=lambda a: a.ts, reverse=True)


def inverse(action: Action) -> list[Step]:
    """The writes that restore what ``action`` changed (ValueError if its journaled
    values are not its kind's)."""
    value = value_from_json(action.kind, action.value)
    prev = previous_from_json(action.kind, action.previous)
    if isinstance(value, ClusterLabels):
        had = set(prev.labels) if isinstance(prev, ClusterLabels) else set()
        if action.kind is Kind.ADD_CLUSTER_LABELS:
            return [(Kind.REMOVE_CLUSTER_LABELS, action.target,
                     ClusterLabels(tuple(sorted(set(value.labels) - had))))]
        return [(Kind.ADD_CLUSTER_LABELS, action.target,
                 ClusterLabels(tuple(sorted(set(value.labels) & had))))]
    if prev is None:
        raise ValueError(f"{action.id}: no previous value")
    steps: list[Step] = [(action.kind, action.target, prev)]
    added = action.answer.get("added_cluster_labels") if isinstance(action.answer, dict) else None
    if action.kind is Kind.REPLACE_NODE_LABELS and isinstance(added, list) and added:
        steps.append((Kind.REMOVE_CLUSTER_LABELS, "cluster",
                      ClusterLabels(tuple(sorted(str(x) for x in added)))))
    return steps
