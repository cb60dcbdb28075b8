"""The contract every policy package fulfils, and the small types it shares.

A policy is a package ``advisor/policies/<paper>/`` whose ``__init__`` exposes:

- ``NAME``: its registry and configuration name;
- ``READS``: the other states it reads (``"classifier"`` for this cycle's task
  predictions, or another policy's name for that policy's state of the
  previous cycle), handed to ``advise`` as ``reads``;
- ``Params``: a :class:`~yarn_advisor.config.base.ConfigModel` (defaults and
  validation together; the configuration loader validates it);
- ``State``: its typed, immutable state between cycles; ``State()`` is the
  first cycle's, and ``to_json`` / ``from_json`` are its only JSON forms
  (checkpoints, HA), never used between two cycles of one process;
- ``advise(snapshot, state, params, reads) -> PolicyResult``: pure (no I/O, no
  clock but ``snapshot.taken_at``, no mutation of its inputs).

Each package has the same files (``params.py``, ``inputs.py``: Snapshot ->
the paper's terms, ``core.py``: the paper's maths on plain values,
``state.py``, ``advice.py``: results -> recommendations with explanations,
``README.md``); see ``_template/`` for a new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar

from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.base import ConfigModel

S = TypeVar("S")

Reads = Mapping[str, object]
"""What a policy declared in ``READS``, by key (absent when there is none yet)."""

NO_READS: Reads = MappingProxyType({})


class StateError(ValueError):
    """A state's JSON form that cannot be read back (corrupt or from another version)."""


@dataclass(frozen=True)
class PolicyResult(Generic[S]):
    """What ``advise`` returns: recommendations and the state for the next cycle."""

    recommendations: tuple[Recommendation, ...]
    next_state: S


class PolicyState(Protocol):
    """A policy's state: JSON at the edges only."""

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        ...


class Policy(Protocol):
    """A policy package (see the module docstring)."""

    NAME: str
    READS: tuple[str, ...]

    @property
    def Params(self) -> type[ConfigModel]:
        """Its parameters' model."""
        ...

    @property
    def State(self) -> Any:
        """Its state class: ``State()`` and ``State.from_json(data)``."""
        ...

    def advise(self, snapshot: Snapshot, state: Any, params: Any,
               reads: Reads = NO_READS) -> PolicyResult[Any]:
        """The recommendations for ``snapshot`` and the next state."""
        ...
