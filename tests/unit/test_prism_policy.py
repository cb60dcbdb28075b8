"""The prism policy: phases, profile learning, and the phase-level algorithm on a
scripted cluster (plan, headroom, urgency, slow-start advice), across cycles."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from _snapshots import TS, J, app, ctr, job, node, rr, rtask, snapshot

from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, decide
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import prism
from yarn_advisor.advisor.policies.prism.inputs import build
from yarn_advisor.advisor.policies.prism.profiles import Profiles, next_phase, phase_of

J1, J2, J3 = "application_1_0001", "application_1_0002", "application_1_0003"
N1, N2 = "n1:1", "n2:1"
SLOW = "mapreduce.job.reduce.slowstart.completedmaps"


@pytest.mark.parametrize(
    ("kind", "phase", "progress", "expected"),
    [
        ("MAP", "MAP", 90.0, "MAP"),
        ("MAP", "SORT", 10.0, "MERGE"),
        ("MAP", "", 50.0, "MAP"),
        ("MAP", "", 70.0, "MERGE"),
        ("REDUCE", "SHUFFLE", 90.0, "SHUFFLE"),
        ("REDUCE", "SORT", 0.0, "MERGE"),
        ("REDUCE", "", 20.0, "SHUFFLE"),
        ("REDUCE", "", 50.0, "MERGE"),
        ("REDUCE", "", 96.0, "REDUCE"),
    ],
)
def test_phase_of(kind: str, phase: str, progress: float, expected: str) -> None:
    assert phase_of(rtask(J1, 0, kind, phase, progress)) == expected


def test_next_phase() -> None:
    assert next_phase("MAP", "MAP") == "MERGE"
    assert next_phase("MAP", "MAP", map_only=True) is None
    assert next_phase("REDUCE", "SHUFFLE") == "MERGE"
    assert next_phase("REDUCE", "MERGE") == "REDUCE"
    assert next_phase("REDUCE", "REDUCE") is None
    assert phase_of(rtask(J1, 0, "MAP", "", 90.0), map_only=True) == "MAP"


def _learn(prof: Profiles, ids: list[str], rows: list[tuple[float, float, float]],
           first: bool = False) -> None:
    keys = [(J1, "REDUCE", "MERGE")]
    prof.learn(keys, {J1: "wc"}, np.zeros(len(ids), dtype=np.int64), ids,
               np.array(rows, dtype=np.float64), np.array([first] * len(ids)))


def test_profiles_learn_from_new_samples_only() -> None:
    prof = Profiles(window=20)
    _learn(prof, ["c"], [(10, 100.0, 0.1)])
    assert prof.keys == []  # first sight outside the first phase: lifetime average skipped
    _learn(prof, ["c"], [(10, 100.0, 0.1)], first=True)
    assert prof.get(f"{J1}|REDUCE|MERGE") == pytest.approx([1.0, 100.0, 0.1])
    prof = Profiles(window=20, sample_ids={"c": 0}, samples=np.array([[10.0, 100.0, 0.1]]))
    _learn(prof, ["c"], [(20, 150.0, 0.2)])
    # the 10 new samples averaged (150*20 - 100*10)/10 = 200 MiB, (0.2*20 - 0.1*10)/10 = 0.3
    for key in (f"{J1}|REDUCE|MERGE", "name:wc|REDUCE|MERGE", "*|REDUCE|MERGE"):
        assert prof.get(key) == pytest.approx([1.0, 200.0, 0.3])
    prof.samples = np.array([[20.0, 150.0, 0.2]])  # the next cycle, no new samples since
    _learn(prof, ["c"], [(20, 150.0, 0.2)])
    assert prof.get(f"{J1}|REDUCE|MERGE") == pytest.approx([1.0, 200.0, 0.3])
    got = prof.expected("application_1_0009", "wc", "REDUCE", "MERGE")  # a new app, same name
    assert got is not None and got[1] == "name:wc|REDUCE|MERGE"
    assert got[0] == pytest.approx((200.0, 0.3))


def test_profiles_fold_a_cycle_in_one_step_and_cap_the_window() -> None:
    prof = Profiles(window=4)
    _learn(prof, ["a", "b"], [(5, 100.0, 0.0), (5, 300.0, 1.0)], first=True)
    assert prof.get(f"{J1}|REDUCE|MERGE") == pytest.approx([2.0, 200.0, 0.5])
    row = prof.index["*|REDUCE|MERGE"]
    r, one = np.array([row]), np.array([1.0])
    prof.fold(r, np.array([2.0]), np.array([400.0]), one)  # n = min(4, 4): weight 2/4
    assert prof.get("*|REDUCE|MERGE") == pytest.approx([4.0, 300.0, 0.75])
    prof.fold(r, np.array([2.0]), np.array([100.0]), one)  # n capped at 4: weight 2/4
    assert prof.get("*|REDUCE|MERGE") == pytest.approx([4.0, 200.0, 0.875])


def cluster(t: int = TS, j1_done: int = 4, j1_reduces_pending: int = 2) -> Snapshot:
    """Two 32 GiB / 32 vcore nodes; J1 maps 40% done with reduces waiting to start,
    J2 not started (two node-local maps on n2), J3's reduce shuffling early."""
    cs = [
        ctr("c1_am", J1, N2, (1024, 1), 0, is_am=True),
        ctr("c1_m0", J1, N1, (2048, 1), 20, use=(1000, 50, 10)),
        ctr("c1_m1", J1, N1, (2048, 1), 20, use=(1000, 50, 10)),
        ctr("c2_am", J2, N1, (1024, 1), 0, is_am=True),
        ctr("c3_am", J3, N1, (1024, 1), 0, is_am=True),
        ctr("c3_r0", J3, N2, (4096, 2), 10, use=(200, 5, 10)),
    ]
    tasks = [
        rtask(J1, 0, "MAP", "MAP", 30.0, "c1_m0", N1),
        rtask(J1, 1, "MAP", "MAP", 30.0, "c1_m1", N1),
        rtask(J1, 0, "REDUCE", state="SCHEDULED"),
        rtask(J1, 1, "REDUCE", state="SCHEDULED"),
        rtask(J3, 0, "REDUCE", "SHUFFLE", 10.0, "c3_r0", N2),
    ]
    apps = [
        app(J1, [rr(20, 2048, 1, 10 - j1_done - 2)], name="wordcount", allocated=(5120, 3),
            running=3),
        app(J2, [rr(20, 1024, 1, 4), rr(20, 1024, 1, 2, name="n2"), rr(10, 2048, 1, 1)],
            name="sort", allocated=(1024, 1), running=1),
        app(J3, [], name="join", allocated=(5120, 3), running=2),
    ]
    jobs = (
        replace(job(J1, 10, j1_done, 2, 2), reduces_pending=j1_reduces_pending),
        replace(job(J2, 4, 0, 0, 1), maps_pending=4, reduces_pending=1),
        replace(job(J3, 6, 3, 0, 1, 0, 1), maps_pending=3),
    )
    nodes = [node(N1, (32768, 32), (6144, 4)), node(N2, (32768, 32), (5120, 3))]
    return snapshot(nodes=nodes, apps=apps, containers=cs, jobs=jobs, tasks=tuple(tasks),
                    taken_at=t)


