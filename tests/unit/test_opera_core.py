"""OPERA's algorithms (opera_core): Eq 4-7, Alg 1 (every relief branch and a
scripted usage sequence per policy), Alg 2, Alg 3 and Alg 4 branch by branch."""

from __future__ import annotations

import pytest
from _opera_oracle import node_update_multi
from hypothesis import given, settings
from hypothesis import strategies as st

from yarn_advisor.advisor.policies.opera import core as oc
from yarn_advisor.advisor.policies.opera.bulk import fit_count, node_update_multi_bulk

FLOOR = oc.Block((1024.0, 1.0), 60_000.0, None)
CAP = (8192.0, 8.0)


def relieve(c: oc.Contention, policy: oc.ReliefPolicy, block: oc.Block = FLOOR,
            now: int = 100_000) -> oc.Relief:
    return oc.relieve_contention(c, policy, block, now, 2.0, FLOOR, CAP, 3_600_000.0)


# --- Eq 4, 6, 7 and CRes -------------------------------------------------------


def test_guaranteed_and_opportunistic_available() -> None:
    # node of 8 GiB / 8 vcores, normal tasks demand 6 GiB / 6, everything uses 2.5 GiB / 1.5
    assert oc.guaranteed_available(CAP, (6144.0, 6.0)) == (2048.0, 2.0)  # Eq 6
    assert oc.opportunistic_available(CAP, (2560.0, 1.5)) == (5632.0, 6.5)  # Eq 7
    assert oc.opportunistic_available(CAP, (2560.0, 1.5), (1024.0, 1.0)) == (4608.0, 5.5)  # Eq 4


def test_cres_memory_first_then_cpu_strictly_above_rho() -> None:
    assert oc.cres((7800.0, 7.9), CAP, 0.95) == "Memory"  # both contended: memory wins
    assert oc.cres((7000.0, 7.7), CAP, 0.95) == "CPU"
    assert oc.cres((0.95 * 8192, 0.95 * 8), CAP, 0.95) == "NONE"  # exactly rho*C is no contention
    assert oc.cres((0.0, 0.0), CAP, 0.95) == "NONE"


def test_monitor_checks_only_nodes_with_opportunistic_tasks_and_measured_usage() -> None:
    hot = (8000.0, 8.0)

    def mon(usage: oc.Vec | None, op: bool) -> oc.Relief:
        return oc.monitor(usage, CAP, op, "NEUTRAL", FLOOR, 0, 0.95, 2.0, FLOOR, 3_600_000.0)

    assert mon(hot, False).kill is False  # Alg 1 line 8: op false
    assert mon(None, True).contention == "NONE"  # not measured
    r = mon(hot, True)
    assert (r.contention, r.kill, r.branch) == ("Memory", True, "neutral.kill")


# --- Alg 1 RelieveContention: every branch ------------------------------------


@pytest.mark.parametrize(
    ("policy", "c", "kill", "branch"),
    [
        ("AGGRESSIVE", "Memory", True, "aggressive.kill"),
        ("AGGRESSIVE", "CPU", False, "aggressive.none"),
        ("AGGRESSIVE", "NONE", False, "aggressive.none"),
        ("NEUTRAL", "Memory", True, "neutral.kill"),
        ("NEUTRAL", "CPU", True, "neutral.kill"),
        ("NEUTRAL", "NONE", False, "neutral.none"),
        ("PRESERVE", "Memory", True, "preserve.kill"),
        ("PRESERVE", "CPU", True, "preserve.kill"),
        ("PRESERVE", "NONE", False, "preserve.hold"),
    ],
)
def test_relieve_contention_branches(
    policy: oc.ReliefPolicy, c: oc.Contention, kill: bool, branch: str
) -> None:
    r = relieve(c, policy)
    assert (r.kill, r.branch) == (kill, branch)
    if policy != "PRESERVE":
        assert r.block == FLOOR  # only PRESERVE touches BR/BT


def test_preserve_doubles_on_contention_and_halves_after_a_quiet_block_time() -> None:
    r = relieve("CPU", "PRESERVE", now=10_000)
    assert r.block == oc.Block((2048.0, 2.0), 120_000.0, 10_000)  # lines 25-28
    held = relieve("NONE", "PRESERVE", r.block, now=10_000 + 120_000)  # not > BT yet
    assert held.branch == "preserve.hold" and held.block == r.block
    rel = relieve("NONE", "PRESERVE", r.block, now=10_000 + 120_001)  # lines 29-33
    assert rel.branch == "preserve.release"
    assert rel.block == oc.Block((1024.0, 1.0), 60_000.0, 130_001)


