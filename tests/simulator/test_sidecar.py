"""The sidecar mode: the advisor's own daemon beside the simulated RM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.simulator.cli import main as simulate_main
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ("haste", "matchmaking", "opera", "anacrac", "prism")


def _only(*enabled: str, **extra: object) -> dict[str, object]:
    return {"policies": {p: {"enabled": p in enabled} for p in POLICIES}, **extra}


def _same(a: Report, b: Report) -> None:
    assert (a.makespan_s, a.mean_jct_s, a.kills) == (b.makespan_s, b.mean_jct_s, b.kills)


def _batch() -> Workload:
    return load_workload(ROOT / "examples" / "workloads" / "production_batch.yaml")


def test_an_advisor_that_writes_nothing_changes_nothing() -> None:
    wl = _batch()
    base = Simulation(wl, scheduler="capacity").run()
    # every policy advisory (its own dry_run): the daemon cycles, decides, and sends nothing
    cfg = load_config(overrides={"policies": {p: {"dry_run": True} for p in POLICIES}})
    report, tally, _ = run_sidecar(wl, "capacity", cfg)
    assert tally.cycles > 10 and tally.skipped == 0
    assert tally.sent == []
    _same(report, base)


def test_opera_alone_raises_nodes_and_the_batch_ends_sooner() -> None:
    wl = load_workload(ROOT / "examples" / "workloads" / "opera_table2_mr.yaml")
    base = Simulation(wl).run()
    report, tally, _ = run_sidecar(wl, None, load_config(overrides=_only("opera")))
    raises = [s for s in tally.sent if s[1] == "update_node_resource"]
    assert raises, tally.actions
    assert all(policy.startswith("opera ") for policy in tally.actions)
    # node resource writes go through the actuator, never past max_overcommit x C
    assert report.makespan_s < base.makespan_s
    assert report.kills <= base.kills


def test_a_checkpoint_given_is_copied_never_written(tmp_path: Path) -> None:
    wl = _batch()
    first = tmp_path / "classifier.json"
    cfg = load_config(overrides=_only("opera", classifier={"checkpoint": str(first)}))
    run_sidecar(wl, "capacity", cfg)
    assert not first.exists()  # a simulation never writes the user's files
    first.write_text(json.dumps({"not": "a checkpoint"}))
    before = first.read_bytes()
    report, tally, _ = run_sidecar(wl, "capacity", cfg, warm=1)
    assert first.read_bytes() == before
    assert tally.cycles > 0 and report.makespan_s > 0


def test_cli_sidecar_with_a_bad_config_is_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "advisor.yaml"
    bad.write_text("policies:\n  opera:\n    params:\n      lend_up_to: lots\n")
    wl = ROOT / "examples" / "workloads" / "haste_table2.yaml"
    run = ["simulate", "--workload", str(wl), "--mode", "sidecar"]
    assert simulate_main([*run, "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "lend_up_to" in err and "Traceback" not in err
    assert simulate_main([*run, "--warm", "-1"]) == 2


def test_opera_lends_nothing_where_tasks_use_what_they_ask() -> None:
    # lend_to any: no classifier needed; the containers of the burst have not started
    # when a cycle sees them, and their memory is not idle (the SWIM-day kills)
    wl = load_workload(Path(__file__).parent / "workloads" / "burst_uses_what_it_asks.yaml")
    base = Simulation(wl).run()
    # (every policy on, as by default: the old OPERA raised two nodes at 150 s, and
    # 5 containers were killed for memory)
    cfg = load_config(overrides={"policies": {"opera": {"params": {"lend_to": "any"}}}})
    report, tally, _ = run_sidecar(wl, None, cfg)
    assert tally.cycles >= 5
    assert [s for s in tally.sent if s[1] == "update_node_resource"] == []
    assert report.kills == 0 and report.makespan_s <= base.makespan_s


@pytest.mark.slow  # OPERA's Spark workload twice
def test_the_watchdog_trips_opera_when_lent_memory_fails_jobs() -> None:
    """Memory lending on Spark executors that grow into their asks: tasks are killed on
    the nodes OPERA raised and jobs fail. The watchdog switches OPERA to dry-run and
    rolls the nodes back: fewer jobs fail than with the watchdog off."""
    wl = load_workload(ROOT / "examples" / "workloads" / "opera_table2_mr_spark.yaml")
    lend = load_config(ROOT / "examples" / "lend-memory.yaml")
    off = load_config(ROOT / "examples" / "lend-memory.yaml",
                      overrides={"actuator": {"watchdog": {"enabled": False}}})
    harmed, quiet, _ = run_sidecar(wl, None, off)
    guarded, tally, _ = run_sidecar(wl, None, lend)
    assert harmed.jobs_failed > 0 and not quiet.trips
    assert tally.trips == {"opera task_failures": 1}
    assert guarded.jobs_failed < harmed.jobs_failed
    assert any(k.startswith("opera update_node_resource dry_run") for k in tally.actions)
