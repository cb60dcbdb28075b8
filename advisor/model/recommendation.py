"""Recommendations: what a policy wants changed on the RM, and why.

A :class:`Recommendation` names a *desired state* (``value``) for one target,
the value seen before when known (``previous``), the policy that asked for it
and an :class:`Explanation` (the rule that fired, its inputs, scores and
thresholds, and a one-line summary), so "why?" is answered by the advisor
itself.

Both classes are frozen and serialise to plain JSON-safe dicts with a stable
key order (``to_dict``) and back (``from_dict``). ``value`` and ``previous``
are the kind's payload types (:mod:`.payloads`, which has the table of kinds
and values; each kind's RM lever is ``connectors.rm.write.LEVERS``, and
``advise_*`` kinds are advisory only, never sent to the RM); the explanation's
mappings are canonicalised into immutable JSON (:mod:`.jsonvalue`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yarn_advisor.advisor.model.jsonvalue import JsonDict, JsonValue, json_dict, thaw
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    PREVIOUS_TYPES,
    VALUE_TYPES,
    Payload,
    previous_from_json,
    value_from_json,
)


@dataclass(frozen=True)
class Conflict:
    """A recommendation the engine overrode on the same (kind, target): its policy,
    value, rule and summary."""

    policy: str
    value: Payload
    rule: str
    summary: str

    def to_dict(self) -> JsonDict:
        return {"policy": self.policy, "rule": self.rule, "summary": self.summary,
                "value": thaw(self.value.to_json())}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], kind: Kind) -> Conflict:
        _check_keys(data, {"policy", "value", "rule", "summary"},
                    frozenset({"policy", "value", "rule", "summary"}), "conflict")
        return cls(str(data["policy"]), value_from_json(kind, data["value"]),
                   str(data["rule"]), str(data["summary"]))


@dataclass(frozen=True)
class Explanation:
    """Why a recommendation was made.

    ``rule`` is a dotted id of the rule that fired (e.g.
    ``haste.rta.preference_rank``); ``inputs`` the facts it read; ``scores``
    what it computed; ``thresholds`` the parameters it compared against;
    ``summary`` one human line; ``conflicts`` what the engine overrode in
    favour of this recommendation.
    """

    rule: str
    summary: str
    inputs: Mapping[str, JsonValue] = field(default_factory=dict)
    scores: Mapping[str, JsonValue] = field(default_factory=dict)
    thresholds: Mapping[str, JsonValue] = field(default_factory=dict)
    conflicts: tuple[Conflict, ...] = ()

    def __post_init__(self) -> None:
        if not self.rule or not isinstance(self.rule, str):
            raise ValueError("explanation.rule must be a non-empty string")
        if not isinstance(self.summary, str) or "\n" in self.summary:
            raise ValueError("explanation.summary must be a one-line string")
        object.__setattr__(self, "inputs", json_dict(self.inputs, "inputs"))
        object.__setattr__(self, "scores", json_dict(self.scores, "scores"))
        object.__setattr__(self, "thresholds", json_dict(self.thresholds, "thresholds"))
        if not all(isinstance(c, Conflict) for c in self.conflicts):
            raise TypeError("explanation.conflicts must be Conflict objects")

    def with_conflicts(self, more: tuple[Conflict, ...]) -> Explanation:
        """A copy with ``more`` conflict notes after its own (the engine's losers)."""
        return Explanation(self.rule, self.summary, self.inputs, self.scores,
                           self.thresholds, self.conflicts + more)

    def to_dict(self) -> JsonDict:
        """Plain JSON-safe dict with keys in a fixed order."""
        return {
            "rule": self.rule,
            "summary": self.summary,
            "inputs": thaw(json_dict(self.inputs, "inputs")),
            "scores": thaw(json_dict(self.scores, "scores")),
            "thresholds": thaw(json_dict(self.thresholds, "thresholds")),
            "conflicts": [c.to_dict() for c in self.conflicts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], kind: Kind) -> Explanation:
        """Inverse of :meth:`to_dict` (``kind``: the recommendation's, the type of
        its conflicts' values); rejects unknown keys."""
        _check_keys(data, {"rule", "summary"}, _EXPLANATION_KEYS, "explanation")
        return cls(
            rule=data["rule"],
            summary=data["summary"],
            inputs=data.get("inputs", {}),
            scores=data.get("scores", {}),
            thresholds=data.get("thresholds", {}),
            conflicts=tuple(Conflict.from_dict(c, kind) for c in data.get("conflicts", ())),
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

    ``value`` is the kind's payload type (:mod:`.payloads`); ``previous`` the
    value the snapshot showed (None when unknown); ``policy`` the registry
    name of the policy that produced it.
    """

    kind: Kind
    target: str
    value: Payload
    policy: str
    explanation: Explanation
    previous: Payload | None = None

    def __post_init__(self) -> None:
        if type(self.kind) is not Kind:
            object.__setattr__(self, "kind", Kind(self.kind))
        if not self.target or not isinstance(self.target, str):
            raise ValueError("recommendation.target must be a non-empty string")
        if not self.policy or not isinstance(self.policy, str):
            raise ValueError("recommendation.policy must be a non-empty string")
        if not isinstance(self.explanation, Explanation):
            raise TypeError("recommendation.explanation must be an Explanation")
        if type(self.value) is not VALUE_TYPES[self.kind]:
            raise TypeError(f"{self.kind.value}: value must be a "
                            f"{VALUE_TYPES[self.kind].__name__}, not {type(self.value).__name__}")
        if self.previous is not None and type(self.previous) is not PREVIOUS_TYPES[self.kind]:
            raise TypeError(f"{self.kind.value}: previous must be a "
                            f"{PREVIOUS_TYPES[self.kind].__name__} or None, "
                            f"not {type(self.previous).__name__}")

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
            "value": thaw(self.value.to_json()),
            "previous": None if self.previous is None else thaw(self.previous.to_json()),
            "explanation": self.explanation.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recommendation:
        """Inverse of :meth:`to_dict`; rejects unknown keys, kinds and values."""
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
            value=value_from_json(kind, data["value"]),
            policy=data["policy"],
            explanation=Explanation.from_dict(data["explanation"], kind),
            previous=previous_from_json(kind, data.get("previous")),
        )
