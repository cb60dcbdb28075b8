"""A journal whose last line was torn by a crash, with nothing appended since.

kill -9 between a line's bytes leaves it unterminated; the next append ends it
(tests/unit/test_journal.py). If rollback runs first, before any daemon appends,
that torn last line must be reported, not dropped: it may be the intent of a
write the RM applied. The reliability probe's rollback said "all restored" (rc 0)
in exactly this state.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.cli.main import main
from yarn_advisor.advisor.model.kinds import Kind

TORN = b'{"id": "b", "phase": "intent", "kind": "set_app_pri'


def applied(journal: Journal, rid: str) -> None:
    for phase in (Phase.INTENT, Phase.RESULT):
        journal.append(Entry(id=rid, phase=phase, kind=Kind.SET_APP_PRIORITY, target="app_1",
                             policy="haste", value=5, previous=1, sent=True,
                             outcome="applied" if phase is Phase.RESULT else None))


def test_a_torn_last_line_counts_as_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    applied(Journal(path), "a")
    with open(path, "ab") as fh:
        fh.write(TORN)
    journal = Journal(path)
    assert [a.id for a in journal.actions()] == ["a"]
    assert journal.unreadable == 1


def test_a_line_being_written_is_not_counted(tmp_path: Path) -> None:
    """The daemon's append may be under way while rollback reads: a tail that
    becomes a whole line at once is a write in progress, not a torn line."""
    path = tmp_path / "journal.jsonl"
    applied(Journal(path), "a")
    with open(path, "ab") as fh:
        fh.write(b'{"id": "c", "phase": "dry_run", ')

    def end_the_line() -> None:
        with open(path, "ab") as fh:
            fh.write(b'"kind": "set_app_priority", "target": "t", "policy": "p"}\n')

    finish = threading.Timer(0.01, end_the_line)
    finish.start()
    journal = Journal(path)
    journal.entries()
    finish.join()
    assert journal.unreadable == 0


def test_rollback_reports_a_torn_last_line_and_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    applied(Journal(state / "journal.jsonl"), "a")
    with open(state / "journal.jsonl", "ab") as fh:
        fh.write(TORN)  # kill -9 here, and rollback runs before the daemon again
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump({"state_dir": str(state), "rm": {"urls": ["http://127.0.0.1:9"]},
                                   "dry_run": True}))
    assert main(["rollback", "--since", "1h", "--config", str(cfg), "--dry-run"]) == 1
    out, err = capsys.readouterr()
    assert "1 line(s) of" in err and "could not be read" in err
    assert "NOT all restored" in out
