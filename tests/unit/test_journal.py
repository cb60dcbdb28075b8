"""The journal: append-only, fsync'd JSON lines; journaled_write's order of events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.writer import Veto, Writer, journaled_write
from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Payload, Priority
from yarn_advisor.connectors.errors import AuthError, StandbyError, TimeoutError_


class OneValue:
    """An RM's levers holding one priority; a send can fail (after it landed, or not)."""

    def __init__(self, value: int, fail: Exception | None = None, applies: bool = True,
                 journal: Journal | None = None) -> None:
        self.value: Payload = Priority(value)
        self.fail, self.applies, self.journal = fail, applies, journal
        self.sends = 0
        self.seen_at_send: list[list[str]] = []  # the journal's phases when a send starts

    def ensure_active(self) -> None:
        pass

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        return self.value

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        if self.journal is not None:
            self.seen_at_send.append([e.phase.value for e in self.journal.entries()])
        self.sends += 1
        if self.applies:
            self.value = value
        if self.fail:
            raise self.fail
        return {"status": 200}


def write(levers: OneValue, j: Journal, entry: Entry | None = None, value: int = 7) -> Entry:
    return journaled_write(Writer(levers), j, entry or base(value), Priority(value))


def base(value: Any = 7, aid: str = "a1") -> Entry:
    return Entry(id=aid, phase=Phase.DRY_RUN, kind=Kind.SET_APP_PRIORITY,
                 target="application_1_0001", policy="haste", value=value)


def entry(aid: str, phase: Phase = Phase.INTENT, ts: float = 0.0) -> Entry:
    return Entry(id=aid, phase=phase, kind=Kind.SET_APP_PRIORITY, target="app", policy="p",
                 ts=ts)


