"""``decide`` is pure with a trained classifier: predicting changes nothing.

The classifier's account of long tasks called short used to be changed by
``predict`` (the stages it called short were noted in the model), so deciding
one snapshot twice could give different answers and the order of predictions
in a cycle mattered. The short calls now travel as data in the predictions and
the learn step applies them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from yarn_advisor.advisor.engine.classify import TaskClassifier
from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, decide
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.classifiers.model.budget import MIN_LONG
from yarn_advisor.classifiers.model.features import features, props_for_request
from yarn_advisor.classifiers.model.live import LiveTaskClassifier
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier

if TYPE_CHECKING:
    from conftest import ReplayRun


def _pending_snapshot(run: ReplayRun) -> Snapshot:
    """The first recorded cycle with pending task requests (not AM asks)."""
    for report in run.reports:
        snap = report.snapshot
        if snap is not None and any(
                rr.resource_name == "*" and rr.num_containers > 0 and rr.priority != 0
                for app in snap.apps for rr in app.resource_requests):
            return snap
    raise AssertionError("the recording has no cycle with pending task requests")


def _trained(snap: Snapshot) -> TaskClassifier:
    """A model that learned every pending request's features as short many times,
    and enough long tasks elsewhere that the relaxed account is open."""
    model = NaiveBayesTaskClassifier()
    jobs = {j.app_id: j for j in snap.jobs}
    for app in snap.apps:
        for rr in app.resource_requests:
            if rr.resource_name == "*" and rr.priority != 0:
                feats = features(props_for_request(app, rr, jobs.get(app.id)))
                for _ in range(40):
                    model.learn(feats, False)
    for i in range(MIN_LONG + 20):
        model.learn(("F=other", "S=MAP", "Q=q", "U=u", f"A=long{i}", "Z=m1|r0",
                     "D=d", f"J=job_{i}|MAP", "P=p"), True)
    return TaskClassifier(LiveTaskClassifier(model))


def test_deciding_twice_with_a_trained_classifier_changes_nothing(
        recorded_replay: ReplayRun) -> None:
    snap = _pending_snapshot(recorded_replay)
    classifier = _trained(snap)
    config = EngineConfig.from_config(load_config(None))
    before = json.dumps(classifier.live.model.to_dict(), sort_keys=True)
    state = AdvisorState({}, classifier)
    first, second = decide(snap, state, config), decide(snap, state, config)
    assert first.predictions is not None and second.predictions is not None
    calls = [g.prediction.reason for g in first.predictions.groups.values()]
    assert "short" in calls, calls  # the test needs short calls to mean anything
    assert json.dumps(classifier.live.model.to_dict(), sort_keys=True) == before
    assert first.predictions == second.predictions
    assert [r.to_dict() for r in first.recommendations] == [
        r.to_dict() for r in second.recommendations]
    # the account is not lost: the learn step applies the cycle's calls
    classifier.learn(snap, first.predictions)
    called = classifier.live.model.to_dict()["budget"]["called"]
    assert called and set(called) == {c.stage for c in first.predictions.calls.calls}


def test_a_batch_sees_the_stages_it_opened_as_applying_them_would() -> None:
    """Within one batch the later predictions see the calls the earlier ones noted,
    exactly as the same tasks predicted and applied one by one."""
    from test_classifier_budget import _cluster, f  # the budget tests' cluster

    batch = [f("job_n", size="m64|r1"), f("job_x", size="m64|r1"), f("job_n", size="m64|r1")]
    pure, stepwise = _cluster(20), _cluster(20)
    from yarn_advisor.classifiers.model.budget import Calls

    calls = Calls()
    together = [pure.predict(b, calls) for b in batch]
    assert json.dumps(pure.to_dict(), sort_keys=True) == json.dumps(
        _cluster(20).to_dict(), sort_keys=True)  # predicting changed nothing
    one_by_one = [stepwise.predict_and_note(b) for b in batch]
    assert together == one_by_one
    assert [p.reason for p in together] == ["short-within-budget", "low-confidence",
                                            "short-within-budget"]
    pure.note(calls)
    assert pure.to_dict() == stepwise.to_dict()
