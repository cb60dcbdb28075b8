"""Precision mode's RM plug-in on the simulated CapacityScheduler, on hand-computed cases.

Set-up as in test_mechanics (``INSTANT`` timing): one node heartbeats at 0 and
every 1000 ms; an AM registers and asks for its maps the moment it is
allocated; a container starts at the AM's next heartbeat (every 1000 ms from
registration); the CapacityScheduler places one off-switch container per
heartbeat. A table published at t=0 is taken up at the plug-in's next poll,
t=1000.
"""

from __future__ import annotations

from _simbuild import job, maps, reduces, workload
from test_mechanics import _locality_workload

from yarn_advisor.advisor.model.decision_table import (
    AppDecisions,
    Borrower,
    Decisions,
    DecisionTable,
    Fit,
    Hold,
    Lending,
    LocalOnly,
    Match,
    Reason,
    RequestDecision,
    Rule,
    Unranked,
)
from yarn_advisor.simulator.apps import SimApp
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.plugin import SimPlugin
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import QueueSpec, SchedulerSpec, Workload

ROOMY = SchedulerSpec(maximum_am_resource_percent=1.0)  # every AM may start at once


def with_plugin(wl: Workload, decisions: Decisions, ttl_ms: int = 600_000,
                plugin: SimPlugin | None = None) -> tuple[Simulation, SimPlugin]:
    """A CapacityScheduler simulation whose plug-in got ``decisions`` published at t=0."""
    sim = Simulation(wl, scheduler="capacity")
    p = plugin or SimPlugin(sim)
    p.sim = sim
    sim.scheduler.plugin = p  # type: ignore[attr-defined]
    p.publish(DecisionTable(1, sim.cluster_ts, ttl_ms, "test", decisions))
    return sim, p


def app_id(sim: Simulation, seq: int) -> str:
    return f"application_{sim.cluster_ts}_{seq:04d}"


def starts(sim: Simulation) -> dict[str, list[int]]:
    return {a.job.id: [t.start_ms for t in a.maps + a.reduces] for a in sim.apps.values()}


def test_a_veto_skips_one_attempt_and_the_node_goes_to_the_next_app_until_the_ttl() -> None:
    # Apps a, b (in that FIFO order), one 10 s map each; a's maps vetoed on the node.
    # t=0 a's AM (the table is not taken up yet); t=1000 a vetoed, b's AM (one
    # off-switch per heartbeat); t=2000 a vetoed, b's map (runs 2000..12000);
    # t=3000..5000 a vetoed; the table (generated at 0, TTL 5000) has expired at 6000:
    # a's map runs 6000..16000. Vetoes: 1000..5000 = 5.
    wl = workload([job("a", maps([10])), job("b", maps([10]))], scheduler=ROOMY)
    sim = Simulation(wl, scheduler="capacity")
    node = sim.nodes[0].id
    sim, p = with_plugin(wl, Decisions(apps={app_id(sim, 1): AppDecisions(None, (
        RequestDecision(20, veto={node: Reason.HASTE_FITNESS}),))}), ttl_ms=5000)
    r = sim.run()
    assert starts(sim) == {"a": [6000], "b": [2000]}
    assert p.vetoes == {"haste.fitness": 5}
    assert (r.jobs_finished, r.jobs_failed) == (2, 0)


def test_a_withdrawn_table_is_dropped_at_the_next_poll() -> None:
    # As above without a TTL, withdrawn at t=3000: seen at the poll of t=4000, when
    # a's map is placed (vetoed at 1000, 2000, 3000).
    wl = workload([job("a", maps([10])), job("b", maps([10]))], scheduler=ROOMY)
    sim = Simulation(wl, scheduler="capacity")
    node = sim.nodes[0].id
    sim, p = with_plugin(wl, Decisions(apps={app_id(sim, 1): AppDecisions(None, (
        RequestDecision(None, veto={node: Reason.HASTE_FITNESS}),))}))
    sim.every(3000, lambda s: p.withdraw("kill_switch") if s.now == 3000 else None)
    sim.run()
    assert starts(sim) == {"a": [4000], "b": [2000]}
    assert p.vetoes == {"haste.fitness": 3}


