"""The contract every policy module fulfils, and its small shared types.

A policy is a *module* with ``NAME``, a frozen ``Params`` dataclass (defaults
and validation together, validation in ``__post_init__`` raising
:class:`ParamsError` with every problem at once) and a pure
``advise(snapshot, state, params) -> PolicyResult``: no I/O, no clock but
``snapshot.taken_at``, no mutation of its inputs. ``state`` is what the same
policy returned as ``next_state`` last cycle (None on the first cycle).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.recommendation import Recommendation


@dataclass(frozen=True)
class PolicyResult:
    """What ``advise`` returns: recommendations and the state for next cycle."""

    recommendations: tuple[Recommendation, ...]
    next_state: object = None


class ParamsError(ValueError):
    """Invalid policy parameters; ``problems`` holds ``(field, message)`` pairs."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems: tuple[tuple[str, str], ...] = tuple(problems)
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


def raise_problems(problems: Sequence[tuple[str, str]]) -> None:
    """Raise :class:`ParamsError` if ``problems`` is not empty."""
    if problems:
        raise ParamsError(problems)


class Policy(Protocol):
    """A policy module (see the module docstring)."""

    NAME: str

    @property
    def Params(self) -> type[Any]:
        """The frozen dataclass of this policy's parameters."""
        ...

    def advise(self, snapshot: Snapshot, state: Any, params: Any) -> PolicyResult:
        """Return the recommendations for ``snapshot`` and the next state."""
        ...
