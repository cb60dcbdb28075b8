"""advisor.engine.decide: order, isolation of failures, conflicts, states, reads, predictions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from _snapshots import J, app, node, rr, snapshot

from yarn_advisor.advisor.engine.decide import (
    AdvisorState,
    EngineConfig,
    decide,
    resolve_conflicts,
    run_order,
)
from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Advice, Priority
from yarn_advisor.advisor.model.recommendation import Conflict, Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import (
    NO_READS,
    POLICIES,
    AnyPolicy,
    Policy,
    PolicyResult,
    Reads,
    Shared,
)
from yarn_advisor.classifiers.model.live import Predictions
from yarn_advisor.config.base import ConfigModel
from yarn_advisor.config.schema import PolicySection

Advise = Callable[[Snapshot, "Tick", "NoParams", Reads], PolicyResult["Tick"]]


class NoParams(ConfigModel):
    pass


@dataclass(frozen=True)
class Tick:
    """A test policy's state: a number."""

    n: int = 0

    def to_json(self) -> JsonDict:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Tick:
        return cls(int(str(data["n"])))


def fake(name: str, advise: Advise, shares: Callable[[Tick], Shared] | None = None
         ) -> AnyPolicy:
    return Policy(name, NoParams, Tick, advise, shares=shares)


def rec(policy: str, target: str, value: int, rule: str = "r") -> Recommendation:
    return Recommendation(Kind.SET_APP_PRIORITY, target, Priority(value), policy,
                          Explanation(rule, f"{policy} wants {value}"))


def emits(name: str, *recs: tuple[str, int]) -> Policy:
    def advise(snap: Snapshot, state: Tick, params: NoParams, reads: Reads = NO_READS
               ) -> PolicyResult[Tick]:
        return PolicyResult(tuple(rec(name, t, v, f"{name}.rule") for t, v in recs),
                            Tick(state.n + 1))

    return fake(name, advise)


def boom(snap: Snapshot, state: Tick, params: NoParams, reads: Reads = NO_READS
         ) -> PolicyResult[Tick]:
    raise RuntimeError("kaput")


def states(**kw: int) -> AdvisorState:
    return AdvisorState({k: Tick(v) for k, v in kw.items()})


EXPL = Explanation("r", "because")
SNAP = snapshot(
    nodes=[node("n1:1", used=(1024, 1))], apps=[app("application_1_0001", [rr(20, 1024, 1, 2)])]
)


def ticking() -> Callable[[], float]:
    t = iter(range(1000))
    return lambda: float(next(t))


ALL = ["haste", "matchmaking", "opera", "anacrac", "prism"]


def test_default_registry_runs_every_policy_in_precedence_order() -> None:
    res = decide(SNAP, AdvisorState(), EngineConfig(), timer=ticking())
    assert list(res.policy_seconds) == ALL == run_order(EngineConfig())
    assert all(t == 1.0 for t in res.policy_seconds.values())
    assert {r.policy for r in res.recommendations} >= {"haste", "matchmaking"}
    assert set(res.states) == set(ALL)
    assert all(type(res.states[n]) is type(POLICIES[n].initial_state()) for n in ALL)
    assert res.errors == () and res.predictions is None
    assert list(POLICIES) == ALL


def test_policies_read_this_cycles_predictions_and_what_others_shared_last_cycle() -> None:
    seen: list[tuple[Tick, Reads]] = []

    def record(snap: Snapshot, state: Tick, params: NoParams, reads: Reads = NO_READS
               ) -> PolicyResult[Tick]:
        seen.append((state, reads))
        return PolicyResult((), Tick(state.n + 10))

    def headroom(state: Tick) -> Shared:
        return Shared(idle_headroom={"n1:1": (float(state.n), 0.0)})

    class Classifier:
        def predict(self, snap: Snapshot) -> Predictions:
            return Predictions(60.0)

    reg = {"r": fake("r", record), "p": fake("p", record, shares=headroom)}
    res = decide(SNAP, AdvisorState(states(r=1, p=2).policies, Classifier()),
                 EngineConfig(precedence=("p", "r")), registry=reg)
    # r runs after p but reads what p shared from its state of the previous cycle (2, not
    # 12), and this cycle's predictions; p reads the same
    shared = Shared(idle_headroom={"n1:1": (2.0, 0.0)})
    assert seen == [(Tick(2), Reads(Predictions(60.0), shared)),
                    (Tick(1), Reads(Predictions(60.0), shared))]
    assert res.states == {"r": Tick(11), "p": Tick(12)}
    assert res.predictions == Predictions(60.0)


def test_advice_from_different_policies_on_one_target_all_stands() -> None:
    a = Recommendation(Kind.ADVISE_APP_CONFIG, "app1", Advice.of({"x": 1}), "a", EXPL)
    b = Recommendation(Kind.ADVISE_APP_CONFIG, "app1", Advice.of({"y": 2}), "b", EXPL)
    a2 = Recommendation(Kind.ADVISE_APP_CONFIG, "app1", Advice.of({"x": 3}), "a", EXPL)
    w1 = Recommendation(Kind.SET_APP_PRIORITY, "app1", Priority(5), "a", EXPL)
    w2 = Recommendation(Kind.SET_APP_PRIORITY, "app1", Priority(7), "b", EXPL)
    kept = resolve_conflicts([a, b, a2, w1, w2])
    assert [(r.policy, r.kind.value, J(r.value)) for r in kept] == [
        ("a", "advise_app_config", {"x": 1}), ("b", "advise_app_config", {"y": 2}),
        ("a", "set_app_priority", 5)]
    assert J(kept[0].explanation.conflicts[0].value) == {"x": 3}
    assert kept[2].explanation.conflicts[0].policy == "b"


