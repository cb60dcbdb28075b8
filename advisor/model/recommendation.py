"""Recommendations: what a policy wants changed on the RM, and why.

A :class:`Recommendation` names a *desired state* (``value``) for one target,
the value seen before when known (``previous``), the policy that asked for it
and an :class:`Explanation` (the rule that fired, its inputs, scores and
thresholds, and a one-line summary), so "why?" is answered by the advisor
itself.

Both classes are frozen and serialise to plain JSON-safe dicts with a stable
key order (``to_dict``) and back (``from_dict``). Nested payloads (``value``,
``previous``, the explanation mappings) are canonicalised on construction
into *immutable* JSON (:func:`freeze`): mappings become :class:`FrozenJson`
(a read-only ``dict`` with string keys), lists and tuples become
tuples, numpy scalars become Python numbers, and anything not representable
in JSON (NaN, sets, objects) is rejected with ``TypeError``/``ValueError``
naming its path. Freezing an already frozen payload is free, so a policy can
freeze a payload shared by many recommendations (thresholds, a request's
description) once.

Kinds and their targets (each kind's RM lever is ``connectors.rm_write.LEVERS``;
``advise_*`` kinds are advisory only and never sent to the RM):

============================  =====================================  ==========================
kind                          target                                 value
============================  =====================================  ==========================
``set_app_priority``          application id                         int priority
``move_app_queue``            application id                         queue path
``update_scheduler_conf``     ``'scheduler'`` (global) or queue path  ``{conf key: value}``
``replace_node_labels``       node id                                list of labels
``update_node_resource``      node id                                ``{memory_mb, vcores}``
``signal_container``          container id                           signal name
``kill_app``                  application id                         ``"KILLED"``
``advise_container_size``     application id                         ``{memory_mb, vcores}``
``advise_app_config``         application id, or node id for         ``{...}`` advice
                              per-node advice (HaSTE "serve next")
============================  =====================================  ==========================
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

JsonValue: TypeAlias = (
    bool
    | int
    | float
    | str
    | list["JsonValue"]
    | tuple["JsonValue", ...]
    | dict[str, "JsonValue"]
    | None
)
JsonDict: TypeAlias = dict[str, JsonValue]


class Target(StrEnum):
    """What a kind's target id names (the actuator's scope checks read it)."""

    APP = "app"
    NODE = "node"
    CONTAINER = "container"
    QUEUE = "queue"  # a queue path, or ``scheduler`` for global updates
    CLUSTER = "cluster"
    ANY = "any"  # advice may target an app or a node


class Kind(StrEnum):
    """What a recommendation (or a rollback step) changes: the one list of kinds.

    Every kind that is not advisory has exactly one RM lever
    (``connectors.rm_write.LEVERS``, keyed by Kind; a test checks the two match).
    ``add_cluster_labels`` / ``remove_cluster_labels`` are used by rollback only.
    """

    SET_APP_PRIORITY = "set_app_priority"
    MOVE_APP_QUEUE = "move_app_queue"
    KILL_APP = "kill_app"
    UPDATE_SCHEDULER_CONF = "update_scheduler_conf"
    REPLACE_NODE_LABELS = "replace_node_labels"
    UPDATE_NODE_RESOURCE = "update_node_resource"
    SIGNAL_CONTAINER = "signal_container"
    ADD_CLUSTER_LABELS = "add_cluster_labels"
    REMOVE_CLUSTER_LABELS = "remove_cluster_labels"
    ADVISE_CONTAINER_SIZE = "advise_container_size"
    ADVISE_APP_CONFIG = "advise_app_config"

    @property
    def advisory(self) -> bool:
        """True for kinds that are published only, never pushed to the RM."""
        return self.value.startswith("advise_")

    @property
    def irreversible(self) -> bool:
        """Kill-like: cannot be undone by rollback, opt-in in the actuator."""
        return self in (Kind.SIGNAL_CONTAINER, Kind.KILL_APP)

    @property
    def target(self) -> Target:
        """What the target id of this kind names."""
        return _TARGETS[self]


_TARGETS = {
    Kind.SET_APP_PRIORITY: Target.APP, Kind.MOVE_APP_QUEUE: Target.APP,
    Kind.KILL_APP: Target.APP, Kind.UPDATE_SCHEDULER_CONF: Target.QUEUE,
    Kind.REPLACE_NODE_LABELS: Target.NODE, Kind.UPDATE_NODE_RESOURCE: Target.NODE,
    Kind.SIGNAL_CONTAINER: Target.CONTAINER, Kind.ADD_CLUSTER_LABELS: Target.CLUSTER,
    Kind.REMOVE_CLUSTER_LABELS: Target.CLUSTER, Kind.ADVISE_CONTAINER_SIZE: Target.APP,
    Kind.ADVISE_APP_CONFIG: Target.ANY,
}


class FrozenJson(dict[str, Any]):
    """A read-only JSON object: string keys, frozen values (``to_dict`` sorts keys).

    A ``dict`` subclass, so ``json.dumps`` and ``==`` with plain dicts work;
    every mutating method raises ``TypeError``. Build one with :func:`freeze`.
    """

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> Any:
        raise TypeError("FrozenJson is read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __copy__(self) -> FrozenJson:
        return self

    def __deepcopy__(self, memo: object) -> FrozenJson:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenJson, (dict(self),))


def freeze(value: object, path: str = "value") -> JsonValue:
    """Return ``value`` as canonical immutable JSON, or raise naming the bad path.

    Mapping keys must be strings; lists and tuples
    become tuples; integral and real numbers (numpy scalars included) become
    ``int`` and ``float``; non-finite floats are rejected. A
    :class:`FrozenJson` is returned as is.
    """
    try:
        return _fast(value)
    except _NotJson:
        return _checked(value, path)


def freeze_dict(value: Mapping[str, Any], path: str = "value") -> FrozenJson:
    """:func:`freeze` for a mapping, typed as :class:`FrozenJson`."""
    return _json_dict(value, path)


def thaw(value: JsonValue) -> JsonValue:
    """Plain ``dict``/``list`` copy of a frozen payload, keys sorted (for serialisers)."""
    if isinstance(value, dict):
        return {k: thaw(value[k]) for k in sorted(value)}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


class _NotJson(Exception):
    pass


_LEAVES = frozenset({str, int, bool, FrozenJson})  # kept as they are


def _fast(v: object) -> JsonValue:
    """The common case (builtin types only), without building paths."""
    t = type(v)
    if t is FrozenJson:
        return v  # type: ignore[return-value]
    if t is dict:
        return _fast_dict(v)  # type: ignore[arg-type]
    if t is list or t is tuple:
        return tuple([_fast(x) for x in v])  # type: ignore[attr-defined]
    if t is str or t is int or t is bool or v is None:
        return v  # type: ignore[return-value]
    if t is float and v - v == 0.0:  # type: ignore[operator]  # finite (inf - inf is nan)
        return v  # type: ignore[return-value]
    raise _NotJson


def _fast_dict(d: dict[Any, Any]) -> FrozenJson:
    out: dict[str, JsonValue] = {}
    for k in d:
        if type(k) is not str:
            raise _NotJson
        v = d[k]
        t = type(v)
        if t in _LEAVES or v is None or (t is float and v - v == 0.0):
            out[k] = v
        elif t is dict:
            out[k] = _fast_dict(v)
        elif t is list or t is tuple:
            out[k] = tuple([_fast(x) for x in v])
        else:
            raise _NotJson
    return FrozenJson(out)


def _checked(value: object, path: str) -> JsonValue:
    """The general case: ABCs and numpy scalars, with the path in errors."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{path}: non-finite number {f!r} is not JSON-safe")
        return f
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str):
                raise TypeError(f"{path}: mapping key {k!r} is not a string")
        return FrozenJson({k: _checked(value[k], f"{path}.{k}") for k in value})
    if isinstance(value, list | tuple):
        return tuple(_checked(v, f"{path}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"{path}: {type(value).__name__} is not JSON-safe")


def _json_dict(value: object, path: str) -> FrozenJson:
    if type(value) is dict:
        try:
            return _fast_dict(value)
        except _NotJson:
            pass
    elif type(value) is FrozenJson:
        return value
    out = freeze(value, path)
    if not isinstance(out, FrozenJson):
        raise TypeError(f"{path}: expected a mapping, got {type(value).__name__}")
    return out


@dataclass(frozen=True)
class Explanation:
    """Why a recommendation was made.

    ``rule`` is a dotted id of the rule that fired (e.g.
    ``haste.rta.preference_rank``); ``inputs`` the facts it read; ``scores``
    what it computed; ``thresholds`` the parameters it compared against;
    ``summary`` one human line; ``conflicts`` what the engine overrode in
    favour of this recommendation (each ``{policy, value, rule, summary}``).
    """

    rule: str
    summary: str
    inputs: Mapping[str, JsonValue] = field(default_factory=dict)
    scores: Mapping[str, JsonValue] = field(default_factory=dict)
    thresholds: Mapping[str, JsonValue] = field(default_factory=dict)
    conflicts: tuple[Mapping[str, JsonValue], ...] = ()

    def __post_init__(self) -> None:
        if not self.rule or not isinstance(self.rule, str):
            raise ValueError("explanation.rule must be a non-empty string")
        if not isinstance(self.summary, str) or "\n" in self.summary:
            raise ValueError("explanation.summary must be a one-line string")
        object.__setattr__(self, "inputs", _json_dict(self.inputs, "inputs"))
        object.__setattr__(self, "scores", _json_dict(self.scores, "scores"))
        object.__setattr__(self, "thresholds", _json_dict(self.thresholds, "thresholds"))
        if self.conflicts:
            conflicts = (_json_dict(c, f"conflicts[{i}]") for i, c in enumerate(self.conflicts))
            object.__setattr__(self, "conflicts", tuple(conflicts))

    def with_conflicts(self, more: tuple[Mapping[str, JsonValue], ...]) -> Explanation:
        """A copy with ``more`` conflict notes after its own (the engine's losers)."""
        return Explanation(self.rule, self.summary, self.inputs, self.scores,
                           self.thresholds, self.conflicts + more)

    def to_dict(self) -> JsonDict:
        """Plain JSON-safe dict with keys in a fixed order."""
        return {
            "rule": self.rule,
            "summary": self.summary,
            "inputs": thaw(_json_dict(self.inputs, "inputs")),
            "scores": thaw(_json_dict(self.scores, "scores")),
            "thresholds": thaw(_json_dict(self.thresholds, "thresholds")),
            "conflicts": [thaw(_json_dict(c, "conflicts")) for c in self.conflicts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Explanation:
        """Inverse of :meth:`to_dict`; rejects unknown keys."""
        _check_keys(data, {"rule", "summary"}, _EXPLANATION_KEYS, "explanation")
        return cls(
            rule=data["rule"],
            summary=data["summary"],
            inputs=data.get("inputs", {}),
            scores=data.get("scores", {}),
            thresholds=data.get("thresholds", {}),
            conflicts=tuple(data.get("conflicts", ())),
        )


_EXPLANATION_KEYS = frozenset({"rule", "summary", "inputs", "scores", "thresholds", "conflicts"})
_RECOMMENDATION_KEYS = frozenset({"policy", "kind", "target", "value", "previous", "explanation"})


def _check_keys(
    data: Mapping[str, Any], required: set[str], allowed: frozenset[str], where: str
) -> None:
    if not isinstance(data, Mapping):
        raise TypeError(f"{where}: expected a mapping, got {type(data).__name__}")
    problems = [f"{where}: missing key {k!r}" for k in sorted(required - set(data))]
    problems += [f"{where}: unknown key {k!r}" for k in sorted(set(data) - allowed)]
    if problems:
        raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class Recommendation:
    """One desired change on one target, with its explanation.

    ``previous`` is the value the snapshot showed (None when unknown);
    ``policy`` the registry name of the policy that produced it.
    """

    kind: Kind
    target: str
    value: JsonValue
    policy: str
    explanation: Explanation
    previous: JsonValue = None

    def __post_init__(self) -> None:
        if type(self.kind) is not Kind:
            object.__setattr__(self, "kind", Kind(self.kind))
        if not self.target or not isinstance(self.target, str):
            raise ValueError("recommendation.target must be a non-empty string")
        if not self.policy or not isinstance(self.policy, str):
            raise ValueError("recommendation.policy must be a non-empty string")
        if not isinstance(self.explanation, Explanation):
            raise TypeError("recommendation.explanation must be an Explanation")
        object.__setattr__(self, "value", freeze(self.value, "value"))
        object.__setattr__(self, "previous", freeze(self.previous, "previous"))

    @property
    def key(self) -> tuple[str, str]:
        """The conflict key: two recommendations with the same key compete."""
        return (self.kind.value, self.target)

    def with_explanation(self, explanation: Explanation) -> Recommendation:
        """A copy with another explanation (used by the engine for conflicts).
        Built directly: ``dataclasses.replace`` costs three times more, and the
        engine calls this for thousands of recommendations a cycle at 10k nodes."""
        return Recommendation(kind=self.kind, target=self.target, value=self.value,
                              policy=self.policy, explanation=explanation,
                              previous=self.previous)

    def to_dict(self) -> JsonDict:
        """JSON-safe dict: policy, kind, target, value, previous, explanation."""
        return {
            "policy": self.policy,
            "kind": self.kind.value,
            "target": self.target,
            "value": thaw(freeze(self.value)),
            "previous": thaw(freeze(self.previous, "previous")),
            "explanation": self.explanation.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recommendation:
        """Inverse of :meth:`to_dict`; rejects unknown keys and kinds."""
        _check_keys(
            data,
            {"policy", "kind", "target", "value", "explanation"},
            _RECOMMENDATION_KEYS,
            "recommendation",
        )
        try:
            kind = Kind(data["kind"])
        except ValueError:
            raise ValueError(f"recommendation: unknown kind {data['kind']!r}") from None
        return cls(
            kind=kind,
            target=data["target"],
            value=data["value"],
            policy=data["policy"],
            explanation=Explanation.from_dict(data["explanation"]),
            previous=data.get("previous"),
        )
