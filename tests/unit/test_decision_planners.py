"""Each policy's part of the decision table, and the engine that joins them."""

from __future__ import annotations

from _snapshots import app, node, queue, rr, snapshot

from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, decide
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.engine.table import PLANNERS
from yarn_advisor.advisor.model.decision_table import (
    Allow,
    Borrower,
    Cap,
    Match,
    Reason,
    RequestDecision,
)
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import NodeResource
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.policies import PolicyResult, Reads
from yarn_advisor.advisor.policies.anacrac import decisions as anacrac
from yarn_advisor.advisor.policies.anacrac.params import Params as AnacracParams
from yarn_advisor.advisor.policies.haste import decisions as haste
from yarn_advisor.advisor.policies.haste.params import Params as HasteParams
from yarn_advisor.advisor.policies.matchmaking import decisions as matchmaking
from yarn_advisor.advisor.policies.matchmaking.params import Params as MatchmakingParams
from yarn_advisor.advisor.policies.matchmaking.state import State as MatchmakingState
from yarn_advisor.advisor.policies.opera import decisions as opera
from yarn_advisor.advisor.policies.opera.params import Params as OperaParams
from yarn_advisor.advisor.policies.opera.state import State as OperaState
from yarn_advisor.classifiers.model.live import GroupPrediction, Predictions
from yarn_advisor.classifiers.model.naive_bayes import Prediction

ALL = frozenset({"haste.holdback", "haste.order", "haste.fitness", "matchmaking.local_only",
                 "anacrac.rules", "opera.lending"})
N1, N2, N3 = "h1:8041", "h2:8041", "h3:8041"
A, B = "application_1_0001", "application_1_0002"


def result(state: object = None, *recs: Recommendation) -> PolicyResult[object]:
    return PolicyResult(tuple(recs), state)


def test_haste_holds_every_mapreduce_jobs_reduces_while_its_maps_are_asked() -> None:
    snap = snapshot([node(N1)], [app(A, [rr(20, 1024, 1, 4)])])
    d = haste.plan(snap, result(), HasteParams(), Reads(), frozenset({"haste.holdback"}))
    (rule,) = d.rules
    assert rule.match == Match(application_type="MAPREDUCE")
    (q,) = rule.requests
    assert q.priority == 10 and q.hold is not None
    assert q.hold.reason is Reason.HASTE_HOLDBACK and set(q.hold.while_pending) >= {5, 20}


def test_haste_fitness_only_while_two_task_shapes_differ() -> None:
    nodes = [node(N1), node(N2)]  # <8192 MB, 8 vcores>
    one_shape = snapshot(nodes, [app(A, [rr(20, 2048, 2, 4)]), app(B, [rr(20, 1024, 1, 4)])])
    mixed = snapshot(nodes, [app(A, [rr(20, 4096, 1, 4)]), app(B, [rr(20, 1024, 4, 4)])])
    kinds = frozenset({"haste.fitness"})
    assert haste.plan(one_shape, result(), HasteParams(), Reads(), kinds).rules == ()
    (rule,) = haste.plan(mixed, result(), HasteParams(), Reads(), kinds).rules
    fits = {q.priority: q.fit for q in rule.requests}
    assert set(fits) == {5, 10, 19, 20}
    f = fits[20]
    assert f is not None and (f.min_alignment, f.max_skips) == (0.9, 2)  # one per node


def test_haste_order_ranks_by_alignment_and_only_when_it_differs() -> None:
    it = app(A, [rr(20, 1024, 1, 4)], tags=["iteration:5/10"])
    plain = app(B, [rr(20, 1024, 1, 4)])
    kinds = frozenset({"haste.order"})
    d = haste.plan(snapshot([node(N1)], [plain, it]), result(), HasteParams(), Reads(), kinds)
    assert {a: e.rank for a, e in d.apps.items()} == {A: 0, B: 1}
    same = haste.plan(snapshot([node(N1)], [plain]), result(), HasteParams(), Reads(), kinds)
    assert same.apps == {}
    off = haste.plan(snapshot([node(N1)], [plain, it]), result(),
                     HasteParams(alignment=False), Reads(), kinds)
    assert off.apps == {}


def test_matchmaking_keeps_maps_local_for_one_heartbeat_round_in_every_leaf_queue() -> None:
    snap = snapshot([node(N1), node(N2), node(N3, state="LOST")], [],
                    queues=[queue("root", leaf=False), queue("root.a"), queue("root.b")])
    state = MatchmakingState(markers={N1: 0, N2: 2})
    kinds = frozenset({"matchmaking.local_only"})
    d = matchmaking.plan(snap, result(state), MatchmakingParams(rounds=2), Reads(), kinds)
    assert [r.match for r in d.rules] == [Match(queue="a"), Match(queue="b")]
    lo = d.rules[0].requests[0].local_only
    assert lo is not None and (lo.max_skips, lo.except_nodes) == (4, frozenset())
    marked = matchmaking.plan(snap, result(state), MatchmakingParams(plugin_markers=True), Reads(),
                              kinds)
    lo = marked.rules[0].requests[0].local_only
    assert lo is not None and lo.except_nodes == frozenset({N1})


