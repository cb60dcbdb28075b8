"""Counts the simulator keeps as things change instead of recounting them where they are
read must equal the count from scratch at every read, on runs that go through every
way a container ends (task end, app end, memory kill, failed attempt, reduce
preemption, the AM's loss)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from _simbuild import INSTANT, job, maps, reduces, workload

from yarn_advisor.simulator import am_reduces
from yarn_advisor.simulator.apps import SimApp
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import Phase, Workload
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "workloads"


Hook = Callable[[Simulation], None]


def _checked_run(wl: Workload, scheduler: str, monkeypatch: pytest.MonkeyPatch,
                 at: tuple[int, Hook] | None = None) -> tuple[Simulation, int]:
    """Run ``wl`` with every read of the AM's counts checked against the containers
    (and every app's counts at every simulated second; ``at``: also call a hook at
    that simulated ms); returns the sim and the number of reads checked."""
    kept = am_reduces.counts
    reads = 0

    def checked(app: SimApp) -> tuple[int, int, int, int]:
        nonlocal reads
        out = kept(app)
        assert (out[1], out[3]) == am_reduces.counted(app), app
        reads += 1
        return out

    monkeypatch.setattr(am_reduces, "counts", checked)
    sim = Simulation(wl, scheduler=scheduler)

    def every_app(s: Simulation) -> None:
        for app in s.apps.values():
            assert (app.live_maps, app.live_reduces) == am_reduces.counted(app), app

    sim.every(1000, every_app)
    if at is not None:
        sim.run(until_ms=at[0])
        at[1](sim)
    sim.run()
    every_app(sim)
    return sim, reads


@pytest.mark.parametrize(("name", "scheduler", "reason"), [
    ("haste_table4", "fair", "PREEMPTED_BY_AM"),  # reduces preempted for waiting maps
    ("anacrac_table5", "fifo", "FAILED"),  # failed attempts, blacklisted nodes
])
def test_kept_assigned_counts_equal_the_containers(
        name: str, scheduler: str, reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sim, reads = _checked_run(load_workload(EXAMPLES / f"{name}.yaml"), scheduler, monkeypatch)
    assert reads > 100
    assert sim.metrics.kills_by_reason.get(reason, 0) > 0  # the path it is there for ran
    assert all((a.live_maps, a.live_reduces) == (0, 0) for a in sim.apps.values())


def test_kept_counts_through_memory_kills_and_a_lost_am(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # one node of 3000 MB real memory: job a's maps' second halves do not fit
    # together (the newest is killed, its task runs again); containers
    # launch 2 s after they are allocated, and job b's AM container is killed (a
    # signal) at 37 s, while its three maps are allocated and not launched: they are
    # released with it, and its second attempt runs the job
    two_halves = (Phase("MAP", 0.5, 512, 1.0), Phase("SORT", 0.5, 1536, 1.0))
    wl = workload([job("a", maps([10, 10], phases=two_halves), reduces([4])),
                   job("b", maps([20, 20, 20], mem=512), reduces([5], mem=512),
                       submit_s=35)],
                  real_mem=3000, mem=8192, vc=8, timing=replace(INSTANT, container_launch=2000))

    def kill_b_am(s: Simulation) -> None:
        b = next(a for a in s.apps.values() if a.job.id == "b")
        assert b.live_maps == 3
        assert sorted(c.state for c in b.containers.values()) == ["ALLOCATED"] * 3 + [
            "RUNNING"]
        assert b.am_task.container is not None
        s.kill_container(b.am_task.container, "KILLED_BY_SIGNAL")

    sim, reads = _checked_run(wl, "fifo", monkeypatch, at=(37_000, kill_b_am))
    kills = sim.metrics.kills_by_reason
    assert kills.get("KILLED_MEMORY", 0) > 0 and kills.get("AM_LOST", 0) == 3
    assert [(a.state, a.am_attempt) for a in sim.apps.values()] == [
        ("FINISHED", 1), ("FINISHED", 2)]
    assert reads > 0
