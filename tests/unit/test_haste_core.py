"""haste_core on the paper's worked examples (section 3.4.1, Fig. 1, Fig. 2) and rules R1-R6."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from yarn_advisor.advisor.policies.haste import core as hc

GB = hc.Weights(memory=1.0, vcores=1.0, memory_unit_mb=1)  # the paper's units: GB and cores
TYPE_I, TYPE_II = (1, 3), (3, 1)


# --- section 3.4.1: the FFD-DotProduct fitness table -------------------------------------


@pytest.mark.parametrize(
    "capacity, f_type1, f_type2",
    [((10, 6), 28, 36), ((7, 5), 22, 26), ((4, 4), 16, 16), ((3, 1), 6, 10)],
)
def test_fitness_table(capacity: hc.Vec, f_type1: int, f_type2: int) -> None:
    assert hc.fitness(TYPE_I, capacity, GB) == f_type1
    assert hc.fitness(TYPE_II, capacity, GB) == f_type2


def test_rta_fills_the_node_with_three_type_ii_and_one_type_i() -> None:
    cands = [hc.Candidate("I", TYPE_I, 0.0, 0.0), hc.Candidate("II", TYPE_II, 0.0, 0.0)]
    for beta in ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.2, 0.2, 0.6)):
        picks = hc.rta_fill((10, 6), cands, [10, 10], GB, beta)
        # capacities visited: <10,6> -> II, <7,5> -> II, <4,4> tie -> I, <3,1> -> II
        assert picks == [1, 1, 0, 1]
        used = [cands[i].resource for i in picks]
        assert (sum(r[0] for r in used), sum(r[1] for r in used)) == (10, 6)


def test_score_only_considers_fitting_requests() -> None:
    cands = [hc.Candidate("I", TYPE_I, 0.0, 0.0), hc.Candidate("II", TYPE_II, 0.0, 0.0)]
    ranked = hc.score((3, 1), cands, GB, (1.0, 1.0, 0.0))
    assert [s.index for s in ranked] == [1]  # type I needs 3 cores
    assert ranked[0].fitness == 10


# --- a tiny deterministic simulator: one node, unit-time tasks --------------------------


@dataclass
class SimJob:
    name: str
    size: int  # GB per task
    tasks: int
    sequential: bool = False  # iterative: one task at a time
    iterations: int = 1
    done: int = 0
    running: int = 0
    started_at: int | None = None
    starts: list[int] = field(default_factory=list)

    def available(self) -> int:
        left = self.tasks - self.done - self.running
        return min(left, 1 - self.running) if self.sequential else left


def simulate(
    jobs: list[SimJob], capacity: int, policy: str, beta: tuple[float, float, float]
) -> int:
    """Run until all tasks finish; return the makespan. ``policy``: fifo | haste."""
    t = 0
    w = hc.Weights(1.0, 0.0, 1)
    while any(j.done < j.tasks for j in jobs):
        free = capacity
        while True:
            live = [j for j in jobs if j.available() > 0 and j.size <= free]
            if not live:
                break
            if policy == "fifo":
                pick = live[0]
            else:
                total = sum(j.iterations for j in jobs)
                cands = [
                    hc.Candidate(
                        j.name, (j.size, 0), 0.0, hc.alignment(j.iterations, j.done, total)
                    )
                    for j in live
                ]
                pick = live[hc.score((free, 0), cands, w, beta)[0].index]
            pick.running += 1
            pick.starts.append(t)
            free -= pick.size
        for j in jobs:
            j.done += j.running
            j.running = 0
        t += 1
    return t


def test_fig1_ffd_packs_both_jobs_in_four_time_units() -> None:
    def jobs() -> list[SimJob]:
        return [SimJob("job1", 1, 4), SimJob("job2", 3, 4)]

    assert simulate(jobs(), 4, "fifo", (1.0, 0.0, 0.0)) == 5
    assert simulate(jobs(), 4, "haste", (1.0, 0.0, 0.0)) == 4  # FFD-DotProduct
    assert simulate(jobs(), 4, "haste", (1.0, 1.0, 0.0)) == 4  # Eq 4, equal urgency


def test_fig2_alignment_starts_the_iterative_job_earlier() -> None:
    def jobs() -> list[SimJob]:
        return [
            SimJob("job1", 2, 2),
            SimJob("job2", 2, 2),
            SimJob("job3", 1, 3, sequential=True, iterations=3),
        ]

    plain = jobs()
    assert simulate(plain, 4, "haste", (1.0, 1.0, 0.0)) == 5  # HaSTE (Eq 4)
    assert plain[2].starts[0] == 2
    aligned = jobs()
    assert simulate(aligned, 4, "haste", (0.2, 0.2, 0.6)) == 4  # HaSTE-A (Eq 6)
    assert aligned[2].starts[0] == 0
    assert aligned[2].starts == [0, 1, 2]


# --- Algorithm 1 (ITA) ----------------------------------------------------------------


def test_ita_fills_the_example_node() -> None:
    plan = hc.ita_knapsack((10, 6), [(TYPE_I, 5), (TYPE_II, 5)], GB)
    assert plan.taken == (1, 3)
    assert plan.value == 16


def _brute(cap: hc.Vec, items: list[tuple[hc.Vec, int]], w: hc.Weights) -> float:
    best = 0.0
    for counts in itertools.product(*(range(c + 1) for _, c in items)):
        m = sum(k * r[0] for k, (r, _) in zip(counts, items, strict=True))
        v = sum(k * r[1] for k, (r, _) in zip(counts, items, strict=True))
        if m <= cap[0] and v <= cap[1]:
            best = max(best, sum(k * w.size(r) for k, (r, _) in zip(counts, items, strict=True)))
    return best


item = st.tuples(st.tuples(st.integers(1, 6), st.integers(0, 4)), st.integers(0, 3))


@given(st.tuples(st.integers(0, 12), st.integers(0, 8)), st.lists(item, max_size=3))
def test_ita_is_optimal_without_quantisation(cap: hc.Vec, items: list[tuple[hc.Vec, int]]) -> None:
    plan = hc.ita_knapsack(cap, items, GB)
    assert plan.value == pytest.approx(_brute(cap, items, GB))
    used = [sum(k * r[d] for k, (r, _) in zip(plan.taken, items, strict=True)) for d in (0, 1)]
    assert used[0] <= cap[0] and used[1] <= cap[1]
    assert all(k <= c for k, (_, c) in zip(plan.taken, items, strict=True))


@given(
    st.tuples(st.integers(1024, 262144), st.integers(1, 96)),
    st.lists(
        st.tuples(st.tuples(st.integers(256, 16384), st.integers(1, 8)), st.integers(1, 50)),
        max_size=6,
    ),
)
def test_ita_bounds_hold_and_plans_fit(cap: hc.Vec, items: list[tuple[hc.Vec, int]]) -> None:
    plan = hc.ita_knapsack(cap, items, hc.Weights(), quantum_mb=512, max_cells=4096, max_items=20)
    assert plan.cells <= 4096
    assert sum(plan.taken) <= 20
    mem = sum(k * r[0] for k, (r, _) in zip(plan.taken, items, strict=True))
    cpu = sum(k * r[1] for k, (r, _) in zip(plan.taken, items, strict=True))
    assert mem <= cap[0] and cpu <= cap[1]


# --- rules R1-R6 (property tests) -----------------------------------------------------

sizes = st.floats(0.5, 64.0)


@st.composite
def job_counts(draw: st.DrawFn) -> hc.JobCounts:
    total = draw(st.integers(1, 500))
    assigned = draw(st.integers(0, total))
    return hc.JobCounts(
        maps_total=total,
        maps_assigned=assigned,
        reduces_assigned=draw(st.integers(0, 50)),
        am_assigned=1,
        maps_running=draw(st.integers(0, assigned)),
        reduces_running=draw(st.integers(0, 50)),
        map_size=draw(sizes),
        reduce_size=draw(sizes),
        am_size=draw(sizes),
    )


@given(job_counts(), st.integers(0, 500))
def test_r1_more_map_progress_more_map_urgency(j: hc.JobCounts, more: int) -> None:
    ahead = j._replace(maps_assigned=min(j.maps_total, j.maps_assigned + more))
    assert hc.map_urgency(ahead) >= hc.map_urgency(j)
    if ahead.maps_assigned > j.maps_assigned:
        assert hc.map_urgency(ahead) > hc.map_urgency(j)  # held resources > 0 (A_am = 1)


@given(job_counts(), st.integers(1, 50))
def test_r2_more_reduce_resources_more_map_urgency(j: hc.JobCounts, more: int) -> None:
    assume(j.maps_assigned > 0)
    heavier = j._replace(reduces_assigned=j.reduces_assigned + more)
    assert hc.map_urgency(heavier) > hc.map_urgency(j)


@given(job_counts())
def test_r3_reduces_more_urgent_iff_their_share_is_below_map_progress(j: hc.JobCounts) -> None:
    assume(j.maps_assigned > 0 and j.reduces_running > 0)
    share = (
        j.reduces_running
        * j.reduce_size
        / (j.maps_running * j.map_size + j.reduces_running * j.reduce_size)
    )
    u_m, u_r = hc.map_urgency(j), hc.reduce_urgency(j, reduce_ratio_cap=1e12)
    assume(abs(share - j.map_progress) > 1e-9)
    assert (u_r > u_m) == (share < j.map_progress)


@given(st.integers(2, 50), st.integers(0, 49), st.integers(0, 200))
def test_r4_iterative_jobs_align_above_regular_ones(total: int, done: int, others: int) -> None:
    done = min(done, total - 1)
    s = total + 1 + others
    assert hc.alignment(total, done, s) > hc.alignment(1, 0, s)


@given(st.integers(2, 50), st.integers(1, 50), st.integers(0, 49), st.integers(0, 200))
def test_r5_more_stages_align_higher(total: int, extra: int, done: int, others: int) -> None:
    done = min(done, total - 1)
    s = 2 * total + extra + others
    assert hc.alignment(total + extra, done, s) > hc.alignment(total, done, s)


@given(st.integers(2, 50), st.integers(0, 48), st.integers(0, 200))
def test_r6_more_finished_stages_align_higher(total: int, done: int, others: int) -> None:
    assume(done + 1 < total)
    s = total + others
    assert hc.alignment(total, done + 1, s) > hc.alignment(total, done, s)


candidate = st.builds(
    hc.Candidate,
    key=st.just("c"),
    resource=st.tuples(st.integers(1, 8), st.integers(1, 8)),
    urgency=st.floats(0, 100),
    alignment=st.floats(0, 1),
    is_am=st.booleans(),
)


@given(
    st.tuples(st.integers(0, 16), st.integers(0, 16)),
    st.lists(candidate, max_size=8),
    st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
)
def test_preference_is_bounded_and_am_requests_come_first(
    cap: hc.Vec, cands: list[hc.Candidate], beta: tuple[float, float, float]
) -> None:
    ranked = hc.score(cap, cands, GB, beta)
    fitting = [c for c in cands if hc.fits(c.resource, cap)]
    assert len(ranked) == len(fitting)
    for s in ranked:
        assert -1e-12 <= s.preference <= sum(beta) + 1e-12
    if any(c.is_am for c in fitting):
        assert ranked[0].is_am
    non_am = [s for s in ranked if not s.is_am]
    assert all(a.preference >= b.preference for a, b in itertools.pairwise(non_am))


def test_flat_components_contribute_nothing() -> None:
    cands = [hc.Candidate("a", (1, 1), 5.0, 0.2), hc.Candidate("b", (1, 1), 5.0, 0.2)]
    ranked = hc.score((4, 4), cands, GB, (0.2, 0.2, 0.6))
    assert [s.preference for s in ranked] == [0.0, 0.0]
    assert [s.index for s in ranked] == [0, 1]  # ties: lower index first


def test_reduce_urgency_cap_and_degenerate_cases() -> None:
    j = hc.JobCounts(10, 5, 0, 1, 5, 0, 2.0, 2.0, 2.0)  # no running reduce
    assert hc.reduce_urgency(j, 10.0) == hc.map_urgency(j) * 0.5 * 10.0
    idle = hc.JobCounts(10, 0, 0, 1, 0, 0, 2.0, 2.0, 2.0)
    assert hc.reduce_urgency(idle, 10.0) == 0.0
    assert hc.fallback_urgency(0.5, 4.0) == 2.0
    assert hc.fallback_urgency(1.7, 4.0) == 4.0


@pytest.mark.parametrize(
    "tags, expected",
    [
        (("iteration:3/10",), (10, 2)),
        (("x", "Stage:1/4"), (4, 0)),
        (("iteration:0/3",), None),
        (("iteration:5/3",), None),
        (("iterations=3",), None),
    ],
)
def test_iteration_tags(tags: tuple[str, ...], expected: tuple[int, int] | None) -> None:
    it = hc.iteration_from_tags(tags)
    assert (None if it is None else (it.total, it.finished)) == expected
