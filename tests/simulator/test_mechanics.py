"""The simulator's mechanics on cases small enough to compute by hand.

Common set-up (``INSTANT`` timing): node i of N heartbeats at ``i * 1000 / N``
ms and every 1000 ms after; the AM registers (and asks for its maps) the
moment its container is allocated; a container is pulled at the AM's next
heartbeat (every 1000 ms from registration) and starts at once; an app ends
with its last task. AMs hold <1024 MB, 1 vcore> and use 512 MB, no CPU.
"""

from __future__ import annotations

import pytest
from _simbuild import job, maps, reduces, workload

from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import (
    MAP,
    NodeGroup,
    Phase,
    QueueSpec,
    Res,
    SchedulerSpec,
)


def test_two_tasks_on_one_node_capacity_scheduler_takes_one_off_switch_per_heartbeat() -> None:
    # One node <4096 MB, 4 vcores>; two 10 s maps with no locality (ANY asks).
    # t=0: the AM is allocated (an off-switch container: the heartbeat stops there).
    # t=1000: map0 (one off-switch container per heartbeat), runs 1000..11000.
    # t=2000: map1, runs 2000..12000. The app ends at 12000: JCT 12 s.
    # Memory held: AM 1024 x 12 s + 1024 x 10 s x 2 = 32 GB-s of 4 GB x 12 s = 2/3.
    wl = workload([job("a", maps([10, 10]))])
    r = Simulation(wl, scheduler="capacity").run()
    assert r.makespan_s == 12.0
    assert r.mean_jct_s == 12.0
    assert r.utilization["memory"] == pytest.approx(32 / 48, abs=1e-4)
    assert r.kills == 0


def test_two_tasks_on_one_node_fifo_scheduler_assigns_both_in_one_heartbeat() -> None:
    # YARN's FifoScheduler has no off-switch limit: both maps at t=1000, end at 11000.
    wl = workload([job("a", maps([10, 10]))])
    r = Simulation(wl, scheduler="fifo").run()
    assert r.makespan_s == 11.0


def test_contention_slows_cpu_bound_tasks_in_proportion() -> None:
    # Schedulable <4096 MB, 4 vcores> but 2 real cores; maps A (10 s) and B (20 s)
    # each use 2 cores. FIFO starts both at t=1000: 4 cores wanted of 2 -> both run
    # at rate 0.5. A needs 10 s of work: done at 1000 + 20000 = 21000. B has done
    # 10 s by then; alone it runs at full speed: done at 21000 + 10000 = 31000.
    wl = workload([job("a", maps([10, 20], phases=(Phase(MAP, 1.0, 1024, 2.0),)))],
                  real_cpu=2.0)
    sim = Simulation(wl, scheduler="fifo")
    r = sim.run()
    app = next(iter(sim.apps.values()))
    assert sorted(t.finish_ms for t in app.maps) == [21000, 31000]
    assert r.makespan_s == 31.0
    # used CPU: 2 cores busy 1000..31000 of 2 real cores over 31 s
    assert r.used_utilization["vcores"] == pytest.approx(30 / 31, abs=1e-4)


def test_memory_over_the_node_kills_the_newest_container_and_its_task_reruns() -> None:
    # Real memory 3000 MB (schedulable 4096). Two 10 s maps use 512 MB in their first
    # half and 1536 MB in their second. FIFO starts both at t=1000 (map0 first).
    # t=6000: map0 enters its second half: 512 (AM) + 1536 + 512 = 2560 <= 3000;
    # map1 too: 512 + 1536 + 1536 = 3584 > 3000 -> the newest container (map1's) is
    # killed: 5 s of its work lost, 5 s of container held (1000..6000).
    # Its completion is reported at the node's heartbeat at 6000, which also gives
    # the rerun a container (FIFO); it starts at 6000, its first half ends at 11000
    # when map0 finishes (512 + 1536 fits), and it ends at 16000.
    two_halves = (Phase("MAP", 0.5, 512, 1.0), Phase("SORT", 0.5, 1536, 1.0))
    wl = workload([job("a", maps([10, 10], phases=two_halves))], real_mem=3000)
    sim = Simulation(wl, scheduler="fifo")
    r = sim.run()
    assert r.kills == 1
    assert r.kills_by_reason == {"KILLED_MEMORY": 1}
    assert r.wasted_container_s == 5.0
    assert r.makespan_s == 16.0
    m1 = next(iter(sim.apps.values())).maps[1]
    assert (m1.attempt, m1.first_start_ms, m1.start_ms, m1.finish_ms) == (1, 1000, 6000, 16000)


