"""PRISM's utility arithmetic and the phase-level algorithm on one scripted machine."""

from __future__ import annotations

from dataclasses import replace

import pytest

from yarn_advisor.advisor.policies.prism import core as pc

CLUSTER = (100_000.0, 100.0)
FAIR = 0.25  # four jobs


def test_dominant_share_and_fairness_measure() -> None:
    assert pc.dominant_share((10_000.0, 20.0), CLUSTER) == pytest.approx(0.2)
    assert pc.dominant_share((30_000.0, 10.0), CLUSTER) == pytest.approx(0.3)
    assert pc.fairness_measure(0.2, FAIR) == pytest.approx(0.2)  # |0.25 - 0.2| / 0.25
    assert pc.fairness_measure(0.3, FAIR) == pytest.approx(0.2)
    assert pc.fairness_measure(0.3, 0.0) == 0.0


def test_u_fairness_is_before_minus_after() -> None:
    # under its share: 0.2 -> 0.25 closes the gap completely
    assert pc.u_fairness((10_000.0, 20.0), (5_000.0, 5.0), FAIR, CLUSTER) == pytest.approx(0.2)
    # over its share: 0.3 -> 0.35 widens it
    assert pc.u_fairness((30_000.0, 10.0), (5_000.0, 5.0), FAIR, CLUSTER) == pytest.approx(-0.2)


def test_idleness_and_u_perf() -> None:
    cap = (10_000.0, 10.0)
    assert pc.idleness((5_000.0, 2.0), cap) == pytest.approx((0.5**2 + 0.8**2) / 2)  # 0.445
    assert pc.idleness((20_000.0, -1.0), cap) == pytest.approx(0.5)  # clipped to [0, 1]
    assert pc.u_perf((5_000.0, 2.0), (2_000.0, 4.0), cap, 1.0) == pytest.approx(0.445 - 0.125)
    assert pc.u_perf((5_000.0, 2.0), (2_000.0, 4.0), cap, 0.5) == pytest.approx(0.16)


def test_utility_is_fairness_plus_a_times_performance() -> None:
    ph = pc.Phase("A", "t", "REDUCE", "SHUFFLE", (2_000.0, 4.0), (5_000.0, 5.0), useful=0.5)
    s = pc.utility(ph, (5_000.0, 2.0), (10_000.0, 10.0), (10_000.0, 20.0), FAIR, CLUSTER, 1.0)
    # half of the shuffle's work can run: half its container counts, share 0.2 -> 0.225
    assert s.u_fairness == pytest.approx(0.1) and s.u_perf == pytest.approx(0.16)
    assert s.utility == pytest.approx(0.26)
    s2 = pc.utility(ph, (5_000.0, 2.0), (10_000.0, 10.0), (10_000.0, 20.0), FAIR, CLUSTER, 2.5)
    assert s2.utility == pytest.approx(0.1 + 2.5 * 0.16)
    idle = replace(ph, useful=0.0)  # a shuffle before any map is done: no utility at all
    s0 = pc.utility(idle, (5_000.0, 2.0), (10_000.0, 10.0), (10_000.0, 20.0), FAIR, CLUSTER, 1.0)
    assert (s0.u_fairness, s0.u_perf, s0.utility) == (0.0, 0.0, 0.0)
    trans = pc.Phase("A", "t", "REDUCE", "REDUCE", (1_000.0, 4.0), (0.0, 0.0))
    s3 = pc.utility(trans, (5_000.0, 2.0), (10_000.0, 10.0), (10_000.0, 20.0), FAIR, CLUSTER, 1.0)
    assert s3.u_fairness == 0.0  # a transition adds no container to the job


def test_schedulable_is_inclusive() -> None:
    assert pc.schedulable((8_000.0, 8.0), (2_000.0, 2.0), (10_000.0, 10.0))
    assert not pc.schedulable((8_000.0, 8.0), (2_000.1, 2.0), (10_000.0, 10.0))


def test_deficits_top_k_follow_the_allocations() -> None:
    alloc = {"A": (10_000.0, 20.0), "B": (30_000.0, 10.0), "C": (0.0, 0.0)}
    d = pc.Deficits(alloc, FAIR, CLUSTER, ["A", "B", "C"])
    assert d.top(2, lambda j: True) == ["C", "A"]
    d.add("C", (30_000.0, 0.0))  # C now holds 0.3
    assert d.top(2, lambda j: True) == ["A", "B"]
    assert d.top(5, lambda j: True) == ["A", "B", "C"]  # no duplicates from stale entries
    assert d.top(3, lambda j: j != "A") == ["B", "C"]
    assert d.top(5, lambda j: True) == ["B", "C"]  # a job found without work is dropped


def _machine(a: float) -> tuple[list[pc.Scored], pc.Vec]:
    alloc = {"A": (10_000.0, 20.0), "B": (30_000.0, 10.0)}
    pools = {"A": 2, "B": 2}
    trans = [pc.Phase("A", "a_r1", "REDUCE", "REDUCE", (1_000.0, 4.0), (0.0, 0.0))]
    big = pc.Phase("B", "b_big", "MAP", "MAP", (6_000.0, 1.0), (6_000.0, 1.0))

    def candidates(_used: pc.Vec) -> list[pc.Phase]:
        cp = [*trans, big]
        for j, demand in (("A", (2_000.0, 2.0)), ("B", (1_000.0, 1.0))):
            if pools[j] > 0:
                cp.append(pc.Phase(j, f"{j}_map", "MAP", "MAP", demand, (5_000.0, 5.0)))
        return cp

    def commit(ph: pc.Phase) -> None:
        if ph.alloc == (0.0, 0.0):
            trans.remove(ph)
        else:
            pools[ph.job] -= 1
            x = alloc[ph.job]
            alloc[ph.job] = (x[0] + ph.alloc[0], x[1] + ph.alloc[1])

    return pc.schedule_machine((10_000.0, 10.0), (5_000.0, 2.0), candidates, commit,
                               lambda j: alloc[j], FAIR, CLUSTER, a, 8)


def test_algorithm_on_a_scripted_machine() -> None:
    ps, used = _machine(1.0)
    # pick 1: A's map (U = 0.2 + 0.22 = 0.42) beats the transition (0.285); B's map
    # is over its share (U = -0.2 + 0.12 < 0) and the big phase does not fit
    # pick 2: the transition (0.185); A is now at its share, so its next map has U < 0
    assert [(s.phase.task, round(s.utility, 4)) for s in ps] == [("A_map", 0.42),
                                                                 ("a_r1", 0.185)]
    assert used == (8_000.0, 8.0)


def test_without_the_performance_weight_only_fairness_counts() -> None:
    ps, used = _machine(0.0)
    assert [s.phase.task for s in ps] == ["A_map"]  # the transition has U = 0: removed
    assert used == (7_000.0, 4.0)


def test_max_phases_bounds_the_picks() -> None:
    def candidates(_used: pc.Vec) -> list[pc.Phase]:
        return [pc.Phase("A", "m", "MAP", "MAP", (1.0, 0.0), (0.0, 0.0))]

    ps, _ = pc.schedule_machine((10.0, 10.0), (0.0, 0.0), candidates, lambda p: None,
                                lambda j: (0.0, 0.0), FAIR, CLUSTER, 1.0, 3)
    assert len(ps) == 3
