"""The in-RM mode: each paper's algorithm as the RM's scheduler beats that paper's
baseline in the paper's direction; the sidecar's recovered share; paper_tables."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import paper_tables
import pytest
from _simbuild import job, maps, workload

from yarn_advisor.simulator.cli import recovered
from yarn_advisor.simulator.inrm import run_inrm, run_with
from yarn_advisor.simulator.inrm.matchmaking import DelayScheduler, HadoopFifoScheduler
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import Phase, SchedulerSpec
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = ROOT / "examples" / "workloads"


def test_haste_packs_the_table2_jobs_shorter_than_fifo_and_fair() -> None:
    wl = load_workload(WORKLOADS / "haste_table2.yaml")
    ours, _ = run_inrm(wl, "haste")
    assert ours.jobs_finished == 4
    for scheduler in ("capacity", "fair"):  # FIFO is the workload's one-queue capacity
        assert ours.makespan_s < Simulation(wl, scheduler=scheduler).run().makespan_s


def test_haste_a_ends_the_iterative_mix_sooner_than_fifo_and_fair() -> None:
    wl = load_workload(WORKLOADS / "haste_table4.yaml")
    ours, _ = run_inrm(wl, "haste-a")
    for scheduler in ("capacity", "fair"):
        base = Simulation(wl, scheduler=scheduler).run()
        assert ours.makespan_s < base.makespan_s
        assert ours.mean_jct_s < base.mean_jct_s


def test_opera_runs_short_tasks_on_requested_but_unused_room() -> None:
    # two nodes <4 GB, 4 vcores>; ten waves of the same job whose maps ask <2 GB, 2 vcores>
    # and use a quarter of it: Fair runs 2 per node, OPERA learns the maps are short and
    # lends the measured idle room to more of them
    light = (Phase("MAP", 1.0, 512, 0.5),)
    jobs = [job(f"wave{i}", maps([8.0] * 8, mem=2048, vc=2, phases=light), submit_s=20 * i)
            for i in range(10)]
    wl = replace(workload(jobs, nodes=2, mem=4096, vc=4),
                 scheduler=SchedulerSpec(type="fair"))
    base = Simulation(wl).run()
    ours, _ = run_inrm(wl, "opera")
    assert ours.jobs_finished == base.jobs_finished == 10
    assert ours.mean_jct_s < base.mean_jct_s
    assert ours.used_utilization["vcores"] > base.used_utilization["vcores"]


def test_matchmaking_is_more_local_than_hadoop_fifo_and_short_delays() -> None:
    wl = load_workload(WORKLOADS / "matchmaking_loadgen.yaml")
    ours, _ = run_inrm(wl, "matchmaking")
    fifo, _ = run_with(wl, HadoopFifoScheduler(wl.scheduler))
    delay, _ = run_with(wl, DelayScheduler(wl.scheduler, 300))  # D = 0.1 heartbeat
    assert ours.locality_rate is not None and fifo.locality_rate is not None
    assert delay.locality_rate is not None
    assert ours.locality_rate > fifo.locality_rate
    assert ours.locality_rate > delay.locality_rate
    assert ours.mean_map_response_s is not None and fifo.mean_map_response_s is not None
    assert ours.mean_map_response_s < fifo.mean_map_response_s


def test_anacrac_keeps_ingestion_on_the_external_nodes_where_fair_fails_it() -> None:
    wl = load_workload(WORKLOADS / "anacrac_table6.yaml")
    base = Simulation(wl).run()
    ours, _ = run_inrm(wl, "anacrac")
    assert base.jobs_failed >= 1
    assert ours.jobs_failed == 0 and ours.jobs_finished == ours.jobs


def _report(makespan: float, jct: float) -> Report:
    return Report("m", "s", "w", makespan, jct, jct, {}, {}, None, 0, 0.0, 1, 1, 0, None, {},
                  0, False, 0.0, [], {})


def test_recovered_share_on_a_hand_computed_case() -> None:
    # baseline 100 s, in-RM 80 s (gain 20), sidecar 90 s (gain 10): half recovered;
    # mean JCT: 50 -> 40 in-RM, 45 sidecar: half too; a sidecar worse than the baseline
    # recovers a negative share
    assert recovered(_report(100, 50), _report(90, 45), _report(80, 40)) == {
        "makespan": 0.5, "mean_jct": 0.5}
    assert recovered(_report(100, 50), _report(110, 40), _report(80, 30)) == {
        "makespan": -0.5, "mean_jct": 0.5}
    # no in-RM gain (equal, worse, or under 1 % of the baseline): nothing to recover
    assert recovered(_report(100, 50), _report(90, 45), _report(100, 60)) == {
        "makespan": None, "mean_jct": None}
    assert recovered(_report(100, 50), _report(90, 45), _report(99.5, 49.9))["makespan"] is None


def test_verdicts_and_row_shares() -> None:
    pt = paper_tables
    assert pt.verdict(-27.0, -20.0, 10.0) == "reproduced"
    assert pt.verdict(-27.0, -5.0, 10.0) == "same direction"
    assert pt.verdict(-27.0, 3.0, 10.0) == "differs"
    assert pt.verdict("> 0", 2.0, "direction") == "reproduced"
    assert pt.verdict("> 0", -2.0, "direction") == "differs"
    assert pt.share(-27.0, -20.0, -5.0) == 0.25
    assert pt.share(-27.0, 4.0, -5.0) is None  # in-RM lost: no gain to share
    # headline shares follow each metric's better direction
    assert pt.headline_share(-1, 100.0, 90.0, 60.0) == 0.25       # lower is better
    assert pt.headline_share(1, 0.80, 0.83, 0.92) == 0.25         # higher is better
    assert pt.headline_share(1, 0.80, 0.83, 0.70) is None         # in-RM lost
    assert pt.headline_share(-1, 100.0, 110.0, 60.0) == -0.25     # the sidecar lost
    assert pt.headline_share(-1, 1.0, 1.0, 0.0) == 0.0            # a count: 1 -> 0
    assert pt.headline_share(-1, 100.0, 90.0, 99.5) is None       # under 1 %: no gain
    # a sidecar that failed jobs the baseline did not gains nothing, however short
    ok = Simulation(workload([job("a", maps([5]))])).run()
    failing = replace(ok, jobs_failed=2)
    assert ok.jobs_failed == 0
    assert pt.unless_failed(-40.0, ok, ok) == -40.0
    assert pt.unless_failed(-40.0, failing, ok) is None


@pytest.mark.slow  # 10 simulator runs (the FairScheduler workloads get a @capacity twin)
def test_paper_tables_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    pt = paper_tables
    assert pt.main(["--papers", "anacrac", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert isinstance(rows, list) and len(rows) == 3
    keys = {"paper", "table", "metric", "paper_value", "in_rm", "sidecar", "tolerance",
            "verdict"}
    for row in rows:
        assert keys <= set(row)
        assert row["verdict"] in ("reproduced", "same direction", "differs")
        assert row["paper"] == "ANACRAC"
    failed = next(r for r in rows if r["metric"].startswith("failed jobs"))
    assert failed["in_rm"] < 0 and failed["verdict"] == "reproduced"
    assert {"plugin", "recovered_plugin"} <= set(failed)
    assert {s["workload"] for s in out["shares"]} == {
        "anacrac_table5", "anacrac_table6", "anacrac_table5@capacity", "anacrac_table6@capacity"}
    table6 = next(s for s in out["shares"] if s["workload"] == "anacrac_table6")
    heads = {h["metric"]: h for h in table6["headline"]}
    assert set(heads) == {"makespan_s", "jobs_failed"}
    assert heads["jobs_failed"]["in_rm"] == heads["jobs_failed"]["baseline"] + failed["in_rm"]
    assert heads["makespan_s"]["baseline"] == table6["makespan_s"]["baseline"]
    # the FairScheduler never asks the plug-in: there the plugin mode is the sidecar
    assert heads["jobs_failed"]["plugin"] == heads["jobs_failed"]["sidecar"]
    twin = next(s for s in out["shares"] if s["workload"] == "anacrac_table6@capacity")
    assert twin["scheduler"] == "capacityScheduler"
    assert set(twin["makespan_s"]) == {"baseline", "sidecar", "plugin", "in_rm"}
    assert pt.main(["--papers", "nope"]) == 2
