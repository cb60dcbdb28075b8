"""The opera policy on small Snapshots: lending to short tasks, taking back under
contention, reservations across cycles, the state and the classifier's predictions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _snapshots import TS, J, app, ctr, node, rr, snapshot, with_util

from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, decide
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import opera, prism
from yarn_advisor.advisor.policies._base import Reads, Shared
from yarn_advisor.advisor.policies.opera.inputs import memory_only, prediction_of
from yarn_advisor.classifiers.model.live import GroupPrediction, Predictions
from yarn_advisor.classifiers.model.naive_bayes import Prediction

A, B = "application_1_0001", "application_1_0002"
N1 = "n1:1"
BASE = (8192, 8)



def P(**kw: Any) -> opera.Params:
    """The policy's parameters with memory lending on: these tests check OPERA's
    lending mechanics on memory and vcores (the default lends vcores only:
    test_default_lends_vcores_only_and_keeps_memory)."""
    return opera.Params(**{"lend_memory": True, **kw})

def _full_node(extra: int = 0, pmem: int = 2048, cpu: float = 2.0, total: tuple[int, int] = BASE,
               b_started: int = TS) -> tuple[Any, list[Any]]:
    """n1 fully allocated to A (4 x 2 GiB/2) plus ``extra`` B containers of 1 GiB/1."""
    cs = [ctr(f"c_a{i}", A, N1, (2048, 2), started=TS - 100_000 + i) for i in range(4)]
    cs += [ctr(f"c_b{i}", B, N1, (1024, 1), started=b_started + i) for i in range(extra)]
    used = (8192 + 1024 * extra, 8 + extra)
    n = with_util(node(N1, total=total, used=used, containers=len(cs)), pmem, cpu)
    return n, cs


def _snap(pending: int = 3, extra: int = 0, taken_at: int = TS, **kw: Any) -> Snapshot:
    n, cs = _full_node(extra, **kw)
    apps = [
        app(A, allocated=(8192, 8), running=4),
        app(B, [rr(20, 1024, 1, pending)] if pending else [], allocated=(1024 * extra, extra),
            running=extra),
    ]
    return snapshot(nodes=[n], apps=apps, containers=cs, taken_at=taken_at)


def _preds(*groups: tuple[str, int, bool, float | None]) -> Predictions:
    """Predictions for (app, request priority, short?, p_short) groups."""
    return Predictions(60.0, {(a, prio): GroupPrediction(a, prio, "MAP", 1024, 3,
                                                          Prediction(short, p, "test"))
                              for a, prio, short, p in groups})


def _short(shared: Shared | None = None) -> Reads:
    """What OPERA reads when the classifier calls B's maps short (and ``shared``)."""
    return Reads(_preds((B, 20, True, 0.95)), shared or Shared())


NEW = opera.State()
# the paper's in-RM semantics: Alg 4 reservations across cycles, Eq 4's OA = C - TU,
# no overcommit cap or ramp (the defaults are the sidecar's: see the README)
PAPER: dict[str, Any] = {"reservation": "multi_chance", "lend_up_to": 1.0,
                         "max_overcommit": None, "ramp_step": None}


def _kinds(recs: tuple[Recommendation, ...], kind: Kind) -> dict[str, Recommendation]:
    return {r.target: r for r in recs if r.kind is kind}


def test_everything_long_lends_nothing_but_reserves() -> None:
    res = opera.advise(_snap(), NEW, P(**PAPER))
    assert res.recommendations == ()
    st = J(res.next_state)
    # multi-chance: the three long tasks fill the reservation queue (eps_r = 3)
    assert st["reservations"] == {N1: [[f"{B}:20", 1]] * 3}
    assert st["bases"] == {} and st["lent"] == {}
    json.dumps(st)


def test_short_tasks_get_the_idle_reserved_resources() -> None:
    res = opera.advise(_snap(), NEW, P(**PAPER), _short())
    rec = _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1]
    # OA = C - TU - BR = (8192 - 2048 - 1024, 8 - 2 - 1) = (5120, 5): three 1 GiB/1 tasks fit
    assert J(rec.value) == {"memory_mb": 8192 + 3072, "vcores": 8 + 3}
    assert J(rec.previous) == {"memory_mb": 8192, "vcores": 8}
    e = rec.explanation
    assert e.rule == "opera.opportunistic_assign"
    assert list(J(e.inputs)["lent_to"]) == [
        {"group": f"{B}:20", "app": B, "priority": 20, "memory_mb": 1024.0, "vcores": 1.0,
         "tasks": 3, "prediction": "short"}]
    assert J(e.scores)["oa_after"] == {"memory_mb": 2048.0, "vcores": 2.0}
    assert J(e.inputs)["usage"]["source"] == "nm_heartbeat"
    st = J(res.next_state)
    assert st["bases"] == {N1: [8192.0, 8.0]}
    assert st["lent"] == {N1: {"memory_mb": 3072, "vcores": 3}}
    json.dumps([r.to_dict() for r in res.recommendations])


