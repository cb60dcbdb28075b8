"""The audit journal: append-only JSON lines, each one on disk before we go on.

Every record is one line, written with a single ``O_APPEND`` write and
``fsync``'d, so a crash loses at most the line being written (a torn last line
is skipped when reading, and counted). The actuator writes, per action id:

- ``intent`` before a write is sent: kind, target, desired ``value`` and the
  ``previous`` value read from the RM just before;
- ``result`` after it: ``outcome``, whether it was ``sent``, the RM's
  ``answer``, the value ``observed`` when read back, and any ``error``;
- ``dry_run`` (what would have been done) and ``blocked`` (which guardrail
  stopped it) when nothing is sent.

:func:`journaled_write` is the one place a write is journaled (the actuator
and rollback both use it). Rollback actions are ordinary actions with
``policy: rollback`` and ``rollback_of``. :meth:`Journal.actions` folds the
records into one :class:`Action` per id: what ``yarn-advisor rollback`` reads.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from yarn_advisor.connectors.errors import (
    ConnectorError,
    HTTPStatusError,
    StandbyError,
    TimeoutError_,
    UnavailableError,
)
from yarn_advisor.connectors.rm_write import WriteOutcome, lever

Record = dict[str, Any]


class Writer(Protocol):
    """What writes: :class:`~yarn_advisor.connectors.rm_write.RMWriter` (or a test double)."""

    def ensure_active(self) -> None: ...

    def read(self, kind: str, target: str, value: Any = None) -> Any: ...

    def apply(self, kind: str, target: str, value: Any,
              before_send: Callable[[Any], None] = ...) -> WriteOutcome: ...


def new_id() -> str:
    """A short unique action id (time-ordered prefix, random suffix)."""
    return f"{int(time.time() * 1000):x}-{uuid.uuid4().hex[:8]}"


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


@dataclass(frozen=True)
class Action:
    """One action as the journal tells it (intent and result folded)."""

    id: str
    ts: float
    kind: str
    target: str
    policy: str
    value: Any
    previous: Any
    sent: bool
    outcome: str  # applied | noop | refused | failed | unknown | standby | ... | "" (no result)
    answer: Any = None
    rollback_of: str | None = None


class Journal:
    """An append-only, fsync'd JSON-lines file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.torn_lines = 0
        self._lock = threading.Lock()

    def append(self, record: Record) -> Record:
        """Write one record (``ts``/``time`` added when absent) and fsync it."""
        rec = dict(record)
        ts = float(rec.setdefault("ts", time.time()))
        rec.setdefault("time", iso(ts))
        line = (json.dumps(rec, sort_keys=True, default=str) + "\n").encode()
        with self._lock:
            created = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                _fsync_dir(self.path.parent)
        return rec

    def read(self, offset: int = 0) -> tuple[list[Record], int]:
        """Records from byte ``offset`` on, and the offset after the last whole line."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                data = fh.read()
        except FileNotFoundError:
            return [], offset
        end = data.rfind(b"\n") + 1  # an unterminated tail may still be being written
        out: list[Record] = []
        for raw in data[:end].splitlines():
            try:
                rec = json.loads(raw)
            except ValueError:
                self.torn_lines += 1
                continue
            if isinstance(rec, dict):
                out.append(rec)
        return out, offset + end

    def records(self) -> Iterator[Record]:
        yield from self.read()[0]

    def actions(self) -> list[Action]:
        """Every action that has an ``intent`` or a ``result``, in journal order."""
        intents: dict[str, Record] = {}
        results: dict[str, Record] = {}
        for rec in self.records():
            rid = str(rec.get("id", ""))
            if rec.get("phase") == "intent":
                intents[rid] = rec
            elif rec.get("phase") == "result":
                results[rid] = rec
        out = []
        for rid in dict.fromkeys([*intents, *results]):
            i, r = intents.get(rid, {}), results.get(rid, {})
            first = i or r
            out.append(Action(
                id=rid, ts=float(first.get("ts", 0.0)), kind=str(first.get("kind")),
                target=str(first.get("target")), policy=str(first.get("policy")),
                value=first.get("value"), previous=i.get("previous", r.get("previous")),
                sent=bool(i) or bool(r.get("sent")), outcome=str(r.get("outcome", "")),
                answer=r.get("answer"), rollback_of=first.get("rollback_of")))
        return out


def _fsync_dir(path: Path) -> None:
    """Make a new file's directory entry durable too (no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def journaled_write(writer: Writer, journal: Journal, base: Record,
                    check: Callable[[Any], None] = lambda previous: None) -> tuple[str, Record]:
    """One lever call, journaled: ``intent`` (after the read, with the previous
    value) and ``result`` (outcome, answer and value read back, or the error).
    ``check(previous)`` may veto by raising before anything is journaled or sent.
    """
    kind, target, value = base["kind"], base["target"], base["value"]
    sent = False

    def before_send(previous: Any) -> None:
        nonlocal sent
        check(previous)
        journal.append({**base, "phase": "intent", "previous": previous})
        sent = True

    result: Record = {k: base.get(k) for k in ("id", "kind", "target", "policy", "rollback_of")}
    result["phase"] = "result"
    try:
        out = writer.apply(kind, target, value, before_send)
    except (ConnectorError, ValueError, TypeError, KeyError, AttributeError) as exc:
        outcome, observed = _failure(writer, exc, sent, kind, target, value)
        result |= {"outcome": outcome, "sent": sent, "error": f"{type(exc).__name__}: {exc}",
                   "status": getattr(exc, "status", None), "observed": observed}
    else:
        result |= {"outcome": out.status, "sent": sent, "previous": out.previous,
                   "answer": out.answer, "observed": out.observed}
    return str(result["outcome"]), journal.append(result)


def _failure(writer: Writer, exc: Exception, sent: bool, kind: str, target: str,
             value: Any) -> tuple[str, Any]:
    """Outcome of a failed call; after a lost answer, one read says what happened."""
    if not isinstance(exc, ConnectorError):  # a value the lever cannot send
        return "invalid", None
    if isinstance(exc, TimeoutError_) and sent:
        try:
            observed = writer.read(kind, target, value)
        except ConnectorError:
            return "unknown", None
        return ("applied" if lever(kind).same(observed, value) else "unknown"), observed
    if isinstance(exc, StandbyError):
        return "standby", None
    if isinstance(exc, UnavailableError):
        return ("unknown" if sent else "unavailable"), None
    if isinstance(exc, HTTPStatusError) and 400 <= exc.status < 500:
        return "refused", None
    return "failed", None
