"""The anacrac policy on scripted heartbeats: steps 1-30 of the algorithm, one
heartbeat (cycle) after another, with the levers they map to."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from _snapshots import TS, J, app, ctr, node, queue, snapshot, with_util

from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, decide
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Node, Snapshot
from yarn_advisor.advisor.policies import anacrac
from yarn_advisor.advisor.policies.anacrac import State
from yarn_advisor.advisor.policies.anacrac.params import Rule

S, W = "application_1_0001", "application_1_0002"
H1, H2, H3 = "h1:1", "h2:1", "h3:1"
RULE = Rule(
    name="ingest", app_name="^sqoop", hosts=("h1", "h2"), tasks_maximum=2, job_type="CPU",
    cpu_threshold=80, container_job_type="MEMORY", container_memory_threshold=80,
    container_memory_increment_mb=512, label="ingest", target_queue="root.ingest",
)
PARAMS = anacrac.Params(rules=(RULE,), wait_threshold_s=60)


def _node(nid: str, cpu_cores: float, labels: tuple[str, ...] = ()) -> Node:
    return replace(with_util(node(nid, used=(4096, 4)), 2048, 1.0, cpu_cores), labels=labels)


def heartbeat(t: int, cpu: tuple[float, float, float], labels: tuple[tuple[str, ...], ...] = (
        (), (), ()), w_state: str = "ACCEPTED", w_priority: int = 0, with_s: bool = True
              ) -> Snapshot:
    nodes = [_node(H1, cpu[0], labels[0]), _node(H2, cpu[1], labels[1]),
             _node(H3, cpu[2], labels[2])]
    cs = [ctr("c_s_am", S, H3, (1024, 1), 0, TS - 50_000, (300, 5, 10), is_am=True)]
    # three tasks on h1 (P = 2), one on h3 (outside M), one on h2; each uses 900 of 1024 MiB
    for i, nid in enumerate([H1, H1, H1, H3, H2]):
        cs.append(ctr(f"c_s{i}", S, nid, (1024, 1), 20, TS - 40_000 + i * 1000, (900, 50, 10)))
    apps = []
    if with_s:
        apps.append(app(S, [], name="sqoop-orders", queue="root.default",
                        allocated=(6144, 6), running=6))
    if w_state == "ACCEPTED":
        apps.append(app(W, [], name="wordcount", queue="root.default", state="ACCEPTED",
                        running=0, allocated=(0, 0), started=TS - 10_000, priority=w_priority))
    else:
        apps.append(app(W, [], name="wordcount", queue="root.default", running=1,
                        allocated=(1024, 1), started=TS - 10_000, priority=w_priority))
        cs.append(ctr("c_w_am", W, H3, (1024, 1), 0, t - 1000, is_am=True))
    return snapshot(nodes=nodes, apps=apps, containers=cs if with_s else cs[-1:],
                    queues=[queue("root.default"), queue("root.ingest")], taken_at=t,
                    rm_conf={"yarn.cluster.max-application-priority": "5"})


def by(recs: tuple[Recommendation, ...], kind: Kind) -> dict[str, Recommendation]:
    return {r.target: r for r in recs if r.kind is kind}


def test_steps_1_to_30_on_scripted_heartbeats() -> None:
    # heartbeat 1: h2 is past the CPU threshold (7 of 8 cores = 87.5% >= 80)
    hb1 = anacrac.advise(heartbeat(TS, (2.0, 7.0, 1.0)), State(), PARAMS)
    labels = by(hb1.recommendations, Kind.REPLACE_NODE_LABELS)
    assert {k: J(v.value) for k, v in labels.items()} == {H1: ["ingest"]}  # steps 8, 11
    assert J(labels[H1].previous) == []
    assert J(labels[H1].explanation.inputs)["rules"]["ingest"]["past_thresholds"] == ()
    move = by(hb1.recommendations, Kind.MOVE_APP_QUEUE)[S]
    assert (J(move.value), J(move.previous)) == ("root.ingest", "root.default")
    viol = by(hb1.recommendations, Kind.ADVISE_APP_CONFIG)[S]
    found = {(v["type"], v["node"], v["step"]) for v in J(viol.value)["violations"]}
    assert found == {("hosts", H3, 8), ("tasks_maximum", H1, 10), ("cpu_threshold", H2, 11)}
    size = by(hb1.recommendations, Kind.ADVISE_CONTAINER_SIZE)[S]  # steps 13-16, Eq 9-12
    assert (J(size.value), J(size.previous)) == ({"memory_mb": 1536, "vcores": 1},
                                           {"memory_mb": 1024, "vcores": 1})
    assert J(size.explanation.scores)["u_at_memory_percent"] == round(100 * 900 / 1024, 3)
    assert not by(hb1.recommendations, Kind.SET_APP_PRIORITY)  # W waited 10 s < 60 s
    assert not by(hb1.recommendations, Kind.SIGNAL_CONTAINER)  # opt-in
    assert J(hb1.next_state)["waits"][W] == {"since": TS - 10_000, "containers": 0,
                                             "memory_mb": 0, "boosted_from": None}
    json.dumps(hb1.next_state.to_json())

    # heartbeat 2 (+40 s): h1 carries the label now, h2 cooled down and joins
    hb2 = anacrac.advise(heartbeat(TS + 40_000, (2.0, 3.0, 1.0), (("ingest",), (), ())),
                         hb1.next_state, PARAMS)
    labels = by(hb2.recommendations, Kind.REPLACE_NODE_LABELS)
    assert {k: J(v.value) for k, v in labels.items()} == {H2: ["ingest"]}
    assert not by(hb2.recommendations, Kind.SET_APP_PRIORITY)  # 50 s

    # heartbeat 3 (+60 s): W waited 70 s -> HIGH (the RM's max priority, 5); h1 got hot
    hb3 = anacrac.advise(heartbeat(TS + 60_000, (7.5, 3.0, 1.0), (("ingest",), ("ingest",), ())),
                         hb2.next_state, PARAMS)
    prio = by(hb3.recommendations, Kind.SET_APP_PRIORITY)[W]
    assert (J(prio.value), J(prio.previous)) == (5, 0)
    assert prio.explanation.rule == "anacrac.waiting_time.boost"
    assert J(prio.explanation.scores)["waited_s"] == 70.0
    labels = by(hb3.recommendations, Kind.REPLACE_NODE_LABELS)
    assert {k: J(v.value) for k, v in labels.items()} == {H1: []}
    assert labels[H1].explanation.rule == "anacrac.node_awareness.release"

    # heartbeat 4 (+90 s): W got its AM container -> back to its own priority (step 26)
    hb4 = anacrac.advise(heartbeat(TS + 90_000, (2.0, 3.0, 1.0), (("ingest",), ("ingest",), ()),
                                   w_state="RUNNING", w_priority=5), hb3.next_state, PARAMS)
    prio = by(hb4.recommendations, Kind.SET_APP_PRIORITY)[W]
    assert (J(prio.value), J(prio.previous)) == (0, 5)
    assert prio.explanation.rule == "anacrac.waiting_time.restore"
    assert J(hb4.next_state)["waits"][W]["boosted_from"] is None


def test_step_30_signals_the_newest_excess_container_when_enabled() -> None:
    p = PARAMS.model_copy(update={"signal_excess_containers": True})
    recs = anacrac.advise(heartbeat(TS, (2.0, 3.0, 1.0)), State(), p).recommendations
    sig = by(recs, Kind.SIGNAL_CONTAINER)
    assert list(sig) == ["c_s2"]  # the third container on h1, the latest started
    assert sig["c_s2"].explanation.rule == "anacrac.container_awareness.signal"


def test_step_6_raw_counters_give_cpu_and_io_usage() -> None:
    c0 = {H2: {"user": 1000, "nice": 0, "system": 200, "stamp": 10_000, "nprocs": 8,
               "io_ms": 5_000, "io_stamp_ms": 1_000_000}}
    c1 = {H2: {"user": 1500, "nice": 0, "system": 300, "stamp": 10_100, "nprocs": 8,
               "io_ms": 5_950, "io_stamp_ms": 1_001_000}}
    rule = RULE.model_copy(update={"job_type": "ALL", "io_threshold": 90.0})
    p = anacrac.Params(rules=(rule,))
    hb1 = anacrac.advise(heartbeat(TS, (2.0, 7.0, 1.0)), State.from_json({"node_counters": c0}),
                         p)
    assert J(hb1.next_state)["counters"][H2]["user"] == 1000.0
    # h2's heartbeat says 87.5% CPU, but the counters say 600*100/(100*8) = 75% and IO 95%
    st = dict(J(hb1.next_state)) | {"node_counters": c1}
    hb2 = anacrac.advise(heartbeat(TS + 1000, (2.0, 7.0, 1.0)), State.from_json(st), p)
    viol = J(by(hb2.recommendations, Kind.ADVISE_APP_CONFIG)[S].value)["violations"]
    h2 = [v for v in viol if v["node"] == H2]
    assert [(v["type"], v["usage_percent"]) for v in h2] == [("io_threshold", 95.0)]


def test_nodes_with_labels_we_do_not_manage_are_left_alone() -> None:
    snap = heartbeat(TS, (2.0, 3.0, 1.0), (("gpu",), (), ()))
    labels = by(anacrac.advise(snap, State(), PARAMS).recommendations, Kind.REPLACE_NODE_LABELS)
    assert set(labels) == {H2}


def test_no_rules_only_waiting_time() -> None:
    res = anacrac.advise(heartbeat(TS + 100_000, (2.0, 7.0, 1.0)), State(), anacrac.Params())
    assert [(r.kind, r.target, J(r.value)) for r in res.recommendations] == [
        (Kind.SET_APP_PRIORITY, W, 5)]  # first seen ACCEPTED since its start, 110 s ago


def test_no_priority_lever_in_fair_ordered_queues() -> None:
    snap = replace(heartbeat(TS + 100_000, (2.0, 3.0, 1.0)),
                   queues=(queue("root.default", ordering="fair"),))
    assert anacrac.advise(snap, State(), anacrac.Params()).recommendations == ()


def test_engine_runs_anacrac_from_yaml_rules() -> None:
    cfg = EngineConfig.from_policies({"anacrac": {"params": {"rules": [
        {"name": "ingest", "app_name": "^sqoop", "hosts": ["h1", "h2"], "tasks_maximum": 2,
         "label": "ingest", "target_queue": "root.ingest"}]}}})
    result = decide(heartbeat(TS, (2.0, 7.0, 1.0)), AdvisorState(), cfg)
    assert not result.errors
    got = {(r.kind, r.target) for r in result.recommendations if r.policy == "anacrac"}
    assert (Kind.MOVE_APP_QUEUE, S) in got and (Kind.REPLACE_NODE_LABELS, H2) in got
    assert decide(heartbeat(TS, (2.0, 7.0, 1.0)), AdvisorState(), EngineConfig()).errors == ()


def test_garbage_state_reads_as_the_empty_state() -> None:
    bad: dict[str, Any] = {"waits": {W: "x", S: {"containers": "1"}}, "counters": 5,
                           "node_counters": {H1: {"user": "a"}}, "updated_at": "yesterday"}
    assert State.from_json(bad) == State()
    kept = State.from_json({"waits": {W: "x", S: {"since": 1, "containers": 2, "memory_mb": 3}},
                            "node_counters": {H1: {"user": 7, "nice": "x"}}})
    assert set(kept.waits) == {S} and kept.node_counters == {H1: {"user": 7.0}}
    snap = heartbeat(TS, (2.0, 3.0, 1.0))
    assert anacrac.advise(snap, State.from_json(bad), PARAMS) == \
        anacrac.advise(snap, State(), PARAMS)


def test_state_round_trips_through_json() -> None:
    hb1 = anacrac.advise(heartbeat(TS, (2.0, 7.0, 1.0)), State(), PARAMS)
    again = State.from_json(json.loads(json.dumps(hb1.next_state.to_json())))
    assert again == hb1.next_state


def test_the_partition_cap_stands_in_for_the_per_node_limit_before_any_app() -> None:
    capped = anacrac.Params(rules=(RULE.model_copy(update={"task_memory_mb": 1024,
                                                            "am_memory_mb": 1024}),))
    hb = heartbeat(TS, (1.0, 1.0, 1.0), with_s=False)  # no app of the rule yet
    (cap,) = by(anacrac.advise(hb, State(), capped).recommendations,
                Kind.UPDATE_SCHEDULER_CONF).values()
    # 2 tasks x 1024 MiB on each of h1 and h2 + one 1024 MiB AM, of their 2 x 8192 MiB
    key = "accessible-node-labels.ingest.maximum-capacity"
    assert (cap.target, J(cap.value), J(cap.previous)) == ("root.ingest", {key: 31.25},
                                                          {key: None})
    assert cap.explanation.rule == "anacrac.container_awareness.partition_cap"
    assert J(cap.explanation.inputs)["partition_mb"] == 16384
    # the RM holds it already: nothing to write; and no cap without task_memory_mb
    held = replace(hb, scheduler_conf={f"yarn.scheduler.capacity.root.ingest.{key}": "31.25"})
    assert not by(anacrac.advise(held, State(), capped).recommendations,
                  Kind.UPDATE_SCHEDULER_CONF)
    assert not by(anacrac.advise(hb, State(), PARAMS).recommendations,
                  Kind.UPDATE_SCHEDULER_CONF)


def test_the_partition_cap_needs_the_rule_it_sizes() -> None:
    with pytest.raises(ValueError, match="task_memory_mb"):
        Rule(name="x", app_name="^x", task_memory_mb=1024, label="x", target_queue="x")
