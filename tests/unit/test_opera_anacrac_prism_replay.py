"""OPERA, ANACRAC and PRISM on the bundled real recording (busy nodes, MapReduce
and YARN apps, measured usage): they run on every cycle without errors, and with
a classifier hook and rules they explain real recommendations."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from _snapshots import J

from yarn_advisor.advisor.engine.classify import TaskClassifier
from yarn_advisor.advisor.engine.decide import (
    AdvisorState,
    Decision,
    EngineConfig,
    Predictor,
    decide,
)
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.classifiers.model.live import GroupPrediction, Predictions
from yarn_advisor.classifiers.model.naive_bayes import Prediction

if TYPE_CHECKING:  # the session's replay (tests/conftest.py)
    from conftest import ReplayRun

MINE = ("opera", "anacrac", "prism")


@pytest.fixture(scope="module")
def snaps(recorded_replay: ReplayRun) -> list[Snapshot]:
    out = [r.snapshot for r in recorded_replay.reports]
    return [s for s in out if s is not None]


class AllShort:
    """A stand-in classifier: every pending request group is short."""

    def predict(self, snap: Snapshot) -> Predictions:
        return Predictions(60.0, {
            (a.id, r.priority): GroupPrediction(a.id, r.priority, "MAP", 1024, 1,
                                                Prediction(True, 0.9, "stand-in"))
            for a in snap.apps for r in a.resource_requests if r.resource_name == "*"})


def run(snaps: list[Snapshot], cfg: EngineConfig, classifier: Predictor | None = None,
        learn: TaskClassifier | None = None) -> list[Decision]:
    state = AdvisorState(classifier=classifier)
    out = []
    for s in snaps:
        r = decide(s, state, cfg)
        assert r.errors == (), r.errors
        for name in MINE:
            json.dumps(r.states[name].to_json())  # type: ignore[attr-defined]
        if learn is not None:
            learn.learn(s, r.predictions)
        state = AdvisorState(r.states, classifier)
        out.append(r)
    return out


def state_json(r: Decision, policy: str) -> Any:
    return r.states[policy].to_json()  # type: ignore[attr-defined]


def mine(results: list[Decision], policy: str, kind: Kind) -> list[Any]:
    return [rec for r in results for rec in r.recommendations
            if rec.policy == policy and rec.kind is kind]


def test_recording_is_busy_and_heterogeneous(snaps: list[Snapshot]) -> None:
    assert len(snaps) >= 20
    assert any(n.used.memory_mb >= n.total.memory_mb for s in snaps for n in s.nodes)
    assert {a.type for s in snaps for a in s.apps} >= {"MAPREDUCE", "YARN"}


def test_default_config_runs_everything_and_opera_lends_nothing(snaps: list[Snapshot]) -> None:
    results = run(snaps, EngineConfig())
    # no classifier: every task is long, so OPERA lends nothing
    assert not [rec for r in results for rec in r.recommendations if rec.policy == "opera"]
    assert all("opera" in r.policy_seconds for r in results)
    assert any(state_json(r, "prism")["idle_headroom"] for r in results)


def test_opera_lends_to_short_tasks_on_real_data(snaps: list[Snapshot]) -> None:
    lend = EngineConfig.from_policies({"opera": {"params": {"lend_memory": True}}})
    recs = mine(run(snaps, lend, AllShort()), "opera", Kind.UPDATE_NODE_RESOURCE)
    assert recs
    # by default memory is not lent, and this memory-only cluster has nothing else
    assert not mine(run(snaps, EngineConfig(), AllShort()), "opera", Kind.UPDATE_NODE_RESOURCE)
    for rec in recs:
        assert J(rec.value)["memory_mb"] >= J(rec.previous)["memory_mb"]
        assert rec.explanation.rule == "opera.opportunistic_assign"
        assert rec.explanation.inputs["lent_to"]
        assert "lend" in rec.explanation.summary


def test_anacrac_rules_on_real_data(snaps: list[Snapshot]) -> None:
    hosts = sorted({n.host for n in snaps[0].nodes})
    cfg = EngineConfig.from_policies({"anacrac": {"params": {
        "wait_threshold_s": 5,
        "rules": [
            {"name": "etl", "queue": "root.etl", "hosts": hosts[:1], "tasks_maximum": 1,
             "job_type": "CPU", "cpu_threshold": 50, "label": "etl",
             "target_queue": "root.etl", "container_job_type": "MEMORY",
             "container_memory_threshold": 1},
            {"name": "shell", "app_type": "YARN", "tasks_maximum": 1},
        ]}}})
    results = run(snaps, cfg)
    assert mine(results, "anacrac", Kind.REPLACE_NODE_LABELS)
    violations = mine(results, "anacrac", Kind.ADVISE_APP_CONFIG)
    assert {J(v.value)["rule"] for v in violations} >= {"shell"}
    assert mine(results, "anacrac", Kind.ADVISE_CONTAINER_SIZE)
    waits = [state_json(r, "anacrac")["waits"] for r in results]
    assert any(w for w in waits)


def test_prism_explains_slowstart_on_real_data(snaps: list[Snapshot]) -> None:
    results = run(snaps, EngineConfig())
    recs = mine(results, "prism", Kind.ADVISE_APP_CONFIG)
    assert recs
    for rec in recs:
        (key, value), = J(rec.value).items()
        assert key == "mapreduce.job.reduce.slowstart.completedmaps" and 0.0 <= value <= 1.0
        assert rec.explanation.rule.startswith("prism.slowstart.")
    profiles = state_json(results[-1], "prism")["profiles"]
    assert any(k.startswith("*|MAP|") for k in profiles["keys"])


def test_the_real_classifier_feeds_opera(snaps: list[Snapshot]) -> None:
    classifier = TaskClassifier.load(None)
    results = run(snaps, EngineConfig(), classifier, learn=classifier)
    assert all(r.predictions is not None for r in results)
    assert classifier.live.model.class_counts != [0, 0]  # it learned along the way
    for rec in mine(results, "opera", Kind.UPDATE_NODE_RESOURCE):
        assert all(t["prediction"] == "short" for t in rec.explanation.inputs["lent_to"])