def test_strict_reservation_lends_one_task_per_heartbeat() -> None:
    res = opera.advise(_snap(), NEW, P(**{**PAPER, "reservation": "strict"}), _short())
    assert J(_kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1].value) == {
        "memory_mb": 9216, "vcores": 9}
    res = opera.advise(_snap(), NEW, P(**{**PAPER, "reservation": "strict",
                                                         "node_updates_per_cycle": 2}), _short())
    assert J(_kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1].value)["vcores"] == 10


def test_neutral_and_aggressive_do_not_block_resources() -> None:
    res = opera.advise(_snap(pending=6), NEW, P(relief_policy="NEUTRAL", **PAPER),
                       _short())
    # OA = (6144, 6) without BR: five tasks fit strictly below it
    assert J(_kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1].value) == {
        "memory_mb": 8192 + 5120, "vcores": 13}


def test_the_sidecar_defaults_lend_under_80_percent_and_ramp() -> None:
    # no reservation: nothing long is held for n1; before any relief PRESERVE holds
    # no BR back (lend_up_to is the margin): OA = 0.8 C - TU = (6553.6 - 2048,
    # 6.4 - 2) = (4505.6, 4.4): four 1 GiB/1 tasks fit, but one cycle grows n1 by at
    # most 0.25 C = (2048, 2)
    res = opera.advise(_snap(pending=6), NEW, P(), _short())
    rec = _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192 + 2048, "vcores": 10}
    assert J(res.next_state)["lent"] == {N1: {"memory_mb": 4096, "vcores": 4}}
    assert J(res.next_state)["reservations"] == {}
    # next cycle the RM placed two of them and measured use grew by 1 GiB: the node
    # may grow again, never past max_overcommit x C
    snap = _snap(pending=4, extra=2, pmem=3072, cpu=3.0, total=(10240, 10))
    p = P(max_overcommit=1.3)
    rec = _kinds(opera.advise(snap, res.next_state, p, _short()).recommendations,
                 Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": int(8192 * 1.3), "vcores": 10}


def test_without_reservations_long_tasks_do_not_block_the_short_ones() -> None:
    # B's long reduces (priority 10) come first in the queue; under multi-chance they
    # fill n1's reservation queue and nothing is lent; without reservations the short
    # maps behind them still get OA
    n, cs = _full_node()
    apps = [app(A, allocated=(8192, 8), running=4),
            app(B, [rr(10, 1024, 1, 5), rr(20, 1024, 1, 3)])]
    snap = snapshot(nodes=[n], apps=apps, containers=cs)
    reads = _short()
    assert _kinds(opera.advise(snap, NEW, P(**PAPER), reads).recommendations,
                  Kind.UPDATE_NODE_RESOURCE) == {}
    rec = _kinds(opera.advise(snap, NEW, P(ramp_step=None), reads).recommendations,
                 Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192 + 3072, "vcores": 11}


def test_contention_on_borrowed_headroom_returns_it_and_signals_when_enabled() -> None:
    first = opera.advise(_snap(), NEW, P(), _short())
    # the RM raised n1 and placed B's three tasks; now memory is contended
    raised = (11264, 11)
    snap = _snap(pending=0, extra=3, pmem=7900, cpu=3.0, total=raised, taken_at=TS + 30_000)
    res = opera.advise(snap, first.next_state, P(), _short())
    rec = _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192, "vcores": 8}
    assert rec.explanation.rule == "opera.relieve_contention"
    assert J(rec.explanation.scores)["contention"] == "Memory"
    assert J(rec.explanation.inputs)["opportunistic_containers"] == 3
    assert not _kinds(res.recommendations, Kind.SIGNAL_CONTAINER)  # kill-like is opt-in
    st = J(res.next_state)
    assert st["blocks"][N1] == {"br": [2048.0, 2.0], "bt_ms": 120_000.0, "last_relief": TS + 30_000}
    res = opera.advise(snap, first.next_state, P(signal_containers=True),
                       _short())
    sig = _kinds(res.recommendations, Kind.SIGNAL_CONTAINER)
    assert list(sig) == ["c_b2"]  # the most recently launched opportunistic container
    assert J(sig["c_b2"].value) == "GRACEFUL_SHUTDOWN"
    assert sig["c_b2"].explanation.rule == "opera.relieve_contention.kill"


