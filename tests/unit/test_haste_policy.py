"""The haste policy on small Snapshots: priorities per leaf queue and per-node advice."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _snapshots import J, app, container, job, node, queue, rr, snapshot, task
from hypothesis import given, settings
from hypothesis import strategies as st

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.policies import haste
from yarn_advisor.advisor.policies.haste import core as hc
from yarn_advisor.advisor.policies.haste.inputs import IterationRule, build_inputs
from yarn_advisor.advisor.policies.haste.nodes import best_per_node, rank_on

A1, A2, A3 = "application_1_0001", "application_1_0002", "application_1_0003"

NEW = haste.State()


def _by_kind(recs: tuple[Recommendation, ...], kind: Kind) -> dict[str, Recommendation]:
    return {r.target: r for r in recs if r.kind is kind}


def _three_apps(rm_conf: dict[str, str] | None = None,
               **params: object) -> tuple[Recommendation, ...]:
    snap = snapshot(
        rm_conf=rm_conf or {},
        nodes=[node("n1:1", used=(4096, 4)), node("n2:1", used=(6144, 6))],
        apps=[
            app(
                A1,
                [rr(20, 1024, 1, 10), rr(10, 2048, 1, 2)],
                queue="a",
                progress=40,
                allocated=(4096, 4),
                running=3,
            ),
            app(A2, [rr(0, 1024, 1, 1)], queue="a", state="ACCEPTED"),
            app(
                A3,
                [rr(1, 3072, 1, 4)],
                queue="a",
                app_type="SPARK",
                tags=["iteration:2/5"],
                progress=10,
                allocated=(2048, 2),
                running=1,
            ),
        ],
        queues=[queue("root.a")],
        jobs=(job(A1, 20, 5, 3, 2, 0, 1),),
    )
    return haste.advise(snap, NEW, haste.Params(**J(params))).recommendations


def test_am_first_then_preference_rank_mapped_to_priorities() -> None:
    prio = _by_kind(_three_apps(), Kind.SET_APP_PRIORITY)
    assert J(prio[A2].value) == 10 and prio[A2].explanation.rule == "haste.am_first"
    # the iterative app's alignment (Eq 5) outweighs A1's urgency under beta 0.2/0.2/0.6
    # three levels over 0..10: A2 (AM) 10, A3 5, A1 the lowest at 0, where it already is
    assert J(prio[A3].value) == 5
    assert A1 not in prio
    e = prio[A3].explanation
    assert e.rule == "haste.rta.preference_rank"
    assert e.inputs["iteration"] == {"total": 5, "finished": 1, "source": "tag:iteration:2/5"}
    assert e.thresholds["beta"] == (0.2, 0.2, 0.6)
    assert J(prio[A3].previous) == 0
    json.dumps([r.to_dict() for r in prio.values()])


def test_without_alignment_the_iterative_app_loses_its_boost() -> None:
    prio = _by_kind(_three_apps(alignment=False), Kind.SET_APP_PRIORITY)
    # plain HaSTE: A1's urgency ranks it above A3, which stays at the lowest level, 0
    assert A3 not in prio and J(prio[A1].value) == 5
    assert prio[A1].explanation.thresholds["beta"] == (1.0, 1.0, 0.0)


def test_only_changes_are_recommended_and_single_app_queues_are_left_alone() -> None:
    snap = snapshot(
        nodes=[node("n1:1", used=(1024, 1))],
        apps=[
            app(A1, [rr(20, 1024, 1, 5)], queue="a", priority=9),
            app(A2, [rr(20, 4096, 4, 5)], queue="a", priority=3),  # fits better: rank 1
            app(A3, [rr(20, 1024, 1, 5)], queue="b", priority=0),  # alone in its queue
            app("application_1_0004", [rr(20, 1024, 1, 5)], queue="b", state="FINISHED"),
        ],
    )
    prio = _by_kind(haste.advise(snap, NEW, haste.Params()).recommendations, Kind.SET_APP_PRIORITY)
    # two score levels spread over 0..10: rank 1 -> 10, rank 2 -> 0
    assert {t: (J(r.previous), J(r.value)) for t, r in prio.items()} == {A2: (3, 10), A1: (9, 0)}
    settled = snapshot(
        nodes=snap.nodes,
        apps=[
            app(A1, [rr(20, 1024, 1, 5)], queue="a", priority=0),
            app(A2, [rr(20, 4096, 4, 5)], queue="a", priority=10),
        ],
    )
    again = haste.advise(settled, NEW, haste.Params()).recommendations
    assert not _by_kind(again, Kind.SET_APP_PRIORITY)


def test_more_levels_than_priorities_are_bucketed_within_bounds() -> None:
    apps = [
        app(f"application_1_{i:04d}", [rr(20, 512 * (i + 1), 1, 3)], queue="a", priority=7)
        for i in range(15)
    ]
    snap = snapshot(nodes=[node("n1:1", total=(65536, 64), used=(1024, 1))], apps=apps)
    recs = haste.advise(snap, NEW, haste.Params(max_priority=3)).recommendations
    prio = _by_kind(recs, Kind.SET_APP_PRIORITY)
    ranked = sorted(prio.values(), key=lambda r: J(r.explanation.scores)["rank"])
    values = [J(r.value) for r in ranked]
    assert len(values) == 15
    assert values[0] == 3 and min(values) == 0
    assert values == sorted(values, reverse=True)
    # fitness is the only difference here: bigger asks fit the reference capacity better
    assert ranked[0].target == "application_1_0014"


def test_node_advice_names_the_best_fitting_request() -> None:
    recs = _three_apps()
    adv = _by_kind(recs, Kind.ADVISE_APP_CONFIG)
    assert set(adv) == {"n1:1", "n2:1"}
    for rec in adv.values():
        assert isinstance(J(rec.value), dict)
        assert J(rec.value)["serve_next"]["app"] == A2
        assert rec.explanation.rule == "haste.am_first"
        assert J(rec.previous) is None


def test_node_advice_without_am_uses_rta_and_respects_fit_and_labels() -> None:
    snap = snapshot(
        nodes=[
            node("small:1", used=(7168, 7)),  # 1 GiB / 1 vcore free
            node("big:1", used=(1024, 1)),
            node("full:1", used=(8192, 8)),
            node("gpu:1", used=(1024, 1), labels=["gpu"]),
        ],
        apps=[
            app(A1, [rr(20, 1024, 1, 4)]),
            app(A2, [rr(20, 4096, 2, 4)]),
            app(A3, [rr(20, 2048, 1, 2, label="gpu")], allocated=(1024, 1)),
        ],
    )
    adv = _by_kind(haste.advise(snap, NEW, haste.Params()).recommendations,
                   Kind.ADVISE_APP_CONFIG)
    assert set(adv) == {"small:1", "big:1", "gpu:1"}
    assert J(adv["small:1"].value)["serve_next"]["app"] == A1
    assert J(adv["gpu:1"].value)["serve_next"]["app"] == A3
    big = adv["big:1"]
    assert big.explanation.rule == "haste.rta.serve_next"
    assert big.explanation.inputs["fitting_requests"] == 2  # request rows, not containers
    assert J(big.value)["serve_next"]["app"] == A2


def test_idle_nodes_get_an_ita_plan_and_the_pool_shrinks() -> None:
    snap = snapshot(
        nodes=[node("n1:1", total=(10240, 6)), node("n2:1", total=(10240, 6))],
        apps=[
            app(A1, [rr(20, 1024, 3, 1)], allocated=(1024, 1)),  # type I, one task
            app(A2, [rr(20, 3072, 1, 4)], allocated=(1024, 1)),  # type II, four tasks
        ],
    )
    adv = _by_kind(haste.advise(snap, NEW, haste.Params()).recommendations,
                   Kind.ADVISE_APP_CONFIG)
    first = adv["n1:1"]
    assert first.explanation.rule == "haste.ita.knapsack"
    assert isinstance(J(first.value), dict)
    plan = {p["app"]: p["containers"] for p in J(first.value)["plan"]}
    assert plan == {A1: 1, A2: 3}  # 3 type-II + 1 type-I fill <10 GB, 6 cores>
    assert first.explanation.scores["memory_utilisation"] == 1.0
    second = adv["n2:1"]  # only one type-II task is left in the pool
    assert {p["app"]: p["containers"] for p in J(second.value)["plan"]} == {A2: 1}


def test_max_node_advice_keeps_the_emptiest_nodes() -> None:
    nodes = [node(f"n{i}:1", used=(1024 * i, i), containers=1) for i in range(1, 6)]
    snap = snapshot(nodes=nodes, apps=[app(A1, [rr(20, 512, 1, 9)], allocated=(512, 1))])
    recs = haste.advise(snap, NEW, haste.Params(max_node_advice=2)).recommendations
    assert set(_by_kind(recs, Kind.ADVISE_APP_CONFIG)) == {"n1:1", "n2:1"}
    none = haste.advise(snap, NEW, haste.Params(node_advice=False)).recommendations
    assert not _by_kind(none, Kind.ADVISE_APP_CONFIG)


def test_urgency_sources() -> None:
    snap = snapshot(
        nodes=[node("n1:1", used=(1024, 1))],
        apps=[
            app(A1, [rr(20, 1024, 1, 4), rr(10, 2048, 1, 1)], allocated=(3072, 2), running=2),
            app(A2, [rr(20, 1024, 1, 4)], allocated=(2048, 2), running=2),
            app(A3, [rr(5, 1024, 1, 1)], app_type="SPARK", progress=50, allocated=(2048, 2)),
        ],
        jobs=(job(A1, 10, 4, 1, 1, 0, 1),),
        tasks=(
            task(A2, 0, "MAP", "SUCCEEDED"),
            task(A2, 1, "MAP", "RUNNING"),
            task(A2, 2, "MAP", "NEW"),
            task(A2, 9, "REDUCE", "RUNNING"),
        ),
        containers=(
            container("c1", A2, "n1:1", (1024, 1), 20),
            container("c2", A2, "n1:1", (2048, 1), 10),
        ),
    )
    w = hc.Weights()
    inp = build_inputs(snap, w, (), 10.0)
    by = {(r.app.id, r.priority): r for r in inp.requests}
    a1m, a1r = by[(A1, 20)], by[(A1, 10)]
    assert a1m.role == "map" and a1r.role == "reduce"
    assert a1m.job is not None and a1m.job.maps_assigned == 5 and a1m.job.reduces_assigned == 1
    assert a1m.urgency == pytest.approx(hc.map_urgency(a1m.job))
    assert a1r.urgency == pytest.approx(hc.reduce_urgency(a1m.job, 10.0))
    a2 = by[(A2, 20)]
    assert a2.job is not None and (a2.job.maps_total, a2.job.maps_assigned) == (3, 2)
    assert a2.job.reduce_size == w.size((2048, 1))  # from the running reduce container
    a3 = by[(A3, 5)]
    assert a3.role == "task" and a3.job is None
    assert a3.urgency == hc.fallback_urgency(0.5, w.size((2048, 2)))


def test_iteration_rules_and_accepted_apps_without_rows() -> None:
    snap = snapshot(
        apps=[
            app(A1, [rr(20, 1024, 1, 4)], name="kmeans-iter-4"),
            app(A2, [], state="ACCEPTED", am=(2048, 1)),
        ]
    )
    rules = (IterationRule(name_pattern=r"kmeans-iter-(?P<current>\d+)", total=6),)
    inp = build_inputs(snap, hc.Weights(), rules, 10.0)
    r1, r2 = inp.requests
    assert r1.iteration == hc.Iteration(6, 3, r"rule:kmeans-iter-(?P<current>\d+)")
    assert r1.alignment == pytest.approx((6 + 3) / (6 + 1))
    assert (r2.role, r2.resource, r2.containers, r2.priority) == ("am", (2048, 1), 1, 0)


def test_params_validation_lists_every_problem() -> None:
    with pytest.raises(ValueError) as exc:
        haste.Params(beta=(0.5, -1.0, 0.2), max_priority=0, memory_unit_mb=0)
    msg = str(exc.value)
    assert "beta" in msg and "max_priority" in msg and "memory_unit_mb" in msg
    with pytest.raises(ValueError, match="name_pattern"):
        IterationRule(name_pattern="(", total=2)


# --- the vectorised node pass equals the per-node reference ------------------------------

cands_strategy = st.lists(
    st.tuples(
        st.sampled_from([512, 1024, 2048, 3072, 4096]),
        st.integers(1, 4),
        st.floats(0, 50, allow_subnormal=False),
        st.floats(0, 1, allow_subnormal=False),
        st.booleans(),
    ),
    min_size=1,
    max_size=25,
)
nodes_strategy = st.lists(
    st.tuples(st.integers(0, 8192), st.integers(0, 8)), min_size=1, max_size=30
)


@settings(max_examples=200, deadline=None)
@given(
    cands_strategy,
    nodes_strategy,
    st.sampled_from([(0.2, 0.2, 0.6), (1.0, 1.0, 0.0), (0.5, 0.0, 0.5)]),
)
def test_best_per_node_matches_score(
    cands: list[tuple[int, int, float, float, bool]],
    nodes: list[tuple[int, int]],
    beta: tuple[float, float, float],
) -> None:
    w = hc.Weights()
    res = np.array([(c[0], c[1]) for c in cands], dtype=np.int64)
    urg = np.array([c[2] for c in cands])
    ali = np.array([c[3] for c in cands])
    am = np.array([c[4] for c in cands])
    choices = {
        ch.node: ch
        for ch in best_per_node(np.array(nodes, dtype=np.int64), res, urg, ali, am, w, beta)
    }
    ref = [hc.Candidate(str(i), (c[0], c[1]), c[2], c[3], c[4]) for i, c in enumerate(cands)]
    for n, cap in enumerate(nodes):
        ranked = hc.score(cap, ref, w, beta)
        if not ranked:
            assert n not in choices
            continue
        ch = choices[n]
        top = ranked[0]
        assert ch.preference == pytest.approx(top.preference, abs=1e-9)
        assert ref[ch.candidate].is_am == top.is_am
        assert hc.fits(ref[ch.candidate].resource, cap)
        assert ch.n_candidates == len(ranked)
        clear = (
            len(ranked) == 1
            or ranked[1].is_am != top.is_am
            or (top.preference - ranked[1].preference > 1e-9)
        )
        if clear:
            assert ch.candidate == top.index
            assert ch.fitness == pytest.approx(top.fitness)
        # the vectorised single-capacity ranking agrees too
        order, *_, pref = rank_on((float(cap[0]), float(cap[1])), res, urg, ali, am, w, beta)
        assert pref[order[0]] == pytest.approx(top.preference, abs=1e-9)


def test_no_priorities_where_the_lever_does_not_exist() -> None:
    apps = [app(A1, [rr(20, 1024, 1, 5)], queue="a"), app(A2, [rr(20, 4096, 4, 5)], queue="a")]
    nodes = [node("n1:1", used=(1024, 1))]
    fair_queue = snapshot(nodes=nodes, apps=apps, queues=[queue("root.a", ordering="fair")])
    fifo_queue = snapshot(nodes=nodes, apps=apps, queues=[queue("root.a", ordering="fifo")])
    fair_scheduler = snapshot(nodes=nodes, apps=apps, scheduler_type="fairScheduler")
    # FIFO queue: A2 ranks first (10); A1 is the lowest level, 0, where it already is
    for snap, expected in ((fair_queue, 0), (fifo_queue, 1), (fair_scheduler, 0)):
        recs = haste.advise(snap, NEW, haste.Params()).recommendations
        assert len(_by_kind(recs, Kind.SET_APP_PRIORITY)) == expected
        assert len(_by_kind(recs, Kind.ADVISE_APP_CONFIG)) == 1  # node advice still published


def test_priorities_are_capped_by_the_clusters_max_application_priority() -> None:
    capped = _by_kind(_three_apps(rm_conf={"yarn.cluster.max-application-priority": "4"}),
                      Kind.SET_APP_PRIORITY)
    assert J(capped[A2].value) == 4  # the AM-first app gets the cluster's ceiling, not 10
    assert all(0 <= int(J(r.value)) <= 4 for r in capped.values())  # type: ignore[call-overload]
    free = _by_kind(_three_apps(), Kind.SET_APP_PRIORITY)
    assert J(free[A2].value) == 10


def test_apps_nothing_tells_apart_fall_back_to_the_default_priority() -> None:
    # identical requests, no MapReduce counts, no progress: one level; the app raised
    # earlier (for its AM) comes back to 0 instead of every app being raised to 10
    snap = snapshot(nodes=[node("n1:1", used=(1024, 1))],
                    apps=[app(A1, [rr(20, 1024, 1, 5)], queue="a", priority=10),
                          app(A2, [rr(20, 1024, 1, 5)], queue="a", priority=0)])
    prio = _by_kind(haste.advise(snap, NEW, haste.Params()).recommendations,
                    Kind.SET_APP_PRIORITY)
    assert {t: (J(r.previous), J(r.value)) for t, r in prio.items()} == {A1: (10, 0)}


def test_an_am_boost_alone_is_not_written_where_nothing_ranks_the_running_apps() -> None:
    # A1 and A3 run with identical requests and no counts or progress: nothing ranks
    # them, so raising A2 for its AM would be newest-first for a cycle (SLS: +17 %
    # mean JCT); by default the queue keeps YARN's default priority
    apps = [app(A1, [rr(20, 1024, 1, 5)], queue="a", running=1, allocated=(1024, 1)),
            app(A2, [rr(0, 1024, 1, 1)], queue="a", state="ACCEPTED"),
            app(A3, [rr(20, 1024, 1, 5)], queue="a", running=1, allocated=(1024, 1))]
    snap = snapshot(nodes=[node("n1:1", used=(2048, 2))], apps=apps, queues=[queue("root.a")])
    assert _by_kind(haste.advise(snap, NEW, haste.Params()).recommendations,
                    Kind.SET_APP_PRIORITY) == {}
    alone = _by_kind(haste.advise(snap, NEW, haste.Params(am_first_alone=True)).recommendations,
                     Kind.SET_APP_PRIORITY)
    assert {t: J(r.value) for t, r in alone.items()} == {A2: 10}
    # ranked running apps (A1's MapReduce counts): the paper's AM boost is kept
    assert J(_by_kind(_three_apps(), Kind.SET_APP_PRIORITY)[A2].value) == 10


@pytest.mark.parametrize("raw", ["9" * 4301, "99999999999", "-9" * 3])
def test_an_out_of_bounds_max_application_priority_is_unknown_not_a_crash(raw: str) -> None:
    """Numbers from the RM's configuration are bounded (a Java int, decimal): a
    4,301-digit value made ``int()`` raise and HaSTE fail every cycle; now the
    setting is unknown, as if the RM had not said, and the priorities are YARN's."""
    recs = _by_kind(_three_apps(rm_conf={"yarn.cluster.max-application-priority": raw}),
                    Kind.SET_APP_PRIORITY)
    assert {t: J(r.value) for t, r in recs.items()} == {
        t: J(r.value) for t, r in _by_kind(_three_apps(), Kind.SET_APP_PRIORITY).items()}
