"""Streaming reader of Alibaba's ``cluster-trace-v2018`` batch tasks (``batch_task.csv``).

Each row is one *task* of a Fuxi batch job: a group of ``instance_num``
instances of one DAG node, timed as a whole (``start_time``, ``end_time``,
seconds since the trace's start). Columns, in this order (the trace's own
file has no header; a file with the header ``task_name,...`` is read too)::

    task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem

The task name encodes the DAG: ``M1`` (node 1, a map), ``R2_1`` (node 2, a
reduce after node 1), ``J8_3_7`` (a join); ``task_<id>`` is a task without
a DAG. The properties (docs/classifier.md says why):

- F ``FUXI``; S the task name (its DAG node: what is the same in every run
  of one DAG, as a Spark stage name is); Q and U unknown (``?``: the trace
  has no queue and no user);
- A the job's *DAG*: its task names, sorted and joined (jobs of one DAG
  recur; the job name ``j_<n>`` is a per-run id);
- Z the job's number of tasks as maps, 0 reduces;
- D ``plan_mem`` (normalised to [0, 100]) in MiB as if 100 were 64 GiB;
- J the job name; P unknown (not MapReduce).

Status: ``Terminated`` is ``SUCCESS``, ``Failed`` ``FAILED``, ``Cancelled``
and ``Interrupted`` ``KILLED``; ``Running`` is censored at its ``end_time``
(the last time it was seen), or at the file's last time when it has none;
``Waiting`` (never started) is ignored, as is a row without a start. A row
with too few fields, a non-numeric time or an end before its start is
counted ``bad_row``. Rows are grouped by job, so a file's compact task
records are held until it is read whole.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import IO

from yarn_advisor.classifiers.readers.records import (
    CENSORED,
    FAILED,
    KILLED,
    SUCCESS,
    TraceAttempt,
    TraceJob,
    TraceTask,
)
from yarn_advisor.classifiers.readers.sources import (
    FormatReader,
    ReadReport,
    read_file,
    scaled_mb,
    stage_job,
)

FRAMEWORK = "FUXI"
COLUMNS = ("task_name", "instance_num", "job_name", "task_type", "status", "start_time",
           "end_time", "plan_cpu", "plan_mem")
MEMORY_SCALE_MB = 65536 / 100  # plan_mem 100: a 64 GiB machine (D's scale only)
_STATUS = {"Terminated": SUCCESS, "Failed": FAILED, "Cancelled": KILLED,
           "Interrupted": KILLED, "Running": CENSORED}


class AlibabaTaskReader(FormatReader):
    """Iterate the jobs of the ``batch_task`` CSV files in ``paths``, in order
    of first appearance; :attr:`report` counts what was read and skipped."""

    READER = "alibaba-2018"

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        for path in map(Path, self.paths):
            jobs: dict[str, list[TraceTask]] = {}
            read_file(path, report, partial(_rows, path, jobs=jobs, report=report))
            for name, tasks in jobs.items():
                yield _build(name, tasks)


def _rows(path: Path, raw: IO[bytes], *, jobs: dict[str, list[TraceTask]],
          report: ReadReport) -> bool:
    latest = [0]  # the file's last time seen, s
    with io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="") as text:
        rows = csv.reader(text)
        for row in rows:
            if not row or not any(c.strip() for c in row):
                continue
            if row[0] == COLUMNS[0]:
                continue  # the header
            line = rows.line_num
            if len(row) < len(COLUMNS):
                report.skip("bad_row", path, f"line {line}: {len(row)} field(s), "
                            f"expected {len(COLUMNS)}")
                continue
            name, _, job, _, status, start, end, _, mem = (c.strip() for c in row[:9])
            kind = _STATUS.get(status)
            if status == "Waiting" or (kind is None and status in ("", "Ready")):
                report.ignore("never_started")
                continue
            try:
                start_s, end_s = int(float(start)), int(float(end or "-1"))
            except ValueError:
                report.skip("bad_row", path, f"line {line}: time {start!r} or {end!r} "
                            "is not a number")
                continue
            if kind is None:
                report.skip("bad_row", path, f"line {line}: status {status!r}")
                continue
            if start_s <= 0:
                report.ignore("never_started")
                continue
            latest[0] = max(latest[0], start_s, end_s)
            if kind == CENSORED and end_s < start_s:
                end_s = -1  # not seen since it started: censored at the file's last time
            elif end_s < start_s:
                report.skip("bad_row", path, f"line {line}: end_time {end_s} before "
                            f"start_time {start_s}")
                continue
            task_id = f"{job}/{name}#{line}"
            start_ms, end_ms = start_s * 1000, end_s * 1000
            jobs.setdefault(job, []).append(_task(task_id, name, kind, start_ms, end_ms, mem))
    end_ms = latest[0] * 1000
    for tasks in jobs.values():  # the running ones not seen since they started
        tasks[:] = [_task(t.task_id, t.type, t.status, t.start_ms, max(end_ms, t.start_ms),
                          "", t.memory_mb) if t.finish_ms < 0 else t for t in tasks]
    return True


def _task(task_id: str, name: str, kind: str, start_ms: int, end_ms: int, mem: str,
          memory_mb: int = -1) -> TraceTask:
    attempt = TraceAttempt(task_id, "", start_ms, end_ms, kind)
    return TraceTask(task_id, name or "?", kind, start_ms, end_ms, (attempt,),
                     memory_mb=scaled_mb(mem, MEMORY_SCALE_MB, 100) if mem else memory_mb)


def dag_of(tasks: Iterable[TraceTask]) -> str:
    """The A property of a job: its task names, sorted and joined (at most 200
    characters: :func:`~yarn_advisor.classifiers.model.features.app_name` keeps 80,
    so a long DAG is named by its first nodes and its size)."""
    names = sorted({t.type for t in tasks})
    return f"{len(names)}:" + ",".join(names)[:200]


def _build(name: str, tasks: list[TraceTask]) -> TraceJob:
    return stage_job(name, tuple(tasks), FRAMEWORK, name=dag_of(tasks), total_maps=len(tasks))
