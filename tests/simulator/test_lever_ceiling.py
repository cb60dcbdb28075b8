"""The lever-ceiling bench's search helpers (bench/_haste_levers.py, used by
bench/haste_lever_ceiling.py): the orders it enumerates, the priorities it writes, and
that they are in force in the simulator."""

from __future__ import annotations

from dataclasses import replace

import _haste_levers as hlc
import pytest
from _simbuild import job, maps, workload

from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import SchedulerSpec


@pytest.mark.parametrize(("n", "count"), [(0, 1), (1, 1), (2, 3), (3, 13), (4, 75), (5, 541)])
def test_weak_orders_are_every_ordered_partition_once(n: int, count: int) -> None:
    items = [f"j{i}" for i in range(n)]
    orders = list(hlc.weak_orders(items))
    assert len(orders) == count  # the Fubini numbers
    canonical = {tuple(frozenset(b) for b in o) for o in orders}
    assert len(canonical) == count  # no order twice, whatever the order inside a block
    for o in orders:
        assert sorted(x for b in o for x in b) == items and all(o)


def test_class_orders_permute_classes_and_members() -> None:
    wl = workload([job("a1", maps([1])), job("b1", maps([1])), job("a2", maps([1]))])
    wl = replace(wl, jobs=tuple(replace(j, name=j.id[0].upper()) for j in wl.jobs))
    orders = [tuple(b[0] for b in o) for o in hlc.class_orders(wl)]
    assert sorted(orders) == sorted([("a1", "a2", "b1"), ("a2", "a1", "b1"),
                                     ("b1", "a1", "a2"), ("b1", "a2", "a1")])


def test_moves_are_one_job_away() -> None:
    out = {tuple(m) for m in hlc.moves(["a", "b", "c"])}
    assert out == {("b", "a", "c"), ("b", "c", "a"), ("c", "a", "b"), ("a", "c", "b")}


def test_priorities_top_block_highest_last_zero() -> None:
    assert hlc.priorities((("a",), ("b", "c"), ("d",))) == {"a": 2, "b": 1, "c": 1, "d": 0}
    with pytest.raises(ValueError, match="priority levels"):
        hlc.priorities(tuple((f"j{i}",) for i in range(hlc.MAX_PRIORITY + 2)))


def test_static_order_is_in_force_and_iterations_share_it() -> None:
    # one node <3072 MB, 3 vcores>: both AMs <1024, 1> and one map <1024, 1> at a time.
    # FIFO runs a's map (submitted first) before b's; with b > a, b's map goes first,
    # and b#2 (b's next iteration) has b's priority.
    wl = workload([job("a", maps([10])), job("b", maps([10])),
                   job("b#2", maps([10]), after="b", after_success=True)], mem=3072, vc=3,
                  scheduler=SchedulerSpec(maximum_am_resource_percent=1.0))
    ordered = hlc.with_order(wl, (("b",), ("a",)))
    assert ordered.scheduler.max_application_priority == hlc.MAX_PRIORITY
    assert {j.id: j.priority for j in ordered.jobs} == {"a": 0, "b": 1, "b#2": 1}
    fifo, prio = Simulation(wl), Simulation(ordered)
    fifo.run()
    prio.run()
    end = {s: {a.job.id: a.finish_ms for a in s.apps.values()} for s in (fifo, prio)}
    assert end[fifo]["a"] < end[fifo]["b"]
    assert end[prio]["b"] < end[prio]["a"]


def test_remaining_work_counts_pending_and_later_iterations() -> None:
    wl = workload([job("a", maps([10, 20]))], mem=4096, vc=4)
    sim = Simulation(wl)
    sim.run(until_ms=1)
    app = sim.app_of_job["a"]
    # two maps <1024 MB, 1 vcore> = a quarter of a node each: (10 + 20) s x 0.25, + 3 later
    assert hlc.remaining_work(app, sim.now, 3.0, (4096, 4)) == pytest.approx(10.5)
    app.maps[0].state = "SUCCEEDED"
    assert hlc.remaining_work(app, sim.now, 0.0, (4096, 4)) == pytest.approx(5.0)


def test_queue_per_job_capacities_sum_to_100() -> None:
    wl = workload([job("a", maps([10])), job("b", maps([30])), job("c", maps([20]))])
    q = hlc.queue_per_job(wl, proportional=True)
    caps = {s.name: s.capacity for s in q.scheduler.queues}
    assert sum(caps.values()) == pytest.approx(100)
    assert caps["b"] == pytest.approx(50) and caps["a"] == pytest.approx(16.67)
    assert [j.queue for j in q.jobs] == ["a", "b", "c"]
    assert replace(q, jobs=()).scheduler.queues[0].user_limit_factor == 3