def test_queue_limits_apply_before_the_plugin_is_asked() -> None:
    # One node <8192 MB>; queue q1 (capacity and maximum 25 % = 2048 MB) runs a (three
    # 10 s maps), q2 (75 %) runs b (one 30 s map). Queues are offered the node least
    # used (relative to capacity) first, ties to the larger capacity: 0 b's AM (q2);
    # 1000 a's AM (q1 unused); 2000 b's map (q2 at 1/6, q1 at 1/2); 3000 q2 (1/3) has
    # nothing pending, a's map 1: q1 at its maximum. From then on q1 is passed over
    # before any of its apps is tried, until map 1 ends at 13000: the plug-in (which
    # admits everything) is not asked about a in between.
    sched = SchedulerSpec(maximum_am_resource_percent=1.0, queues=(
        QueueSpec("q1", 25.0, maximum_capacity=25.0), QueueSpec("q2", 75.0)))
    wl = workload([job("a", maps([10, 10, 10]), queue="q1"), job("b", maps([30]), queue="q2")],
                  mem=8192, vc=8, scheduler=sched)
    asked: list[tuple[str, int]] = []

    class Spy(SimPlugin):
        def precheck(self, app: SimApp, priority: int, node: SimNode) -> bool:
            asked.append((app.job.id, self.sim.now))
            return super().precheck(app, priority, node)

    probe = Simulation(wl, scheduler="capacity")
    sim, _ = with_plugin(wl, Decisions(), plugin=Spy(probe))
    sim.run()
    (a,) = [x for x in sim.apps.values() if x.job.id == "a"]
    assert (a.maps[0].start_ms, a.maps[0].finish_ms) == (3000, 13000)
    assert starts(sim)["b"] == [2000]
    times_a = [t for who, t in asked if who == "a"]
    assert 3000 in times_a and 13000 in times_a
    assert not [t for t in times_a if 3000 < t < 13000]


def test_reduces_held_while_maps_are_asked_start_after_the_last_map() -> None:
    # One node <4096 MB, 4 vcores>: the AM and three 1024 MB tasks at a time. Six 10 s
    # maps (1000, 2000, 3000, then as slots free: 11000, 12000), one 5 s reduce, asked
    # once a map is done (slow start 0.05). YARN serves priority 10 before 20: the
    # reduce takes the slot freed at 13000 and shuffles until the sixth map (21000 ..
    # 31000) is done: the job ends at 34.3 s. Held while maps are asked, it waits for
    # the sixth map to be placed (13000) and takes the next slot (21000): 26.3 s.
    wl = workload([job("a", maps([10] * 6), reduces([5]))])
    base = Simulation(wl, scheduler="capacity")
    r0 = base.run()
    sim = Simulation(wl, scheduler="capacity")
    hold = Decisions(rules=(Rule(Match(application_type="MAPREDUCE"), (
        RequestDecision(10, hold=Hold(Reason.HASTE_HOLDBACK, (20, 5))),)),))
    sim, p = with_plugin(wl, hold)
    r1 = sim.run()
    (b_app,), (p_app,) = base.apps.values(), sim.apps.values()
    assert (b_app.reduces[0].start_ms, b_app.maps[5].start_ms) == (13000, 21000)
    assert (p_app.maps[5].start_ms, p_app.reduces[0].start_ms) == (13000, 21000)
    assert (r0.makespan_s, r1.makespan_s) == (34.334, 26.334)
    assert p.vetoes.get("haste.reduce_holdback", 0) > 0


def test_a_skip_budget_admits_a_request_no_node_suits() -> None:
    # A 2048 MB, 1 vcore map alone on a <4096 MB, 4 vcore> node holding the AM: its
    # shape (0.5, 0.25) against the free room (0.75, 0.75) aligns at 0.949 < 1.0, so
    # fit skips it at 1000 and 2000, then its budget of 2 is spent: placed at 3000.
    wl = workload([job("a", maps([10], mem=2048))])
    sim = Simulation(wl, scheduler="capacity")
    sim, p = with_plugin(wl, Decisions(rules=(Rule(Match(queue="default"), (
        RequestDecision(20, fit=Fit(1.0, Reason.HASTE_FITNESS, 2)),)),)))
    sim.run()
    assert starts(sim) == {"a": [3000]}
    assert p.vetoes == {"haste.fitness": 2}
    assert not p.skipped  # the container reset the count