def test_preserve_floor_and_caps() -> None:
    at_floor = oc.Block((1024.0, 1.0), 60_000.0, 0)
    assert relieve("NONE", "PRESERVE", at_floor, now=61_000).block.br == (1024.0, 1.0)
    big = oc.Block((6000.0, 6.0), 3_000_000.0, 0)
    r = relieve("Memory", "PRESERVE", big, now=1)
    assert r.block.br == CAP and r.block.bt_ms == 3_600_000.0  # BR <= C_i, BT <= cap


# (time s, memory MiB used, vcores used) on an 8 GiB / 8 vcore node that runs an
# opportunistic task throughout; rho 0.95 -> contention above 7782.4 MiB or 7.6 vcores.
SCRIPT = [
    (0, 4000, 3.0),  # calm
    (10, 7900, 5.0),  # memory contention
    (20, 6000, 7.8),  # CPU contention
    (30, 8000, 7.9),  # both: memory first
    (40, 5000, 3.0),  # calm from here on
    (200, 5000, 3.0),
    (500, 5000, 3.0),
    (700, 5000, 3.0),
]


def _run(policy: oc.ReliefPolicy) -> list[tuple[str, bool, float, float]]:
    block = FLOOR
    out: list[tuple[str, bool, float, float]] = []
    for t, mem, cpu in SCRIPT:
        r = oc.monitor((float(mem), cpu), CAP, True, policy, block, t * 1000, 0.95, 2.0, FLOOR,
                       3_600_000.0)
        block = r.block
        out.append((r.contention, r.kill, block.br[1], block.bt_ms / 1000))
    return out


def test_aggressive_on_the_scripted_node_kills_only_on_memory() -> None:
    assert [k for _, k, _, _ in _run("AGGRESSIVE")] == [
        False, True, False, True, False, False, False, False]


def test_neutral_on_the_scripted_node_kills_on_either_resource() -> None:
    got = _run("NEUTRAL")
    assert [c for c, _, _, _ in got] == [
        "NONE", "Memory", "CPU", "Memory", "NONE", "NONE", "NONE", "NONE"]
    assert [k for _, k, _, _ in got] == [False, True, True, True, False, False, False, False]
    assert {(br, bt) for _, _, br, bt in got} == {(1.0, 60.0)}  # no blocking


def test_preserve_on_the_scripted_node_blocks_and_releases_step_by_step() -> None:
    # (contention, kill, blocked vcores BR, block time BT in s) after each step
    got = _run("PRESERVE")
    assert got[:5] == [
        ("NONE", False, 1.0, 60.0),
        ("Memory", True, 2.0, 120.0),
        ("CPU", True, 4.0, 240.0),
        ("Memory", True, 8.0, 480.0),
        ("NONE", False, 8.0, 480.0),
    ]
    assert got[5] == ("NONE", False, 8.0, 480.0)  # t=200: 170 s since t=30, BT 480 s
    assert got[6] == ("NONE", False, 8.0, 480.0)  # t=500: 470 s, still within BT
    assert got[7] == ("NONE", False, 4.0, 240.0)  # t=700: 670 s > 480 s: halve, LRT=700


# --- Alg 2 ----------------------------------------------------------------------

SHORT = oc.Task("a:20", (1024.0, 1.0), True)
LONG = oc.Task("b:20", (1024.0, 1.0), False)


def test_normal_assign_is_strict_and_charges_both_pools() -> None:
    s = oc.Slot((2048.0, 2.0), (4096.0, 4.0))
    assert oc.normal_assign(s, LONG)
    assert (s.ga, s.oa) == ((1024.0, 1.0), (3072.0, 3.0))
    assert not oc.normal_assign(s, LONG)  # 1024 < 1024 fails: the paper's strict '<'