def test_aggressive_keeps_opportunistic_tasks_under_cpu_contention() -> None:
    first = opera.advise(_snap(), NEW, P(relief_policy="AGGRESSIVE"), _short())
    snap = _snap(pending=0, extra=3, pmem=4000, cpu=10.9, total=(11264, 11))
    res = opera.advise(snap, first.next_state, P(relief_policy="AGGRESSIVE",
                                                            signal_containers=True))
    assert res.recommendations == ()  # still running on borrowed headroom: keep the capacity
    assert J(res.next_state)["bases"] == {N1: [8192.0, 8.0]}


def test_headroom_goes_back_when_the_short_tasks_drained() -> None:
    first = opera.advise(_snap(), NEW, P(), _short())
    # within return_after_s (120 s) of the last loan the raise is held for the next wave
    held = opera.advise(_snap(pending=0, extra=0, total=(11264, 11), taken_at=TS + 60_000),
                        first.next_state, P())
    assert held.recommendations == ()
    assert J(held.next_state)["lent_at"] == {N1: TS}
    snap = _snap(pending=0, extra=0, total=(11264, 11), taken_at=TS + 121_000)
    res = opera.advise(snap, held.next_state, P())
    rec = _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192, "vcores": 8}
    assert rec.explanation.rule == "opera.return_headroom"
    assert J(res.next_state)["bases"] == {}


def test_preserve_block_is_released_after_a_quiet_block_time() -> None:
    st = opera.State.from_json({"blocks": {N1: {"br": [2048.0, 2.0], "bt_ms": 120_000.0,
                                                "last_relief": TS}}})
    res = opera.advise(_snap(pending=0, taken_at=TS + 60_000), st, P())
    assert J(res.next_state)["blocks"][N1]["br"] == [2048.0, 2.0]  # within BT
    res = opera.advise(_snap(pending=0, taken_at=TS + 120_001), st, P())
    assert J(res.next_state)["blocks"] == {}  # back to the initial BR/BT: not stored


def test_reservations_and_skip_counts_persist_across_cycles() -> None:
    p = P(eps_r=1, eps_s=2, **PAPER)
    st = opera.advise(_snap(), NEW, p).next_state
    assert J(st)["reservations"] == {N1: [[f"{B}:20", 1], [f"{B}:20", 1]]}
    st = opera.advise(_snap(), st, p).next_state
    assert J(st)["reservations"] == {N1: [[f"{B}:20", 2], [f"{B}:20", 2]]}
    st = opera.advise(_snap(), st, p).next_state
    # skip 3 > eps_s: the node waits for the first reserved task (Alg 4 line 13)
    assert J(st)["reservations"] == {N1: [[f"{B}:20", 3], [f"{B}:20", 2]]}
    st = opera.advise(_snap(pending=0), st, p).next_state
    assert J(st)["reservations"] == {}  # the group is no longer pending: reservations dropped


def test_default_lends_vcores_only_and_keeps_memory() -> None:
    # The same case as test_short_tasks_get_the_idle_reserved_resources, at the
    # defaults: the node's memory stays at C_i, its vcores are lent.
    rec = _kinds(opera.advise(_snap(), NEW, opera.Params(**PAPER), _short()).recommendations,
                 Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192, "vcores": 8 + 3}
    assert "lend 3 vcores" in rec.explanation.summary
    assert "memory is not lent" in rec.explanation.summary
    assert opera.Params().lend_memory is False
    # a memory-only scheduler: vcores do not count, so nothing is lent at all
    from dataclasses import replace

    from yarn_advisor.advisor.model.snapshot import Resources
    n, cs = _full_node()
    n = replace(n, used=Resources(8192, 12))
    snap = snapshot(nodes=[n], apps=[app(A), app(B, [rr(20, 1024, 4, 2)])], containers=cs)
    assert memory_only(snap, "auto")
    assert not _kinds(opera.advise(snap, NEW, opera.Params(), _short()).recommendations,
                      Kind.UPDATE_NODE_RESOURCE)


def test_memory_only_scheduler_ignores_vcores() -> None:
    n, cs = _full_node()
    from dataclasses import replace

    from yarn_advisor.advisor.model.snapshot import Resources

    n = replace(n, used=Resources(8192, 12))  # more vcores allocated than the node has
    snap = snapshot(nodes=[n], apps=[app(A), app(B, [rr(20, 1024, 4, 2)])], containers=cs)
    assert memory_only(snap, "auto")
    rec = _kinds(opera.advise(snap, NEW, P(), _short()).recommendations,
                 Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192 + 2048, "vcores": 8}
    assert not memory_only(snap, "dominant")


