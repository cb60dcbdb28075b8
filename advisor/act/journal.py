"""The audit journal: append-only JSON lines, each one on disk before we go on.

Every record is one :class:`Entry`, written as one line with a single
``O_APPEND`` write and ``fsync``'d, so a crash loses at most the line being
written. A torn last line (a crash mid-write) is terminated before the next
record is appended, so it can never swallow that record, and it is counted
(``Journal.unreadable``) when the journal is read; callers report it.

The actuator writes, per action id:

- ``intent`` before a write is sent: kind, target, desired ``value`` and the
  ``previous`` value read from the RM just before;
- ``result`` after it: ``outcome``, whether it was ``sent``, the RM's
  ``answer``, the value ``observed`` when read back, and any ``error``
  (``not_held``: the RM accepted the write but kept another value);
- ``dry_run`` (what would have been done) and ``blocked`` (which guardrail
  stopped it) when nothing is sent.

The journal only persists: values are JSON here (the edge), and what a write
came to is decided by the writer (:func:`~yarn_advisor.advisor.act.writer.journaled_write`,
the one place a write is journaled). Rollback actions are ordinary actions
with ``policy: rollback`` and ``rollback_of``. :meth:`Journal.actions` folds
the entries into one :class:`Action` per id: what ``yarn-advisor rollback`` reads.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind


class Phase(StrEnum):
    """Which step of an action a journal entry records."""

    INTENT = "intent"
    RESULT = "result"
    DRY_RUN = "dry_run"
    BLOCKED = "blocked"
    TRIPPED = "tripped"  # the harm watchdog switched a policy to dry-run (act/watchdog.py)


def new_id() -> str:
    """A short unique action id (time-ordered prefix, random suffix)."""
    return f"{int(time.time() * 1000):x}-{uuid.uuid4().hex[:8]}"


def iso(ts: float) -> str:
    """ISO 8601 UTC with milliseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


