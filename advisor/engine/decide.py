"""The decide step: predictions, then the enabled policies, then conflicts. Pure.

``decide(snapshot, state, config)`` reads nothing but its arguments and
writes nothing: no I/O, no clock a policy could see but
``snapshot.taken_at`` (``timer`` only measures how long each policy took).
The classifier is read through ``state.classifier.predict`` (its model as
learned up to the previous cycle); it learns from this snapshot later, in
the daemon's ``learn`` step.

Order. The enabled policies run in *precedence order*: ``config.precedence``
(default: the order of ``advisor.policies.POLICIES``), then any registered
policy it does not name, alphabetically.

Reads. Besides its own state a policy is handed :class:`~yarn_advisor.advisor.policies.Reads`:
this cycle's :class:`~yarn_advisor.classifiers.model.live.Predictions` and what
the policies shared from their states of the *previous* cycle (PRISM's idle
headroom for OPERA), typed fields, so the result does not depend on the run
order.

Failures. A policy that raises (or returns something that is not a
:class:`PolicyResult` of recommendations) is reported in ``errors``, its
state is carried over unchanged, and the other policies still run; so is a
failing classifier (the policies then run without predictions).

Conflicts. Two recommendations that would *write* conflict when they have
the same ``(kind, target)`` (scheduler-wide conf updates all target
``'scheduler'``; per-queue conf updates target the queue path); advisory
kinds are never written, so one policy's advice never hides another's: they
conflict only within one policy. The one from the policy earlier in
precedence order wins -- within one policy, the first one emitted -- and
each loser is recorded in the winner's ``explanation.conflicts`` as
``{policy, value, rule, summary}``.

Performance. The cyclic garbage collector is paused for the step
(``pause_gc``): policies allocate many small acyclic objects next to a
large live Snapshot, and every full collection would walk all of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Protocol

from yarn_advisor.advisor.engine.table import plan_table
from yarn_advisor.advisor.model.decision_table import Decisions
from yarn_advisor.advisor.model.gcpause import paused_gc
from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Conflict, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import (
    POLICIES,
    AnyPolicy,
    PolicyResult,
    Reads,
    Shared,
    params_models,
)
from yarn_advisor.classifiers.model.live import Predictions
from yarn_advisor.config.schema import AdvisorConfig, PolicySection, from_dict

CLASSIFIER = "classifier"  # the classifier's name in timings and errors


class Predictor(Protocol):
    """The classifier as the decide step sees it: read-only."""

    def predict(self, snapshot: Snapshot) -> Predictions:
        """This cycle's predictions, from what was learned before it."""
        ...


@dataclass(frozen=True)
class EngineConfig:
    """Per-policy sections (absent policies run with defaults) and the precedence order."""

    sections: Mapping[str, PolicySection] = field(default_factory=dict)
    precedence: tuple[str, ...] = tuple(POLICIES)
    decisions: frozenset[str] = frozenset()  # precision mode's decision kinds (none: off)

    @classmethod
    def from_config(cls, cfg: AdvisorConfig) -> EngineConfig:
        """The validated ``policies`` sections of ``cfg`` (and its precision mode)."""
        p = cfg.precision
        return cls(cfg.policies.sections(),
                   decisions=frozenset(p.decisions) if p.enabled else frozenset())

    @classmethod
    def from_policies(cls, raw: Mapping[str, object] | None,
                      registry: Mapping[str, AnyPolicy] = POLICIES) -> EngineConfig:
        """From a decoded ``policies:`` mapping, validated as the loader does
        (ConfigError lists every problem with its key path)."""
        cfg = from_dict({"policies": raw or {}}, params_models(dict(registry)))
        return cls(cfg.policies.sections(), tuple(registry))

    def section(self, name: str) -> PolicySection:
        """The section of ``name`` (defaults when absent)."""
        return self.sections.get(name) or PolicySection()


@dataclass(frozen=True)
class AdvisorState:
    """What decide reads besides the snapshot: each policy's state, the classifier."""

    policies: Mapping[str, object] = field(default_factory=dict)
    classifier: Predictor | None = None


@dataclass(frozen=True)
class PolicyError:
    """A policy (or the classifier) that failed this cycle."""

    policy: str
    error: str
    message: str

    def to_json(self) -> JsonDict:
        """JSON form, for the edges."""
        return {"policy": self.policy, "error": self.error, "message": self.message}


@dataclass(frozen=True)
class Decision:
    """What one decide step produced."""

    recommendations: tuple[Recommendation, ...]
    states: Mapping[str, object]  # each policy's state for the next cycle
    predictions: Predictions | None
    policy_seconds: Mapping[str, float]  # in run order (``classifier`` first)
    errors: tuple[PolicyError, ...]
    table: Decisions = field(default_factory=Decisions)  # precision mode (engine/table.py)