def test_unmeasured_usage_uses_allocation_less_prism_headroom() -> None:
    cs = [ctr(f"c_a{i}", A, N1, (2048, 2)) for i in range(4)]
    n = node(N1, used=BASE, containers=4)  # no heartbeat utilization, no JMX usage
    snap = snapshot(nodes=[n], apps=[app(A), app(B, [rr(20, 1024, 1, 2)])], containers=cs)
    assert opera.advise(snap, NEW, P(), _short()).recommendations == ()  # OA <= 0
    reads = _short(prism.POLICY.shared(prism.State(idle_headroom={N1: (6144.0, 5.0)})))
    rec = _kinds(opera.advise(snap, NEW, P(), reads).recommendations,
                 Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192 + 2048, "vcores": 10}
    assert J(rec.explanation.inputs)["usage"]["source"] == "allocation-prism_headroom"


@pytest.mark.parametrize(
    ("groups", "eligible", "label"),
    [
        (((B, 20, True, 0.95),), True, "short"),
        (((B, 20, True, 0.8),), True, "short"),
        (((B, 20, True, None),), True, "short"),
        (((B, 20, True, 0.2),), False, "short@0.20<min"),
        (((B, 20, False, 0.99),), False, "long"),
        (((B, 10, True, 0.99),), False, "long"),  # another request of the app
        (((A, 20, True, 0.99),), False, "long"),  # another app
        ((), False, "long"),
    ],
)
def test_prediction_of_a_request_group(
        groups: tuple[tuple[str, int, bool, float | None], ...], eligible: bool,
        label: str) -> None:
    assert prediction_of(_preds(*groups), B, 20, 0.5) == (eligible, label)
    assert prediction_of(None, B, 20, 0.5) == (False, "long")


def test_without_the_classifier_nothing_is_lent() -> None:
    assert _kinds(opera.advise(_snap(), NEW, P()).recommendations,
                  Kind.UPDATE_NODE_RESOURCE) == {}
    empty = Reads(Predictions(60.0, {}), Shared(idle_headroom={}))
    assert opera.advise(_snap(), NEW, P(), empty) == opera.advise(_snap(), NEW, P())


def test_garbage_state_reads_as_the_empty_state() -> None:
    bad: dict[str, Any] = {"bases": {N1: "x"}, "blocks": {N1: [1]}, "reservations": {N1: "y"},
                           "lent": 4, "stats": {"nodes": "x"}}
    assert opera.State.from_json(bad) == NEW
    assert opera.advise(_snap(), opera.State.from_json(bad), P(), _short()) == \
        opera.advise(_snap(), NEW, P(), _short())


def test_state_round_trips_through_json() -> None:
    first = opera.advise(_snap(), NEW, P(), _short())
    raised = (11264, 11)
    snap = _snap(pending=0, extra=3, pmem=7900, cpu=3.0, total=raised, taken_at=TS + 30_000)
    second = opera.advise(snap, first.next_state, P(), _short()).next_state
    for st in (first.next_state, second):
        assert opera.State.from_json(json.loads(json.dumps(st.to_json()))) == st


def test_params_validation() -> None:
    with pytest.raises(ValueError, match="rho"):
        P(rho=1.5)
    with pytest.raises(ValueError, match="alpha"):
        P(alpha=1.0)
    cfg = EngineConfig.from_policies({"opera": {"params": {"relief_policy": "NEUTRAL",
                                                           "eps_r": 2}}})
    assert cfg.section("opera").params.relief_policy == "NEUTRAL"


def test_engine_hands_opera_the_predictions() -> None:
    class Classifier:
        def predict(self, snap: Snapshot) -> Predictions:
            return _preds((B, 20, True, 0.95))

    result = decide(_snap(), AdvisorState(classifier=Classifier()), EngineConfig())
    assert not result.errors
    assert result.predictions == _preds((B, 20, True, 0.95))
    assert any(r.policy == "opera" and r.kind is Kind.UPDATE_NODE_RESOURCE
               for r in result.recommendations)
    without = decide(_snap(), AdvisorState(), EngineConfig())
    assert not any(r.kind is Kind.UPDATE_NODE_RESOURCE for r in without.recommendations)


def test_lend_to_any_lends_measured_headroom_without_a_prediction() -> None:
    # nothing is predicted short: the paper's OPERA lends nothing; lend_to: any lends
    # what measured use leaves under 0.8 C, as an overcommit by measured use
    assert opera.advise(_snap(), NEW, P()).recommendations == ()
    res = opera.advise(_snap(), NEW, P(lend_to="any", ramp_step=None))
    rec = _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1]
    assert J(rec.value) == {"memory_mb": 8192 + 3072, "vcores": 11}
    assert [t["prediction"] for t in J(rec.explanation.inputs)["lent_to"]] == ["long(any)"]