@dataclass(frozen=True)
class Entry:
    """One journal line. ``ts`` is set when it is appended (if not given)."""

    id: str
    phase: Phase
    kind: Kind
    target: str
    policy: str
    mode: str = "enforce"  # enforce | dry_run
    value: JsonValue = None
    previous: JsonValue = None
    rule: str | None = None
    summary: str | None = None
    outcome: str | None = None
    reason: str | None = None
    sent: bool | None = None
    answer: JsonValue = None
    observed: JsonValue = None
    error: str | None = None
    status: int | None = None
    rollback_of: str | None = None
    count: int | None = None  # a summary line: how many blocked recommendations it stands for
    ts: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The line's JSON object (``None`` fields left out; ``time`` added for people)."""
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["phase"], out["kind"] = self.phase.value, self.kind.value
        out["time"] = iso(self.ts)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        """Read a line's object back; ValueError if it is not an entry."""
        try:
            return cls(
                id=str(data["id"]), phase=Phase(data["phase"]), kind=Kind(data["kind"]),
                target=str(data["target"]), policy=str(data.get("policy", "")),
                mode=str(data.get("mode", "enforce")), value=data.get("value"),
                previous=data.get("previous"), rule=_opt_str(data.get("rule")),
                summary=_opt_str(data.get("summary")), outcome=_opt_str(data.get("outcome")),
                reason=_opt_str(data.get("reason")),
                sent=data["sent"] if isinstance(data.get("sent"), bool) else None,
                answer=data.get("answer"), observed=data.get("observed"),
                error=_opt_str(data.get("error")),
                status=data["status"] if isinstance(data.get("status"), int) else None,
                rollback_of=_opt_str(data.get("rollback_of")),
                count=data["count"] if isinstance(data.get("count"), int) else None,
                ts=float(data.get("ts", 0.0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a journal entry: {exc}") from None


def _opt_str(x: object) -> str | None:
    return None if x is None else str(x)


@dataclass(frozen=True)
class Action:
    """One action as the journal tells it (intent and result folded)."""

    id: str
    ts: float
    kind: Kind
    target: str
    policy: str
    value: JsonValue
    previous: JsonValue
    sent: bool
    outcome: str  # an Outcome's value, or "" (no result journaled)
    answer: JsonValue = None
    rollback_of: str | None = None


@dataclass
class Journal:
    """An append-only, fsync'd JSON-lines file, rotated by size.

    When the live file passes ``max_bytes`` it becomes ``<path>.1`` (``.1`` becomes
    ``.2`` ...; ``keep`` rotated files are kept, the oldest is dropped), so a
    daemon in dry-run for months keeps a bounded journal. :meth:`entries` and
    :meth:`actions` (what rollback reads) read the rotated files too, oldest first.
    """

    path: Path
    max_bytes: int = 64 << 20
    keep: int = 4
    unreadable: int = 0  # lines that could not be read back (torn or garbled)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    def segments(self) -> list[Path]:
        """The rotated files, oldest first, then the live file (those that exist)."""
        rotated = [self.path.with_name(f"{self.path.name}.{i}") for i in range(self.keep, 0, -1)]
        return [p for p in (*rotated, self.path) if p.exists()]

    def _rotate_if_full(self) -> None:
        try:
            if self.path.stat().st_size < self.max_bytes:
                return
        except FileNotFoundError:
            return
        for i in range(self.keep, 0, -1):
            src = self.path.with_name(f"{self.path.name}.{i - 1}") if i > 1 else self.path
            if src.exists():
                os.replace(src, self.path.with_name(f"{self.path.name}.{i}"))

    def append(self, entry: Entry) -> Entry:
        """Write one entry (``ts`` set now when it has none) and fsync it."""
        if not entry.ts:
            entry = replace(entry, ts=time.time())
        line = (json.dumps(entry.to_json(), sort_keys=True, default=str) + "\n").encode()
        with self._lock:
            self._rotate_if_full()
            created = not self.path.exists()
            if created:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o640)
            try:
                if not created and _torn_tail(fd):
                    line = b"\n" + line  # end the torn line; it stays unreadable, alone
                _write_whole(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                _fsync_dir(self.path.parent)
        return entry

    def read(self, offset: int = 0) -> tuple[list[Entry], int]:
        """Entries of the live file from byte ``offset`` on, and the offset after the
        last whole line (a file shorter than ``offset`` was rotated: read from 0).

        An unterminated tail may still be being written, so it is left for the
        next read; a line that does not parse is counted in ``unreadable``."""
        return self._read(self.path, offset)

    def _read(self, path: Path, offset: int) -> tuple[list[Entry], int]:
        try:
            with open(path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size < offset:
                    offset = 0
                fh.seek(offset)
                data = fh.read()
        except FileNotFoundError:
            return [], 0
        end = data.rfind(b"\n") + 1
        out: list[Entry] = []
        for raw in data[:end].splitlines():
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
                out.append(Entry.from_json(obj if isinstance(obj, dict) else {}))
            except ValueError:
                self.unreadable += 1
        return out, offset + end

    def entries(self) -> list[Entry]:
        """Every readable entry of every segment, oldest first. An unterminated last
        line (a crash mid-write, nothing appended since) counts in ``unreadable``:
        rollback must say it could not read it, not drop it silently."""
        out: list[Entry] = []
        for path in self.segments():
            found, end = self._read(path, 0)
            out.extend(found)
            if _torn_after(path, end):
                self.unreadable += 1
        return out

    def actions(self) -> list[Action]:
        """Every action that has an ``intent`` or a ``result``, in journal order."""
        intents: dict[str, Entry] = {}
        results: dict[str, Entry] = {}
        for e in self.entries():
            if e.phase is Phase.INTENT:
                intents[e.id] = e
            elif e.phase is Phase.RESULT:
                results[e.id] = e
        out = []
        for rid in dict.fromkeys([*intents, *results]):
            i, r = intents.get(rid), results.get(rid)
            first = i or r
            assert first is not None
            previous = i.previous if i is not None else (r.previous if r else None)
            out.append(Action(
                id=rid, ts=first.ts, kind=first.kind, target=first.target, policy=first.policy,
                value=first.value, previous=previous,
                sent=i is not None or bool(r and r.sent), outcome=(r.outcome or "") if r else "",
                answer=r.answer if r else None, rollback_of=first.rollback_of))
        return out


class JournalWriteError(OSError):
    """A line could not be written whole (a full, read-only or size-limited disk).

    Nothing of it is left in the file; for an ``intent`` the RM write is not sent."""


def _write_whole(fd: int, data: bytes) -> None:
    """Write all of ``data`` at the end of ``fd`` or nothing of it.

    ``os.write`` may write part of a line and return short (ENOSPC and EFBIG are
    raised only by the next call): a torn ``intent`` counted as written would let
    its RM write go out with an unreadable record. The rest is written in further
    calls; when one fails or writes nothing the file is cut back to its size
    before the line and :class:`JournalWriteError` is raised."""
    start = os.fstat(fd).st_size
    done = 0
    try:
        while done < len(data):
            n = os.write(fd, data[done:])
            if n <= 0:
                raise OSError(errno.ENOSPC, "no byte written")
            done += n
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise JournalWriteError(
            exc.errno or errno.EIO,
            f"journal line not written ({done} of {len(data)} bytes): "
            f"{exc.strerror or exc}") from None


def _torn_tail(fd: int) -> bool:
    """True when the file's last byte is not a newline (a torn last line)."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def _torn_after(path: Path, end: int, settle_s: float = 0.05) -> bool:
    """True when ``path`` holds bytes after offset ``end`` (its last newline) that do
    not become a whole line within ``settle_s`` (a write in progress ends at once)."""
    for wait in (0.0, settle_s):
        time.sleep(wait)
        try:
            with open(path, "rb") as fh:
                fh.seek(end)
                tail = fh.read()
        except FileNotFoundError:
            return False
        if not tail.strip() or b"\n" in tail:
            return False
    return True


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