def test_phase_level_algorithm_on_a_scripted_cluster() -> None:
    res = prism.advise(cluster(), prism.State(), prism.Params())
    st = J(res.next_state)
    # learned from the first phases seen: maps 1000 MiB / 0.5 cores, shuffle 200 / 0.05
    prof = dict(zip(st["profiles"]["keys"], zip(st["profiles"]["n"], st["profiles"]["memory_mb"],
                                                 st["profiles"]["vcores"], strict=True),
                    strict=True))
    assert prof["*|MAP|MAP"] == (2.0, 1000.0, 0.5)  # two maps observed
    assert prof["*|REDUCE|SHUFFLE"] == (1.0, 200.0, 0.05)
    # line 2: n1 holds two maps (2 x 1000 MiB expected) and two unmeasured AMs
    assert build(cluster(), Profiles()).used[N1] == (4048.0, 3.0)
    # idle: the maps' 2 x 1048 MiB / 0.5; on n2 the early shuffle's 3896 MiB / 1.95
    assert st["idle_headroom"] == {N1: {"memory_mb": 2096, "vcores": 1.0},
                                   N2: {"memory_mb": 3896, "vcores": 1.95}}
    # J3's reduce waits in shuffle for maps not done: 4096 of its 5120 MiB
    assert st["urgency"] == {J3: 0.8}
    plan = st["plan"]
    assert set(plan) == {N1, N2}
    assert len(plan[N1]) == 8  # max_phases_per_node
    # J2 has the highest deficit and node-local maps on n2: one comes first there
    assert plan[N2][0][:4] == [J2, "MAP", "MAP", "start"]
    # once the maps of the top-k jobs are placed, J1's shuffle (40% of its maps done) fits
    assert [J1, "REDUCE", "SHUFFLE", "start"] in [p[:4] for p in plan[N2]]
    assert all(p[4] > 0 for picks in plan.values() for p in picks)
    assert st["stats"]["phases_picked"] == sum(len(p) for p in plan.values())
    json.dumps(st)


