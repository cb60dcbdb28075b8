"""Every run ends: kill-and-rerun loops end as in YARN, and a run that no longer
progresses stops with a clear error instead of hanging.

The two reproductions ran without end before (simulated time advancing, one map
re-placed every second on the over-committed node that killed it); each test
here bounds the run (in simulated time, or by a wall-clock alarm for the
sidecar run, which has no bound of its own) so that it fails, not hangs, if
that comes back.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from _simbuild import job, maps, workload

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.simulator import am as am_module
from yarn_advisor.simulator import simulation as simulation_module
from yarn_advisor.simulator.cli import main as simulate_main
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation, SimulationStuck
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
TABLE3 = ROOT / "examples" / "workloads" / "haste_table3.yaml"
# OPERA lending more than its defaults, memory too (off by default): lent memory the
# tasks then grow into is what made the kill-and-rerun loop
LEND_MORE = """\
policies:
  opera:
    params: {lend_to: any, lend_up_to: 0.9, max_overcommit: 2.0, lend_memory: true}
actuator:
  watchdog: {enabled: false}  # it would trip OPERA: these tests are of what comes after
"""
THREE_HOURS_MS = 3 * 3600_000  # the table3 runs end within 30 simulated minutes


class WallLimit(BaseException):
    """Not an Exception: nothing on the way may swallow it."""


@contextmanager
def wall_limit(seconds: float) -> Iterator[None]:
    """Fail (not hang) when the block runs longer than ``seconds`` of wall time."""
    def _alarm(signum: int, frame: object) -> None:
        raise WallLimit(f"still running after {seconds} s of wall time")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def memory_overcommitted(wl: Workload, factor: float) -> Workload:
    """``wl`` with every node advertising ``factor`` x its memory on the same hardware."""
    groups = tuple(replace(g, memory_mb=int(g.memory_mb * factor),
                           real_memory_mb=g.real_memory_mb or g.memory_mb)
                   for g in wl.cluster.groups)
    return replace(wl, cluster=replace(wl.cluster, groups=groups))


def failed_attempts_per_task(sim: Simulation) -> dict[str, int]:
    """Failed attempts (memory kills included) per task that had any, from the AM's counts."""
    return {f"{a.job.id}/{t.kind}{t.index}": t.failures
            for a in sim.apps.values() for t in (*a.maps, *a.reduces) if t.failures}


# --- the two reproductions ---------------------------------------------------------------
def test_sidecar_lending_more_on_table3_ends(tmp_path: Path) -> None:
    conf = tmp_path / "advisor.yaml"
    conf.write_text(LEND_MORE)
    with wall_limit(60):
        report, _, sim = run_sidecar(load_workload(TABLE3), cfg=load_config(conf))
    assert sim.unfinished == 0 and not report.stalled
    assert report.jobs_finished + report.jobs_failed == report.jobs == 8
    assert 0 < report.makespan_s < 3600
    # YARN's limits hold: no attempt fails a 5th time, and a job's failed attempts on
    # one host stop at 3 once it is blacklisted (unless blacklisting was ignored)
    assert max(failed_attempts_per_task(sim).values()) <= am_module.MAX_TASK_FAILURES
    assert report.kills_by_reason.get("KILLED_MEMORY", 0) < 100
    assert any(a.blacklisted for a in sim.apps.values())


def test_node_memory_overcommitted_on_table3_ends() -> None:
    sim = Simulation(memory_overcommitted(load_workload(TABLE3), 1.25))
    report = sim.run(until_ms=THREE_HOURS_MS)
    assert sim.unfinished == 0 and not report.stalled
    assert report.jobs_finished + report.jobs_failed == 8
    assert max(failed_attempts_per_task(sim).values()) <= am_module.MAX_TASK_FAILURES
    assert report.kills_by_reason["KILLED_MEMORY"] < 100


# --- the mechanics, by hand -------------------------------------------------------------
def test_a_task_killed_for_memory_four_times_fails_its_job() -> None:
    # One node, real memory 1500 MB: the AM uses 512, the map 2048, so the map is
    # killed the moment it starts. Heartbeats every 1000 ms: the AM at 0, the map at
    # 1000, killed at once; the node reports it at its next beat (2000), which gives
    # the rerun a container, killed at once, ... the 4th failed attempt (at 4000)
    # fails the job (mapreduce.map.maxattempts 4). Blacklisting the only node is
    # ignored (100 % of the nodes >= 33 %).
    wl = workload([job("a", maps([10], mem=2048))], real_mem=1500)
    sim = Simulation(wl, scheduler="fifo")
    report = sim.run(until_ms=60_000)
    assert sim.unfinished == 0
    assert report.kills_by_reason == {"KILLED_MEMORY": 4}
    assert report.jobs_failed == 1
    rec = next(iter(sim.metrics.jobs.values()))
    assert (rec.state, rec.finish_ms) == ("FAILED", 4000)
    app = next(iter(sim.apps.values()))
    assert app.failures_on == {"node0001": 3} and app.blacklisted == frozenset()


