"""The readers of the real clusters' traces on slices of them (tests/fixtures), against
independent counts of the same files (zcat and awk), and on broken copies."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from _counts import count_spark

from yarn_advisor.classifiers.evaluation.cli import register
from yarn_advisor.classifiers.readers.alibaba import AlibabaTaskReader
from yarn_advisor.classifiers.readers.google import GoogleTraceReader
from yarn_advisor.classifiers.readers.records import TraceJob, TraceTask
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader
from yarn_advisor.classifiers.readers.swf import SwfReader


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="yarn-advisor")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


def awk(program: str, *files: Path, sep: str = ",") -> dict[str, int]:
    """``zcat -f FILES | awk -F SEP PROGRAM``, whose output is ``key value`` lines."""
    cat = subprocess.run(["zcat", "-f", *map(str, files)], check=True, capture_output=True)
    out = subprocess.run(["awk", "-F", sep, program], input=cat.stdout, check=True,
                         capture_output=True).stdout.decode()
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def tasks(jobs: list[TraceJob]) -> list[TraceTask]:
    return [t for j in jobs for t in j.stage_tasks]


def by_status(jobs: list[TraceJob]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tasks(jobs):
        out[t.status] = out.get(t.status, 0) + 1
    return out


# Runs of Borg tasks: SCHEDULE at a known time (> 0) to the next end event of
# the same (job, index); the still open at the end are censored.
GOOGLE_AWK = r"""
{ key = $3 "/" $4 }
$6 == 1 { open[key] = $1; next }
$6 >= 2 && $6 <= 6 {
    if (key in open) {
        if (open[key] > 0) { n[$6]++; ms[$6] += int($1 / 1000) - int(open[key] / 1000) }
        else before++
        delete open[key]
    } else never++
}
END {
    for (k in open) { if (open[k] > 0) censored++; else before++ }
    for (e = 2; e <= 6; e++) { print "end" e, n[e] + 0; print "ms" e, ms[e] + 0 }
    print "censored", censored + 0; print "before", before + 0; print "never", never + 0
}
"""


def test_google_runs_match_an_independent_count(fixture_data: Path) -> None:
    folder = fixture_data / "google-clusterdata-2011"
    files = sorted((folder / "task_events").iterdir())
    want = awk(GOOGLE_AWK, *files)
    reader = GoogleTraceReader([folder])
    jobs = list(reader)
    got = by_status(jobs)
    assert got["SUCCESS"] == want["end4"] > 500
    assert got["FAILED"] == want["end3"]
    assert got["KILLED"] == want["end2"] + want["end5"] + want["end6"]
    assert got.get("RUNNING", 0) == want["censored"]
    finished = [t for t in tasks(jobs) if t.status == "SUCCESS"]
    assert sum(t.duration_ms or 0 for t in finished) == want["ms4"]
    ignored = {"started_before_trace": want["before"], "never_scheduled": want["never"]}
    assert reader.report.ignored == {k: v for k, v in ignored.items() if v}
    assert reader.report.damaged == 0 and reader.report.files == 2
    assert reader.report.tasks == len(tasks(jobs))


def test_google_properties_come_from_the_job_and_task_events(fixture_data: Path) -> None:
    folder = fixture_data / "google-clusterdata-2011"
    jobs = {j.job_id: j for j in GoogleTraceReader([folder])}
    job_events = sorted((folder / "job_events").iterdir())
    names = {}
    for line in gzip.decompress(job_events[0].read_bytes()).decode().splitlines():
        f = line.split(",")
        names.setdefault(f[2], (f[4], f[5], f[7] or f[6]))
    known = [j for j in jobs.values() if j.job_id in names]
    assert len(known) > 10
    for job in known:
        user, sched_class, logical = names[job.job_id]
        assert (job.user, job.name, job.framework) == (user, logical, "BORG")
        assert {t.type for t in job.stage_tasks} == {"SC" + sched_class}
        assert job.queue.startswith("P") and job.total_maps >= 1 and job.total_reduces == 0
        assert all(t.memory_mb > 0 for t in job.stage_tasks)


ALIBABA_AWK = r"""
NR > 1 && $5 == "Waiting" { never++; next }
NR > 1 && $6 + 0 <= 0 { never++; next }
NR > 1 && $5 == "Running" { censored++; next }
NR > 1 && $7 + 0 < $6 + 0 { bad++; next }
NR > 1 { n[$5]++; s[$5] += $7 - $6 }
END {
    print "terminated", n["Terminated"] + 0; print "failed", n["Failed"] + 0
    print "seconds", s["Terminated"] + 0
    print "censored", censored + 0; print "never", never + 0; print "bad", bad + 0
}
"""


def test_alibaba_tasks_match_an_independent_count(fixture_data: Path) -> None:
    csv_file = fixture_data / "alibaba-v2018-dag-tasks" / "selected_DAGs_head2000.csv"
    want = awk(ALIBABA_AWK, csv_file)
    reader = AlibabaTaskReader([csv_file])
    jobs = list(reader)
    got = by_status(jobs)
    assert got["SUCCESS"] == want["terminated"] > 1000
    assert got.get("FAILED", 0) == want["failed"]
    assert got.get("RUNNING", 0) == want["censored"]
    assert sum(t.duration_ms or 0 for t in tasks(jobs) if t.status == "SUCCESS") == (
        1000 * want["seconds"])
    assert reader.report.ignored.get("never_started", 0) == want["never"]
    assert reader.report.skipped.get("bad_row", 0) == want["bad"]
    assert len(jobs) == len(awk('NR > 1 { print $3, 1 }', csv_file))
    for job in jobs:  # the DAG names the application; each task its node
        assert job.name == f"{len({t.type for t in job.stage_tasks})}:" + ",".join(
            sorted({t.type for t in job.stage_tasks}))[:200]
        assert (job.framework, job.user, job.queue) == ("FUXI", "", "")


SWF_AWK = r"""
/^;/ || NF == 0 { next }
NF != 18 { bad++; next }
$4 < 0 { norun++; next }
{ n[$11]++; s += $4; u[$12] = 1 }
END {
    print "jobs", n[1] + n[0] + n[5] + n[-1] + n[2] + n[3] + n[4]
    print "seconds", s; print "bad", bad + 0; print "norun", norun + 0
    print "users", length(u)
}
"""


def test_swf_jobs_match_an_independent_count(fixture_data: Path) -> None:
    log = next((fixture_data / "nasa-ipsc-1993-swf").glob("*.swf.gz"))
    want = awk(SWF_AWK, log, sep=" ")
    reader = SwfReader([log])
    jobs = list(reader)
    assert len(jobs) == want["jobs"] == 3000
    assert sum(t.duration_ms or 0 for t in tasks(jobs)) == 1000 * want["seconds"]
    assert len({j.user for j in jobs}) == want["users"]
    assert reader.report.damaged == want["bad"] == 0
    assert all(len(j.stage_tasks) == 1 and j.stage_tasks[0].type == "JOB" for j in jobs)


def test_sparklint_log_reads_as_its_task_ends_say(fixture_data: Path) -> None:
    log = fixture_data / "groupon-sparklint-eventlogs" / "event_log_0"
    want = count_spark(log)
    reader = SparkEventLogReader([log])
    jobs = list(reader)
    assert len(jobs) == 1 and reader.report.damaged == 0
    got = {t.task_id: t for t in jobs[0].stage_tasks}
    assert len(got) == len(want) == 204
    assert sorted(t.duration_ms or 0 for t in got.values()) == sorted(
        w.finish_ms - w.launch_ms for w in want.values() if w.finish_ms and w.launch_ms)


def test_damaged_lines_are_counted_and_the_rest_read(fixture_data: Path,
                                                     tmp_path: Path) -> None:
    folder = fixture_data / "google-clusterdata-2011"
    copy = tmp_path / "google"
    shutil.copytree(folder, copy)
    part = next((copy / "task_events").iterdir())
    lines = gzip.decompress(part.read_bytes()).splitlines(keepends=True)
    broken = [*lines[:100], b"not,a,row\n", b"x" * 30 + b"\n", b"\n", *lines[100:]]
    part.write_bytes(gzip.compress(b"".join(broken)))
    whole = by_status(list(GoogleTraceReader([folder])))
    reader = GoogleTraceReader([copy])
    assert by_status(list(reader)) == whole
    assert reader.report.skipped == {"bad_row": 2}
    # a gzip part cut short: what came before is read, the cut counted
    data = gzip.compress(b"".join(lines))
    part.write_bytes(data[: len(data) // 2])
    reader = GoogleTraceReader([copy])
    assert len(tasks(list(reader))) > 0 and reader.report.skipped == {"truncated_file": 1}

    swf = tmp_path / "log.swf"
    swf.write_bytes(gzip.decompress(next((fixture_data / "nasa-ipsc-1993-swf")
                                         .glob("*.swf.gz")).read_bytes()) + b"1 2 3\nx y\n")
    reader2 = SwfReader([swf])
    assert len(list(reader2)) == 3000 and reader2.report.skipped == {"bad_row": 2}
    ali = tmp_path / "tasks.csv"
    ali.write_bytes((fixture_data / "alibaba-v2018-dag-tasks" / "selected_DAGs_head2000.csv")
                    .read_bytes() + b"M1,1.0,j_x,1,Terminated,abc,12\nM1,1\n")
    reader3 = AlibabaTaskReader([ali])
    list(reader3)
    assert reader3.report.skipped["bad_row"] >= 2


@pytest.mark.parametrize("option,sub,reader", [
    ("--google", "google-clusterdata-2011", "google-2011"),
    ("--alibaba", "alibaba-v2018-dag-tasks/selected_DAGs_head2000.csv", "alibaba-2018"),
    ("--swf", "nasa-ipsc-1993-swf/NASA-iPSC-1993-3.1-cln_first3000.swf.gz", "swf"),
])
def test_classify_eval_reads_each_trace(fixture_data: Path, capsys: pytest.CaptureFixture[str],
                                        option: str, sub: str, reader: str) -> None:
    assert main(["classify-eval", option, str(fixture_data / sub), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["read"]["reader"] == reader and out["read"]["tasks"] > 0
    assert out["short"]["n"] + out["long"]["n"] > 0