def _with_idle_node(pending: int) -> Snapshot:
    """n1 full and measured idle (as in ``_snap``), n2 (id after n1) empty; B asks
    ``pending`` short 1 GiB/1 tasks."""
    n1, cs = _full_node()
    n2 = with_util(node("n2:1", total=BASE), 0, 0.0)
    apps = [app(A, allocated=(8192, 8), running=4), app(B, [rr(20, 1024, 1, pending)])]
    return snapshot(nodes=[n1, n2], apps=apps, containers=cs)


def test_nothing_is_lent_while_unallocated_room_takes_the_short_tasks() -> None:
    # n2 has room for 7 of B's tasks (strict fit: 7 x 1 GiB < 8 GiB): the RM places
    # them itself; raising n1 would only invite work onto memory idle for now
    snap = _with_idle_node(pending=3)
    res = opera.advise(snap, NEW, P(), _short())
    assert _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE) == {}
    assert J(res.next_state)["stats"]["short_tasks_left_to_free_room"] == 3
    # the paper's per-heartbeat Alg 2 (guard off) lends on n1, the first node visited
    off = opera.advise(snap, NEW, P(lend_only_overflow=False), _short())
    assert N1 in _kinds(off.recommendations, Kind.UPDATE_NODE_RESOURCE)


def test_only_the_overflow_of_the_free_room_is_lent() -> None:
    # 10 pending: 7 fit n2's room, so at most 3 are lent on n1 (its OA fits 4)
    res = opera.advise(_with_idle_node(pending=10), NEW, P(ramp_step=None), _short())
    rec = _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE)
    assert list(rec) == [N1]
    assert J(rec[N1].value) == {"memory_mb": 8192 + 3 * 1024, "vcores": 8 + 3}
    assert J(res.next_state)["lent"] == {N1: {"memory_mb": 3072, "vcores": 3}}


def test_containers_that_just_started_count_their_whole_allocation() -> None:
    # A's four containers started 5 s ago: the 2 GiB measured is not their working size
    # yet, so OA = 0.8 C - (2048 + 8192) < 0 and nothing is lent; once they are older
    # than settle_s the measurement is trusted (the lending of the sidecar defaults)
    n, _ = _full_node()
    young = [ctr(f"c_a{i}", A, N1, (2048, 2), started=TS - 5_000 + i) for i in range(4)]
    snap = snapshot(nodes=[n], containers=young,
                    apps=[app(A, allocated=(8192, 8), running=4),
                          app(B, [rr(20, 1024, 1, 3)])])
    res = opera.advise(snap, NEW, P(), _short())
    assert _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE) == {}
    trusted = opera.advise(snap, NEW, P(settle_s=4), _short())
    assert J(_kinds(trusted.recommendations, Kind.UPDATE_NODE_RESOURCE)[N1].value) == {
        "memory_mb": 8192 + 2048, "vcores": 10}


def test_a_node_whose_containers_were_not_read_lends_nothing() -> None:
    """Partial data never makes OPERA bolder (issue 30): A's containers read failed,
    so the margin for A's young containers on n1 is unknown. It lent there before (the
    young containers were simply not seen); now n1, where the RM counts 4 containers
    and none was read, lends nothing. A node whose containers were all read lends as
    with full data."""
    n, _ = _full_node()
    young = [ctr(f"c_a{i}", A, N1, (2048, 2), started=TS - 5_000 + i) for i in range(4)]
    apps = [app(A, allocated=(8192, 8), running=4), app(B, [rr(20, 1024, 1, 3)])]
    unread = snapshot(nodes=[n], containers=[], apps=apps, sources={"containers": False})
    res = opera.advise(unread, NEW, P(), _short())
    assert _kinds(res.recommendations, Kind.UPDATE_NODE_RESOURCE) == {}
    assert J(res.next_state)["lent"] == {}
    read = snapshot(nodes=[n], containers=young, apps=apps, sources={"containers": False})
    full = snapshot(nodes=[n], containers=young, apps=apps, sources={"containers": True})
    same = [_kinds(opera.advise(s, NEW, P(settle_s=4), _short()).recommendations,
                   Kind.UPDATE_NODE_RESOURCE) for s in (read, full)]
    assert same[0] == same[1] and J(same[0][N1].value) == {"memory_mb": 8192 + 2048,
                                                           "vcores": 10}
