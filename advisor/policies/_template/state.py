"""The template's state: the apps it advised, so it advises each once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.policies._base import StateError


@dataclass(frozen=True)
class State:
    """Immutable; ``State()`` is the first cycle's."""

    advised: frozenset[str] = frozenset()

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        return {"advised": tuple(sorted(self.advised))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Inverse of :meth:`to_json`."""
        advised = data.get("advised", [])
        if not isinstance(advised, list) or not all(isinstance(a, str) for a in advised):
            raise StateError("template state: 'advised' must be a list of app ids")
        return cls(frozenset(advised))
