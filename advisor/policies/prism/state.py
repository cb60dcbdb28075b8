"""PRISM's state between cycles: learned phase profiles, the node cursor, and what it
publishes for other policies (idle headroom per node, urgency per app) and operators."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from yarn_advisor.advisor.model.jsonvalue import (
    FrozenJson,
    JsonDict,
    JsonValue,
    freeze,
    freeze_dict,
    thaw,
)
from yarn_advisor.advisor.policies.prism.core import Vec
from yarn_advisor.advisor.policies.prism.profiles import Profiles

VERSION = 1


@dataclass(frozen=True)
class State:
    """``profiles``: per (app, task type, phase) usage and the containers' last counters;
    ``cursor``: the next node to schedule; ``idle_headroom``: node -> allocated but idle
    (memory MiB, vcores) by phase profile (OPERA reads it); ``urgency``: app -> share of
    its memory held by reduces waiting in shuffle; ``slowstart``: app -> the decision
    (``fraction``, ``how``, ...); ``plan``: node -> this cycle's picks; ``stats``: counts.
    ``profiles`` is never changed in place: ``advise`` learns into a copy."""

    profiles: Profiles = field(default_factory=Profiles)
    cursor: int = 0
    updated_at: int = 0
    idle_headroom: Mapping[str, Vec] = field(default_factory=dict)
    urgency: Mapping[str, float] = field(default_factory=dict)
    slowstart: Mapping[str, FrozenJson] = field(default_factory=dict)
    plan: Mapping[str, JsonValue] = field(default_factory=dict)
    stats: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        return {
            "version": VERSION,
            "updated_at": self.updated_at,
            "cursor": self.cursor,
            "idle_headroom": {k: {"memory_mb": int(v[0]), "vcores": round(v[1], 3)}
                              for k, v in sorted(self.idle_headroom.items())
                              if v[0] > 0 or v[1] > 0},
            "urgency": dict(sorted(self.urgency.items())),
            "slowstart": {k: thaw(v) for k, v in sorted(self.slowstart.items())},
            "plan": {k: thaw(v) for k, v in sorted(self.plan.items())},
            "profiles": self.profiles.to_json(),
            "samples": self.profiles.samples_json(),
            "stats": dict(self.stats),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Inverse of :meth:`to_json` (what cannot be read is dropped)."""
        cursor = data.get("cursor")
        heads: dict[str, Vec] = {}
        for k, v in _map(data.get("idle_headroom")).items():
            m = _map(v)
            if _num(m.get("memory_mb")) and _num(m.get("vcores")):
                heads[str(k)] = (float(m["memory_mb"]), float(m["vcores"]))
        slow = {str(k): freeze_dict(v) for k, v in _map(data.get("slowstart")).items()
                if isinstance(v, Mapping)}
        updated = data.get("updated_at")
        return cls(
            profiles=Profiles.from_json(data.get("profiles"), data.get("samples")),
            cursor=cursor if _int(cursor) else 0,
            updated_at=updated if _int(updated) else 0,
            idle_headroom=heads,
            urgency={str(k): float(v) for k, v in _map(data.get("urgency")).items()
                     if _num(v)},
            slowstart=slow,
            plan={str(k): freeze(v) for k, v in _map(data.get("plan")).items()
                  if isinstance(v, list)},
            stats={str(k): v for k, v in _map(data.get("stats")).items() if _int(v)},
        )


def _int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _num(x: object) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _map(raw: object) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}
