"""The what-if on an operator's own history (JobHistory, Spark event logs, task CSV)
and cluster (a live RM or a recording).

Each workload is checked against what the classifier's reader (an independent
path: the records it yields) says of the same files."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from yarn_advisor.classifiers.readers.jhist import JhistReader
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader
from yarn_advisor.simulator.cli import main
from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.readers.cluster_from import cluster_of, on_cluster, snapshot_from
from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.history import read_history
from yarn_advisor.simulator.spec import Res

ROOT = Path(__file__).resolve().parents[2]
JHIST_MINI = ROOT / "examples" / "jhist-mini"
SPARK = ROOT / "tests" / "fixtures" / "spark-eventlogs"


def test_a_jobhistory_done_dir_becomes_its_jobs_as_they_ran() -> None:
    wl, report = read_history("jhist", [JHIST_MINI])
    jobs = list(JhistReader([JHIST_MINI]))
    assert report.jobs == len(jobs) == len(wl.jobs) == 2 and report.damaged == 0
    first = min(j.submit_ms for j in jobs)
    for job, sim in zip(jobs, wl.jobs, strict=True):
        assert sim.id == job.job_id and sim.user == job.user
        assert sim.submit_ms == job.submit_ms - first
        assert sim.queue == job.queue.removeprefix("root.")
        assert sim.maps is not None and sim.reduces is not None
        assert list(sim.maps.durations_ms) == [t.duration_ms for t in job.maps]
        assert list(sim.reduces.durations_ms) == [t.duration_ms for t in job.reduces]
    one, two = wl.jobs
    conf = next(JHIST_MINI.rglob("*_0001_conf.xml")).read_text()
    for key, value in (("mapreduce.map.memory.mb", "768"),
                       ("yarn.app.mapreduce.am.resource.mb", "512"),
                       ("mapreduce.job.reduce.slowstart.completedmaps", "1.0")):
        assert f"<name>{key}</name><value>{value}</value>" in conf, key
    # the first job as its _conf.xml says; the second has none: the defaults
    assert one.maps is not None and one.maps.request.memory_mb == 768
    assert (one.am.memory_mb, one.slowstart) == (512, 1.0)
    assert two.maps is not None and two.maps.request.memory_mb == TraceOptions.map_mb
    assert (two.am.memory_mb, two.slowstart) == (TraceOptions.am_mb, 0.05)
    hosts = {h for j in jobs for t in j.maps for a in t.attempts for h in [a.host] if h}
    assert {h for g in wl.cluster.groups for h in g.hosts} == {
        h.rpartition("/")[2] for h in hosts}


def test_spark_stages_become_two_waves_with_a_barrier() -> None:
    wl, report = read_history("spark-events", [SPARK], TraceOptions(nodes=4))
    apps = [a for a in SparkEventLogReader([SPARK]) if a.stage_tasks]
    assert len(wl.jobs) == len(apps) > 0 and report.damaged == 0
    for app, sim in zip(apps, wl.jobs, strict=True):
        first_stage = min(app.stage_tasks, key=lambda t: (t.launch_ms, t.task_id)).type
        firsts = [t for t in app.stage_tasks if t.type == first_stage]
        assert sim.maps is not None and len(sim.maps.durations_ms) == len(firsts)
        later = len(app.stage_tasks) - len(firsts)
        assert (len(sim.reduces.durations_ms) if sim.reduces else 0) == later
        assert sim.app_type == app.framework and sim.slowstart == 1.0


def test_a_history_without_hosts_needs_the_cluster(tmp_path: Path) -> None:
    csv = tmp_path / "tasks.csv"
    csv.write_text("job_id,job_name,user,queue,task_type,start_ms,finish_ms,memory_mb,vcores,"
                   "status\nj1,etl,ann,q,MAP,1000,61000,2048,1,SUCCEEDED\n"
                   "j1,etl,ann,q,REDUCE,61000,62000,1024,1,SUCCEEDED\n")
    with pytest.raises(WorkloadError, match=r"names no host.*--nodes"):
        read_history("tasks", [csv])
    wl, _ = read_history("tasks", [csv], TraceOptions(nodes=2))
    (job,) = wl.jobs
    assert job.maps is not None and job.reduces is not None
    assert (job.maps.durations_ms, job.reduces.durations_ms) == ((60000,), (1000,))
    assert job.maps.request.memory_mb == 2048 and wl.cluster.node_count == 2


def test_damaged_history_is_counted_and_a_useless_one_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = tmp_path / "done"
    shutil.copytree(JHIST_MINI, done)
    victim = next(done.rglob("*_0002-*.jhist"))
    victim.write_bytes(victim.read_bytes()[:300] + b"\n{garbled\n")
    wl, report = read_history("jhist", [done])
    assert report.damaged >= 1 and len(wl.jobs) == 1
    assert main(["simulate", "--jhist", str(done), "--json"]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and victim.name in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["simulate", "--jhist", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "no job with a task that ran" in err and str(empty) in err
    assert "Traceback" not in err
    assert main(["simulate", "--tasks", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_cli_runs_every_mode_on_the_bundled_history(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--jhist", str(JHIST_MINI), "--mode", "all", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["mode"] for x in lines] == ["baseline", "sidecar", "plugin"]
    assert all(x["jobs_finished"] == 2 and x["jobs_failed"] == 0 for x in lines)


RECORDING = ROOT / "examples" / "recordings" / "mini-hetero"


def test_the_cluster_from_a_recording_is_the_cluster_that_was_recorded() -> None:
    """Checked against the recording's own note of the cluster it ran on (the test
    cluster's spec, written by the recorder, not read from the RM)."""
    recorded = json.loads(json.loads((RECORDING / "recording.json").read_text())["note"])
    cluster, scheduler = cluster_of(snapshot_from(str(RECORDING)), str(RECORDING))
    sizes = sorted((g.memory_mb, g.vcores) for g in cluster.groups for _ in range(g.count))
    assert sizes == sorted((n["memory_mb"], n["vcores"]) for n in recorded["cluster"]["nodes"])
    shares = {q.name: q.capacity for q in scheduler.queues}
    assert shares == {name: float(c) for name, c in (
        part.split() for part in recorded["cluster"]["queues"].split(", "))}
    assert scheduler.type == "capacity"
    assert cluster.maximum_allocation == Res(6144, 6)


def test_the_history_on_its_own_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["simulate", "--jhist", str(JHIST_MINI), "--cluster-from", str(RECORDING), "--json"]
    assert main(args) == 0
    (line,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["jobs_finished"] == 2 and line["jobs_failed"] == 0


def test_bad_clusters_are_clear_errors(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    snap = snapshot_from(str(RECORDING))
    with pytest.raises(WorkloadError, match="no running node"):
        cluster_of(replace(snap, nodes=()), "rec")
    with pytest.raises(WorkloadError, match="no leaf queue"):
        cluster_of(replace(snap, queues=()), "rec")
    wl, _ = read_history("jhist", [JHIST_MINI])
    lost = replace(wl, jobs=tuple(replace(j, queue="nosuch") for j in wl.jobs))
    with pytest.raises(WorkloadError, match="'nosuch' is not a leaf queue"):
        on_cluster(lost, str(RECORDING))
    assert main(["simulate", "--jhist", str(JHIST_MINI), "--cluster-from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: not a recording or an RM URL" in err and "Traceback" not in err
