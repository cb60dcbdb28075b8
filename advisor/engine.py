"""The decide step: classifier hook, then the enabled policies, then conflicts.

``decide(snapshot, states, config)`` is pure apart from measuring how long
each policy took (``timer``, injectable): no I/O, and no clock reaches a
policy but ``snapshot.taken_at``.

Order. The classifier hook runs first. It is a state transformer,
``classifier(snapshot, states) -> states``: it may add its predictions to
the states the policies then receive (e.g. under ``"opera"``) and keep its
own state under any key; a failing classifier is reported under
``"classifier"`` and the states pass through unchanged. Then the enabled
policies run in *precedence order*: ``config.precedence`` (default: the
order of ``advisor.policies.POLICIES``, today ``haste``, ``matchmaking``),
then any registered policy it does not name, alphabetically.

Failures. A policy that raises (or returns something that is not a
:class:`PolicyResult` of recommendations) is reported in ``errors``, its
state is carried over unchanged, and the other policies still run.

Conflicts. Two recommendations that would *write* conflict when they have
the same ``(kind, target)`` (scheduler-wide conf updates all target
``'scheduler'``; per-queue conf updates target the queue path); advisory
kinds (``advise_*``) are never written, so one policy's advice never hides
another's: they conflict only within one policy. The one from the policy
earlier in precedence order wins -- within one policy, the first one
emitted -- and each loser is recorded in the winner's
``explanation.conflicts`` as ``{policy, value, rule, summary}``.

Shared state. A policy module may declare ``READS`` (other states' keys): its
state is then its own mapping plus those keys, copied in read-only (OPERA
reads this cycle's ``classifier`` predictions and the last cycle's
``prism`` headroom, PRISM running after it).

States. ``next_states`` holds every key of the incoming (classified) states,
with the ``next_state`` of each policy that ran successfully replacing its
own key (policies' states are keyed by their registry name).

Performance. By default the cyclic garbage collector is paused for the step
(``pause_gc``) and restored after: policies allocate many small acyclic
objects next to a large live Snapshot, and every full collection would walk
the whole Snapshot (on the 10,000-node benchmark this roughly halves the
step). Reference counting still frees everything; results are unaffected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.policies import POLICIES, ConfigError, Policy, PolicyResult, build_params
from yarn_advisor.advisor.recommendation import JsonDict, Recommendation
from yarn_advisor.connectors._json import paused_gc

Classifier = Callable[[Snapshot, Mapping[str, object]], Mapping[str, object]]
SECTION_KEYS = frozenset({"enabled", "dry_run", "params"})


@dataclass(frozen=True)
class PolicyConfig:
    """One policy's YAML section: ``enabled``, ``dry_run`` override, typed ``params``.

    ``params`` None means the policy's defaults; ``dry_run`` None defers to the
    global setting (the actuator reads it, the engine does not).
    """

    enabled: bool = True
    dry_run: bool | None = None
    params: Any = None


@dataclass(frozen=True)
class EngineConfig:
    """Per-policy sections and the precedence order. Absent policies run with defaults."""

    policies: Mapping[str, PolicyConfig] = field(default_factory=dict)
    precedence: tuple[str, ...] = tuple(POLICIES)

    def section(self, name: str) -> PolicyConfig:
        """The section of ``name`` (defaults when absent)."""
        return self.policies.get(name, PolicyConfig())

    def dry_run(self, name: str, global_dry_run: bool) -> bool:
        """Effective dry-run of a policy: its override, else the global value."""
        override = self.section(name).dry_run
        return global_dry_run if override is None else override


def config_from_dict(
    raw: Mapping[str, Any] | None,
    path: str = "policies",
    precedence: tuple[str, ...] | None = None,
    registry: Mapping[str, Policy] = POLICIES,
) -> EngineConfig:
    """Build an :class:`EngineConfig` from the decoded ``policies:`` YAML mapping.

    Every problem (unknown policy or key, wrong type, invalid parameter) is
    collected, with its key path, into one :class:`ConfigError`.
    """
    problems: list[str] = []
    sections: dict[str, PolicyConfig] = {}
    if raw is not None and not isinstance(raw, Mapping):
        raise ConfigError([f"{path}: expected a mapping, got {type(raw).__name__}"])
    for name, sec in (raw or {}).items():
        where = f"{path}.{name}"
        if name not in registry:
            problems.append(
                f"{path}: unknown policy {name!r} (known: {', '.join(sorted(registry))})"
            )
            continue
        if sec is None:
            sec = {}
        if not isinstance(sec, Mapping):
            problems.append(f"{where}: expected a mapping, got {type(sec).__name__}")
            continue
        problems += [
            f"{where}: unknown key {k!r} (known: dry_run, enabled, params)"
            for k in sec
            if k not in SECTION_KEYS
        ]
        enabled, dry_run = sec.get("enabled", True), sec.get("dry_run")
        if not isinstance(enabled, bool):
            problems.append(f"{where}.enabled: expected bool, got {type(enabled).__name__}")
        if dry_run is not None and not isinstance(dry_run, bool):
            problems.append(f"{where}.dry_run: expected bool or null, got {type(dry_run).__name__}")
        try:
            params = build_params(registry[name].Params, sec.get("params"), f"{where}.params")
        except ConfigError as exc:
            problems += exc.problems
            continue
        sections[name] = PolicyConfig(
            enabled is True, dry_run if isinstance(dry_run, bool) else None, params
        )
    order = precedence if precedence is not None else tuple(registry)
    problems += [f"precedence: unknown policy {n!r}" for n in order if n not in registry]
    if problems:
        raise ConfigError(problems)
    return EngineConfig(sections, order)


@dataclass(frozen=True)
class PolicyError:
    """A policy (or the classifier) that failed this cycle."""

    policy: str
    error: str
    message: str

    def to_dict(self) -> JsonDict:
        """JSON-safe form."""
        return {"policy": self.policy, "error": self.error, "message": self.message}


@dataclass(frozen=True)
class EngineResult:
    """What one decide step produced."""

    recommendations: tuple[Recommendation, ...]
    next_states: Mapping[str, object]
    per_policy_timing: Mapping[str, float]  # seconds, in run order
    errors: tuple[PolicyError, ...]


def run_order(config: EngineConfig, registry: Mapping[str, Policy] = POLICIES) -> list[str]:
    """Registered policies in precedence order (see the module docstring)."""
    head = [n for n in config.precedence if n in registry]
    return head + sorted(n for n in registry if n not in head)


def decide(
    snapshot: Snapshot,
    states: Mapping[str, object],
    config: EngineConfig,
    classifier: Classifier | None = None,
    registry: Mapping[str, Policy] = POLICIES,
    timer: Callable[[], float] = time.perf_counter,
    pause_gc: bool = True,
) -> EngineResult:
    """Run the classifier hook and the enabled policies on ``snapshot``."""
    with _gc_paused(pause_gc):
        return _decide(snapshot, states, config, classifier, registry, timer)


@contextmanager
def _gc_paused(pause: bool) -> Iterator[None]:
    if not pause:
        yield
        return
    with paused_gc():
        yield


def _decide(
    snapshot: Snapshot,
    states: Mapping[str, object],
    config: EngineConfig,
    classifier: Classifier | None,
    registry: Mapping[str, Policy],
    timer: Callable[[], float],
) -> EngineResult:
    errors: list[PolicyError] = []
    timing: dict[str, float] = {}
    seen = dict(states)
    if classifier is not None:
        t0 = timer()
        try:
            seen = dict(classifier(snapshot, states))
        except Exception as exc:  # a broken classifier must not stop the policies
            errors.append(PolicyError("classifier", type(exc).__name__, str(exc)))
        timing["classifier"] = timer() - t0
    next_states: dict[str, object] = dict(seen)
    produced: list[Recommendation] = []
    for name in run_order(config, registry):
        section = config.section(name)
        if not section.enabled:
            continue
        policy = registry[name]
        params = section.params if section.params is not None else policy.Params()
        t0 = timer()
        try:
            result = policy.advise(snapshot, _state_for(name, policy, seen), params)
            recs = _checked(name, result)
        except Exception as exc:  # isolate policies from each other
            errors.append(PolicyError(name, type(exc).__name__, str(exc)))
        else:
            produced += recs
            next_states[name] = result.next_state
        timing[name] = timer() - t0
    return EngineResult(resolve_conflicts(produced), next_states, timing, tuple(errors))


def _state_for(name: str, policy: Policy, seen: Mapping[str, object]) -> object:
    """The policy's own state, plus the other states it declares it ``READS``
    (e.g. OPERA reads ``classifier`` and ``prism``), copied in under their keys."""
    own = seen.get(name)
    reads = [k for k in getattr(policy, "READS", ()) if k in seen]
    if not reads or not (own is None or isinstance(own, Mapping)):
        return own
    return {**(own or {}), **{k: seen[k] for k in reads}}


def _conflict_key(r: Recommendation) -> tuple[str, ...]:
    """Writes conflict per (kind, target); advice (``advise_*``) is never
    written, so advice from different policies on one target all stands."""
    return (r.kind, r.target, r.policy) if r.kind.advisory else (r.kind, r.target)


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
    for i, r in enumerate(recs):
        w = first.setdefault(_conflict_key(r), i)
        if w != i:
            losers.setdefault(w, []).append(r)
    if not losers:
        return tuple(recs)
    out: list[Recommendation] = []
    for i, r in enumerate(recs):
        if first[_conflict_key(r)] != i:
            continue
        if i in losers:
            notes = tuple(
                {
                    "policy": lo.policy,
                    "value": lo.value,
                    "rule": lo.explanation.rule,
                    "summary": lo.explanation.summary,
                }
                for lo in losers[i]
            )
            r = r.with_explanation(
                replace(r.explanation, conflicts=r.explanation.conflicts + notes)
            )
        out.append(r)
    return tuple(out)
