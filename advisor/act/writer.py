"""The one read-before-write, over any RM's levers, and how a write is journaled.

An RM (the real one, ``connectors.rm.write.RMLevers``; the simulated one,
``simulator.levers.SimLevers``; a test's) offers :class:`RMLevers`: per kind,
``read`` the target's current value and ``send`` one change. :class:`Writer`
is the only code that combines them: read; if the RM already holds the value,
nothing is sent (``noop``: repeating a write whose answer was lost is
harmless); otherwise ``before_send(previous)`` runs (the actuator journals its
intent there, or vetoes by raising), exactly one change is sent, never
retried, and the value is read back.

:func:`journaled_write` wraps one such write in its two journal lines
(``intent`` before it is sent, ``result`` after) and says what became of it
(:class:`~yarn_advisor.advisor.act.outcomes.Outcome`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.outcomes import Outcome
from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Payload, holds, previous_from_json
from yarn_advisor.connectors.errors import (
    ConnectorError,
    HTTPStatusError,
    StandbyError,
    TimeoutError_,
    UnavailableError,
)


class RMLevers(Protocol):
    """What an RM offers the writer: its state, and per kind one read and one send."""

    def ensure_active(self) -> None:
        """Raise StandbyError / UnavailableError unless an active RM answers now."""
        ...

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        """The target's current value, in ``value``'s shape (never writes)."""
        ...

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        """One change; returns the RM's answer. ValueError: a value it cannot send."""
        ...


@dataclass(frozen=True)
class WriteOutcome:
    """What one write did: ``status`` is applied or noop."""

    kind: Kind
    target: str
    previous: Payload | None
    status: Outcome
    answer: JsonValue = None
    observed: Payload | None = None


class Veto(Exception):
    """Raised by a ``before_send`` check: nothing is journaled or sent."""


def _nothing(previous: Payload | None) -> None:
    return None


class Writer:
    """The one read-before-write over ``levers``."""

    def __init__(self, levers: RMLevers) -> None:
        self.levers = levers

    def ensure_active(self) -> None:
        self.levers.ensure_active()

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        return self.levers.read(kind, target, value)

    def apply(self, kind: Kind, target: str, value: Payload,
              before_send: Callable[[Payload | None], None] = _nothing) -> WriteOutcome:
        """Read, and unless the RM holds ``value`` already: ``before_send``, one
        change, read back (a failed read-back only loses the echo)."""
        previous = self.levers.read(kind, target, value)
        if holds(kind, previous, value):
            return WriteOutcome(kind, target, previous, Outcome.NOOP)
        before_send(previous)
        answer = self.levers.send(kind, target, value)
        try:
            observed = self.levers.read(kind, target, value)
        except (ConnectorError, ValueError):
            observed = None
        return WriteOutcome(kind, target, previous, Outcome.APPLIED, answer, observed)


def journaled_write(writer: Writer, journal: Journal, base: Entry, value: Payload,
                    check: Callable[[Payload | None], None] = _nothing) -> Entry:
    """One write of ``value``, journaled: ``intent`` (after the read, with the previous
    value) and ``result`` (outcome, answer and value read back, or the error).
    ``check(previous)`` may veto by raising :class:`Veto` before anything is
    journaled or sent (the Veto propagates). Returns the ``result`` entry."""
    sent = False

    def before_send(previous: Payload | None) -> None:
        nonlocal sent
        check(previous)
        journal.append(replace(base, phase=Phase.INTENT, previous=_json(previous)))
        sent = True

    result = replace(base, phase=Phase.RESULT, value=None, rule=None, summary=None, ts=0.0)
    try:
        out = writer.apply(base.kind, base.target, value, before_send)
    except (ConnectorError, ValueError, TypeError, KeyError, AttributeError) as exc:
        outcome, observed = _failure(writer, exc, sent, base.kind, base.target, value)
        result = replace(result, outcome=outcome, sent=sent,
                         error=f"{type(exc).__name__}: {exc}",
                         status=getattr(exc, "status", None), observed=_json(observed))
    else:
        result = replace(result, outcome=_held(out, value), sent=sent,
                         previous=_json(out.previous), answer=out.answer,
                         observed=_json(out.observed))
    return journal.append(result)


def _json(p: Payload | None) -> JsonValue:
    return None if p is None else p.to_json()


def entry_previous(e: Entry) -> Payload | None:
    """The typed previous value of a journal entry (None if absent or unreadable)."""
    try:
        return previous_from_json(e.kind, e.previous)
    except ValueError:
        return None


# levers the RM applies synchronously, so the value read back right after the
# write is the one it kept (node resources and labels settle through events)
_READ_BACK = frozenset({Kind.SET_APP_PRIORITY, Kind.MOVE_APP_QUEUE, Kind.UPDATE_SCHEDULER_CONF,
                        Kind.SET_MAPPING_RULES})


def _held(out: WriteOutcome, value: Payload) -> Outcome:
    """``applied``, unless the value read back after the write is not the one sent
    (the RM accepted it and kept another, e.g. a priority capped at the cluster's
    maximum): then ``not_held``, so nobody counts it as done."""
    if out.status is Outcome.APPLIED and out.kind in _READ_BACK and out.observed is not None \
            and not holds(out.kind, out.observed, value):
        return Outcome.NOT_HELD
    return out.status


def _failure(writer: Writer, exc: Exception, sent: bool, kind: Kind, target: str,
             value: Payload) -> tuple[Outcome, Payload | None]:
    """Outcome of a failed call; after a lost answer, one read says what happened."""
    if not isinstance(exc, ConnectorError):  # a value the lever cannot send
        return Outcome.INVALID, None
    if isinstance(exc, TimeoutError_) and sent:
        try:
            observed = writer.read(kind, target, value)
        except ConnectorError:
            return Outcome.UNKNOWN, None
        return (Outcome.APPLIED if holds(kind, observed, value) else Outcome.UNKNOWN), observed
    if isinstance(exc, StandbyError):
        return Outcome.STANDBY, None
    if isinstance(exc, UnavailableError):
        return (Outcome.UNKNOWN if sent else Outcome.UNAVAILABLE), None
    if isinstance(exc, HTTPStatusError) and 400 <= exc.status < 500:
        return Outcome.REFUSED, None
    return Outcome.FAILED, None
