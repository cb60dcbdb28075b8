"""Workload files and traces: what they become, and clear errors for bad ones.

Bad input must give an error naming the file and the line or job, never a
traceback: a truncated trace, unknown fields, negative durations, a container
larger than every node.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from yarn_advisor.simulator.cli import main
from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.rumen import read_rumen
from yarn_advisor.simulator.readers.sls import read_sls
from yarn_advisor.simulator.readers.swim import SwimModel, raw_cluster_nodes, read_swim
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
name: small
cluster: {nodes: 2, memory_mb: 4096, vcores: 4, timing: {am_launch_ms: 0}}
scheduler:
  queues: [{name: default}]
jobs:
  - id: a
    maps: {count: 4, duration_s: 10, request: {memory_mb: 1024, vcores: 1}}
    reduces: {count: 1, duration_s: 6}
  - id: pr
    iterations: 3
    submit_s: 2
    maps: {count: 7, duration_s: 5, input: new}
"""

BAD = """\
cluster: {nodes: 2, memory_mb: 4096, vcores: 4, colour: red}
jobs:
  - id: a
    maps: {count: 4, duration_s: -10, request: {memory_mb: 9000, vcores: 1}}
    reduce: {count: 1}
  - id: b
    queue: nope
    after: zz
    maps: {count: 1, duration_s: 1}
"""


def _file(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_workload_file_becomes_jobs_and_iteration_chains(tmp_path: Path) -> None:
    wl = load_workload(_file(tmp_path, "w.yaml", GOOD))
    assert [(j.id, j.after, j.maps.tasks if j.maps else 0) for j in wl.jobs] == [
        ("a", "", 4), ("pr#1", "", 3), ("pr#2", "pr#1", 2), ("pr#3", "pr#2", 2)]
    assert wl.jobs[1].tags == ("iteration:1/3",) and wl.jobs[1].submit_ms == 2000
    assert wl.jobs[0].reduces is not None and wl.jobs[0].reduces.durations_ms == (6000,)
    r = Simulation(wl).run()
    assert r.jobs_finished == 4 and r.job_order[-1] == "pr#3"


def test_every_problem_of_a_bad_workload_is_reported_with_its_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "bad.yaml", BAD)
    with pytest.raises(WorkloadError) as err:
        load_workload(path)
    msgs = err.value.problems
    assert f"{path}:1: cluster.colour: unknown field 'colour'" in msgs[0]
    joined = "\n".join(msgs)
    assert f"{path}:5: jobs[0] (id a): reduce: unknown field 'reduce'" in joined
    assert f"{path}:4: jobs[0] (id a): maps.duration_s: must be >= 0, got -10" in joined
    assert (f"{path}:3: job a: maps.request <9000 MB, 1 vcores> does not fit any node "
            "(largest <4096 MB, 4 vcores>)") in joined
    assert f"{path}:6: job b: queue 'nope' is not configured" in joined
    assert f"{path}:6: job b: after 'zz': no such job" in joined
    assert len(msgs) == 6


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "broken.yaml", "jobs:\n  - id: a\n    maps: {count: 1\n")
    with pytest.raises(WorkloadError, match=rf"{path}:4: not valid YAML/JSON"):
        load_workload(path)


