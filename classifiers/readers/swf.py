"""Streaming reader of Standard Workload Format logs (the Parallel Workloads Archive).

An SWF log is one line per *job* of an HPC machine, 18 whitespace-separated
fields (``-1``: unknown), after a header of ``;`` comment lines::

    job submit wait run procs cpu_used mem_used procs_req time_req mem_req
    status user group executable queue partition preceding_job think_time

Each job is one task (HPC jobs are not split into tasks), so this is a
check of the user level on another domain, not YARN data. The properties
(docs/classifier.md says why):

- F ``HPC``; S ``JOB``; Q the queue number (``Q<n>``), else the group
  (``G<n>``: normal users and system staff), else unknown;
- U the user number; A the executable (application) number (in letters);
- Z the processors allocated as maps (the job's size), 0 reduces;
- D the memory requested per processor (KiB in SWF) in MiB, else unknown;
- J the job number; P unknown.

Start = submit + wait (wait unknown: the submit time, as the archive's
NASA log says its submit times are start times); the run time is the
task's length. Status ``1`` (completed) is ``SUCCESS``, ``0`` ``FAILED``,
``5`` ``KILLED`` (cancelled), ``-1`` not recorded (taken as succeeded);
statuses 2-4 (partial executions of a checkpointed job) are parts of one
job: each is a task of its own. A line with other than 18 numeric fields is
counted ``bad_row``; a job with an unknown run time or start is ignored
(``no_run_time``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO

from yarn_advisor.classifiers.readers.records import (
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
    stage_job,
)

FRAMEWORK = "HPC"
FIELDS = 18
_STATUS = {1: SUCCESS, 0: FAILED, 5: KILLED, -1: ""}


class SwfReader(FormatReader):
    """Iterate the jobs of the SWF logs in ``paths`` (plain or compressed),
    one task each; :attr:`report` counts what was read and skipped."""

    READER = "swf"

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        for path in map(Path, self.paths):
            jobs: list[TraceJob] = []
            read_file(path, report, partial(_lines, path, jobs=jobs, report=report))
            yield from jobs


def _lines(path: Path, stream: IO[bytes], *, jobs: list[TraceJob], report: ReadReport
           ) -> bool:
    for number, line in enumerate(stream, 1):
        text = line.strip()
        if not text or text.startswith(b";"):
            continue
        try:
            f = [int(float(x)) for x in text.split()]
        except ValueError:
            f = []
        if len(f) != FIELDS:
            report.skip("bad_row", path, f"line {number}: expected {FIELDS} numeric fields")
            continue
        job = _job(f)
        if job is None:
            report.ignore("no_run_time")
        else:
            jobs.append(job)
    return True


def _job(f: list[int]) -> TraceJob | None:
    (number, submit, wait, run, procs, _cpu, _mem, procs_req, _t_req, mem_req, status, user,
     group, executable, queue, _partition, _preceding, _think) = f
    if run < 0 or submit < 0:
        return None
    start_ms = (submit + max(wait, 0)) * 1000 + 1  # +1: the archive's times start at 0
    end_ms = start_ms + run * 1000
    result = _STATUS.get(status, SUCCESS if status in (2, 3, 4) else "")
    task_id = f"{number}"
    size = procs if procs > 0 else procs_req
    memory = mem_req // 1024 if mem_req > 0 else -1
    task = TraceTask(task_id, "JOB", result, start_ms, end_ms,
                     (TraceAttempt(task_id, "", start_ms, end_ms, result),), memory_mb=memory)
    q = f"Q{queue}" if queue >= 0 else f"G{group}" if group >= 0 else ""
    return stage_job(f"swf_{number}", (task,), FRAMEWORK, user=str(user) if user >= 0 else "",
                     name=_letters(executable) if executable >= 0 else "", queue=q,
                     outcome=result, total_maps=max(size, 1), submit_ms=submit * 1000 + 1)


def _letters(n: int) -> str:
    """``n`` in letters (``exe-b``, ``exe-ba``): the A property's normalisation
    turns runs of four or more digits into ``#``, which would pool executables."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = chr(97 + r) + out
        if not n:
            return "exe-" + out