def _locality_workload(preferred: str, node_delay: int, rack_additional: int) -> Simulation:
    # Racks of two: node0001, node0002 on /rack01; node0003, node0004 on /rack02.
    # node0004 is smaller than the minimum allocation, so it never offers itself
    # (CapacityScheduler.allocateContainerOnSingleNode skips it before any queue).
    # Heartbeats: node0001 at 0, 1000..; node0002 at 250; node0003 at 500.
    groups = (NodeGroup(3, 4096, 4), NodeGroup(1, 512, 4))
    sched = SchedulerSpec(node_locality_delay=node_delay,
                          rack_locality_additional_delay=rack_additional)
    wl = workload([job("a", maps([10], hosts=(preferred,)))], groups=groups,
                  nodes_per_rack=2, scheduler=sched)
    return Simulation(wl, scheduler="capacity")


def test_locality_delay_waits_for_missed_opportunities_then_goes_rack_local() -> None:
    # The map's block is on node0004 (/rack02). node-locality-delay 2,
    # rack-locality-additional-delay 3 (off-switch only after 2 + 3 = 5 > min(4, 5)).
    # The AM takes node0001 at t=0 and asks at once. Missed opportunities:
    # 250 node0002 -> 1 (no rack02 ask here; off-switch needs > 4);
    # 500 node0003 -> 2 (rack-local needs > 2); 1000 node0001 -> 3; 1250 node0002 -> 4;
    # 1500 node0003 -> 5 > 2: rack-local on node0003 at 1500, pulled at 2000.
    sim = _locality_workload("node0004", 2, 3)
    r = sim.run()
    m = next(iter(sim.apps.values())).maps[0]
    assert m.container is not None
    assert (m.container.node.host, m.container.locality) == ("node0003", "RACK_LOCAL")
    assert m.container.allocated_ms == 1500
    assert m.start_ms == 2000
    assert r.locality_rate == 0.0


def test_locality_node_local_is_taken_at_once() -> None:
    # Block on node0003: its first heartbeat (500) takes the map node-local.
    sim = _locality_workload("node0003", 2, 3)
    r = sim.run()
    m = next(iter(sim.apps.values())).maps[0]
    assert m.container is not None
    assert (m.container.locality, m.container.allocated_ms) == ("NODE_LOCAL", 500)
    assert r.locality_rate == 1.0


def test_without_delay_yarn_goes_off_switch_after_one_missed_opportunity() -> None:
    # Default rack-locality-additional-delay -1: off-switch once missed >
    # pending x localityWaitFactor = 1 x min((3 unique asks - 1) / 4 nodes, 1) = 0.5,
    # i.e. on the first heartbeat after registration: node0002 at 250.
    sim = _locality_workload("node0004", 40, -1)
    sim.run()
    m = next(iter(sim.apps.values())).maps[0]
    assert m.container is not None
    assert (m.container.node.host, m.container.locality, m.container.allocated_ms) == (
        "node0002", "OFF_SWITCH", 250)