def test_the_cli_prints_bad_input_without_a_traceback(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, "bad.yaml", BAD)
    assert main(["simulate", "--workload", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert f"{path}:4: jobs[0] (id a): maps.duration_s: must be >= 0" in err
    good = _file(tmp_path, "good.yaml", GOOD)
    assert main(["simulate", "--workload", str(good), "--node-memory-mb", "512"]) == 2
    assert "job a: am does not fit a <512 MB, 4 vcores> node" in capsys.readouterr().err
    assert main(["simulate", "--workload", str(good), "--nodes", "0"]) == 2
    assert main(["simulate", "--workload", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml: no such file" in capsys.readouterr().err


def test_the_cli_json_line_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _file(tmp_path, "good.yaml", GOOD)
    png = tmp_path / "t.png"
    assert main(["simulate", "--workload", str(good), "--json", "--mode", "all",
                 "--scheduler", "fair", "--paper", "haste", "--png", str(png)]) == 0
    out, _err = capsys.readouterr()
    base, side, plug, inrm = (json.loads(line) for line in out.splitlines())
    for report in (base, side, plug, inrm):
        for key in ("mode", "makespan_s", "mean_jct_s", "p95_jct_s", "utilization",
                    "locality_rate", "kills", "wasted_container_s"):
            assert key in report
        assert set(report["utilization"]) == {"memory", "vcores"}
    assert base["scheduler"] == side["scheduler"] == "fairScheduler"
    assert (base["mode"], side["mode"], plug["mode"], inrm["mode"]) == (
        "baseline", "sidecar", "plugin", "in-rm")
    assert "advisor" not in base and side["advisor"]["cycles"] > 0
    assert "plugin" not in side["advisor"] and plug["advisor"]["plugin"]["published"] > 0
    assert set(side["recovered"]) == set(plug["recovered"]) == {"makespan", "mean_jct"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["simulate", "--workload", str(good), "--mode", "in-rm"]) == 2
    capsys.readouterr()
    # without a paper (a trace, or a workload of one's own) all = baseline, sidecar, plugin
    assert main(["simulate", "--workload", str(good), "--json", "--mode", "all"]) == 0
    modes = [json.loads(line)["mode"] for line in capsys.readouterr().out.splitlines()]
    assert modes == ["baseline", "sidecar", "plugin"]


# --- SWIM ---------------------------------------------------------------------------
def test_swim_tasks_are_derived_as_the_replay_script_does(fixture_data: Path) -> None:
    wl = read_swim(fixture_data / "swim" / "FB-2009_samples_24_times_1hr_0_first50jobs.tsv")
    assert len(wl.jobs) == 50 and wl.cluster.node_count == 600
    job0 = wl.jobs[0]
    # job0: 740773 input bytes -> the 64 MB minimum -> 1 map of 2 + 64 / 10 = 8.4 s;
    # shuffle 2339561 + output 627471 bytes -> round(2.83 MB / 1 GB) = 0 -> 1 reduce:
    # 2339561 / 2^20 / 10 = 0.2231 s shuffle + 2 + 627471 / 2^20 / 10 = 2.0598 s
    assert job0.id == "job0" and job0.submit_ms == 49000
    assert job0.maps is not None and job0.maps.durations_ms == (8400,)
    assert job0.reduces is not None and job0.reduces.durations_ms == (2282,)
    big = max(wl.jobs, key=lambda j: j.maps.tasks if j.maps else 0)
    assert big.maps is not None and big.maps.input == "new"


def test_swim_fb2010_paths_and_cluster_size(tmp_path: Path) -> None:
    # FB-2010 was sampled on 3000 machines (the SWIM wiki), FB-2009 on 600; the
    # withInputPaths form adds the input path and trailing tabs after the bytes.
    src = ROOT / "examples" / "traces" / (
        "FB-2010_samples_24_times_1hr_withInputPaths_0_first50jobs.tsv")
    assert raw_cluster_nodes(src) == 3000
    wl = read_swim(src, TraceOptions(nodes=600))
    assert len(wl.jobs) == 50 and "3000-node cluster scaled x0.2" in wl.notes[0]
    # job1: 20791551476 input bytes x 0.2 -> ceil(4158310295 / 128 MiB) = 31 maps
    job1 = wl.jobs[1]
    assert job1.id == "job1" and job1.maps is not None and job1.maps.tasks == 31
    same = read_swim(src, TraceOptions(nodes=600), SwimModel(raw_cluster_nodes=600))
    assert same.jobs[1].maps is not None and same.jobs[1].maps.tasks == 155  # unscaled
    # without the paths (and a name that does not say FB-2010) it is FB-2009's 600
    six = _file(tmp_path, "day.tsv", "".join(
        "\t".join(line.rstrip("\t\n").split("\t")[:6]) + "\n"
        for line in src.read_text().splitlines(keepends=True)))
    assert raw_cluster_nodes(six) == 600
    assert read_swim(six, TraceOptions(nodes=600)).jobs[1].maps.tasks == 155  # type: ignore[union-attr]


def test_swim_bad_lines_and_truncation(tmp_path: Path, fixture_data: Path) -> None:
    text = (fixture_data / "swim" / "FB-2009_samples_24_times_1hr_0_first50jobs.tsv").read_text()
    cut = _file(tmp_path, "cut.tsv", text[: len(text) // 2].rsplit("\t", 1)[0])
    with pytest.raises(WorkloadError, match=rf"{cut}:\d+: truncated trace"):
        read_swim(cut)
    lines = text.splitlines()
    lines[3] = lines[3].replace("\t", "\tx", 1)
    bad = _file(tmp_path, "bad.tsv", "\n".join(lines) + "\n")
    with pytest.raises(WorkloadError, match=rf"{bad}:4: job job3: fields 2-6 must be integers"):
        read_swim(bad)


# --- SLS ----------------------------------------------------------------------------
def test_sls_trace_keeps_hosts_durations_and_queues(fixture_data: Path) -> None:
    wl = read_sls(fixture_data / "hadoop-sls" / "inputsls.json")
    j1, j2 = wl.jobs
    assert j1.maps is not None and j1.maps.durations_ms == (23707 - 6664, 21593 - 6665,
                                                            86613 - 68770)
    assert j1.maps.hosts == ("node1", "node3", "node2") and j1.slowstart == 1.0
    assert (j1.queue, j2.queue, j2.submit_ms) == ("sls_queue_1", "sls_queue_2", 105204)
    hosts = sorted(h for g in wl.cluster.groups for h in g.hosts)
    assert hosts == ["node1", "node2", "node3"]
    r = Simulation(wl).run()
    assert r.jobs_finished == 2


def test_sls_errors_name_the_job(tmp_path: Path, fixture_data: Path) -> None:
    text = (fixture_data / "hadoop-sls" / "inputsls.json").read_text()
    cut = _file(tmp_path, "cut.json", text[:-40])
    with pytest.raises(WorkloadError, match=rf"{cut}:\d+: truncated trace"):
        read_sls(cut)
    bad = _file(tmp_path, "bad.json", text.replace('"container.type": "map"',
                                                   '"container.kind": "map"', 1)
                .replace("23707", "1000", 1))
    with pytest.raises(WorkloadError) as err:
        read_sls(bad)
    assert err.value.problems == [
        f"{bad}:1: job job_1: job.tasks[0]: unknown field 'container.kind'",
        f"{bad}:1: job job_1: job.tasks[0]: negative duration -5664 ms"]


# --- Rumen --------------------------------------------------------------------------
def test_rumen_trace_and_a_truncated_copy(tmp_path: Path, fixture_data: Path) -> None:
    src = fixture_data / "hadoop-sls" / "2jobs2min-rumen-jh.json"
    wl = read_rumen(src)
    assert len(wl.jobs) == 2 and wl.jobs[0].submit_ms == 0
    assert all(j.maps is not None and j.maps.input == "hosts" for j in wl.jobs)
    assert Simulation(wl).run().jobs_finished == 2
    data = src.read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(data[: int(len(data) * 0.7)]))
    with pytest.raises(WorkloadError, match=rf"{cut}: truncated or corrupt trace after 1 job"):
        read_rumen(cut)
