"""A disk the advisor cannot write: the cycle fails closed with one line, no traceback."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
from yarn_advisor.advisor.observe.metrics import SKIP_REASONS
from yarn_advisor.connectors.replay import open_recording

ROOT = Path(__file__).resolve().parents[2]


def test_an_unwritable_journal_skips_each_cycle_with_one_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The journal's directory is a file (the kernel's ENOTDIR, as a read-only or full
    disk gives EROFS / ENOSPC): every cycle is skipped as ``disk`` and logged in one
    line; it was an "internal error" with a full traceback every cycle."""
    recording = open_recording(ROOT / "examples" / "recordings" / "ha-standby")
    advisor = replay_advisor(recording, load_config())
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    advisor.actuator.journal.path = blocker / "journal.jsonl"
    with caplog.at_level(logging.INFO, logger="yarn_advisor"):
        reports = list(replay_cycles(advisor, recording))[:2]
    assert [r.outcome for r in reports] == ["skipped", "skipped"]
    assert all(r.reason.startswith("disk: NotADirectoryError") for r in reports)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 2 and all(r.exc_info is None for r in errors)
    assert "disk error" in errors[0].getMessage()
    assert advisor.totals.skipped["disk"] == 2 and "disk" in SKIP_REASONS