def test_opportunistic_assign_only_for_eligible_tasks() -> None:
    s = oc.Slot((0.0, 0.0), (4096.0, 4.0))
    assert not oc.opportunistic_assign(s, LONG)
    assert oc.opportunistic_assign(s, SHORT)
    assert s.oa == (3072.0, 3.0) and s.ga == (0.0, 0.0)
    assert s.assigned == [(SHORT, "opportunistic")]


def test_assign_tries_normal_first() -> None:
    s = oc.Slot((4096.0, 4.0), (8192.0, 8.0))
    assert oc.assign(s, SHORT) and s.assigned == [(SHORT, "normal")]
    s = oc.Slot((512.0, 4.0), (8192.0, 8.0))
    assert oc.assign(s, SHORT) and s.assigned == [(SHORT, "opportunistic")]
    s = oc.Slot((512.0, 4.0), (512.0, 8.0))
    assert not oc.assign(s, SHORT) and not s.assigned


# --- Alg 3 and Alg 4 ------------------------------------------------------------


def feeder(*tasks: oc.Task) -> tuple[oc.NextTask, list[oc.Task]]:
    q = list(tasks)
    taken: list[oc.Task] = []

    def nxt() -> oc.Task | None:
        if not q:
            return None
        taken.append(q.pop(0))
        return taken[-1]

    return nxt, taken


MIN = (1024.0, 1.0)


def test_strict_returns_when_neither_pool_fits_the_smallest_task() -> None:
    nxt, taken = feeder(SHORT)
    s = oc.Slot((512.0, 8.0), (8192.0, 0.5))
    assert oc.node_update_strict(s, [], nxt, MIN) == "no_resources" and not taken


def test_strict_serves_the_reserved_task_or_waits_for_it() -> None:
    nxt, taken = feeder(SHORT)
    res = [oc.Reserved(LONG)]
    s = oc.Slot((512.0, 1.0), (4096.0, 4.0))  # OA fits but LONG is not eligible
    assert oc.node_update_strict(s, res, nxt, (256.0, 0.5)) == "reserved_waits"
    assert res and not taken  # the queue is not touched while a task is reserved
    s = oc.Slot((4096.0, 4.0), (4096.0, 4.0))
    assert oc.node_update_strict(s, res, nxt, MIN) == "reserved_assigned"
    assert res == [] and not taken


def test_strict_takes_the_next_task_assigns_or_reserves_it() -> None:
    nxt, _ = feeder(SHORT, LONG)
    s = oc.Slot((512.0, 4.0), (4096.0, 4.0))
    res: list[oc.Reserved] = []
    assert oc.node_update_strict(s, res, nxt, (256.0, 0.5)) == "queue_assigned"
    assert s.assigned == [(SHORT, "opportunistic")]
    assert oc.node_update_strict(s, res, nxt, (256.0, 0.5)) == "queue_reserved"
    assert [r.task for r in res] == [LONG]
    assert oc.node_update_strict(oc.Slot(CAP, CAP), [], nxt, MIN) == "queue_empty"


def test_multi_chance_assigns_reserved_tasks_in_fifo_order() -> None:
    res = [oc.Reserved(LONG, 1), oc.Reserved(SHORT, 2)]
    s = oc.Slot((512.0, 4.0), (4096.0, 4.0))
    nxt, taken = feeder()
    assert node_update_multi(s, res, nxt, (256.0, 0.5), 3, 3) == "queue_empty"
    assert [(r.task, r.skip) for r in res] == [(LONG, 2)]  # LONG skipped, SHORT assigned
    assert s.assigned == [(SHORT, "opportunistic")] and not taken


def test_multi_chance_returns_when_a_reserved_task_was_skipped_too_often() -> None:
    res = [oc.Reserved(LONG, 3), oc.Reserved(SHORT, 0)]
    s = oc.Slot((512.0, 4.0), (4096.0, 4.0))
    nxt, taken = feeder(SHORT)
    assert node_update_multi(s, res, nxt, (256.0, 0.5), 3, 3) == "skip_limit"
    assert res[0].skip == 4 and res[1].skip == 0 and not s.assigned and not taken


def test_multi_chance_skips_reserved_tasks_for_assignable_ones_until_eps_s() -> None:
    res = [oc.Reserved(LONG, 1)]
    s = oc.Slot((512.0, 4.0), (65536.0, 64.0))
    shorts = [oc.Task(f"s{i}", (1024.0, 1.0), True) for i in range(10)]
    nxt, taken = feeder(*shorts)
    # first the reserved LONG is tried (skip 2), then the loop assigns shorts and
    # bumps LONG's skip each time until maxSkip > eps_s = 3
    assert node_update_multi(s, res, nxt, (256.0, 0.5), 3, 3) == "queue_limit"
    assert res[0].skip == 4 and len(taken) == 2