def test_slowstart_advice_is_decided_once_and_kept() -> None:
    res = prism.advise(cluster(), prism.State(), prism.Params())
    st = J(res.next_state)
    assert st["slowstart"][J1]["how"] == "picked" and st["slowstart"][J1]["node"] == N2
    assert st["slowstart"][J1]["fraction"] == 0.4  # 4 of 10 maps done when picked
    recs = {r.target: r for r in res.recommendations if r.kind is Kind.ADVISE_APP_CONFIG}
    assert J(recs[J1].value) == {SLOW: 0.4}
    assert recs[J1].explanation.rule == "prism.slowstart.picked"
    assert J(recs[J1].explanation.inputs)["reduces_pending"] >= 1
    # next cycle: more maps done, the decision stays
    res2 = prism.advise(cluster(TS + 30_000, j1_done=6), res.next_state, prism.Params())
    assert J(res2.next_state)["slowstart"][J1]["fraction"] == 0.4


def test_slowstart_is_one_when_maps_finish_before_any_shuffle_fits() -> None:
    p = prism.Params(top_k=1, max_phases_per_node=1)  # one pick per node: J2's maps
    st = prism.advise(cluster(), prism.State(), p).next_state
    assert J(st)["slowstart"][J1] == {"fraction": None, "watching_since": TS}
    res = prism.advise(cluster(TS + 60_000, j1_done=10), st, p)
    assert J(res.next_state)["slowstart"][J1]["how"] == "maps_done"
    rec = next(r for r in res.recommendations if r.target == J1)
    assert J(rec.value) == {SLOW: 1.0} and rec.explanation.rule == "prism.slowstart.maps_done"


def test_nodes_rotate_when_capped() -> None:
    p = prism.Params(max_nodes_per_cycle=1)
    st = prism.advise(cluster(), prism.State(), p).next_state
    assert J(st)["cursor"] == 1 and set(J(st)["plan"]) <= {N1}
    st = prism.advise(cluster(TS + 1), st, p).next_state
    assert J(st)["cursor"] == 0 and set(J(st)["plan"]) <= {N2}


def test_profiles_of_finished_apps_are_pruned_but_name_profiles_stay() -> None:
    st = prism.advise(cluster(), prism.State(), prism.Params()).next_state
    empty = snapshot(nodes=[node(N1)], taken_at=TS + 1)
    st2 = J(prism.advise(empty, st, prism.Params()).next_state)
    assert not any(k.startswith("application_") for k in st2["profiles"]["keys"])
    assert "name:wordcount|MAP|MAP" in st2["profiles"]["keys"]


def test_engine_runs_prism_and_state_survives_json() -> None:
    r1 = decide(cluster(), AdvisorState(), EngineConfig())
    assert not r1.errors
    kept = AdvisorState(dict(r1.states))
    restored = AdvisorState({name: type(s).from_json(json.loads(json.dumps(s.to_json())))
                             for name, s in r1.states.items()})
    assert restored.policies["prism"].to_json() == r1.states["prism"].to_json()
    r2 = decide(cluster(TS + 30_000), restored, EngineConfig())
    assert not r2.errors
    assert any(r.policy == "prism" for r in r2.recommendations)
    assert r2.recommendations == decide(cluster(TS + 30_000), kept, EngineConfig()).recommendations


def test_garbage_state_reads_as_empty_and_bad_params_are_rejected() -> None:
    bad: dict[str, Any] = {"profiles": {"x": [1, 2]}, "samples": 3, "cursor": "a",
                           "slowstart": {J1: 5}, "idle_headroom": {N1: {"memory_mb": "x"}}}
    assert prism.State.from_json(bad).to_json() == prism.State().to_json()
    fresh = prism.advise(cluster(), prism.State(), prism.Params())
    got = prism.advise(cluster(), prism.State.from_json(bad), prism.Params())
    assert got.recommendations == fresh.recommendations
    assert got.next_state.to_json() == fresh.next_state.to_json()
    with pytest.raises(ValueError, match="top_k"):
        prism.Params(top_k=0)
