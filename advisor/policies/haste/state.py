"""HaSTE keeps nothing between cycles: each cycle ranks what the snapshot shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yarn_advisor.advisor.model.jsonvalue import JsonDict


@dataclass(frozen=True)
class State:
    """Empty: HaSTE is stateless (the paper's scheduler reads only the current heartbeat)."""

    def to_json(self) -> JsonDict:
        """The JSON form (empty)."""
        return {}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Any mapping reads as the empty state."""
        return cls()
