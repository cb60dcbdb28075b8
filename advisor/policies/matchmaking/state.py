"""What Matchmaking carries between cycles: markers, app ids seen, the held delay, counters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.policies._base import StateError
from yarn_advisor.advisor.policies.matchmaking.core import Marker


@dataclass(frozen=True)
class State:
    """Markers per node (Tables 1-2), app ids of the last cycle (a new one resets the
    markers), the delay held under hysteresis, and the last QueueMetrics locality counters."""

    markers: Mapping[str, Marker] = field(default_factory=dict)
    apps: frozenset[str] = frozenset()
    held_delay: int | None = None
    counters: tuple[int, int, int] | None = None

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        return {
            "markers": {k: v for k, v in sorted(self.markers.items())},
            "apps": tuple(sorted(self.apps)),
            "held_delay": self.held_delay,
            "counters": None if self.counters is None else list(self.counters),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Inverse of :meth:`to_json`; StateError if it is not one."""
        try:
            markers = {str(k): (None if v is None else int(v))
                       for k, v in dict(data.get("markers") or {}).items()}
            counters = data.get("counters")
            held = data.get("held_delay")
            return cls(markers, frozenset(str(a) for a in data.get("apps") or ()),
                       None if held is None else int(held),
                       None if counters is None else (int(counters[0]), int(counters[1]),
                                                       int(counters[2])))
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise StateError(f"matchmaking state: {exc}") from None
