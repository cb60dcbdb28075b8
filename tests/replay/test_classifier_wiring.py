"""The classifier in the daemon: learns each cycle, publishes, scores, persists."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.engine.classify import TaskClassifier
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.replaying import replay_cycles
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor
from yarn_advisor.advisor.observe.metrics import AdvisorCollector
from yarn_advisor.connectors.replay import Recording, open_recording


def _advisor(recording: Recording, state_dir: Path, persist: bool,  # type: ignore[no-untyped-def]
             classifier: dict[str, object] | None = None):
    cfg = load(None, {"state_dir": str(state_dir), "rm": {
        "urls": recording.rm_urls, "history_url": recording.history_url},
        "classifier": classifier or {}})
    return build_advisor(cfg, build_sensor(cfg), persist=persist)


def test_configured_decision_rule_reaches_the_model(recording_dir: Path,
                                                    tmp_path: Path) -> None:
    advisor = _advisor(open_recording(recording_dir), tmp_path, persist=False,
                       classifier={"min_support": 7, "min_confidence": 0.95})
    assert advisor.classifier is not None
    model = advisor.classifier.live.model
    assert (model.min_support, model.min_confidence) == (7, 0.95)


def test_learns_publishes_and_scores_on_the_real_recording(recording_dir: Path,
                                                           tmp_path: Path) -> None:
    recording = open_recording(recording_dir)
    advisor = _advisor(recording, tmp_path, persist=False)
    reports = list(replay_cycles(advisor, recording))
    assert isinstance(advisor.classifier, TaskClassifier)
    succeeded = [t for r in reports if r.snapshot for t in r.snapshot.finished_tasks
                 if t.state == "SUCCEEDED" and t.start_time > 0]
    # a task that ran past the 60 s threshold was learned once, as censored (long),
    # while running, and is not learned again when it finishes
    took = [t.finish_time - t.start_time for t in succeeded]
    summaries = [r.classifier for r in reports if r.classifier is not None]
    assert len(summaries) == len(reports)
    learned = sum(s.learned["finished"] for s in summaries)
    censored = sum(s.learned["censored"] for s in summaries)
    # (one that crossed the threshold between two cycles is learned at finish)
    long_ones = sum(1 for d in took if d >= 60_000)
    assert learned + censored == len(succeeded) > 0
    assert 0 < censored <= long_ones
    # every cycle with pending asks published a prediction for each pending group
    for r, s in zip(reports, summaries, strict=True):
        assert r.snapshot is not None
        groups = {(a.id, rr.priority) for a in r.snapshot.apps for rr in a.resource_requests
                  if rr.resource_name == "*" and rr.num_containers > 0 and rr.priority != 0}
        assert sum(s.predictions.values()) == len(groups)
    last = advisor.classifier.predict(reports[-1].snapshot)  # type: ignore[arg-type]
    assert set(last.groups) == {(a.id, rr.priority) for a in reports[-1].snapshot.apps  # type: ignore[union-attr]
                                for rr in a.resource_requests if rr.resource_name == "*"
                                and rr.num_containers > 0 and rr.priority != 0}
    outcomes = summaries[-1].outcomes
    assert sum(outcomes.values()) > 0  # earlier predictions were scored against reality
    assert set(outcomes) <= {(a, p) for a in ("short", "long") for p in ("short", "long")}
    registry = CollectorRegistry()
    registry.register(AdvisorCollector(lambda: advisor.latest, advisor.totals))
    text = generate_latest(registry).decode()
    assert 'yarn_advisor_classifier_predictions{class="short"}' in text
    assert 'yarn_advisor_classifier_outcomes_total{actual="short",predicted=' in text


def test_checkpoint_survives_a_restart_and_a_corrupt_one_starts_fresh(
        recording_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    recording = open_recording(recording_dir)
    advisor = _advisor(recording, tmp_path, persist=True)
    list(replay_cycles(advisor, recording))
    checkpoint = tmp_path / "classifier.json"
    assert checkpoint.exists()
    assert advisor.classifier is not None
    before = advisor.classifier.live.model.to_dict()
    restarted = TaskClassifier.load(checkpoint)
    assert restarted.live.model.to_dict() == before
    checkpoint.write_text(checkpoint.read_text()[:50])
    with caplog.at_level(logging.WARNING, logger="yarn_advisor"):
        fresh = TaskClassifier.load(checkpoint)
    assert "starting with a fresh model" in caplog.text
    assert fresh.live.model.to_dict() != before


def test_learned_durations_exclude_the_wait_for_a_container(recording_dir: Path,
                                                            tmp_path: Path) -> None:
    """What the live classifier learns is run time, as classify-eval measures
    it from Rumen attempts: YARN's AM reports a SCHEDULED task's start as the
    time it was scheduled, then, once a container runs it, the launch; the
    JobHistoryServer keeps the launch."""
    recording = open_recording(recording_dir)
    advisor = _advisor(recording, tmp_path, persist=False)
    scheduled_at: dict[str, int] = {}
    launched_at: dict[str, int] = {}
    finished: dict[str, int] = {}
    for r in replay_cycles(advisor, recording):
        assert r.snapshot is not None
        for t in r.snapshot.tasks:
            if t.state == "SCHEDULED":
                scheduled_at.setdefault(t.id, t.start_time)
            elif t.state == "RUNNING":
                launched_at.setdefault(t.id, t.start_time)
        finished.update({t.id: t.start_time for t in r.snapshot.finished_tasks})
    waited = [i for i in scheduled_at if i in launched_at and i in finished]
    assert waited, "the recording has tasks that waited for a container"
    for task_id in waited:
        assert scheduled_at[task_id] < launched_at[task_id] == finished[task_id]
