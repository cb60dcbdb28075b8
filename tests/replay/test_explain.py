"""``yarn-advisor explain``: a person gets the why of a recommendation."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from yarn_advisor.advisor.cli.main import main as cli_main
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.observe.server import AdvisorServer
from yarn_advisor.connectors.replay import open_recording

if TYPE_CHECKING:  # the session's replay (tests/conftest.py)
    from conftest import ReplayRun


def latest_of(reports: Iterable[CycleReport]) -> tuple[str, Recommendation]:
    """A target with a recommendation, and that recommendation (its latest)."""
    latest: dict[str, Recommendation] = {}
    for report in reports:
        for rec in report.recommendations:
            latest[rec.target] = rec
    target = next(t for t, r in latest.items() if r.kind is Kind.SET_APP_PRIORITY) \
        if any(r.kind is Kind.SET_APP_PRIORITY for r in latest.values()) else next(iter(latest))
    return target, latest[target]


@pytest.fixture(scope="module")
def last_target(recording_head: Path) -> tuple[str, Recommendation]:
    """The CLI replays the recording's first cycles (``recording_head``): their latest."""
    recording = open_recording(recording_head)
    return latest_of(replay_cycles(replay_advisor(recording, load()), recording))


def test_explain_from_a_recording(recording_head: Path, last_target: tuple[str, Recommendation],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    target, rec = last_target
    assert cli_main(["explain", target, "--replay", str(recording_head)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{target}: {rec.kind.value} ")
    assert f"  why: {rec.explanation.summary}" in out
    assert f"  rule: {rec.explanation.rule}" in out
    assert "  inputs:" in out
    assert "{'" not in out and "':" not in out  # values as key=value, never a Python repr


def test_explain_json_and_unknown_target(recording_head: Path,
                                         last_target: tuple[str, Recommendation],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    target, rec = last_target
    assert cli_main(["explain", target, "--replay", str(recording_head), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["target"] == target and rec.to_dict() in body["recommendations"]
    assert cli_main(["explain", "application_0_0000", "--replay", str(recording_head)]) == 0
    assert capsys.readouterr().out.startswith("no recommendation for application_0_0000")


def test_explain_from_a_running_advisor(recorded_replay: ReplayRun,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The session's advisor, which replayed the whole recording, serving its state."""
    advisor, reports = recorded_replay.advisor, recorded_replay.reports
    server = AdvisorServer(advisor, "127.0.0.1", 0, interval_s=0).start()
    try:
        recs = reports[-1].recommendations or next(
            r.recommendations for r in reversed(reports) if r.recommendations)
        target = recs[0].target if recs else "scheduler"
        assert cli_main(["explain", target, "--advisor",
                         f"http://127.0.0.1:{server.port}", "--json"]) == 0
        body = json.loads(capsys.readouterr().out)
        assert body["cycle"] == len(reports) == 40
        assert body["recommendations"] == [r.to_dict() for r in reports[-1].recommendations
                                           if r.target == target]
    finally:
        server.close()
