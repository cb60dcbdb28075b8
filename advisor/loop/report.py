"""What one cycle saw and did (:class:`CycleReport`), and the counters kept across cycles.

The daemon fills a report step by step; the metrics, the HTTP endpoints, the
cycle log line and the replay output read it. Typed throughout: JSON is
made from it only at those edges.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from yarn_advisor.advisor.act.actuator import ActionKey
from yarn_advisor.advisor.engine.classify import ClassifierSummary
from yarn_advisor.advisor.engine.decide import Decision, PolicyError
from yarn_advisor.advisor.loop.sense import SourceStat
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.classifiers.model.live import Predictions

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class CycleReport:
    """One cycle: its outcome (``ok`` or ``skipped`` with a reason), each step's time,
    the sources read, the snapshot, the recommendations and what was done with them."""

    number: int
    started_at: float
    outcome: str = "ok"
    reason: str = ""
    step_seconds: dict[str, float] = field(default_factory=dict)
    sources: dict[str, SourceStat] = field(default_factory=dict)
    snapshot: Snapshot | None = None
    recommendations: tuple[Recommendation, ...] = ()
    actions: Counter[ActionKey] = field(default_factory=Counter)
    policy_seconds: Mapping[str, float] = field(default_factory=dict)
    policy_errors: tuple[PolicyError, ...] = ()
    predictions: Predictions | None = None
    classifier: ClassifierSummary | None = None
    states: Mapping[str, object] = field(default_factory=dict)  # each policy's next state

    def timed(self, step: str, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run one step of the cycle, recording how long it took (even if it fails)."""
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            self.step_seconds[step] = time.monotonic() - started

    def done(self, snapshot: Snapshot, decision: Decision, actions: Counter[ActionKey],
             classifier: ClassifierSummary | None) -> None:
        """Record a completed cycle."""
        self.snapshot, self.recommendations = snapshot, decision.recommendations
        self.policy_seconds, self.policy_errors = decision.policy_seconds, decision.errors
        self.predictions, self.actions, self.classifier = decision.predictions, actions, classifier
        self.states = decision.states

    def skip(self, reason: str) -> None:
        """Record a cycle that acted on nothing, and why."""
        self.outcome, self.reason = "skipped", reason

    @property
    def seconds(self) -> float:
        return sum(self.step_seconds.values())


@dataclass
class Totals:
    """Counters that live across cycles."""

    cycles: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # by reason class
    source_errors: Counter[str] = field(default_factory=Counter)
    actions: Counter[ActionKey] = field(default_factory=Counter)
    policy_errors: Counter[str] = field(default_factory=Counter)

    def add(self, report: CycleReport) -> None:
        self.cycles[report.outcome] += 1
        if report.outcome != "ok":
            self.skipped[report.reason.split(":", 1)[0] or "unknown"] += 1
        self.policy_errors.update(e.policy for e in report.policy_errors)
        for name, stat in report.sources.items():
            self.source_errors[name] += stat.errors
        self.actions.update(report.actions)
