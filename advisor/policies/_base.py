"""The contract every policy fulfils, and the small types it shares.

A policy is a package ``advisor/policies/<paper>/`` whose ``__init__`` exposes
``POLICY``, a :class:`Policy` ``[Params, State]``:

- ``name``: its registry and configuration name;
- ``params``: a :class:`~yarn_advisor.config.base.ConfigModel` (defaults and
  validation together; the configuration loader validates it);
- ``state``: its typed, immutable state between cycles; ``State()`` is the
  first cycle's, and ``to_json`` / ``from_json`` are its only JSON forms
  (checkpoints, HA), never used between two cycles of one process;
- ``advise(snapshot, state, params, reads) -> PolicyResult[State]``: pure (no
  I/O, no clock but ``snapshot.taken_at``, no mutation of its inputs);
- ``shares(state) -> Shared`` (optional): what it hands the other policies,
  from its state of the previous cycle (so the result does not depend on the
  order the policies run in);
- ``metrics(state, recommendations, mode) -> metric families`` (optional): what
  it exports about itself, so the generic metrics import no policy.

What a policy reads besides its own state is :class:`Reads`: typed fields,
never a string-keyed bag. Each package has the same files (``params.py``,
``inputs.py``: Snapshot -> the paper's terms, ``core.py``: the paper's maths
on plain values, ``state.py``, ``advice.py``: results -> recommendations with
explanations, ``README.md``); see ``_template/`` for a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Generic, Protocol, Self, TypeVar

from prometheus_client.core import Metric

from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.classifiers.model.live import Predictions
from yarn_advisor.config.base import ConfigModel


class StateError(ValueError):
    """A state's JSON form that cannot be read back (corrupt or from another version)."""


class PolicyState(Protocol):
    """A policy's state: built empty for the first cycle, JSON at the edges only."""

    def __init__(self) -> None: ...

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        ...

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Self:
        """Inverse of :meth:`to_json`; StateError (or ValueError) if it is not one."""
        ...


S = TypeVar("S", bound=PolicyState)
S_co = TypeVar("S_co", covariant=True)
P = TypeVar("P", bound=ConfigModel)


@dataclass(frozen=True)
class PolicyResult(Generic[S_co]):
    """What ``advise`` returns: recommendations and the state for the next cycle."""

    recommendations: tuple[Recommendation, ...]
    next_state: S_co


@dataclass(frozen=True)
class Shared:
    """What policies hand each other, from their states of the previous cycle; each
    field is filled by one policy (None: that policy is absent or has said nothing)."""

    # PRISM: node id -> (memory MiB, vcores) allocated but idle by the phase profile of
    # what runs there (e.g. reduces waiting in shuffle); OPERA lends it where unmeasured
    idle_headroom: Mapping[str, tuple[float, float]] | None = None

    def merged(self, other: Shared) -> Shared:
        """This with ``other``'s fields where it has none."""
        more = {f.name: getattr(other, f.name) for f in fields(other)
                if getattr(self, f.name) is None and getattr(other, f.name) is not None}
        return replace(self, **more) if more else self


@dataclass(frozen=True)
class Reads:
    """What a policy is handed besides its own state."""

    predictions: Predictions | None = None  # this cycle's, from the classifier (None: none)
    shared: Shared = field(default_factory=Shared)


NO_READS = Reads()

Advise = Callable[[Snapshot, S, P, Reads], PolicyResult[S]]
MetricsOf = Callable[[S, Sequence[Recommendation], str], Iterable[Metric]]


@dataclass(frozen=True)
class Policy(Generic[P, S]):
    """One paper's policy, typed by its parameters ``P`` and state ``S``."""

    name: str
    params: type[P]
    state: type[S]
    advise: Advise[S, P]
    shares: Callable[[S], Shared] | None = None
    metrics: MetricsOf[S] | None = None

    # --- the engine's view: a state and parameters of unknown type, checked here -------
    def initial_state(self) -> S:
        return self.state()

    def state_from_json(self, data: Mapping[str, object]) -> S:
        return self.state.from_json(data)

    def own(self, state: object) -> S:
        """``state`` as this policy's (its first-cycle state if it is not one)."""
        return state if isinstance(state, self.state) else self.state()

    def run(self, snapshot: Snapshot, state: object, params: ConfigModel,
            reads: Reads) -> PolicyResult[S]:
        """``advise`` on ``state`` and ``params`` if they are this policy's (else its
        first-cycle state and default parameters)."""
        p = params if isinstance(params, self.params) else self.params()
        return self.advise(snapshot, self.own(state), p, reads)

    def shared(self, state: object) -> Shared:
        return Shared() if self.shares is None else self.shares(self.own(state))

    def export(self, state: object, recs: Sequence[Recommendation],
               mode: str) -> Iterable[Metric]:
        """This policy's own metric families (none without a ``metrics`` hook)."""
        return () if self.metrics is None else self.metrics(self.own(state), recs, mode)


class AnyPolicy(Protocol):
    """A policy whose parameter and state types the caller does not know: what the
    engine, HA and metrics use (every :class:`Policy` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> type[ConfigModel]: ...

    def initial_state(self) -> object: ...

    def state_from_json(self, data: Mapping[str, object]) -> object: ...

    def run(self, snapshot: Snapshot, state: object, params: ConfigModel,
            reads: Reads) -> PolicyResult[object]: ...

    def shared(self, state: object) -> Shared: ...

    def export(self, state: object, recs: Sequence[Recommendation],
               mode: str) -> Iterable[Metric]: ...