def test_multi_chance_fills_the_reservation_queue_up_to_eps_r_plus_one() -> None:
    longs = [oc.Task(f"l{i}", (1024.0, 1.0), False) for i in range(6)]
    nxt, taken = feeder(*longs)
    res: list[oc.Reserved] = []
    s = oc.Slot((512.0, 4.0), (4096.0, 4.0))
    assert node_update_multi(s, res, nxt, (256.0, 0.5), 2, 3) == "queue_limit"
    assert [(r.task.key, r.skip) for r in res] == [("l0", 1), ("l1", 1), ("l2", 1)]
    assert len(taken) == 3


def test_multi_chance_no_resources() -> None:
    nxt, taken = feeder(SHORT)
    res = [oc.Reserved(LONG, 0)]
    assert node_update_multi(oc.Slot((0.0, 0.0), (0.0, 0.0)), res, nxt, MIN, 3, 3) == \
        "no_resources"
    assert res[0].skip == 0 and not taken


# --- Alg 4 group-wise (opera_bulk) gives the same answer as task by task ---------



class _Groups:
    def __init__(self, groups: list[tuple[oc.Task, int]]) -> None:
        self.tasks = [t for t, n in groups if n > 0]
        self.left = [n for _, n in groups if n > 0]

    def peek(self) -> tuple[oc.Task, int] | None:
        return (self.tasks[0], self.left[0]) if self.tasks else None

    def take(self, n: int) -> None:
        self.left[0] -= n
        if self.left[0] <= 0:
            self.tasks.pop(0)
            self.left.pop(0)


def test_fit_count_matches_repeated_strict_tests() -> None:
    assert fit_count((1024.0, 1.0), (2048.0, 8.0)) == 1
    assert fit_count((1024.0, 1.0), (2500.0, 8.0)) == 2
    assert fit_count((1024.0, 0.0), (4096.0, float("inf"))) == 3
    assert fit_count((0.0, 1.0), (0.0, 4.0)) == 0
    assert fit_count((1024.0, 1.0), (-5.0, 4.0)) == 0


vec = st.tuples(st.integers(-2, 12).map(lambda x: x * 512.0), st.integers(-1, 8).map(float))
task = st.builds(oc.Task, st.sampled_from(["a", "b", "c", "d"]),
                 st.tuples(st.integers(0, 4).map(lambda x: x * 512.0),
                           st.integers(0, 2).map(float)), st.booleans())


@settings(max_examples=300, deadline=None)
@given(
    ga=vec, oa=vec,
    groups=st.lists(st.tuples(task, st.integers(0, 6)), max_size=5),
    reserved=st.lists(st.tuples(task, st.integers(0, 4)), max_size=3),
    eps_r=st.integers(0, 3), eps_s=st.integers(0, 4),
)
def test_bulk_multi_chance_equals_task_by_task(
    ga: oc.Vec, oa: oc.Vec, groups: list[tuple[oc.Task, int]],
    reserved: list[tuple[oc.Task, int]], eps_r: int, eps_s: int,
) -> None:
    flat = [t for t, n in groups for _ in range(n)]
    nxt, taken = feeder(*flat)
    s1, r1 = oc.Slot(ga, oa), [oc.Reserved(t, k) for t, k in reserved]
    b1 = node_update_multi(s1, r1, nxt, (256.0, 0.0), eps_r, eps_s)
    pool = _Groups(groups)
    s2, r2 = oc.Slot(ga, oa), [oc.Reserved(t, k) for t, k in reserved]
    b2 = node_update_multi_bulk(s2, r2, pool, (256.0, 0.0), eps_r, eps_s)
    assert b1 == b2
    assert (s1.ga, s1.oa, s1.lent, s1.assigned) == (s2.ga, s2.oa, s2.lent, s2.assigned)
    assert [(r.task, r.skip) for r in r1] == [(r.task, r.skip) for r in r2]
    assert len(taken) == len(flat) - sum(pool.left)
