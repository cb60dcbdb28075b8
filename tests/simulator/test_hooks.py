"""The advisor's hooks into the simulated RM: ``snapshot`` and ``SimLevers``.

Each lever is applied through the advisor's own writer and ``journaled_write``
(the journal records intent and result as against the real RM) and its effect
on the simulation is checked against a hand-computed timeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _simbuild import job, maps, workload

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.writer import RMLevers, Writer, journaled_write
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    ConfUpdate,
    ContainerSignal,
    NodeLabels,
    Priority,
    value_from_json,
)
from yarn_advisor.advisor.policies import POLICIES, Reads
from yarn_advisor.connectors.errors import HTTPStatusError, StandbyError
from yarn_advisor.simulator.levers import SimLevers
from yarn_advisor.simulator.simulation import CLUSTER_TS, Simulation
from yarn_advisor.simulator.snapshot import snapshot
from yarn_advisor.simulator.spec import MAP, QueueSpec, Res, SchedulerSpec
from yarn_advisor.simulator.spec import Phase as TaskPhase

NLD = "yarn.scheduler.capacity.node-locality-delay"


def _write(levers: SimLevers, tmp_path: Path, kind: str, target: str,
           value: Any) -> tuple[str, dict[str, Any]]:
    """One write of ``value`` (its JSON form) through the advisor's writer and
    journaled_write: (outcome, result entry)."""
    journal = Journal(tmp_path / "journal.jsonl")
    base = Entry(id=f"{kind}-{target}", phase=Phase.INTENT, kind=Kind(kind), target=target,
                 policy="test", value=value)
    payload = value_from_json(Kind(kind), value)
    result = journaled_write(Writer(levers), journal, base, payload).to_json()
    return str(result["outcome"]), result


def _two_apps(sched: SchedulerSpec | None = None, **kw: Any) -> Simulation:
    # One node <4096 MB, 4 vcores>, minimum allocation 1024: AM + 3 maps at a time.
    sched = sched or SchedulerSpec(max_application_priority=10, maximum_am_resource_percent=1.0)
    jobs = [job("a", maps([10] * 4)), job("b", maps([10] * 4), submit_s=0.5)]
    return Simulation(workload(jobs, scheduler=sched, **kw), scheduler="capacity")


def test_levers_satisfy_the_writers_levers_protocol() -> None:
    levers: RMLevers = SimLevers(_two_apps())
    assert hasattr(levers, "send")


def test_snapshot_reads_the_simulated_rm(tmp_path: Path) -> None:
    # Node <8192 MB, 8 vcores>: a's AM at 0, its 4 maps (10 s) one per heartbeat at
    # 1000..4000; b (submitted 0.5 s) gets its AM at 5000 and asks for 4 maps.
    sched = SchedulerSpec(max_application_priority=10, maximum_am_resource_percent=1.0)
    jobs = [job("a", maps([10] * 4)), job("b", maps([10] * 4), submit_s=0.5)]
    sim = Simulation(workload(jobs, mem=8192, vc=8, scheduler=sched), scheduler="capacity")
    sim.run(until_ms=5500)
    snap = snapshot(sim)
    assert snap.taken_at == CLUSTER_TS + 5500
    assert snap.cluster.ha_state == "ACTIVE"
    assert snap.scheduler_type == "capacityScheduler"
    (node,) = snap.nodes
    # a: AM + 4 maps, b: AM (+ one map at 5000? no: one off-switch per beat, the AM)
    assert node.used.memory_mb == 6 * 1024 and node.available.memory_mb == 2048
    a, b = snap.apps
    assert (a.state, b.state) == ("RUNNING", "RUNNING")
    star = [r for r in b.resource_requests if r.resource_name == "*"]
    assert [(r.priority, r.num_containers) for r in star] == [(20, 4)]
    assert a.resource_requests == ()
    # a's map 0 started at 1000: 4.5 s of 10 at 5500, memory 1024, CPU one core
    usage = {c.id: c.usage for c in snap.containers}
    m0 = next(c for c in snap.containers if c.app_id == a.id and c.priority == 20)
    u = usage[m0.id]
    assert u is not None and u.pmem_avg_mb == 1024 and u.cpu_avg_percent == 100.0
    tasks = {t.id: t for t in snap.tasks if t.app_id == a.id}
    t0 = tasks[f"task_{CLUSTER_TS}_0001_m_000000"]
    assert (t0.state, t0.progress, t0.elapsed_time) == ("RUNNING", 45.0, 4500)
    assert snap.finished_tasks == ()
    assert snap.scheduler_conf[NLD] == "40"
    assert snap.max_app_priority == 10
    root = next(q for q in snap.queue_metrics if q.queue_path == "root")
    assert root.aggregate_containers_allocated == 6 and root.aggregate_off_switch == 6
    sim.run(until_ms=11500)
    later = snapshot(sim)
    # a's map 0 finished at 11000: reported once, by the next snapshot only
    assert [t.id for t in later.finished_tasks] == [t0.id]
    assert later.finished_tasks[0].state == "SUCCEEDED"
    assert later.finished_tasks[0].elapsed_time == 10000
    assert snapshot(sim).finished_tasks == ()


def test_every_policy_advises_on_a_simulated_snapshot() -> None:
    sim = _two_apps()
    sim.run(until_ms=3500)
    snap = snapshot(sim)
    for name, policy in POLICIES.items():
        result = policy.run(snap, policy.initial_state(), policy.params(), Reads())
        assert isinstance(result.recommendations, tuple), name


def test_set_app_priority_reorders_the_leaf_queue(tmp_path: Path) -> None:
    # a (AM 0, maps 1000, 2000, 3000) fills the node; b's AM waits. At 3500 b is
    # raised to priority 5: when a's map 0 ends (11000) the room goes to b's AM,
    # not to a's fourth map; without the change a's map 3 gets it.
    sim = _two_apps()
    sim.run(until_ms=3500)
    writer = SimLevers(sim)
    b = sim.app_of_job["b"].id
    outcome, rec = _write(writer, tmp_path, "set_app_priority", b, 5)
    assert (outcome, rec["previous"], rec["observed"]) == ("applied", 0, 5)
    assert Writer(writer).apply(Kind.SET_APP_PRIORITY, b, Priority(5)).status == "noop"
    sim.run(until_ms=11500)
    am_b = sim.app_of_job["b"].am_task.container
    assert am_b is not None and am_b.allocated_ms == 11000
    plain = _two_apps()
    plain.run(until_ms=11500)
    assert plain.app_of_job["a"].maps[3].container is not None
    assert plain.app_of_job["a"].maps[3].container.allocated_ms == 11000


def test_priority_above_the_maximum_is_capped(tmp_path: Path) -> None:
    sim = _two_apps()
    sim.run(until_ms=1500)
    outcome, rec = _write(SimLevers(sim), tmp_path, "set_app_priority",
                          sim.app_of_job["a"].id, 50)
    # the RM keeps its maximum, not what was sent
    assert (outcome, rec["observed"]) == ("not_held", 10)


def test_move_app_queue_moves_the_app_and_its_usage(tmp_path: Path) -> None:
    sched = SchedulerSpec(queues=(QueueSpec("q1", 50), QueueSpec("q2", 50)),
                          maximum_am_resource_percent=1.0)
    jobs = [job("a", maps([10] * 2), queue="q1")]
    sim = Simulation(workload(jobs, scheduler=sched), scheduler="capacity")
    sim.run(until_ms=2500)
    writer = SimLevers(sim)
    app = sim.app_of_job["a"].id
    outcome, rec = _write(writer, tmp_path, "move_app_queue", app, "q2")
    assert (outcome, rec["previous"], rec["observed"]) == ("applied", "root.q1", "root.q2")
    queues = {q.path: q for q in snapshot(sim).queues}
    assert queues["root.q1"].used.memory_mb == 0
    assert queues["root.q2"].used.memory_mb == 3 * 1024  # AM + 2 maps
    refused, rec2 = _write(writer, tmp_path, "move_app_queue", app, "nope")
    assert refused == "refused" and rec2["status"] == 400, rec2


def test_node_locality_delay_lever_changes_where_the_map_runs(tmp_path: Path) -> None:
    # As test_mechanics' locality case: block on node0004 (never offered), racks of
    # two. Default delay (40, additional -1): off-switch on node0002 at 250. With
    # the delay set to 2 and the additional delay to 3 before the map is asked
    # (t=0), it waits and goes rack-local on node0003 at 1500.
    from test_mechanics import _locality_workload

    sim = _locality_workload("node0004", 40, -1)
    writer = SimLevers(sim)
    out, rec = _write(writer, tmp_path, "update_scheduler_conf", "scheduler",
                      {NLD: 2, "yarn.scheduler.capacity.rack-locality-additional-delay": 3})
    assert out == "applied" and rec["previous"] == {
        NLD: "40", "yarn.scheduler.capacity.rack-locality-additional-delay": "-1"}
    sim.run()
    c = sim.app_of_job["a"].maps[0].container
    assert c is not None and (c.node.host, c.locality, c.allocated_ms) == (
        "node0003", "RACK_LOCAL", 1500)


def test_invalid_queue_capacities_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    sched = SchedulerSpec(queues=(QueueSpec("q1", 50), QueueSpec("q2", 50)))
    sim = Simulation(workload([job("a", maps([1]), queue="q1")], scheduler=sched),
                     scheduler="capacity")
    writer = SimLevers(sim)
    out, rec = _write(writer, tmp_path, "update_scheduler_conf", "q1", {"capacity": 60})
    assert out == "refused" and "Illegal capacity sum of 110" in rec["error"]
    assert writer.read(Kind.UPDATE_SCHEDULER_CONF, "q1",
                       ConfUpdate.of({"capacity": 0})) == ConfUpdate.of({"capacity": "50"})
    ok, _ = _write(writer, tmp_path, "update_scheduler_conf", "scheduler", {
        "yarn.scheduler.capacity.root.q1.capacity": 70,
        "yarn.scheduler.capacity.root.q2.capacity": 30})
    assert ok == "applied"
    assert {q.path: q.capacity for q in snapshot(sim).queues if q.is_leaf} == {
        "root.q1": 70.0, "root.q2": 30.0}


def test_labels_bind_an_app_to_its_partition(tmp_path: Path) -> None:
    # Two nodes; node0002 gets the exclusive label "ext", queue q2 may reach it with
    # 100 % of it and uses it by default; an app then submitted to q2 runs only there.
    sched = SchedulerSpec(queues=(QueueSpec("q1", 50), QueueSpec("q2", 50)),
                          maximum_am_resource_percent=1.0)
    jobs = [job("late", maps([5] * 3), queue="q2", submit_s=2)]
    sim = Simulation(workload(jobs, nodes=2, scheduler=sched), scheduler="capacity")
    sim.run(until_ms=1000)
    writer = SimLevers(sim)
    out, rec = _write(writer, tmp_path, "replace_node_labels", "node0002:45454", ["ext"])
    assert (out, rec["previous"], rec["observed"]) == ("applied", [], ["ext"])
    out, _ = _write(writer, tmp_path, "update_scheduler_conf", "q2", {
        "accessible-node-labels": "ext", "accessible-node-labels.ext.capacity": 100,
        "default-node-label-expression": "ext"})
    assert out == "applied"
    with pytest.raises(ValueError, match="at most one"):
        Writer(writer).apply(Kind.REPLACE_NODE_LABELS, "node0001:45454", NodeLabels(("x", "y")))
    sim.run()
    app = sim.app_of_job["late"]
    assert app.state == "FINISHED"
    hosts = {t.container.node.host for t in app.maps if t.container is not None}
    assert hosts == {"node0002"}


def test_raising_a_node_over_its_hardware_slows_its_tasks(tmp_path: Path) -> None:
    # Node <4096 MB, 4 vcores> on hardware of 8192 MB and 4 cores; maps use 1 core
    # each. FIFO at 1000 gives 3 maps (AM + 3 = 4096 MB). The node is raised to
    # 6144 MB at 1500: at 2000 two more maps start (5 cores wanted of 4: rate 0.8 for
    # all). The first three have 1 s done; they need 9 s at 0.8 = 11.25 s -> end at
    # 13250; the last two have done 9 s by then and run alone: end at 14250.
    # (On hardware of only 4096 MB the two new maps would be killed for memory.)
    jobs = [job("a", maps([10] * 5))]
    sim = Simulation(workload(jobs, real_mem=8192), scheduler="fifo")
    sim.run(until_ms=1500)
    out, rec = _write(SimLevers(sim), tmp_path, "update_node_resource", "node0001:45454",
                      {"memory_mb": 6144, "vcores": 4})
    assert (out, rec["previous"], rec["observed"]) == (
        "applied", {"memory_mb": 4096, "vcores": 4}, {"memory_mb": 6144, "vcores": 4})
    sim.run()
    app = sim.app_of_job["a"]
    assert sorted(t.finish_ms for t in app.maps) == [13250] * 3 + [14250] * 2
    assert sim.nodes[0].cpu_factor == 1.0
    assert sim.report().kills == 0


def test_lowering_a_node_with_an_overcommit_timeout_kills_the_newest(tmp_path: Path) -> None:
    # AM + 3 maps hold 4096 MB at 3000 (CapacityScheduler: maps at 1000, 2000, 3000).
    # Lowered to 2048 MB with overcommitTimeout 500 ms at 3500: at 4000 the RM kills
    # the newest containers (map 2, then map 1) until 2048 MB fits.
    sim = Simulation(workload([job("a", maps([10] * 3))]), scheduler="capacity")
    sim.run(until_ms=3500)
    out, _ = _write(SimLevers(sim), tmp_path, "update_node_resource", "node0001:45454",
                    {"memory_mb": 2048, "vcores": 4, "overcommit_timeout_ms": 500})
    assert out == "applied"
    sim.run(until_ms=4000)
    r = sim.report()
    assert r.kills_by_reason == {"OVERCOMMIT": 2}
    assert r.wasted_container_s == (4000 - 2000 + 4000 - 3000) / 1000
    assert sim.nodes[0].alloc_mem == 2048


def test_the_rm_kills_at_the_first_heartbeat_past_the_deadline(tmp_path: Path) -> None:
    # As above, but overcommitTimeout 700 ms: the deadline is 4200, between two of the
    # node's heartbeats (every 1000 ms from 0). The RM checks it in nodeUpdate, so the
    # kills come at the beat at 5000, not at 4200.
    sim = Simulation(workload([job("a", maps([10] * 3))]), scheduler="capacity")
    sim.run(until_ms=3500)
    out, _ = _write(SimLevers(sim), tmp_path, "update_node_resource", "node0001:45454",
                    {"memory_mb": 2048, "vcores": 4, "overcommit_timeout_ms": 700})
    assert out == "applied"
    sim.run(until_ms=4999)
    assert sim.report().kills == 0
    sim.run(until_ms=5000)
    r = sim.report()
    assert r.kills_by_reason == {"OVERCOMMIT": 2}
    assert r.wasted_container_s == (5000 - 2000 + 5000 - 3000) / 1000


def test_a_write_without_a_timeout_keeps_the_nodes_earlier_deadline(tmp_path: Path) -> None:
    # SchedulerNode.setOvercommitTimeOut ignores a negative timeout: once a write gave
    # the node a deadline, a later lowering with -1 is killed on at the next heartbeat
    # past it. 3500: 3072 MB with 500 ms -> map 2 killed at 4000; 4500: 2048 MB with
    # -1 -> the deadline (4000) has passed, so at the beat at 5000 map 1 goes too.
    sim = Simulation(workload([job("a", maps([10] * 3))]), scheduler="capacity")
    sim.run(until_ms=3500)
    levers = SimLevers(sim)
    _write(levers, tmp_path, "update_node_resource", "node0001:45454",
           {"memory_mb": 3072, "vcores": 4, "overcommit_timeout_ms": 500})
    sim.run(until_ms=4500)
    assert sim.report().kills == 1
    out, _ = _write(levers, tmp_path / "2", "update_node_resource", "node0001:45454",
                    {"memory_mb": 2048, "vcores": 4, "overcommit_timeout_ms": -1})
    assert out == "applied"
    sim.run(until_ms=5000)
    assert sim.report().kills_by_reason == {"OVERCOMMIT": 2}
    assert sim.nodes[0].alloc_mem == 2048


def test_at_the_defaults_a_lowered_node_is_killed_on_after_the_timeout(tmp_path: Path) -> None:
    # The advisor's default actuator.overcommit_timeout_ms reaches the RM with every
    # node-resource write: a node lowered under its allocation at 3500 keeps its
    # containers for the timeout, then the RM kills the newest until it fits.
    from yarn_advisor.advisor.engine.settings import load_config

    timeout = load_config().actuator.overcommit_timeout_ms
    assert timeout > 0
    sim = Simulation(workload([job("a", maps([300] * 3))]), scheduler="capacity")
    sim.run(until_ms=3500)
    _write(SimLevers(sim, timeout), tmp_path, "update_node_resource", "node0001:45454",
           {"memory_mb": 2048, "vcores": 4})
    beat = -(-(3500 + timeout) // 1000) * 1000  # node0001 beats every 1000 ms from 0
    sim.run(until_ms=beat - 1)
    assert sim.report().kills == 0
    sim.run(until_ms=beat)
    assert sim.report().kills_by_reason == {"OVERCOMMIT": 2}


def test_a_node_never_given_a_timeout_is_not_killed_on(tmp_path: Path) -> None:
    sim = Simulation(workload([job("a", maps([10] * 3))]), scheduler="capacity")
    sim.run(until_ms=3500)
    _write(SimLevers(sim), tmp_path, "update_node_resource", "node0001:45454",
           {"memory_mb": 2048, "vcores": 4, "overcommit_timeout_ms": -1})
    sim.run()
    assert sim.report().kills == 0


def test_signal_container_kills_it_and_its_task_runs_again(tmp_path: Path) -> None:
    # FIFO: AM at 0, maps 1000..11000. Map 0's container is shut down at 4000: its
    # 3 s of work are lost; the rerun gets a container at the heartbeat at 4000 and
    # ends at 14000.
    sim = Simulation(workload([job("a", maps([10, 10]))]), scheduler="fifo")
    sim.run(until_ms=4000)
    m0 = sim.app_of_job["a"].maps[0]
    assert m0.container is not None
    cid = m0.container.id
    writer = SimLevers(sim)
    out, rec = _write(writer, tmp_path, "signal_container", cid, "GRACEFUL_SHUTDOWN")
    assert (out, rec["previous"]) == ("applied", {"state": "RUNNING", "node": "node0001:45454"})
    assert writer.read(Kind.SIGNAL_CONTAINER, cid, ContainerSignal("GRACEFUL_SHUTDOWN")) is None
    m1 = sim.app_of_job["a"].maps[1].container
    assert m1 is not None
    with pytest.raises(ValueError, match="unknown container signal"):
        Writer(writer).apply(Kind.SIGNAL_CONTAINER, m1.id, ContainerSignal("SIGKILL"))
    r = sim.run()
    assert (m0.attempt, m0.start_ms, m0.finish_ms) == (1, 4000, 14000)
    assert r.kills == 1 and r.wasted_container_s == 3.0


def test_kill_app_and_a_standby_rm(tmp_path: Path) -> None:
    sim = _two_apps()
    sim.run(until_ms=2500)
    writer = SimLevers(sim)
    a = sim.app_of_job["a"].id
    out, rec = _write(writer, tmp_path, "kill_app", a, "KILLED")
    assert (out, rec["observed"]) == ("applied", "KILLED")
    with pytest.raises(HTTPStatusError) as err:
        writer.read(Kind.SET_APP_PRIORITY, "application_1_0001", Priority(0))
    assert err.value.status == 404
    sim.rm.standby = True
    with pytest.raises(StandbyError):
        writer.ensure_active()
    out, _ = _write(writer, tmp_path, "set_app_priority", sim.app_of_job["b"].id, 3)
    assert out == "standby"


def test_policies_recommendations_go_through_the_writer(tmp_path: Path) -> None:
    # Matchmaking's recommendation (node-locality-delay) is applied to the simulated
    # RM exactly as it would be to the real one.
    sim = _two_apps()
    sim.run(until_ms=3500)
    snap = snapshot(sim)
    mm = POLICIES["matchmaking"]
    recs = mm.run(snap, mm.initial_state(), mm.params(), Reads()).recommendations
    rec = next(r for r in recs if r.kind.value == "update_scheduler_conf")
    out, result = _write(SimLevers(sim), tmp_path, rec.kind.value, rec.target, rec.value.to_json())
    assert out == "applied"
    assert sim.scheduler.conf()[NLD] == str(rec.value.to_json()[NLD])  # type: ignore[index]
    assert result["observed"] == {NLD: str(rec.value.to_json()[NLD])}  # type: ignore[index]


def test_phase_use_reaches_the_snapshot() -> None:
    # One map: 4 s shuffle-like phase at 0.5 core then 6 s at 2 cores; at 6000 (started
    # 1000, 5 s in) the average is (4 x 0.5 + 1 x 2) / 5 = 0.8 core = 80 %.
    phases = (TaskPhase("MAP", 0.4, 512, 0.5), TaskPhase("SORT", 0.6, 1024, 2.0))
    sim = Simulation(workload([job("a", maps([10], phases=phases))]), scheduler="fifo")
    sim.run(until_ms=6000)
    snap = snapshot(sim)
    c = next(c for c in snap.containers if not c.is_am)
    assert c.usage is not None
    assert c.usage.cpu_avg_percent == pytest.approx(80.0)
    assert c.usage.pmem_max_mb == 1024
    assert c.allocated == Res(1024, 1) or c.allocated.memory_mb == 1024
    assert MAP == "MAP"
