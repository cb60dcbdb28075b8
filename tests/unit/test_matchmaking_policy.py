"""The matchmaking policy on small Snapshots: node-locality-delay, markers, locality rates."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import pytest
from _snapshots import J, app, bean, job, node, queue, rr, snapshot

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.snapshot import MRJob, Snapshot
from yarn_advisor.advisor.policies import matchmaking as mm

KEY = "yarn.scheduler.capacity.node-locality-delay"
A1, A2 = "application_1_0001", "application_1_0002"


def _cluster(n: int, apps: tuple[object, ...] = (), **extra: Any) -> Snapshot:
    nodes = [node(f"h{i}:45454", rack=f"/r{i % 2}", used=(1024, 1)) for i in range(n)]
    return snapshot(nodes=nodes, apps=J(apps) or [app(A1, [rr(20, 1024, 1, 3)])], **extra)


def test_recommends_one_local_chance_per_node_per_round() -> None:
    res = mm.advise(_cluster(40), mm.State(), mm.Params())
    (rec,) = res.recommendations
    assert (rec.kind, rec.target, J(rec.value), J(rec.previous)) == (
        Kind.UPDATE_SCHEDULER_CONF,
        "scheduler",
        {KEY: 40},
        None,
    )
    e = rec.explanation
    assert e.rule == "matchmaking.node_locality_delay"
    assert e.inputs["running_nodes"] == 40 and e.inputs["racks"] == 2
    assert e.scores["computed_delay"] == 40 and e.thresholds["rounds"] == 1
    assert "one local chance per heartbeat round" in e.summary
    json.dumps(rec.to_dict())
    two = mm.advise(_cluster(40), mm.State(), mm.Params(rounds=2, max_delay=50)).recommendations
    assert J(two[0].value) == {KEY: 50}


def test_no_recommendation_when_the_rm_already_has_the_value() -> None:
    res = mm.advise(_cluster(40), mm.State(), mm.Params(current_node_locality_delay=40))
    assert res.recommendations == ()
    moved = mm.advise(_cluster(40), mm.State(), mm.Params(current_node_locality_delay=10))
    assert J(moved.recommendations[0].previous) == {KEY: 10}


def test_hysteresis_keeps_the_held_value() -> None:
    st = mm.advise(_cluster(100), mm.State(), mm.Params()).next_state
    assert isinstance(st, mm.State) and st.held_delay == 100
    near = mm.advise(_cluster(105), st, mm.Params())
    assert J(near.recommendations[0].value) == {KEY: 100}
    assert near.recommendations[0].explanation.scores["computed_delay"] == 105
    far = mm.advise(_cluster(120), st, mm.Params())
    assert J(far.recommendations[0].value) == {KEY: 120}


def test_markers_follow_cycles_and_reset_on_new_apps() -> None:
    # node h0 has node-local pending work, h1 has none
    a = app(A1, [rr(20, 1024, 1, 3), rr(20, 1024, 1, 1, name="h0")])
    snap = _cluster(2, apps=(a,))
    r1 = mm.advise(snap, mm.State(), mm.Params())
    st1 = r1.next_state
    assert isinstance(st1, mm.State)
    assert st1.markers == {"h0:45454": 1, "h1:45454": 0}
    assert r1.recommendations[0].explanation.inputs["markers_reset"] is True  # first cycle
    r2 = mm.advise(snap, st1, mm.Params())
    markers = r2.recommendations[0].explanation.inputs["markers"]
    assert isinstance(markers, dict)
    assert markers["eligible_nonlocal"] == 1 and markers["eligible_nonlocal_sample"] == (
        "h1:45454",
    )
    snap3 = _cluster(2, apps=(a, app(A2, [rr(20, 1024, 1, 1)])))
    r3 = mm.advise(snap3, r2.next_state, mm.Params())
    inputs = r3.recommendations[0].explanation.inputs
    assert inputs["new_apps"] == 1 and inputs["markers_reset"] is True
    assert isinstance(r3.next_state, mm.State)
    assert r3.next_state.markers == {"h0:45454": 1, "h1:45454": 0}  # h1 marked afresh


def test_cluster_locality_from_queue_metrics_and_last_cycle() -> None:
    beans = (bean("root", 30, 10, 60), bean("root.a", 30, 10, 60))
    r1 = mm.advise(_cluster(4, queue_metrics=beans), mm.State(), mm.Params())
    loc = r1.recommendations[0].explanation.inputs["cluster_locality"]
    assert isinstance(loc, dict)
    assert (loc["rate"], loc["rack_local_rate"], loc["source"]) == (0.3, 0.1, "rm-queue-metrics")
    assert "last_cycle" not in loc
    later = (bean("root", 40, 10, 70),)
    r2 = mm.advise(_cluster(4, queue_metrics=later), r1.next_state, mm.Params())
    loc2 = r2.recommendations[0].explanation.inputs["cluster_locality"]
    assert isinstance(loc2, dict)
    assert loc2["last_cycle"] == {"node_local": 10, "rack_local": 0, "off_switch": 10, "rate": 0.5}


def test_leaf_beans_are_summed_without_a_root_bean() -> None:
    beans = (bean("root.a", 1, 0, 1), bean("root.b", 3, 0, 3), bean("root.p", 100, 0, 0))
    snap = _cluster(
        2,
        queue_metrics=beans,
        queues=(queue("root.a"), queue("root.b"), queue("root.p", leaf=False)),
    )
    loc = (
        mm.advise(snap, mm.State(), mm.Params()).recommendations[0]
        .explanation.inputs["cluster_locality"]
    )
    assert isinstance(loc, dict) and (loc["node_local"], loc["rate"]) == (4, 0.5)
    none = mm.advise(_cluster(2), mm.State(), mm.Params()).recommendations[0]
    assert none.explanation.inputs["cluster_locality"] == {
        "source": "none (no QueueMetrics beans)",
        "rate": None,
    }
    assert "unknown" in none.explanation.summary


@dataclass(frozen=True, slots=True)
class CountedJob(MRJob):
    """An MRJob with the JobCounter fields the model may gain."""

    data_local_maps: int = 0
    rack_local_maps: int = 0
    other_local_maps: int = 0


def test_per_app_rates_from_counters_else_the_queue() -> None:
    base = job(A1, 10)
    counted = CountedJob(
        **{f.name: getattr(base, f.name) for f in dataclasses.fields(MRJob)},
        data_local_maps=2,
        rack_local_maps=1,
        other_local_maps=1,
    )
    snap = _cluster(
        2,
        apps=(app(A1, [rr(20, 1024, 1, 1)], queue="a"), app(A2, [rr(20, 1024, 1, 1)], queue="b")),
        jobs=(counted,),
        queue_metrics=(bean("root.a", 1, 0, 0), bean("root.b", 9, 0, 1)),
    )
    rows = (
        mm.advise(snap, mm.State(), mm.Params())
        .recommendations[0]
        .explanation.inputs["apps_lowest_locality"]
    )
    assert rows == (
        {"app": A1, "rate": 0.5, "source": "mr-counters"},
        {"app": A2, "rate": 0.9, "source": "queue"},
    )


def test_params_validation() -> None:
    with pytest.raises(ValueError) as exc:
        mm.Params(rounds=0, hysteresis=1.5, min_delay=5, max_delay=2)
    msg = str(exc.value)
    assert "rounds" in msg and "hysteresis" in msg and "max_delay" in msg


def test_live_scheduler_conf_is_the_previous_value_and_suppresses_no_ops() -> None:
    live = {KEY: "40"}
    same = mm.advise(_cluster(40, scheduler_conf=live), mm.State(), mm.Params())
    assert same.recommendations == ()
    differs = mm.advise(_cluster(12, scheduler_conf=live), mm.State(), mm.Params())
    (rec,) = differs.recommendations
    assert J(rec.value) == {KEY: 12} and J(rec.previous) == {KEY: 40}
    assert "was 40" in rec.explanation.summary


def test_an_unbounded_live_delay_is_unknown_not_a_crash() -> None:
    """A 4,301-digit node-locality-delay from the RM made ``int()`` raise; a number the
    RM could not hold (a Java int) is unknown: the policy recommends as with no value."""
    huge = mm.advise(_cluster(12, scheduler_conf={KEY: "9" * 4301}), mm.State(), mm.Params())
    (rec,) = huge.recommendations
    assert J(rec.value) == {KEY: 12} and rec.previous is None
