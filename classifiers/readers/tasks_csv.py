"""The task CSV: one row per task, for a history kept in neither JobHistory nor Spark logs.

The first line is the header. It must name these columns, in any order
(names exact, surrounding spaces ignored); other columns are ignored::

    job_id,job_name,user,queue,task_type,start_ms,finish_ms,memory_mb,vcores,status
    job_1,nightly-etl,alice,etl,MAP,1700000000000,1700000012000,2048,1,SUCCEEDED

- ``job_id``: the job the task belongs to (its rows need not be adjacent);
  ``job_name``, ``user``, ``queue``: the job's identity, from its first row
  (``job_name`` is the application feature, so the name that recurs run
  after run, not a per-run id);
- ``task_type``: ``MAP`` or ``REDUCE`` for a MapReduce task (a job with only
  these is a MapReduce job, and its maps are counted for its progress);
  any other value is the *stage* of a task of another framework (a Spark
  stage name, a Tez vertex): such a job's framework is unknown (``?``);
- ``start_ms``, ``finish_ms``: epoch milliseconds when the task got its
  container and when it ended (``finish_ms >= start_ms``);
- ``memory_mb``, ``vcores``: the container asked; empty or -1 when unknown;
- ``status``: ``SUCCEEDED``, ``FAILED`` or ``KILLED`` (any case).

A file may be gzip, bzip2 or xz compressed. A missing required column
raises :class:`~yarn_advisor.classifiers.readers.sources.SourceError` naming it; a
row with a missing or invalid value is counted ``bad_row`` and skipped.
Rows are grouped by job, so a file's tasks are held in memory (as compact
records) until it is read whole.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from yarn_advisor.classifiers.readers.records import (
    FAILED,
    KILLED,
    MR_STAGES,
    SUCCESS,
    TraceAttempt,
    TraceJob,
    TraceTask,
)
from yarn_advisor.classifiers.readers.sources import (
    FormatReader,
    ReadReport,
    SourceError,
    read_file,
)

COLUMNS = ("job_id", "job_name", "user", "queue", "task_type", "start_ms", "finish_ms",
           "memory_mb", "vcores", "status")
UNKNOWN_FRAMEWORK = "?"
_STATUS = {"SUCCEEDED": SUCCESS, "FAILED": FAILED, "KILLED": KILLED}


@dataclass
class _Job:
    name: str
    user: str
    queue: str
    tasks: list[TraceTask] = field(default_factory=list)


class TaskCsvReader(FormatReader):
    """Iterate the jobs of the task CSV files in ``paths``, in order of first
    appearance; :attr:`report` counts what was read and skipped."""

    READER = "tasks-csv"
    COUNTS = False  # read_tasks_csv counts each file's jobs

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        for path in map(Path, self.paths):
            yield from read_tasks_csv(path, report)


def read_tasks_csv(path: Path, report: ReadReport) -> list[TraceJob]:
    """The jobs of one task CSV. Raises :class:`SourceError` if its header
    lacks a required column; bad rows are counted in ``report``."""
    jobs: dict[str, _Job] = {}
    read_file(path, report, lambda raw: _read_text(path, raw, jobs, report))  # csv.Error: cut
    built = [_build(job_id, job) for job_id, job in jobs.items()]
    report.jobs += len(built)
    report.tasks += sum(len(j.maps) + len(j.reduces) + len(j.stage_tasks) for j in built)
    return built


def _read_text(path: Path, raw: IO[bytes], jobs: dict[str, _Job], report: ReadReport) -> None:
    with io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        _read_rows(path, text, jobs, report)


def _read_rows(path: Path, text: IO[str], jobs: dict[str, _Job], report: ReadReport) -> None:
    rows = csv.reader(text)
    header = next(rows, None)
    if header is None:
        raise SourceError(f"{path}: empty file, expected a header with {', '.join(COLUMNS)}")
    names = [h.strip() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise SourceError(f"{path}: missing required column(s) {', '.join(missing)} "
                          f"(the header must name {', '.join(COLUMNS)})")
    at = {c: names.index(c) for c in COLUMNS}
    width = max(at.values()) + 1
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        line = rows.line_num
        if len(row) < width:
            report.skip("bad_row", path, f"line {line}: {len(row)} field(s), "
                        f"the header has {len(names)}")
            continue
        try:
            task, job_id = _task(row, at, line)
        except ValueError as exc:
            report.skip("bad_row", path, f"line {line}: {exc}")
            continue
        job = jobs.get(job_id)
        if job is None:
            job = jobs[job_id] = _Job(row[at["job_name"]].strip(), row[at["user"]].strip(),
                                      row[at["queue"]].strip())
        job.tasks.append(task)


def _task(row: list[str], at: dict[str, int], line: int) -> tuple[TraceTask, str]:
    def cell(name: str) -> str:
        return row[at[name]].strip()

    job_id, task_type = cell("job_id"), cell("task_type")
    if not job_id or not task_type:
        raise ValueError("empty job_id" if not job_id else "empty task_type")
    start, finish = _int(cell("start_ms"), "start_ms"), _int(cell("finish_ms"), "finish_ms")
    if start <= 0 or finish < start:
        raise ValueError(f"finish_ms {finish} before start_ms {start}" if start > 0
                         else f"start_ms {start} is not an epoch time")
    status = _STATUS.get(cell("status").upper())
    if status is None:
        raise ValueError(f"status {cell('status')!r} is not SUCCEEDED, FAILED or KILLED")
    memory = _int(cell("memory_mb") or "-1", "memory_mb")
    vcores = _int(cell("vcores") or "-1", "vcores")
    task_id = f"{job_id}#{line}"
    attempt = TraceAttempt(task_id, "", start, finish, status)
    return TraceTask(task_id, task_type, status, start, finish, (attempt,),
                     memory_mb=memory, vcores=vcores), job_id


def _int(text: str, column: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{column} {text!r} is not an integer") from None


def _build(job_id: str, job: _Job) -> TraceJob:
    mapreduce = all(t.type in MR_STAGES for t in job.tasks)
    maps = tuple(t for t in job.tasks if t.type == "MAP") if mapreduce else ()
    reduces = tuple(t for t in job.tasks if t.type == "REDUCE") if mapreduce else ()
    starts = [t.start_ms for t in job.tasks]
    ends = [t.finish_ms for t in job.tasks]
    return TraceJob(
        job_id=job_id, user=job.user, name=job.name, queue=job.queue, job_type="",
        outcome="", submit_ms=min(starts), launch_ms=min(starts), finish_ms=max(ends),
        total_maps=len(maps) if mapreduce else -1,
        total_reduces=len(reduces) if mapreduce else -1,
        map_mb=-1, reduce_mb=-1, heap_mb=-1, maps=maps, reduces=reduces,
        framework="MAPREDUCE" if mapreduce else UNKNOWN_FRAMEWORK,
        stage_tasks=() if mapreduce else tuple(job.tasks),
    )