def test_append_adds_time_and_fsyncs_each_line(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    j = Journal(tmp_path / "sub" / "journal.jsonl")
    j.append(entry("x", Phase.DRY_RUN))
    j.append(entry("y", Phase.DRY_RUN, ts=1_700_000_000.5))
    assert len(synced) >= 2  # every line (plus the new directory entry once)
    lines = (tmp_path / "sub" / "journal.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    assert [r["id"] for r in recs] == ["x", "y"]
    assert recs[1]["time"] == "2023-11-14T22:13:20.500Z"
    assert all(isinstance(r["ts"], float) for r in recs)


def test_torn_and_unterminated_lines(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    j = Journal(path)
    j.append(entry("a"))
    with open(path, "ab") as fh:
        fh.write(b'{"id": "torn", "pha\n')   # a crash mid-line, then the daemon went on
    j.append(entry("b"))
    c = json.dumps(entry("c", ts=5.0).to_json()).encode()
    with open(path, "ab") as fh:
        fh.write(c[:10])                      # being written right now
    recs, offset = j.read()
    assert [r.id for r in recs] == ["a", "b"]
    assert j.unreadable == 1
    with open(path, "ab") as fh:
        fh.write(c[10:] + b"\n")
    more, _ = j.read(offset)
    assert [r.id for r in more] == ["c"]


def test_a_torn_last_line_cannot_swallow_the_next_record(tmp_path: Path) -> None:
    """A crash mid-write leaves an unterminated last line; the next append ends it
    first, so the new record is intact and the torn one is reported, not merged."""
    path = tmp_path / "j.jsonl"
    j = Journal(path)
    j.append(entry("a"))
    with open(path, "ab") as fh:
        fh.write(b'{"id": "torn", "phase": "int')  # kill -9 mid-line
    j.append(entry("b"))
    fresh = Journal(path)
    assert [e.id for e in fresh.entries()] == ["a", "b"]
    assert fresh.unreadable == 1
    assert [a.id for a in fresh.actions()] == ["a", "b"]


def test_intent_is_on_disk_before_the_write_and_result_after(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    w = OneValue(0, journal=j)
    result = write(w, j)
    assert result.outcome == "applied"
    assert w.seen_at_send == [["intent"]]
    intent, res = j.entries()
    assert (intent.phase, intent.previous, intent.value) == (Phase.INTENT, 0, 7)
    assert (res.phase, res.outcome, res.sent, res.observed) == (Phase.RESULT, "applied", True, 7)
    assert res.answer == {"status": 200} and result == res
    (action,) = j.actions()
    assert (action.id, action.previous, action.value, action.sent, action.outcome) == (
        "a1", 0, 7, True, "applied")


def test_noop_sends_nothing_and_writes_no_intent(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    w = OneValue(7)
    assert write(w, j).outcome == "noop"
    assert w.sends == 0
    assert [e.phase for e in j.entries()] == [Phase.RESULT]
    assert j.actions()[0].sent is False


def test_lost_answer_is_read_back_never_resent(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    applied = OneValue(0, TimeoutError_("PUT ...: timed out"))
    assert write(applied, j).outcome == "applied"
    lost = OneValue(0, TimeoutError_("PUT ...: timed out"), applies=False)
    assert write(lost, j, base(aid="a2")).outcome == "unknown"
    assert applied.sends == lost.sends == 1
    results = [e for e in j.entries() if e.phase is Phase.RESULT]
    assert [(r.outcome, r.observed, r.sent) for r in results] == [
        ("applied", 7, True), ("unknown", 0, True)]
    assert all("timed out" in (r.error or "") for r in results)


@pytest.mark.parametrize(("exc", "outcome"), [
    (AuthError(403, "u", "Only admins"), "refused"),
    (StandbyError("307"), "standby"),
    (ValueError("a node carries at most one partition label"), "invalid"),
])
def test_refusals_are_journaled_with_the_error(tmp_path: Path, exc: Exception,
                                               outcome: str) -> None:
    j = Journal(tmp_path / "j.jsonl")
    w = OneValue(0, exc, applies=False)
    assert write(w, j).outcome == outcome
    intent, res = j.entries()
    assert intent.previous == 0
    assert res.outcome == outcome and res.sent is True
    assert type(exc).__name__ in (res.error or "")


def test_a_veto_journals_and_sends_nothing(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    w = OneValue(0)

    def veto(previous: Payload | None) -> None:
        raise Veto("too small")

    with pytest.raises(Veto):
        journaled_write(Writer(w), j, base(), Priority(7), veto)
    assert w.sends == 0 and j.entries() == []


def test_the_journal_rotates_by_size_and_still_reads_whole(tmp_path: Path) -> None:
    j = Journal(tmp_path / "journal.jsonl", max_bytes=2000, keep=2)
    for i in range(60):
        j.append(entry(f"e{i:02d}", ts=float(i + 1)))
    live = tmp_path / "journal.jsonl"
    assert (tmp_path / "journal.jsonl.1").exists() and (tmp_path / "journal.jsonl.2").exists()
    assert not (tmp_path / "journal.jsonl.3").exists()  # only `keep` rotated files
    assert live.stat().st_size < 2000 + 300
    ids = [e.id for e in j.entries()]
    assert ids == sorted(ids) and ids[-1] == "e59"  # oldest first, across segments
    assert len(ids) < 60  # the oldest segment was dropped
    # a reader that followed the live file by offset starts over after a rotation
    _, offset = j.read()
    for i in range(60, 80):
        j.append(entry(f"e{i:02d}", ts=float(i + 1)))
    more, _ = j.read(offset)
    assert more and more[-1].id == "e79"


def test_a_short_journal_write_aborts_the_rm_write(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk: ``os.write`` writes part of the intent and returns short, the next
    call fails. The RM write is not sent and no torn intent is left behind."""
    path = tmp_path / "j.jsonl"
    j = Journal(path)
    j.append(entry("before", Phase.DRY_RUN))
    size = path.stat().st_size
    real = os.write
    calls: list[int] = []

    def short(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data[:len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", short)
    w = OneValue(0)
    with pytest.raises(OSError, match="journal line not written"):
        write(w, j)
    monkeypatch.setattr(os, "write", real)
    assert w.sends == 0
    assert path.stat().st_size == size  # cut back: nothing of the intent is left
    fresh = Journal(path)
    assert [e.id for e in fresh.entries()] == ["before"] and fresh.unreadable == 0


def test_a_write_that_returns_zero_aborts_too(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    j = Journal(tmp_path / "j.jsonl")
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    w = OneValue(0)
    with pytest.raises(OSError):
        write(w, j)
    assert w.sends == 0


_FSIZE_SCRIPT = """
import resource, signal, sys
from pathlib import Path
from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.writer import Writer, journaled_write
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Priority

class Levers:
    sends = 0
    def ensure_active(self): pass
    def read(self, kind, target, value): return Priority(0)
    def send(self, kind, target, value):
        Levers.sends += 1
        return {}

path = Path(sys.argv[1])
j = Journal(path)
e = Entry(id="a", phase=Phase.DRY_RUN, kind=Kind.SET_APP_PRIORITY, target="app_1",
          policy="haste", value=7)
j.append(e)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = path.stat().st_size + 40  # room for part of the intent line, not all of it
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    journaled_write(Writer(Levers()), j, e, Priority(7))
except OSError as exc:
    print("raised", exc.errno)
print("sends", Levers.sends)
"""


def test_a_size_limited_disk_sends_nothing(tmp_path: Path) -> None:
    """RLIMIT_FSIZE (EFBIG after a short write), in a child process: the kernel's own
    short write, not a patched one."""
    path = tmp_path / "j.jsonl"
    out = subprocess.run([sys.executable, "-c", _FSIZE_SCRIPT, str(path)],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "raised 27" in out and "sends 0" in out, out
    fresh = Journal(path)
    assert [e.phase for e in fresh.entries()] == [Phase.DRY_RUN] and fresh.unreadable == 0
