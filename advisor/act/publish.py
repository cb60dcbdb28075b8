"""Publishing the decision table: the actuator's write to the RM plug-in (precision mode).

The engine computes each cycle's :class:`~yarn_advisor.advisor.model.decision_table.Decisions`;
the actuator hands them to :meth:`Publisher.cycle`, which either publishes
them as the next :class:`~yarn_advisor.advisor.model.decision_table.DecisionTable`
(stamped with the next ``seq``, the snapshot's time, the TTL and this
advisor's identity) or withdraws the table, and says why:

* ``dry_run``: the advisor does not enforce (top-level ``dry_run``, or no writer);
* ``kill_switch``, ``not_leader``, or ``withheld`` (another guardrail that blocked
  the cycle's writes: a stale snapshot, an RM not active or re-syncing);
* ``rollback``: ``yarn-advisor rollback`` withdrew it, for ``actuator.rollback_hold_s``;
* ``stopped``: the daemon stopped (:meth:`Publisher.stop`).

Either way every sink hears it: the HTTP endpoint's :class:`LatestTable`, an
optional :class:`TableFile`, the simulator's plug-in. A withdrawn table makes
the plug-in fall back to YARN's default within one poll.

Every published version is journaled before any sink sees it, in its own
JSON-lines file beside the action journal (``<journal stem>.tables.jsonl``):
the whole table, or ``same_as`` an earlier seq when nothing changed; each
withdrawal once, when it starts. ``seq`` continues from the journal after a
restart.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from yarn_advisor.advisor.model.decision_table import Decisions, DecisionTable
from yarn_advisor.config.schema import AdvisorConfig

TAIL_BYTES = 1 << 20  # the journal's tail read at start for the last seq


class TableSink(Protocol):
    """Where a published table goes."""

    def publish(self, table: DecisionTable) -> None: ...

    def withdraw(self, reason: str) -> None: ...


class LatestTable:
    """The latest published table, for the HTTP endpoint (one reference, swapped)."""

    def __init__(self) -> None:
        self._now: tuple[DecisionTable | None, str] = (None, "none")

    def publish(self, table: DecisionTable) -> None:
        self._now = (table, "")

    def withdraw(self, reason: str) -> None:
        self._now = (None, reason)

    def current(self, now_ms: int) -> tuple[DecisionTable | None, str]:
        """The table to serve, or None and why not (``expired`` past its TTL)."""
        table, reason = self._now
        if table is not None and table.expired(now_ms):
            return None, "expired"
        return table, reason


@dataclass
class TableFile:
    """The table in a file, replaced atomically; deleted when withdrawn."""

    path: Path

    def publish(self, table: DecisionTable) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(table.dumps())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def withdraw(self, reason: str) -> None:
        self.path.unlink(missing_ok=True)


@dataclass
class TableJournal:
    """Published and withdrawn tables, one fsync'd JSON line each, rotated by size."""

    path: Path
    max_bytes: int = 64 << 20
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _offset: int = 0

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps({"ts": time.time(), **record}, sort_keys=True) + "\n").encode()
        with self._lock:
            try:
                if self.path.stat().st_size >= self.max_bytes:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            except FileNotFoundError:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def records(self, tail: int | None = None) -> list[dict[str, Any]]:
        """The live file's readable records (only its last ``tail`` bytes if given)."""
        try:
            with open(self.path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                start = 0 if tail is None else max(0, size - tail)
                fh.seek(start)
                data = fh.read()
        except FileNotFoundError:
            return []
        lines = data.splitlines()
        if start > 0:
            lines = lines[1:]  # the first line read may be cut
        return [r for r in map(_record, lines) if r is not None]

    def new_records(self) -> list[dict[str, Any]]:
        """Records appended since the last call (by this or another process)."""
        try:
            with open(self.path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size < self._offset:
                    self._offset = 0  # rotated
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        self._offset += end
        return [r for r in map(_record, data[:end].splitlines()) if r is not None]


def _record(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def tables_journal_path(action_journal: Path) -> Path:
    """``journal.jsonl`` -> ``journal.tables.jsonl`` (HA journals keep their id)."""
    return action_journal.with_name(f"{action_journal.stem}.tables.jsonl")


def withdraw_for_rollback(journal: TableJournal, hold_s: float,
                          table_file: Path | None) -> None:
    """What ``rollback`` does to precision mode: the running advisor withdraws its
    table (it reads this record) and publishes none for ``hold_s``; the file is
    deleted at once."""
    journal.append({"event": "rollback", "hold_until": time.time() + hold_s})
    if table_file is not None:
        table_file.unlink(missing_ok=True)


@dataclass
class Publisher:
    """Publishes or withdraws each cycle's table (see the module docstring)."""

    leader: str
    ttl_ms: int
    journal: TableJournal
    sinks: list[TableSink] = field(default_factory=list)
    clock: Callable[[], float] = time.time
    seq: int = 0
    withdrawn: str | None = "none"  # why nothing is published now (None: published)
    _digest: tuple[str, int] | None = None  # (digest, seq) of the last table journaled whole
    _hold_until: float = 0.0

    def __post_init__(self) -> None:
        for r in self.journal.records(tail=TAIL_BYTES):
            if isinstance(r.get("seq"), int):
                self.seq = max(self.seq, r["seq"])
        self.journal.new_records()  # start reading others' records from here on

    def cycle(self, decisions: Decisions, generated_at_ms: int, block: str | None,
              enforcing: bool, confirm: Callable[[], bool] | None = None
              ) -> DecisionTable | None:
        """Publish ``decisions`` unless a reason forbids it; None when withdrawn."""
        for r in self.journal.new_records():
            if r.get("event") == "rollback" and isinstance(r.get("hold_until"), int | float):
                self._hold_until = max(self._hold_until, float(r["hold_until"]))
        reason = _why(block, enforcing, self.clock() < self._hold_until)
        if reason is None and confirm is not None and not confirm():
            reason = "not_leader"
        if reason is not None:
            if self.withdrawn != reason:
                self.journal.append({"event": "withdrawn", "reason": reason,
                                     "after_seq": self.seq, "block": block})
            self.withdrawn = reason
            for sink in self.sinks:
                sink.withdraw(reason)
            return None
        self.seq += 1
        table = DecisionTable(self.seq, generated_at_ms, self.ttl_ms, self.leader, decisions)
        self._journal(table)
        self.withdrawn = None
        for sink in self.sinks:
            sink.publish(table)
        return table

    def stop(self) -> None:
        """The advisor stops: the table is withdrawn (``stopped``), so a table file does
        not outlive the advisor until its TTL (the endpoint goes with the process)."""
        if self.withdrawn != "stopped":
            self.journal.append({"event": "withdrawn", "reason": "stopped",
                                 "after_seq": self.seq, "block": None})
        self.withdrawn = "stopped"
        for sink in self.sinks:
            sink.withdraw("stopped")

    def _journal(self, table: DecisionTable) -> None:
        body = table.to_json()
        digest = hashlib.sha256(json.dumps(
            {k: v for k, v in body.items() if k in ("apps", "rules", "nodes", "unranked")},
            sort_keys=True).encode()).hexdigest()[:16]
        record: dict[str, Any] = {"event": "published", "seq": table.seq,
                                  "generated_at_ms": table.generated_at_ms,
                                  "ttl_ms": table.ttl_ms, "leader": table.leader,
                                  "digest": digest, "counts": counts(table.decisions)}
        if self._digest is not None and self._digest[0] == digest:
            record["same_as"] = self._digest[1]
        else:
            record["table"] = body
            self._digest = (digest, table.seq)
        self.journal.append(record)


def _why(block: str | None, enforcing: bool, rolled_back: bool) -> str | None:
    if rolled_back:
        return "rollback"
    if block in ("kill_switch", "not_leader"):
        return block
    if block is not None:
        return "withheld"
    return None if enforcing else "dry_run"


def counts(d: Decisions) -> dict[str, int]:
    """How many decisions of each kind a table holds (journal, logs, metrics)."""
    out: dict[str, int] = {"apps": len(d.apps), "rules": len(d.rules), "lending": len(d.nodes),
                           "ranked": sum(a.rank is not None for a in d.apps.values())}
    for q in [q for a in d.apps.values() for q in a.requests] + \
            [q for r in d.rules for q in r.requests]:
        for kind in ("hold", "allow", "cap", "local_only"):
            if getattr(q, kind) is not None:
                out[kind] = out.get(kind, 0) + 1
        if q.veto:
            out["veto"] = out.get("veto", 0) + len(q.veto)
    return out


def identity(cfg: AdvisorConfig) -> str:
    """The ``leader`` a table names: ``ha.advisor_id``, else ``<hostname>-<server port>``
    (the rule of ``advisor.ha.journals.advisor_id``, which needs an ``ha`` section)."""
    named = cfg.ha.advisor_id if cfg.ha is not None else None
    return named or f"{socket.gethostname()}-{cfg.server.port}"


def build_publisher(cfg: AdvisorConfig, action_journal: Path,
                    sinks: list[TableSink] | None = None) -> Publisher | None:
    """The publisher ``cfg`` describes (None when precision mode is off): the HTTP
    endpoint's :class:`LatestTable` first, then the file if configured, then ``sinks``."""
    p = cfg.precision
    if not p.enabled:
        return None
    leader = identity(cfg)
    out: list[TableSink] = [LatestTable()]
    if p.table_file:
        out.append(TableFile(Path(p.table_file)))
    return Publisher(leader, p.ttl_ms(cfg.sense.interval_s),
                     TableJournal(tables_journal_path(action_journal),
                                  int(cfg.actuator.journal_max_mb * (1 << 20))),
                     out + list(sinks or ()))


def latest(publisher: Publisher | None) -> LatestTable | None:
    """The endpoint's sink of ``publisher``, if it has one."""
    for sink in publisher.sinks if publisher is not None else ():
        if isinstance(sink, LatestTable):
            return sink
    return None
