"""The JobHistory reader against Hadoop's own reading of the same files.

Rumen's ``TraceBuilder`` (Hadoop 3.4.2, from the test cluster's jars) turns
``.jhist`` files and their job confs into a Rumen trace; the project's Rumen
reader reads that trace. Every job and task must come out the same as from
:class:`JhistReader` reading the ``.jhist`` directly: identity, task types,
statuses, scheduling, launch and end times, every attempt, and (with a real
done directory of the test cluster, confs included) the memory asked.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from _layouts import layouts
from yarnmini import MiniCluster, rumen_trace

from yarn_advisor.classifiers.readers.jhist import JhistReader
from yarn_advisor.classifiers.readers.records import TraceJob
from yarn_advisor.classifiers.readers.rumen import RumenTrace

# Hadoop 3.4's reader stops in this Hadoop 0.23.9 file after its first failed
# attempt (the old event schema lacks fields the new one requires), so only
# what it read before is compared.
STOPS_EARLY = "job_1399356417814_19732"


def _attempts(job: TraceJob) -> dict[str, tuple[int, int, str]]:
    return {a.attempt_id: (a.start_ms, a.finish_ms, a.result)
            for t in (*job.maps, *job.reduces, *job.others) for a in t.attempts}


def assert_same(ours: TraceJob, rumen: TraceJob, whole: bool = True) -> None:
    # Rumen takes the queue from the job conf when there is one (etl), else from
    # the last JOB_QUEUE_CHANGED (root.default); the reader keeps the leaf.
    assert (ours.name, ours.user) == (rumen.name, rumen.user)
    assert ours.queue == rumen.queue.rsplit(".", 1)[-1]
    assert (ours.total_maps, ours.total_reduces) == (rumen.total_maps, rumen.total_reduces)
    assert (ours.submit_ms, ours.launch_ms) == (rumen.submit_ms, rumen.launch_ms)
    mine = {t.task_id: t for t in (*ours.maps, *ours.reduces, *ours.others)}
    theirs = {t.task_id: t for t in (*rumen.maps, *rumen.reduces)}
    assert set(mine) == set(theirs)
    for task_id, r in theirs.items():
        o = mine[task_id]
        assert (o.type, o.start_ms, o.launch_ms) == (r.type, r.start_ms, r.launch_ms), task_id
        if whole:
            assert (o.status, o.finish_ms, o.duration_ms) == (r.status, r.finish_ms,
                                                              r.duration_ms), task_id
    if whole:
        assert (ours.outcome, ours.finish_ms) == (rumen.outcome, rumen.finish_ms)
        assert _attempts(ours) == _attempts(rumen)
    else:
        assert {a: s for a, (s, _, _) in _attempts(ours).items() if a in _attempts(rumen)} == {
            a: s for a, (s, _, _) in _attempts(rumen).items()}


def test_shared_files_read_as_rumen_reads_them(hadoop_jars: str, jhist_files: list[Path],
                                               tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    for path in jhist_files:  # TraceBuilder takes the job id from the file name
        m = re.search(rb'"jobid":"(job_\d+_\d+)"', path.read_bytes())
        assert m, path
        shutil.copy(path, history / f"{m.group(1).decode()}.jhist")
    trace = RumenTrace(rumen_trace(history, tmp_path / "trace.json"))
    theirs = {j.job_id: j for j in trace}
    assert trace.problem is None
    reader = JhistReader([history])
    ours = {j.job_id: j for j in reader}
    assert set(ours) == set(theirs) and len(ours) == 6
    for job_id, rumen in theirs.items():
        assert_same(ours[job_id], rumen, whole=job_id != STOPS_EARLY)
    assert reader.report.damaged == 0


def test_hadoop_reads_the_layouts_the_reader_reads(hadoop_jars: str, jhist_files: list[Path],
                                                   tmp_path: Path) -> None:
    # Hadoop's EventReader (in TraceBuilder) takes every layout of tests/readers/_layouts.py:
    # what the reader must accept; each read the same by both. One TraceBuilder run over
    # all of them (a JVM each cost about 35 s): layout k is job ..._000k, its ids renamed
    # in place (the same length, so the layout is unchanged)
    original = next(p for p in jhist_files if "Sleep+job" in p.name)
    ours: dict[str, tuple[str, TraceJob]] = {}
    history = tmp_path / "layouts"
    history.mkdir()
    for k, (layout, data) in enumerate(layouts(original.read_bytes()).items(), start=1):
        job = f"1329348432655_{k:04d}"
        (history / f"job_{job}.jhist").write_bytes(data.replace(b"1329348432655_0001",
                                                                job.encode()))
        alone = tmp_path / f"ours{k}"
        alone.mkdir()
        (alone / f"job_{job}.jhist").write_bytes((history / f"job_{job}.jhist").read_bytes())
        reader = JhistReader([alone])
        read = list(reader)
        assert len(read) == 1 and reader.report.damaged == 0, layout
        ours[f"job_{job}"] = (layout, read[0])
    trace = RumenTrace(rumen_trace(history, tmp_path / "trace.json"))
    theirs = {j.job_id: j for j in trace}
    assert trace.problem is None and set(theirs) == set(ours)
    for job_id, (layout, job) in ours.items():
        assert job.job_id == job_id, layout
        assert_same(job, theirs[job_id])


RECORDED = Path(__file__).resolve().parents[2] / "examples" / "jhist-mini"


def test_recorded_hadoop_3_files_read_as_rumen_reads_them(hadoop_jars: str,
                                                          tmp_path: Path) -> None:
    # one binary .jhist with its conf, one JSON .jhist without
    trace = RumenTrace(rumen_trace(RECORDED, tmp_path / "trace.json"))
    theirs = {j.job_id: j for j in trace}
    ours = {j.job_id: j for j in JhistReader([RECORDED])}
    assert trace.problem is None and set(ours) == set(theirs) and len(ours) == 2
    for job_id, rumen in theirs.items():
        assert_same(ours[job_id], rumen)
        assert (ours[job_id].map_mb, ours[job_id].reduce_mb) == (
            rumen.memory_mb("MAP"), rumen.memory_mb("REDUCE"))
    assert sorted(j.map_mb for j in ours.values()) == [-1, 768]


def _wait_for_history(cluster: MiniCluster, job_id: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = cluster.history_done_dir
        if list(done.rglob(f"{job_id}-*.jhist")) and list(done.rglob(f"{job_id}_conf.xml")):
            return
        time.sleep(1.0)
    raise AssertionError(f"no history of {job_id} under {cluster.history_done_dir}")


@pytest.mark.cluster
def test_a_real_done_directory_reads_as_rumen_reads_it(mini_cluster: MiniCluster,
                                                       tmp_path: Path) -> None:
    app = mini_cluster.sleep_job(queue="etl", maps=3, reduces=1, map_ms=1500, reduce_ms=500,
                                 map_mb=768, reduce_mb=512, map_vcores=2, reduce_vcores=1)
    # a small job run inside its AM's container (uber): its tasks get no containers
    uber = mini_cluster.sleep_job(maps=2, reduces=1, map_ms=200, reduce_ms=100,
                                  conf={"mapreduce.job.ubertask.enable": "true"})
    assert app.wait(timeout=300) == 0 and uber.wait(timeout=300) == 0
    job_id = app.app_id.replace("application_", "job_")
    uber_id = uber.app_id.replace("application_", "job_")
    _wait_for_history(mini_cluster, job_id)
    _wait_for_history(mini_cluster, uber_id)
    trace = RumenTrace(rumen_trace(mini_cluster.history_done_dir, tmp_path / "trace.json"))
    theirs = {j.job_id: j for j in trace}
    reader = JhistReader([mini_cluster.history_done_dir])  # every job of the session so far
    ours = {j.job_id: j for j in reader}
    assert job_id in ours and set(ours) == set(theirs)
    for other_id, rumen in theirs.items():
        assert_same(ours[other_id], rumen)
        assert (ours[other_id].map_mb, ours[other_id].reduce_mb) == (
            rumen.memory_mb("MAP"), rumen.memory_mb("REDUCE"))
    job = ours[job_id]
    assert (job.name, job.queue, job.outcome) == ("Sleep job", "etl", "SUCCESS")
    assert (job.map_mb, job.reduce_mb) == (768, 512)  # from the job's _conf.xml
    assert {t.vcores for t in job.maps} == {2} and {t.vcores for t in job.reduces} == {1}
    assert (len(job.maps), len(job.reduces)) == (3, 1)
    assert all(t.status == "SUCCESS" and t.duration_ms and t.duration_ms >= 1500
               for t in job.maps)
    assert reader.report.damaged == 0
    inside = ours[uber_id]
    assert (inside.maps, inside.reduces, len(inside.others)) == ((), (), 3)
    assert {t.type for t in inside.others} == {"MAP", "REDUCE"}
    assert reader.report.ignored.get("uber_task", 0) >= 3
    inside = ours[uber_id]
    assert (inside.maps, inside.reduces, len(inside.others)) == ((), (), 3)
    assert {t.type for t in inside.others} == {"MAP", "REDUCE"}
    assert reader.report.ignored.get("uber_task", 0) >= 3
