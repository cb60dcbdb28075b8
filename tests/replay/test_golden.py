"""Golden files: the replayed recording's recommendations and metrics are stable.

A change in what the advisor recommends on the bundled real recording shows
as a unified diff; ``pytest --update-golden`` rewrites the files (review the
diff in git before committing it).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles, report_json
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.observe.metrics import AdvisorCollector
from yarn_advisor.connectors.replay import open_recording

if TYPE_CHECKING:  # the session's replay (tests/conftest.py)
    from conftest import ReplayRun

GOLDEN = Path(__file__).parent / "golden"
# timings and wall-clock values change from run to run; everything else must not
VOLATILE = re.compile(r"_seconds|_timestamp|^# ")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# (recording, configuration): mini-hetero with the defaults; short-stream with the
# example ANACRAC rules, where every policy recommends (OPERA lends to short tasks)
CASES = {"mini-hetero": None, "short-stream": EXAMPLES / "anacrac-rules.yaml"}


def _replayed(recording_dir: Path, config: Path | None = None) -> tuple[str, str]:
    recording = open_recording(recording_dir)
    advisor = replay_advisor(recording, load(config))
    return _rendered(advisor, list(replay_cycles(advisor, recording)))


def _rendered(advisor: Advisor, reports: Sequence[CycleReport]) -> tuple[str, str]:
    """The golden files' text: one JSON line per cycle, and the metrics at the end."""
    lines = [json.dumps(report_json(r), sort_keys=True) for r in reports]
    registry = CollectorRegistry()
    registry.register(AdvisorCollector(lambda: advisor.latest, advisor.totals))
    metrics = [line for line in generate_latest(registry).decode().splitlines()
               if not VOLATILE.search(line)]
    return "\n".join(lines) + "\n", "\n".join(metrics) + "\n"


def _check(name: str, actual: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.write_text(actual)
        return
    expected = path.read_text() if path.exists() else ""
    if actual != expected:
        diff = "\n".join(difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), f"golden/{name}", "replayed",
            lineterm="", n=1))
        pytest.fail(f"{name} differs from the golden file (pytest --update-golden to accept):\n"
                    f"{diff[:6000]}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_recommendations_and_metrics_match_golden(name: str, update_golden: bool,
                                                  recorded_replay: ReplayRun) -> None:
    recording_dir = EXAMPLES / "recordings" / name
    if name == "mini-hetero":  # the session's replay of it (the defaults): rendered, not redone
        recs, metrics = _rendered(recorded_replay.advisor, recorded_replay.reports)
    else:
        recs, metrics = _replayed(recording_dir, CASES[name])
    assert recs.count("\n") == len(open_recording(recording_dir).cycles)
    _check(f"{name}.recommendations.jsonl", recs, update_golden)
    _check(f"{name}.metrics.txt", metrics, update_golden)


def test_replay_is_deterministic(recording_dir: Path, recorded_replay: ReplayRun) -> None:
    """Another replay, with another advisor, renders what the session's replay did."""
    assert _replayed(recording_dir) == _rendered(recorded_replay.advisor, recorded_replay.reports)
