"""advisor.engine.decide: order, isolation of failures, conflicts, states, classifier hook."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from _snapshots import app, node, rr, snapshot
from yarn_advisor.advisor.engine import (
    EngineConfig,
    PolicyConfig,
    decide,
    resolve_conflicts,
    run_order,
)
from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.policies import POLICIES, Policy, PolicyResult
from yarn_advisor.advisor.recommendation import Explanation, Kind, Recommendation


@dataclass(frozen=True)
class NoParams:
    pass


def fake(name: str, advise: Callable[[Snapshot, Any, Any], Any]) -> Policy:
    return cast(Policy, types.SimpleNamespace(NAME=name, Params=NoParams, advise=advise))


def rec(policy: str, target: str, value: int, rule: str = "r") -> Recommendation:
    return Recommendation(
        Kind.SET_APP_PRIORITY, target, value, policy, Explanation(rule, f"{policy} wants {value}")
    )


def emits(name: str, *recs: tuple[str, int]) -> Policy:
    def advise(snap: Snapshot, state: Any, params: Any) -> PolicyResult:
        n = (state or 0) + 1
        return PolicyResult(tuple(rec(name, t, v, f"{name}.rule") for t, v in recs), n)

    return fake(name, advise)


def boom(snap: Snapshot, state: Any, params: Any) -> PolicyResult:
    raise RuntimeError("kaput")


EXPL = Explanation("r", "because")
SNAP = snapshot(
    nodes=[node("n1:1", used=(1024, 1))], apps=[app("application_1_0001", [rr(20, 1024, 1, 2)])]
)


def ticking() -> Callable[[], float]:
    t = iter(range(1000))
    return lambda: float(next(t))


ALL = ["haste", "matchmaking", "opera", "anacrac", "prism"]


def test_default_registry_runs_every_policy_in_precedence_order() -> None:
    res = decide(SNAP, {}, EngineConfig(), timer=ticking())
    assert list(res.per_policy_timing) == ALL == run_order(EngineConfig())
    assert all(t == 1.0 for t in res.per_policy_timing.values())
    assert {r.policy for r in res.recommendations} >= {"haste", "matchmaking"}
    assert set(res.next_states) == set(ALL)
    assert res.errors == ()
    assert list(POLICIES) == ALL


def test_a_policy_gets_the_states_it_reads_copied_into_its_own() -> None:
    seen: list[object] = []

    def record(snap: Snapshot, state: object, params: object) -> PolicyResult:
        seen.append(state)
        return PolicyResult((), {"own": 1})

    reader = fake("r", record)
    reader.READS = ("classifier", "other")  # type: ignore[attr-defined]
    plain = fake("p", record)
    states = {"r": {"own": 0}, "p": {"own": 5}, "classifier": {"groups": {"a/1": {}}}}
    res = decide(SNAP, states, EngineConfig(precedence=("r", "p")), registry={"r": reader,
                                                                             "p": plain})
    assert seen == [{"own": 0, "classifier": {"groups": {"a/1": {}}}}, {"own": 5}]
    assert res.next_states["r"] == {"own": 1}  # what it read is not carried as its own


def test_advice_from_different_policies_on_one_target_all_stands() -> None:
    a = Recommendation(Kind.ADVISE_APP_CONFIG, "app1", {"x": 1}, "a", EXPL)
    b = Recommendation(Kind.ADVISE_APP_CONFIG, "app1", {"y": 2}, "b", EXPL)
    a2 = Recommendation(Kind.ADVISE_APP_CONFIG, "app1", {"x": 3}, "a", EXPL)
    w1 = Recommendation(Kind.SET_APP_PRIORITY, "app1", 5, "a", EXPL)
    w2 = Recommendation(Kind.SET_APP_PRIORITY, "app1", 7, "b", EXPL)
    kept = resolve_conflicts([a, b, a2, w1, w2])
    assert [(r.policy, r.kind.value, r.value) for r in kept] == [
        ("a", "advise_app_config", {"x": 1}), ("b", "advise_app_config", {"y": 2}),
        ("a", "set_app_priority", 5)]
    assert kept[0].explanation.conflicts[0]["value"] == {"x": 3}
    assert kept[2].explanation.conflicts[0]["policy"] == "b"


def test_a_failing_policy_is_reported_and_skipped() -> None:
    reg = {"a": fake("a", boom), "b": emits("b", ("x", 1))}
    res = decide(SNAP, {"a": "old", "b": 4}, EngineConfig(precedence=("a", "b")), registry=reg)
    assert [(e.policy, e.error, e.message) for e in res.errors] == [("a", "RuntimeError", "kaput")]
    assert [r.policy for r in res.recommendations] == ["b"]
    assert res.next_states == {"a": "old", "b": 5}
    assert res.errors[0].to_dict() == {"policy": "a", "error": "RuntimeError", "message": "kaput"}


def test_bad_results_are_errors_too() -> None:
    reg = {
        "a": fake("a", lambda s, st, p: [rec("a", "x", 1)]),
        "b": fake("b", lambda s, st, p: PolicyResult(("nope",), None)),  # type: ignore[arg-type]
    }
    res = decide(SNAP, {}, EngineConfig(precedence=("a", "b")), registry=reg)
    assert [e.policy for e in res.errors] == ["a", "b"]
    assert res.recommendations == ()


def test_conflicts_go_to_the_earlier_policy_and_are_explained() -> None:
    reg = {"a": emits("a", ("x", 1), ("y", 2)), "b": emits("b", ("x", 9), ("z", 3))}
    res = decide(SNAP, {}, EngineConfig(precedence=("a", "b")), registry=reg)
    got = {(r.target, r.policy, r.value) for r in res.recommendations}
    assert got == {("x", "a", 1), ("y", "a", 2), ("z", "b", 3)}
    x = next(r for r in res.recommendations if r.target == "x")
    assert x.explanation.conflicts == (
        {"policy": "b", "value": 9, "rule": "b.rule", "summary": "b wants 9"},
    )
    flipped = decide(SNAP, {}, EngineConfig(precedence=("b", "a")), registry=reg)
    x2 = next(r for r in flipped.recommendations if r.target == "x")
    assert (x2.policy, x2.value) == ("b", 9)
    assert [r.target for r in flipped.recommendations] == ["x", "z", "y"]


def test_same_policy_duplicates_keep_the_first() -> None:
    reg = {"a": emits("a", ("x", 1), ("x", 2))}
    res = decide(SNAP, {}, EngineConfig(), registry=reg)
    (only,) = res.recommendations
    assert only.value == 1 and only.explanation.conflicts[0]["value"] == 2


def test_disabled_policies_do_not_run_and_keep_their_state() -> None:
    reg = {"a": emits("a", ("x", 1)), "b": emits("b", ("y", 1))}
    cfg = EngineConfig(policies={"a": PolicyConfig(enabled=False)}, precedence=("a", "b"))
    res = decide(SNAP, {"a": 7}, cfg, registry=reg)
    assert [r.policy for r in res.recommendations] == ["b"]
    assert res.next_states == {"a": 7, "b": 1}
    assert list(res.per_policy_timing) == ["b"]


def test_unnamed_policies_run_after_the_precedence_list_alphabetically() -> None:
    reg = {"c": emits("c"), "b": emits("b"), "a": emits("a")}
    assert run_order(EngineConfig(precedence=("c",)), reg) == ["c", "a", "b"]


def test_the_policy_name_is_stamped_by_the_engine() -> None:
    reg = {"a": fake("a", lambda s, st, p: PolicyResult((rec("other", "x", 1),), None))}
    (r,) = decide(SNAP, {}, EngineConfig(), registry=reg).recommendations
    assert r.policy == "a"


def test_classifier_runs_first_and_transforms_the_states() -> None:
    seen: list[object] = []

    def watch(snap: Snapshot, state: Any, params: Any) -> PolicyResult:
        seen.append(state)
        return PolicyResult((), state)

    def classify(snap: Snapshot, states: Mapping[str, object]) -> Mapping[str, object]:
        return {**states, "a": {"labels": {"task_1": "short"}}, "classifier": "model-v2"}

    reg = {"a": fake("a", watch)}
    res = decide(
        SNAP,
        {"classifier": "model-v1"},
        EngineConfig(),
        classifier=classify,
        registry=reg,
        timer=ticking(),
    )
    assert seen == [{"labels": {"task_1": "short"}}]
    assert res.next_states["classifier"] == "model-v2"
    assert list(res.per_policy_timing) == ["classifier", "a"]

    def broken(snap: Snapshot, states: Mapping[str, object]) -> Mapping[str, object]:
        raise ValueError("no model")

    res2 = decide(SNAP, {"a": 1}, EngineConfig(), classifier=broken, registry=reg)
    assert [e.policy for e in res2.errors] == ["classifier"]
    assert seen[-1] == 1 and res2.next_states == {"a": 1}


def test_dry_run_override() -> None:
    cfg = EngineConfig(policies={"haste": PolicyConfig(dry_run=False)})
    assert cfg.dry_run("haste", True) is False
    assert cfg.dry_run("matchmaking", True) is True


def test_decide_is_deterministic() -> None:
    a = decide(SNAP, {}, EngineConfig())
    b = decide(SNAP, {}, EngineConfig())
    assert [r.to_dict() for r in a.recommendations] == [r.to_dict() for r in b.recommendations]


def test_gc_is_paused_during_the_step_and_restored() -> None:
    import gc

    seen: list[bool] = []

    def look(snap: Snapshot, state: Any, params: Any) -> PolicyResult:
        seen.append(gc.isenabled())
        return PolicyResult((), None)

    reg = {"a": fake("a", look)}
    assert gc.isenabled()
    decide(SNAP, {}, EngineConfig(), registry=reg)
    decide(SNAP, {}, EngineConfig(), registry=reg, pause_gc=False)
    assert seen == [False, True] and gc.isenabled()
    gc.disable()
    try:
        decide(SNAP, {}, EngineConfig(), registry=reg)
        assert not gc.isenabled()
    finally:
        gc.enable()
