"""The decide step as the daemon uses it: the engine plus the states it carries.

Policies are pure; their state for the next cycle comes back from the engine
and is kept here, so a policy sees its own ``next_state`` again in the next
cycle. A skipped cycle never reaches this step, so no state is lost or
advanced by a cycle that could not sense the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yarn_advisor.advisor.engine import Classifier, EngineConfig, EngineResult, decide
from yarn_advisor.advisor.model import Snapshot


@dataclass
class Decider:
    config: EngineConfig
    classifier: Classifier | None = None
    states: Mapping[str, object] = field(default_factory=dict)
    last: EngineResult | None = None

    def __call__(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        result = decide(snapshot, self.states, self.config, classifier=self.classifier)
        self.states = result.next_states
        self.last = result
        return [dict(rec.to_dict()) for rec in result.recommendations]

    def timings(self) -> Mapping[str, float]:
        return {} if self.last is None else self.last.per_policy_timing

    def classifier_summary(self) -> dict[str, Any]:
        summary = getattr(self.classifier, "summary", None)
        return summary() if callable(summary) else {}

    def errors(self) -> list[dict[str, Any]]:
        return [] if self.last is None else [dict(e.to_dict()) for e in self.last.errors]
