"""The task CSV: its documented header, extra columns, a missing column, bad rows.

The rows are real: the tasks of Rumen traces (tests/fixtures), written as
the CSV documents them. Evaluated through the CSV they must give exactly the
figures the Rumen trace gives.
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from yarn_advisor.classifiers.evaluation.evaluate import evaluate_reader, evaluate_traces
from yarn_advisor.classifiers.readers.rumen import RumenTrace
from yarn_advisor.classifiers.readers.sources import SourceError
from yarn_advisor.classifiers.readers.tasks_csv import COLUMNS, TaskCsvReader

TRACES = ("distcache_case4_trace", "trace_7m")
STATUS = {"SUCCESS": "SUCCEEDED", "": "SUCCEEDED", "FAILED": "FAILED", "KILLED": "KILLED"}


def trace_rows(trace: Path) -> list[dict[str, str]]:
    """One row per MAP/REDUCE task of a Rumen trace, as the CSV documents it."""
    rows = []
    for job in RumenTrace(trace):
        for t in (*job.maps, *job.reduces):
            if t.duration_ms is None or t.type not in ("MAP", "REDUCE"):
                continue
            rows.append({
                "job_id": job.job_id, "job_name": job.name, "user": job.user,
                "queue": job.queue, "task_type": t.type, "start_ms": str(t.launch_ms),
                "finish_ms": str(t.finish_ms), "memory_mb": str(job.memory_mb(t.type)),
                "vcores": "", "status": STATUS[t.status],
            })  # fmt: skip
    return rows


def write_csv(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> Path:
    columns = columns or list(COLUMNS)
    with path.open("w", newline="") as fh:
        out = csv.DictWriter(fh, columns, extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)
    return path


@pytest.fixture
def trace(fixture_data: Path, request: pytest.FixtureRequest) -> Path:
    return fixture_data / "hadoop-gridmix-system-traces" / f"{request.param}.json.gz"


@pytest.mark.parametrize("trace", TRACES, indirect=True)
def test_a_trace_as_csv_evaluates_as_the_trace(trace: Path, tmp_path: Path) -> None:
    rows = trace_rows(trace)
    reader = TaskCsvReader([write_csv(tmp_path / "tasks.csv", rows)])
    via_csv, via_rumen = evaluate_reader(reader), evaluate_traces([trace])
    assert reader.report.tasks == len(rows) and reader.report.damaged == 0
    assert via_csv.n("short") + via_csv.n("long") == len(rows)
    for key in ("short", "long", "confusion", "cold_starts", "first_seen", "short_called_long_by",
                "unresolved_tasks", "long_called_short"):
        assert via_csv.to_json()[key] == via_rumen.to_json()[key], key


@pytest.mark.parametrize("trace", TRACES[:1], indirect=True)
def test_column_order_and_extra_columns_do_not_matter(trace: Path, tmp_path: Path) -> None:
    rows = trace_rows(trace)
    plain = list(TaskCsvReader([write_csv(tmp_path / "a.csv", rows)]))
    shuffled = ["status", "extra", *reversed(COLUMNS[:-1]), "comment"]
    for row in rows:
        row |= {"extra": "x,y", "comment": "ignored"}
    moved = tmp_path / "b.csv.gz"
    moved.write_bytes(gzip.compress(write_csv(tmp_path / "b.csv", rows, shuffled).read_bytes()))
    assert list(TaskCsvReader([moved])) == plain
    job = plain[0]
    assert job.framework == "MAPREDUCE" and job.total_maps == len(job.maps) > 0
    assert all(t.vcores == -1 and t.memory_mb > 0 for t in (*job.maps, *job.reduces))


@pytest.mark.parametrize("missing", ["vcores", "status", "job_id"])
def test_a_missing_column_is_a_clear_error(tmp_path: Path, missing: str) -> None:
    columns = [c for c in COLUMNS if c != missing]
    path = write_csv(tmp_path / "tasks.csv", [], columns)
    with pytest.raises(SourceError, match=f"missing required column\\(s\\) {missing} "):
        list(TaskCsvReader([path]))


def test_bad_rows_are_counted_and_skipped(tmp_path: Path) -> None:
    header = ",".join(COLUMNS)
    good = "job_1,etl,alice,q,MAP,1700000000000,1700000005000,1024,1,SUCCEEDED"
    lines = [
        "\ufeff" + header, good,
        "job_1,etl,alice,q,MAP,1700000000000,1699999999999,1024,1,SUCCEEDED",  # ends first
        "job_1,etl,alice,q,MAP,soon,1700000005000,1024,1,SUCCEEDED",  # not a number
        "job_1,etl,alice,q,MAP,1700000000000,1700000005000,1024,1,LOST",  # unknown status
        "job_1,etl,alice,q,MAP,1700000000000",  # short row
        "",  # blank: not a row
        ",etl,alice,q,MAP,1700000000000,1700000005000,1024,1,SUCCEEDED",  # no job
        "job_2,spark-report,bob,q,count at A.scala:12,1700000001000,1700000002000,4505,1,killed",
    ]
    path = tmp_path / "tasks.csv"
    path.write_text("\n".join(lines) + "\n")
    reader = TaskCsvReader([path])
    jobs = {j.job_id: j for j in reader}
    assert reader.report.skipped == {"bad_row": 5}
    assert [p.split(": ", 1)[1].split(":")[0] for p in reader.report.problems] == [
        "line 3", "line 4", "line 5", "line 6", "line 8"]
    assert len(jobs["job_1"].maps) == 1 and jobs["job_1"].maps[0].duration_ms == 5000
    other = jobs["job_2"]  # not MAP/REDUCE: a stage of an unknown framework
    assert (other.framework, other.total_maps, len(other.stage_tasks)) == ("?", -1, 1)
    task = other.stage_tasks[0]
    assert (task.type, task.status, task.memory_mb, task.vcores) == (
        "count at A.scala:12", "KILLED", 4505, 1)