def test_local_only_skips_do_not_count_as_missed_scheduling_opportunities() -> None:
    # test_mechanics' locality case (block on node0004, which never offers itself;
    # node-locality-delay 2, rack-locality-additional-delay 3): YARN alone places the
    # map rack-local on node0003 at 1500, after 5 missed opportunities. Here from 1000
    # the plug-in skips its non-local attempts 3 times (1000 node0001, 1250 node0002,
    # 1500 node0003) without counting them; then YARN counts on: 2000 -> 3, 2250 -> 4,
    # 2500 node0003 -> 5 > 2: rack-local at 2500.
    base = _locality_workload("node0004", 2, 3)
    sim, p = with_plugin(base.workload, Decisions(rules=(Rule(Match(queue="default"), (
        RequestDecision(None, local_only=LocalOnly(Reason.MATCHMAKING_NONLOCAL,
                                                   max_skips=3)),)),)))
    sim.run()
    m = next(iter(sim.apps.values())).maps[0]
    assert m.container is not None
    assert (m.container.node.host, m.container.locality) == ("node0003", "RACK_LOCAL")
    assert m.container.allocated_ms == 2500
    assert p.vetoes == {"matchmaking.nonlocal": 3}


def test_ranks_order_a_leaf_queue() -> None:
    # a then b submitted at 0, one 10 s map each. FIFO: 0 a's AM, 1000 a's map,
    # 2000 b's AM, 3000 b's map. With b ranked before a from t=1000 (a's AM was
    # placed at 0): 1000 b's AM, 2000 b's map, 3000 a's map.
    wl = workload([job("a", maps([10])), job("b", maps([10]))], scheduler=ROOMY)
    base = Simulation(wl, scheduler="capacity")
    base.run()
    assert starts(base) == {"a": [1000], "b": [3000]}
    sim = Simulation(wl, scheduler="capacity")
    sim, _ = with_plugin(wl, Decisions(apps={app_id(sim, 2): AppDecisions(0, ()),
                                             app_id(sim, 1): AppDecisions(1, ())}))
    sim.run()
    assert starts(sim) == {"a": [3000], "b": [2000]}


def test_lent_room_is_only_for_its_borrowers() -> None:
    # One node <4096 MB, 4 vcores> of which 2 vcores are lent; three 10 s maps of
    # <1024 MB, 1 vcore>. 0 the AM (1 vcore); 1000 map 1 (2 vcores allocated = 4 - 2:
    # not yet in the lent room); 2000 map 2 would be: only a borrower may take it.
    wl = workload([job("a", maps([10, 10, 10]))])
    sim = Simulation(wl, scheduler="capacity")
    node = sim.nodes[0].id
    sim, p = with_plugin(wl, Decisions(nodes={node: Lending(0, 2, frozenset())}))
    sim.run()
    assert starts(sim) == {"a": [1000, 11000, 21000]}
    assert p.vetoes.get("opera.lent_room", 0) > 0
    sim = Simulation(wl, scheduler="capacity")
    lend = Lending(0, 2, frozenset({Borrower(app_id(sim, 1), 20)}))
    sim, p = with_plugin(wl, Decisions(nodes={node: lend}))
    sim.run()
    assert starts(sim) == {"a": [1000, 2000, 3000]}
    assert p.vetoes == {}


def test_unranked_apps_go_first_or_last_as_the_table_says() -> None:
    # a, b, c submitted at 0 on a roomy node; only c is ranked. LAST: the ranked c
    # before the unranked a and b; FIRST: a and b (FIFO between them) before c.
    wl = workload([job("a", maps([10])), job("b", maps([10])), job("c", maps([10]))],
                  scheduler=ROOMY, mem=8192, vc=8)
    order = {}
    for unranked in Unranked:
        sim = Simulation(wl, scheduler="capacity")
        sim, _ = with_plugin(wl, Decisions(apps={app_id(sim, 3): AppDecisions(0, ())},
                                           unranked=unranked))
        sim.run()
        order[unranked] = sorted(starts(sim), key=lambda j: starts(sim)[j][0])
    assert order[Unranked.LAST][0] == "c"
    assert order[Unranked.FIRST][-1] == "c"