@pytest.mark.parametrize(("slowstart", "expected_s"), [(0.5, 25.0), (1.0, 27.0)])
def test_reduce_slow_start(slowstart: float, expected_s: float) -> None:
    # One node <8192 MB, 8 vcores>, FIFO. Maps 10, 10, 20, 20 s all start at 1000.
    # One 6 s reduce: shuffle 2 s, reduce 4 s. The AM decides on reduces in its
    # heartbeat (every 1000 ms from registration at 0); at 11000 the two maps' ends
    # come first (they were scheduled at 1000), then its heartbeat.
    # slowstart 0.5: ceil(0.5 x 4) = 2 maps done at 11000 -> asked at the AM's beat at
    # 11000, allocated at the node's beat at 11000, shuffles 11000..13000, waits for the
    # last maps (21000), reduces 21000..25000.
    # slowstart 1.0: asked at 21000, runs 21000..27000.
    wl = workload([job("a", maps([10, 10, 20, 20]), reduces([6]), slowstart=slowstart)],
                  mem=8192, vc=8)
    sim = Simulation(wl, scheduler="fifo")
    r = sim.run()
    red = next(iter(sim.apps.values())).reduces[0]
    assert red.first_start_ms == (11000 if slowstart == 0.5 else 21000)
    assert r.makespan_s == expected_s


def test_iteration_chain_submits_each_iteration_when_the_previous_finishes() -> None:
    # 4 maps of 5 s split over 2 iterations (2 + 2); one node <8192 MB, 8 vcores>, FIFO.
    # Iteration 1: AM at 0, maps 1000..6000, ends at 6000 -> iteration 2 submitted at
    # 6000. The node beat at 6000 before that (releasing the maps), so the AM of
    # iteration 2 is allocated at 7000; its maps run 8000..13000.
    from yarn_advisor.simulator.workload import _iterate

    chain = _iterate(job("pr", maps([5, 5, 5, 5])), 2, 0)
    sim = Simulation(workload(chain, mem=8192, vc=8), scheduler="fifo")
    r = sim.run()
    assert [j.id for j in chain] == ["pr#1", "pr#2"]
    assert [j.tags for j in chain] == [("iteration:1/2",), ("iteration:2/2",)]
    assert r.job_order == ["pr#1", "pr#2"]
    assert r.job_times["pr#2"]["submit_s"] == 6.0
    assert r.job_times["pr#2"]["start_s"] == 7.0
    assert r.makespan_s == 13.0


def test_priority_orders_apps_inside_a_leaf_queue() -> None:
    # One node <2048 MB, 2 vcores>, minimum allocation 512 MB; AMs of 512 MB (the AM
    # limit, 100 % of 2048 MB, admits all three), each app one 10 s map of 1024 MB.
    # a (priority 0), b (5), c (3) submitted together; max priority 10.
    # t=0 b's AM; 1000 b's map (512 MB left); 2000 c's AM (c outranks a);
    # 11000 b's map released -> c's map (c ends 21000); 12000 b's AM released -> a's AM;
    # 21000 c's map released -> a's map, a ends 31000. Order b, c, a.
    # With equal priorities: a (AM 0, map 1000, ends 11000), b's AM 2000, map 11000
    # (ends 21000), c's AM 12000, map 21000 (ends 31000): submission order.
    sched = SchedulerSpec(max_application_priority=10, maximum_am_resource_percent=1.0)
    am = Res(512, 1)
    jobs = [job(x, maps([10]), priority=p, am=am) for x, p in (("a", 0), ("b", 5), ("c", 3))]
    small = Res(512, 1)
    r = Simulation(workload(jobs, mem=2048, vc=2, scheduler=sched, minimum=small),
                   scheduler="capacity").run()
    assert r.job_order == ["b", "c", "a"]
    assert [r.job_times[x]["finish_s"] for x in "bca"] == [11.0, 21.0, 31.0]
    plain = [job(x, maps([10]), am=am) for x in "abc"]
    r2 = Simulation(workload(plain, mem=2048, vc=2, scheduler=sched, minimum=small),
                    scheduler="capacity").run()
    assert r2.job_order == ["a", "b", "c"]
    assert [r2.job_times[x]["finish_s"] for x in "abc"] == [11.0, 21.0, 31.0]