def test_three_failed_attempts_on_a_host_blacklist_it_unless_a_third_of_nodes_are() -> None:
    wl = workload([job("a", maps([10]))], nodes=4)
    sim = Simulation(wl, scheduler="fifo")
    sim.run(until_ms=0)  # the app exists
    app = next(iter(sim.apps.values()))
    for _ in range(2):
        sim.am.attempt_failed_on(app, "node0002")
    assert app.blacklisted == frozenset()
    sim.am.attempt_failed_on(app, "node0002")
    assert app.blacklisted == {"node0002"}  # 1 of 4 nodes: 25 % < 33 %
    for _ in range(3):
        sim.am.attempt_failed_on(app, "node0003")
    assert app.blacklisted == frozenset()  # 2 of 4: 50 %, blacklisting ignored


@pytest.mark.parametrize("scheduler", ["capacity", "fair", "fifo"])
def test_a_blacklisted_host_gets_none_of_the_apps_containers(scheduler: str) -> None:
    # Two nodes beating at 0 and 500 ms. The AM takes node0001 at 0 and asks for its
    # map at once; node0002's beat at 500 takes it. With node0002 blacklisted for the
    # app, the map waits for node0001's beat at 1000.
    def map_host(blacklist: frozenset[str]) -> tuple[str, int]:
        sim = Simulation(workload([job("a", maps([10]))], nodes=2), scheduler=scheduler)
        sim.run(until_ms=0)
        app = next(iter(sim.apps.values()))
        app.blacklisted = blacklist
        sim.run()
        task = app.maps[0]
        assert task.container is not None
        return task.container.node.host, task.container.allocated_ms

    assert map_host(frozenset()) == ("node0002", 500)
    assert map_host(frozenset({"node0002"})) == ("node0001", 1000)


# --- the safety net ---------------------------------------------------------------------
def test_a_loop_at_one_instant_stops_with_a_clear_error() -> None:
    sim = Simulation(workload([job("a", maps([10]))]), scheduler="fifo")
    sim.events.max_per_instant = 1000

    def spin() -> None:
        sim.events.at(sim.now, spin)  # reschedules itself with no delay

    sim.every(2000, lambda s: s.events.at(s.now, spin))
    with pytest.raises(SimulationStuck) as err:
        sim.run()
    msg = str(err.value)
    assert "workload 'test'" in msg
    assert "simulated 0:00:02.000 (2000 ms)" in msg
    assert "spin x10000" in msg


def signal_every_second(sim: Simulation) -> None:
    """A container signal to every running task: its attempt is killed, not failed."""
    for running in list(sim.nms.running.values()):
        for c in list(running):
            if not c.is_am:
                sim.kill_container(c, "SIGNAL_GRACEFUL_SHUTDOWN")


def test_kills_without_progress_stop_with_a_clear_error() -> None:
    # A 10 s map signalled every second never finishes; kills are not failures, so
    # nothing else would end the run.
    wl = workload([job("a", maps([10]))])
    sim = Simulation(wl, scheduler="fifo", max_kills_without_progress=50)
    sim.every(1000, signal_every_second)
    with pytest.raises(SimulationStuck) as err:
        sim.run(until_ms=THREE_HOURS_MS)
    msg = str(err.value)
    assert "workload 'test' (baseline, fifoScheduler)" in msg
    assert "container kills in a row with no task finished" in msg
    assert "map 0 of a on node0001: SIGNAL_GRACEFUL_SHUTDOWN x" in msg
    assert 50 < sim.metrics.kills < 200 and sim.now < 300_000


def test_the_cli_prints_a_stuck_run_as_one_line_and_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # The old semantics (a memory kill is not a failure) bring back the endless loop
    # of the lending reproduction; the safety net must stop it.
    monkeypatch.setattr(am_module, "ATTEMPT_FAILURES", frozenset({"FAILED"}))
    monkeypatch.setattr(simulation_module, "MAX_KILLS_WITHOUT_PROGRESS", 200)
    conf = tmp_path / "advisor.yaml"
    conf.write_text(LEND_MORE)
    with wall_limit(60):
        rc = simulate_main(["simulate", "--workload", str(TABLE3), "--mode", "all", "--json",
                            "--config", str(conf), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert "Traceback" not in err
    stuck = [line for line in err.splitlines() if line.startswith("yarn-advisor simulate:")]
    assert len(stuck) == 1
    assert "workload 'haste-table3' (sidecar, capacityScheduler) at simulated" in stuck[0]
    assert "KILLED_MEMORY x" in stuck[0]
    # the baseline, run before, was printed
    assert [json.loads(line)["mode"] for line in out.splitlines()] == ["baseline"]
