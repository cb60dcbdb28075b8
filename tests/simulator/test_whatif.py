"""The what-if report (``simulate --report``): variants, intervals, waits, the page."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.simulator._simbuild import job, maps, reduces, workload
from yarn_advisor.simulator.cli import main as simulate_main
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import QueueSpec, SchedulerSpec, Workload
from yarn_advisor.simulator.whatif import (
    RunResult,
    RunSpec,
    Variant,
    WhatIf,
    run_one,
    stat,
    summarize,
    to_json,
    to_text,
    variants,
    what_if,
)
from yarn_advisor.simulator.whatif_html import to_html
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]


def _two_queues() -> Workload:
    """Two users in two queues on one node: the second queue's jobs wait."""
    sched = SchedulerSpec(queues=(QueueSpec("a", capacity=50.0, maximum_capacity=100.0),
                                  QueueSpec("b", capacity=50.0, maximum_capacity=100.0)))
    jobs = [job("a1", maps([20, 20, 20]), reduces([5]), queue="a", user="ann"),
            job("a2", maps([10, 10]), queue="a", user="ann", submit_s=2),
            job("b1", maps([5, 5, 5, 5]), queue="b", user="bob", submit_s=1)]
    return workload(jobs, nodes=1, mem=4096, vc=4, scheduler=sched)


def test_the_variants_are_the_baseline_the_config_and_each_policy_alone() -> None:
    names = [v.name for v in variants(False)]
    assert names == ["baseline", "defaults", "haste alone", "matchmaking alone",
                     "opera alone", "anacrac alone", "prism alone"]
    assert variants(True)[1] == Variant("config", ())
    assert variants(False)[0].policies is None


def test_the_interval_is_students_t_over_the_seeds() -> None:
    s = stat([1.0, 2.0, 3.0])
    assert s.mean == 2.0
    assert s.ci95 == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    assert stat([5.0]).ci95 is None
    assert stat([4.0, 4.0]).ci95 == 0.0


def test_waits_per_queue_and_user_are_the_runs_own() -> None:
    wl = _two_queues()
    got = run_one(RunSpec(wl, Variant("baseline", None), wl.seed, "capacity", None))
    report = Simulation(wl, scheduler="capacity").run()
    by_job = report.job_times
    want_a = [by_job[j]["start_s"] - by_job[j]["submit_s"] for j in ("a1", "a2")]
    assert got.queue_wait_s["a"] == pytest.approx(sum(want_a) / 2)
    assert got.user_wait_s["bob"] == pytest.approx(by_job["b1"]["start_s"] - 1.0)
    assert got.figures["makespan_s"] == report.makespan_s
    assert list(got.jct_s) == sorted(got.jct_s) and len(got.jct_s) == 3
    assert got.actions == {}
    assert got.timeline and all(0.0 <= share <= 1.0 for _, share in got.timeline)


@pytest.mark.slow  # two runs of OPERA's Table II workload
def test_a_policy_alone_acts_only_through_its_own_kinds() -> None:
    wl = load_workload(ROOT / "examples" / "workloads" / "opera_table2_mr.yaml")
    report = what_if(wl, seeds=1, workers=1,
                     only=[Variant("baseline", None), Variant("opera alone", ("opera",))])
    base, opera = report.variants
    assert set(opera.actions) == {"update_node_resource"}, opera.actions
    assert opera.actions["update_node_resource"].get("applied", 0) > 0
    assert opera.figures["mean_jct_s"].mean < base.figures["mean_jct_s"].mean


def _fake(variant: str, seed: int, makespan: float) -> RunResult:
    return RunResult(variant, seed, {"makespan_s": makespan}, {"q": makespan / 10},
                     {"u": 1.0}, (1.0, 2.0), {"kind": {"applied": seed}}, ((0.0, 0.5),))


def test_the_summary_averages_runs_and_actions() -> None:
    s = summarize("v", [_fake("v", 1, 10.0), _fake("v", 2, 20.0)])
    assert s.figures["makespan_s"].mean == 15.0
    assert s.figures["makespan_s"].ci95 == pytest.approx(12.706 * math.sqrt(50) / math.sqrt(2))
    assert s.queue_wait_s["q"].mean == 1.5
    assert s.actions == {"kind": {"applied": 1.5}}


def test_runs_go_to_worker_processes_and_seeds_are_reported(tmp_path: Path) -> None:
    wl = _two_queues()
    one = what_if(wl, scheduler="capacity", seeds=2, workers=1,
                  only=[Variant("baseline", None)])
    two = what_if(wl, scheduler="capacity", seeds=2, workers=2,
                  only=[Variant("baseline", None)])
    assert one.seeds == two.seeds == (wl.seed, wl.seed + 1)
    assert to_json(one) == to_json(two)
    # nothing in this workload is drawn: the seeds agree, the interval is zero
    assert one.variants[0].figures["makespan_s"].ci95 == 0.0


def test_text_json_and_page_carry_every_variant() -> None:
    runs = [summarize(v, [_fake(v, 1, m)]) for v, m in (("baseline", 10.0),
                                                        ("opera alone", 8.0))]
    w = WhatIf("wl", (1,), tuple(runs))
    text = to_text(w)
    assert "baseline" in text and "opera alone" in text and "mean wait (s) by queue" in text
    assert [v["variant"] for v in to_json(w)["variants"]] == ["baseline", "opera alone"]
    page = to_html(w)
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # offline
    assert "<script" not in page
    svgs = [ET.fromstring(s[: s.index("</svg>") + 6]) for s in
            ("<svg" + part for part in page.split("<svg")[1:])]
    assert len(svgs) == 3
    ns = "{http://www.w3.org/2000/svg}"
    assert len(svgs[0].findall(f"{ns}polyline")) == 2  # a timeline per variant
    assert len(svgs[2].findall(f"{ns}rect")) == 2  # a bar per variant and queue


def test_cli_report_json_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "whatif.html"
    wl = ROOT / "tests" / "simulator" / "workloads" / "burst_uses_what_it_asks.yaml"
    rc = simulate_main(["simulate", "--workload", str(wl), "--report", "--json",
                        "--workers", "1", "--html", str(page)])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert [v["variant"] for v in out["variants"]][:2] == ["baseline", "defaults"]
    assert len(out["variants"]) == 7
    assert page.read_text().startswith("<!doctype html>")


@pytest.mark.parametrize("argv, needle", [
    (["--seeds", "0"], "--seeds must be 1 to 100"),
    (["--workers", "-1"], "--workers must be 0"),
    (["--html", "x.html"], "--html needs --report"),
])
def test_cli_report_bad_arguments_are_exit_2(argv: list[str], needle: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    wl = ROOT / "tests" / "simulator" / "workloads" / "burst_uses_what_it_asks.yaml"
    assert simulate_main(["simulate", "--workload", str(wl), *argv]) == 2
    assert needle in capsys.readouterr().err


def test_modes_in_worker_processes_print_what_one_process_prints(
        capsys: pytest.CaptureFixture[str]) -> None:
    wl = ROOT / "tests" / "simulator" / "workloads" / "burst_uses_what_it_asks.yaml"

    def lines(workers: str) -> list[dict[str, object]]:
        assert simulate_main(["simulate", "--workload", str(wl), "--mode", "all", "--json",
                              "--workers", workers]) == 0
        out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        for x in out:
            x.pop("wall_s")
        return out

    one, two = lines("1"), lines("2")
    assert [x["mode"] for x in one] == ["baseline", "sidecar", "plugin"]
    assert one == two