def test_am_limit_keeps_apps_accepted_until_an_am_finishes() -> None:
    # maximum-am-resource-percent 1.0 of a 2048 MB node admits two 1024 MB AMs: a and
    # b are activated, c waits (not activated, no AM asked) until b finishes, even
    # though it outranks a. t=0 b's AM, 1000 b's map; 11000 b's map released -> a's AM
    # (the only active app asking); b ends at 11000 and c is activated. (At 12000 c's
    # AM takes the last 1024 MB and both maps wait for ever: two AMs hold the whole
    # node, the deadlock the default limit of 0.1 exists to prevent.)
    sched = SchedulerSpec(max_application_priority=10, maximum_am_resource_percent=1.0)
    jobs = [job(x, maps([10]), priority=p) for x, p in (("a", 0), ("b", 5), ("c", 3))]
    sim = Simulation(workload(jobs, mem=2048, vc=2, scheduler=sched), scheduler="capacity")
    sim.run(until_ms=5000)
    states = {a.name: (a.state, a.activated) for a in sim.apps.values()}
    assert states == {"a": ("ACCEPTED", True), "b": ("RUNNING", True),
                      "c": ("SUBMITTED", False)}
    sim.run(until_ms=11500)
    am_a = sim.app_of_job["a"].am_task.container
    assert am_a is not None and am_a.allocated_ms == 11000
    assert sim.app_of_job["c"].activated


def test_priority_is_capped_by_max_application_priority() -> None:
    sched = SchedulerSpec(max_application_priority=4, maximum_am_resource_percent=1.0)
    sim = Simulation(workload([job("a", maps([1]), priority=9)], scheduler=sched),
                     scheduler="capacity")
    sim.run()
    assert next(iter(sim.apps.values())).priority == 4


def test_drf_gives_equal_dominant_shares() -> None:
    # The DRF paper's example: <9 vcores, 18 GB>; A's tasks <1 vcore, 4 GB>, B's
    # <3 vcores, 1 GB>; AMs take nothing. FairScheduler, DRF, assignmultiple.
    # t=1000 (all maps asked at 0): A 4/18 -> B 3/9 -> A 8/18 -> B 6/9 -> A 12/18
    # -> A and B both at 2/3; A (earlier) next, but <1, 4 GB> no longer fits
    # (0 vcores left): A reserves. A runs 3 tasks, B 2: dominant shares 2/3 each.
    sched = SchedulerSpec(type="fair", fair_policy="drf", assign_multiple=True,
                          queues=(QueueSpec("default"),))
    jobs = [job("A", maps([100] * 10, mem=4096, vc=1), am=Res(0, 0)),
            job("B", maps([100] * 10, mem=1024, vc=3), am=Res(0, 0))]
    wl = workload(jobs, mem=18432, vc=9, scheduler=sched, minimum=Res(0, 0))
    sim = Simulation(wl, scheduler="fair")
    sim.run(until_ms=1500)
    a, b = sim.apps.values()
    running = {app.name: sum(1 for t in app.maps if t.state == "RUNNING") for app in (a, b)}
    assert running == {"A": 3, "B": 2}
    assert a.alloc_mem / 18432 == pytest.approx(2 / 3)
    assert b.alloc_vc / 9 == pytest.approx(2 / 3)


def test_a_map_only_job_returns_every_container() -> None:
    # One node <2048 MB>: a (AM + one 5.5 s map) then b at 20 s needs the whole node
    # again. a: AM 0, map 1000..6500, ends 6500 (map-only: its map's container is
    # reported at the node's beat at 7000, after the app ended). b: AM at 20000, map
    # at 21000, ends 26500 -- only if all of a's containers came back.
    jobs = [job("a", maps([5.5])), job("b", maps([5.5]), submit_s=20)]
    sim = Simulation(workload(jobs, mem=2048, vc=2,
                              scheduler=SchedulerSpec(maximum_am_resource_percent=1.0)),
                     scheduler="capacity")
    r = sim.run()
    assert r.job_times["b"]["finish_s"] == 26.5 and not r.stalled
    assert all(c.app.job.id == "b" for c in sim.nodes[0].containers.values())
