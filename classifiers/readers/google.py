"""Streaming reader of the Google cluster trace 2011 (``clusterdata-2011-2``).

A folder of the trace (or a copy of some of its parts) holds
``task_events/part-NNNNN-of-00500.csv.gz`` and ``job_events/part-...``: CSV
without a header, times in microseconds since the trace's start (0: before
it). :class:`GoogleTraceReader` reads ``job_events`` first (small), then the
``task_events`` parts in order, line by line, and yields one
:class:`~yarn_advisor.classifiers.readers.records.TraceJob` per job.

A *task* of the classifier is one run of a Borg task: from a ``SCHEDULE``
event (the task is placed on a machine, as a container is allocated) to its
run's end, ``FINISH`` (status ``SUCCESS``), ``FAIL`` (``FAILED``), or
``EVICT``, ``KILL``, ``LOST`` (``KILLED``). A task evicted and scheduled
again is a new run. The properties (docs/classifier.md says why):

- F ``BORG``; S the job's scheduling class, ``SC0``..``SC3`` (how latency
  sensitive it is; one value per job, like a stage's kind);
- Q the task's priority, ``P0``..``P11`` (free, batch and production bands
  are what queues are on YARN);
- U the user hash; A the *logical job name* hash (Google: the same for runs
  of the same program, like a normalised job name), else the job name hash;
- Z the job's number of tasks (distinct task indexes seen) as maps, 0 reduces;
- D the task's RAM request, normalised in the trace to the largest machine,
  scaled to MiB as if that machine had 64 GiB (:data:`MACHINE_MB`);
- J the job id; P unknown (not MapReduce).

Tasks already running when the trace starts (``SCHEDULE`` at time 0) have no
known start and are ignored (``started_before_trace``); an end without a
run (a pending task killed) is ignored (``never_scheduled``); a run still
open when the files end is *censored* (status ``RUNNING``, finish: the
trace's last event). A line with too few fields or a non-numeric time, job,
index or event type is counted ``bad_row``; a second ``SCHEDULE`` of a task
before its run ended loses the first run (``missing_field``). Jobs are
yielded when the files are read whole (the tasks of one job are spread
over the parts), so their compact run records are held until then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
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

FRAMEWORK = "BORG"
MACHINE_MB = 65536  # the normalised RAM request 1.0, in MiB (D's scale only)
SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST = range(7)
_ENDS = {EVICT: KILLED, FAIL: FAILED, FINISH: SUCCESS, KILL: KILLED, LOST: KILLED}


@dataclass
class _Job:
    user: str = ""
    sched_class: str = ""
    name: str = ""
    indexes: set[int] = field(default_factory=set)
    runs: list[TraceTask] = field(default_factory=list)
    priority: str = ""


@dataclass
class _Open:
    start_ms: int  # -1: before the trace
    run: int
    priority: str
    memory_mb: int
    vcores: int


class GoogleTraceReader(FormatReader):
    """Iterate the jobs of the trace folders in ``paths`` (each with
    ``task_events/`` and ``job_events/``; a ``task_events`` folder or part
    files may be given too); :attr:`report` counts what was read and skipped."""

    READER = "google-2011"

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        task_parts, job_parts = _parts(map(Path, self.paths))
        jobs: dict[int, _Job] = {}
        for path in job_parts:
            read_file(path, report, partial(_job_events, path, jobs=jobs, report=report))
        state = _TaskState(jobs, report)
        for path in task_parts:
            read_file(path, report, partial(state.feed, path))
        state.close()
        for job_id, job in jobs.items():
            if job.runs:
                yield _build(job_id, job)


def _parts(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """The ``task_events`` and ``job_events`` part files under ``paths``, in name order."""
    tasks: list[Path] = []
    jobs: list[Path] = []
    for path in paths:
        if path.is_dir() and path.name in ("task_events", "job_events"):
            (tasks if path.name == "task_events" else jobs).extend(
                sorted(p for p in path.iterdir() if p.name.startswith("part-")))
        elif path.is_dir():
            for sub, into in (("task_events", tasks), ("job_events", jobs)):
                if (path / sub).is_dir():
                    into.extend(sorted(p for p in (path / sub).iterdir()
                                       if p.name.startswith("part-")))
        else:
            (jobs if path.parent.name == "job_events" else tasks).append(path)
    return tasks, jobs


def _job_events(path: Path, stream: IO[bytes], *, jobs: dict[int, _Job],
                report: ReadReport) -> bool:
    """job_events: time, missing info, job id, event type, user, scheduling
    class, job name, logical job name."""
    for line in stream:
        f = line.rstrip(b"\r\n").split(b",")
        if len(f) < 8 or not f[2].isdigit():
            if line.strip():
                report.skip("bad_row", path, f"job event with {len(f)} field(s) or no job id")
            continue
        job = jobs.get(int(f[2]))
        if job is None:
            job = jobs[int(f[2])] = _Job()
        job.user = job.user or f[4].decode("utf-8", "replace")
        job.sched_class = job.sched_class or f[5].decode("ascii", "replace")
        job.name = job.name or (f[7] or f[6]).decode("utf-8", "replace")
    return True


class _TaskState:
    """The open run of every task, fed ``task_events`` lines in time order."""

    def __init__(self, jobs: dict[int, _Job], report: ReadReport) -> None:
        self.jobs = jobs
        self.report = report
        self.open: dict[tuple[int, int], _Open] = {}
        self.runs: dict[tuple[int, int], int] = {}
        self.last_ms = -1

    def feed(self, path: Path, stream: IO[bytes]) -> bool:
        """task_events: time, missing info, job id, task index, machine, event
        type, user, scheduling class, priority, CPU, RAM, disk, constraint."""
        for line in stream:
            f = line.rstrip(b"\r\n").split(b",")
            if len(f) < 11 or not (f[0].isdigit() and f[2].isdigit() and f[3].isdigit()
                                   and f[5].isdigit()):
                if line.strip():
                    self.report.skip("bad_row", path, f"task event with {len(f)} field(s) "
                                     "or a non-numeric time, job, index or type")
                continue
            t_ms, job_id, index, kind = int(f[0]) // 1000, int(f[2]), int(f[3]), int(f[5])
            self.last_ms = max(self.last_ms, t_ms)
            job = self.jobs.get(job_id)
            if job is None:  # no job event: identity from the task's own fields
                job = self.jobs[job_id] = _Job(user=f[6].decode("utf-8", "replace"),
                                               sched_class=f[7].decode("ascii", "replace"))
            job.indexes.add(index)
            key = (job_id, index)
            if kind == SCHEDULE:
                if key in self.open:
                    self.report.skip("missing_field", path, f"task {job_id}/{index} scheduled "
                                     "again before its run ended: that run is lost")
                run = self.runs.get(key, 0)
                self.runs[key] = run + 1
                self.open[key] = _Open(t_ms if t_ms > 0 else -1, run,
                                       f[8].decode("ascii", "replace"),
                                       scaled_mb(f[10], MACHINE_MB), -1)
            elif kind in _ENDS:
                started = self.open.pop(key, None)
                if started is None:
                    self.report.ignore("never_scheduled")
                elif started.start_ms <= 0:
                    self.report.ignore("started_before_trace")
                else:
                    self._run(job, job_id, index, started, t_ms, _ENDS[kind])
        return True

    def _run(self, job: _Job, job_id: int, index: int, run: _Open, end_ms: int,
             status: str) -> None:
        task_id = f"{job_id}/{index}#{run.run}"
        attempt = TraceAttempt(task_id, "", run.start_ms, end_ms, status)
        job.priority = job.priority or run.priority
        job.runs.append(TraceTask(task_id, "SC" + (job.sched_class or "?"), status,
                                  run.start_ms, end_ms, (attempt,), memory_mb=run.memory_mb))

    def close(self) -> None:
        """Runs still open at the trace's end are censored there."""
        for (job_id, index), run in self.open.items():
            if run.start_ms <= 0:
                self.report.ignore("started_before_trace")
                continue
            self._run(self.jobs[job_id], job_id, index, run, max(self.last_ms, run.start_ms),
                      CENSORED)
        self.open.clear()


def _build(job_id: int, job: _Job) -> TraceJob:
    return stage_job(str(job_id), tuple(job.runs), FRAMEWORK, user=job.user, name=job.name,
                     queue="P" + (job.priority or "?"), total_maps=len(job.indexes))