def test_a_failing_policy_is_reported_and_keeps_its_state() -> None:
    reg = {"a": fake("a", boom), "b": emits("b", ("x", 1))}
    res = decide(SNAP, states(a=3, b=4), EngineConfig(precedence=("a", "b")), registry=reg)
    assert [(e.policy, e.error, e.message) for e in res.errors] == [("a", "RuntimeError", "kaput")]
    assert [r.policy for r in res.recommendations] == ["b"]
    assert res.states == {"a": Tick(3), "b": Tick(5)}
    assert res.errors[0].to_json() == {"policy": "a", "error": "RuntimeError", "message": "kaput"}


def test_bad_results_are_errors_too() -> None:
    reg = {
        "a": fake("a", lambda s, st, p, r: [rec("a", "x", 1)]),
        "b": fake("b", lambda s, st, p, r: PolicyResult(("nope",), None)),  # type: ignore[arg-type]
    }
    res = decide(SNAP, AdvisorState(), EngineConfig(precedence=("a", "b")), registry=reg)
    assert [e.policy for e in res.errors] == ["a", "b"]
    assert res.recommendations == ()


def test_conflicts_go_to_the_earlier_policy_and_are_explained() -> None:
    reg = {"a": emits("a", ("x", 1), ("y", 2)), "b": emits("b", ("x", 9), ("z", 3))}
    res = decide(SNAP, AdvisorState(), EngineConfig(precedence=("a", "b")), registry=reg)
    got = {(r.target, r.policy, J(r.value)) for r in res.recommendations}
    assert got == {("x", "a", 1), ("y", "a", 2), ("z", "b", 3)}
    x = next(r for r in res.recommendations if r.target == "x")
    assert x.explanation.conflicts == (Conflict("b", Priority(9), "b.rule", "b wants 9"),)
    flipped = decide(SNAP, AdvisorState(), EngineConfig(precedence=("b", "a")), registry=reg)
    x2 = next(r for r in flipped.recommendations if r.target == "x")
    assert (x2.policy, J(x2.value)) == ("b", 9)
    assert [r.target for r in flipped.recommendations] == ["x", "z", "y"]


def test_same_policy_duplicates_keep_the_first() -> None:
    reg = {"a": emits("a", ("x", 1), ("x", 2))}
    res = decide(SNAP, AdvisorState(), EngineConfig(), registry=reg)
    (only,) = res.recommendations
    assert J(only.value) == 1 and J(only.explanation.conflicts[0].value) == 2


def test_disabled_policies_do_not_run_and_keep_their_state() -> None:
    reg = {"a": emits("a", ("x", 1)), "b": emits("b", ("y", 1))}
    cfg = EngineConfig({"a": PolicySection(enabled=False)}, precedence=("a", "b"))
    res = decide(SNAP, states(a=7), cfg, registry=reg)
    assert [r.policy for r in res.recommendations] == ["b"]
    assert res.states == {"a": Tick(7), "b": Tick(1)}  # b started from its first state (0)
    assert list(res.policy_seconds) == ["b"]


def test_unnamed_policies_run_after_the_precedence_list_alphabetically() -> None:
    reg = {"c": emits("c"), "b": emits("b"), "a": emits("a")}
    assert run_order(EngineConfig(precedence=("c",)), reg) == ["c", "a", "b"]


def test_the_policy_name_is_stamped_by_the_engine() -> None:
    reg = {"a": fake("a", lambda s, st, p, r: PolicyResult((rec("other", "x", 1),), st))}
    (r,) = decide(SNAP, AdvisorState(), EngineConfig(), registry=reg).recommendations
    assert r.policy == "a"


def test_a_failing_classifier_is_reported_and_the_policies_run_without_it() -> None:
    seen: list[Reads] = []

    def watch(snap: Snapshot, state: Tick, params: NoParams, reads: Reads = NO_READS
              ) -> PolicyResult[Tick]:
        seen.append(reads)
        return PolicyResult((), state)

    class Broken:
        def predict(self, snap: Snapshot) -> Predictions:
            raise ValueError("no model")

    reg = {"a": fake("a", watch)}
    res = decide(SNAP, AdvisorState(states(a=1).policies, Broken()), EngineConfig(),
                 registry=reg, timer=ticking())
    assert [e.policy for e in res.errors] == ["classifier"]
    assert seen == [Reads()] and res.states == {"a": Tick(1)} and res.predictions is None
    assert list(res.policy_seconds) == ["classifier", "a"]


def test_decide_is_deterministic_and_does_not_change_its_inputs() -> None:
    state = AdvisorState()
    a = decide(SNAP, state, EngineConfig())
    b = decide(SNAP, state, EngineConfig())
    assert state == AdvisorState()
    assert [r.to_dict() for r in a.recommendations] == [r.to_dict() for r in b.recommendations]


def test_gc_is_paused_during_the_step_and_restored() -> None:
    import gc

    seen: list[bool] = []

    def look(snap: Snapshot, state: Tick, params: NoParams, reads: Reads = NO_READS
             ) -> PolicyResult[Tick]:
        seen.append(gc.isenabled())
        return PolicyResult((), state)

    reg = {"a": fake("a", look)}
    assert gc.isenabled()
    decide(SNAP, AdvisorState(), EngineConfig(), registry=reg)
    decide(SNAP, AdvisorState(), EngineConfig(), registry=reg, pause_gc=False)
    assert seen == [False, True] and gc.isenabled()
    gc.disable()
    try:
        decide(SNAP, AdvisorState(), EngineConfig(), registry=reg)
        assert not gc.isenabled()
    finally:
        gc.enable()