def test_anacrac_rules_become_table_rules_on_the_nodes_they_name() -> None:
    params = AnacracParams.model_validate({"rules": [
        {"name": "sqoop", "app_type": "SQOOP", "hosts": ["h1", N2], "tasks_maximum": 2},
        {"name": "nightly", "app_name": "^etl-", "tasks_maximum": 1},
        {"name": "nothing", "app_type": "SPARK"}]})
    snap = snapshot([node(N1), node(N2), node(N3)],
                    [app(A, name="etl-nightly"), app(B, name="adhoc")])
    d = anacrac.plan(snap, result(), params, Reads(), frozenset({"anacrac.rules"}))
    (rule,) = d.rules
    assert rule.match == Match(application_type="SQOOP")
    assert rule.requests == (RequestDecision(None, allow=Allow(frozenset({N1, N2}),
                                                               Reason.ANACRAC_HOST),
                                             cap=Cap(2, Reason.ANACRAC_CAP)),)
    assert list(d.apps) == [A]  # named by a regular expression: listed per app seen
    assert d.apps[A].requests[0].cap == Cap(1, Reason.ANACRAC_CAP)


def test_opera_lends_the_raise_to_the_requests_called_short() -> None:
    snap = snapshot([node(N1, total=(8192, 12)), node(N2, total=(8192, 10)), node(N3)],
                    [app(A, [rr(20, 1024, 1, 5)]), app(B, [rr(20, 1024, 1, 5)])])
    state = OperaState(bases={N1: (8192.0, 8.0), N2: (8192.0, 8.0)})
    raise_n2 = Recommendation(Kind.UPDATE_NODE_RESOURCE, N2, NodeResource(8192, 9),
                              "opera", Explanation("opera.x", "x"))
    preds = Predictions(60.0, {(A, 20): GroupPrediction(A, 20, "MAP", 1024, 1, Prediction(
        True, 0.99, "t")), (B, 20): GroupPrediction(B, 20, "MAP", 1024, 1, Prediction(
            False, 0.2, "t"))})
    d = opera.plan(snap, result(state, raise_n2), OperaParams(), Reads(preds),
                   frozenset({"opera.lending"}))
    assert {n: (x.memory_mb, x.vcores) for n, x in d.nodes.items()} == {N1: (0, 4), N2: (0, 1)}
    assert d.nodes[N1].borrowers == frozenset({Borrower(A, 20)})
    none = opera.plan(snap, result(state), OperaParams(), Reads(), frozenset({"opera.lending"}))
    assert none.nodes[N1].borrowers == frozenset()  # no predictions: nothing is short


def test_the_engine_joins_the_parts_of_the_kinds_asked_for() -> None:
    snap = snapshot([node(N1)], [app(A, [rr(20, 1024, 1, 4)])], queues=[queue("root.default")])
    off = decide(snap, AdvisorState(), EngineConfig())
    assert off.table.empty and "decision_table" not in off.policy_seconds
    on = decide(snap, AdvisorState(), EngineConfig(decisions=frozenset({
        "haste.holdback", "matchmaking.local_only"})))
    assert [r.match for r in on.table.rules] == [Match(application_type="MAPREDUCE"),
                                                 Match(queue="default")]
    assert "decision_table" in on.policy_seconds and not on.errors


def test_a_dry_run_policy_contributes_nothing_and_a_failing_planner_is_an_error() -> None:
    cfg = load_config(overrides={"precision": {"enabled": True},
                                 "policies": {"haste": {"dry_run": True}}})
    snap = snapshot([node(N1)], [app(A, [rr(20, 1024, 1, 4)])], queues=[queue("root.default")])
    d = decide(snap, AdvisorState(), EngineConfig.from_config(cfg))
    assert [r.match for r in d.table.rules] == [Match(queue="default")]  # matchmaking's only

    def broken(*args: object) -> object:
        raise RuntimeError("no")

    saved = PLANNERS["matchmaking"]
    PLANNERS["matchmaking"] = broken  # type: ignore[assignment]
    try:
        d = decide(snap, AdvisorState(), EngineConfig(decisions=ALL))
    finally:
        PLANNERS["matchmaking"] = saved
    assert [(e.policy, e.message) for e in d.errors] == [("matchmaking", "decision table: no")]
    assert d.table.rules and all(r.match != Match(queue="default") for r in d.table.rules)