def run_order(config: EngineConfig, registry: Mapping[str, AnyPolicy] = POLICIES) -> list[str]:
    """Registered policies in precedence order (see the module docstring)."""
    head = [n for n in config.precedence if n in registry]
    return head + sorted(n for n in registry if n not in head)


def initial_states(registry: Mapping[str, AnyPolicy] = POLICIES) -> dict[str, object]:
    """Every policy's first-cycle state."""
    return {name: policy.initial_state() for name, policy in registry.items()}


def decide(
    snapshot: Snapshot,
    state: AdvisorState,
    config: EngineConfig,
    registry: Mapping[str, AnyPolicy] = POLICIES,
    timer: Callable[[], float] = time.perf_counter,
    pause_gc: bool = True,
) -> Decision:
    """Predict, run the enabled policies on ``snapshot``, resolve conflicts."""
    with _gc_paused(pause_gc):
        return _decide(snapshot, state, config, registry, timer)


@contextmanager
def _gc_paused(pause: bool) -> Iterator[None]:
    if not pause:
        yield
        return
    with paused_gc():
        yield


def _decide(snapshot: Snapshot, state: AdvisorState, config: EngineConfig,
            registry: Mapping[str, AnyPolicy], timer: Callable[[], float]) -> Decision:
    errors: list[PolicyError] = []
    timing: dict[str, float] = {}
    predictions: Predictions | None = None
    if state.classifier is not None:
        t0 = timer()
        try:
            predictions = state.classifier.predict(snapshot)
        except Exception as exc:  # a broken classifier must not stop the policies
            errors.append(PolicyError(CLASSIFIER, type(exc).__name__, str(exc)))
        timing[CLASSIFIER] = timer() - t0
    shared = Shared()
    for name, policy in registry.items():
        if name in state.policies:
            shared = shared.merged(policy.shared(state.policies[name]))
    reads = Reads(predictions, shared)
    next_states = dict(state.policies)
    produced: list[Recommendation] = []
    results: dict[str, PolicyResult[object]] = {}
    for name in run_order(config, registry):
        section = config.section(name)
        if not section.enabled:
            continue
        policy = registry[name]
        t0 = timer()
        try:
            result = policy.run(snapshot, state.policies.get(name), section.params, reads)
            produced += _checked(name, result)
        except Exception as exc:  # isolate policies from each other
            errors.append(PolicyError(name, type(exc).__name__, str(exc)))
        else:
            next_states[name] = result.next_state
            results[name] = result
        timing[name] = timer() - t0
    t0 = timer()
    table, failed = plan_table(snapshot, results, reads, config.sections,
                               run_order(config, registry), registry, config.decisions)
    errors += [PolicyError(n, type(e).__name__, f"decision table: {e}") for n, e in failed]
    if config.decisions:
        timing["decision_table"] = timer() - t0
    return Decision(resolve_conflicts(produced), next_states, predictions, timing, tuple(errors),
                    table)


# plain strings: hashing a Kind (an Enum) runs Python code, its str value does not
_ADVISORY = frozenset(k.value for k in Kind if k.advisory)


def _conflict_key(r: Recommendation) -> tuple[str, ...]:
    """Writes conflict per (kind, target); advice is never written, so advice from
    different policies on one target all stands."""
    kind = r.kind._value_
    return (kind, r.target, r.policy) if kind in _ADVISORY else (kind, r.target)


def _checked(name: str, result: object) -> list[Recommendation]:
    if not isinstance(result, PolicyResult):
        raise TypeError(f"advise() returned {type(result).__name__}, not PolicyResult")
    recs = list(result.recommendations)
    for r in recs:
        if not isinstance(r, Recommendation):
            raise TypeError(f"advise() returned a {type(r).__name__} among its recommendations")
    return [r if r.policy == name else replace(r, policy=name) for r in recs]


def resolve_conflicts(recs: list[Recommendation]) -> tuple[Recommendation, ...]:
    """Keep the first recommendation per conflict key; note the losers in it."""
    first: dict[tuple[str, ...], int] = {}
    losers: dict[int, list[Recommendation]] = {}
    lost: set[int] = set()
    for i, r in enumerate(recs):
        w = first.setdefault(_conflict_key(r), i)
        if w != i:
            losers.setdefault(w, []).append(r)
            lost.add(i)
    if not losers:
        return tuple(recs)
    out: list[Recommendation] = []
    for i, r in enumerate(recs):
        if i in lost:
            continue
        if i in losers:
            notes = tuple(Conflict(lo.policy, lo.value, lo.explanation.rule,
                                   lo.explanation.summary) for lo in losers[i])
            r = r.with_explanation(r.explanation.with_conflicts(notes))
        out.append(r)
    return tuple(out)
