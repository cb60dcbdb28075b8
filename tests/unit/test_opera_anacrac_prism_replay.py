"""OPERA, ANACRAC and PRISM on the bundled real recording (busy nodes, MapReduce
and YARN apps, measured usage): they run on every cycle without errors, and with
a classifier hook and rules they explain real recommendations."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from yarn_advisor.advisor.cli import replay_advisor, replay_cycles
from yarn_advisor.advisor.engine import EngineConfig, EngineResult, config_from_dict, decide
from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.recommendation import Kind
from yarn_advisor.config.schema import load
from yarn_advisor.connectors.replay import open_recording

MINE = ("opera", "anacrac", "prism")


@pytest.fixture(scope="module")
def snaps(recording_dir: Path) -> list[Snapshot]:
    rec = open_recording(recording_dir)
    out = [r.snapshot for r in replay_cycles(replay_advisor(rec, load()), rec)]
    return [s for s in out if s is not None]


def all_short(snap: Snapshot, states: Mapping[str, object]) -> Mapping[str, object]:
    """A stand-in classifier hook: every pending request group is short."""
    out = dict(states)
    st = dict(states.get("opera") or {})  # type: ignore[call-overload]
    st["predictions"] = {
        f"{a.id}:{r.priority}": {"label": "short", "confidence": 0.9}
        for a in snap.apps for r in a.resource_requests if r.resource_name == "*"
    }
    out["opera"] = st
    return out


def run(snaps: list[Snapshot], cfg: EngineConfig, hook: Any = None) -> list[EngineResult]:
    states: Mapping[str, object] = {}
    out = []
    for s in snaps:
        r = decide(s, states, cfg, classifier=hook)
        assert r.errors == (), r.errors
        for name in MINE:
            json.dumps(r.next_states[name])  # plain JSON state
        states = r.next_states
        out.append(r)
    return out


def mine(results: list[EngineResult], policy: str, kind: Kind) -> list[Any]:
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
    assert all("opera" in r.per_policy_timing for r in results)
    prism_states = [r.next_states["prism"] for r in results]
    assert any(st["idle_headroom"] for st in prism_states)  # type: ignore[index]


def test_opera_lends_to_short_tasks_on_real_data(snaps: list[Snapshot]) -> None:
    recs = mine(run(snaps, EngineConfig(), all_short), "opera", Kind.UPDATE_NODE_RESOURCE)
    assert recs
    for rec in recs:
        assert rec.value["memory_mb"] >= rec.previous["memory_mb"]
        assert rec.explanation.rule == "opera.opportunistic_assign"
        assert rec.explanation.inputs["lent_to"]
        assert "lend" in rec.explanation.summary


def test_anacrac_rules_on_real_data(snaps: list[Snapshot]) -> None:
    hosts = sorted({n.host for n in snaps[0].nodes})
    cfg = config_from_dict({"anacrac": {"params": {
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
    assert {v.value["rule"] for v in violations} >= {"shell"}
    assert mine(results, "anacrac", Kind.ADVISE_CONTAINER_SIZE)
    waits = [r.next_states["anacrac"]["waits"] for r in results]  # type: ignore[index]
    assert any(w for w in waits)


def test_prism_explains_slowstart_on_real_data(snaps: list[Snapshot]) -> None:
    results = run(snaps, EngineConfig())
    recs = mine(results, "prism", Kind.ADVISE_APP_CONFIG)
    assert recs
    for rec in recs:
        (key, value), = rec.value.items()
        assert key == "mapreduce.job.reduce.slowstart.completedmaps" and 0.0 <= value <= 1.0
        assert rec.explanation.rule.startswith("prism.slowstart.")
    profiles = results[-1].next_states["prism"]["profiles"]  # type: ignore[index]
    assert any(k.startswith("*|MAP|") for k in profiles["keys"])


def test_the_real_classifier_hook_feeds_opera(snaps: list[Snapshot]) -> None:
    from yarn_advisor.advisor.classify import ClassifierHook

    hook = ClassifierHook.load(None)

    def wired(snap: Snapshot, states: Mapping[str, object]) -> Mapping[str, object]:
        out = dict(hook(snap, states))
        opera_state = out.get("opera")
        base = dict(opera_state) if isinstance(opera_state, dict) else {}
        out["opera"] = {**base, "classifier": out["classifier"]}
        return out

    results = run(snaps, EngineConfig(), wired)
    for rec in mine(results, "opera", Kind.UPDATE_NODE_RESOURCE):
        assert all(t["prediction"] == "short" for t in rec.explanation.inputs["lent_to"])
