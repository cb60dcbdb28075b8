"""An operator's own history as a workload: JobHistory, Spark event logs, task CSV.

The same readers as ``classify-eval`` (``classifiers.readers``), with the same
handling of bad records: damaged files and records are counted in the
reader's report and skipped (the report is printed), never a crash; a history
with no job left is an error naming what was read.

What each task becomes. A job keeps its submission time (relative to the
history's first), user, queue, name, and per task the time it ran in its
container (first attempt's launch to the task's finish) and what it asked
for (the job's ``mapreduce.{map,reduce}.memory.mb`` from its ``_conf.xml``,
or the task's own ask; else the defaults of ``TraceOptions``). A MapReduce
job's maps and reduces stay maps and reduces. Another framework's tasks (a
Spark application's stages, a CSV ``task_type`` that is neither MAP nor
REDUCE) are approximated by two waves: the tasks of the stage that started
first, then every later stage's tasks once those end (slow start 1.0);
executor reuse is not modelled (each task is a container).

The application masters' start-up (submission to the AM's start) and
wind-down (last task to the job's end) are the medians the history shows.

What the history lacks. No history records measured use: as for every trace,
a task is assumed to use what it asked for (``Phase`` at full use), which is
what the RM schedules by. Nodes are the hosts the attempts ran on (one rack
per recorded rack), unless ``--nodes`` or ``--cluster-from`` gives the
cluster; a history that names no host (the task CSV) needs one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from yarn_advisor.classifiers.readers.jhist import JhistReader
from yarn_advisor.classifiers.readers.records import MR_STAGES, TraceJob, TraceTask
from yarn_advisor.classifiers.readers.sources import JobReader, ReadReport, SourceError
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader
from yarn_advisor.classifiers.readers.tasks_csv import TaskCsvReader
from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.readers.common import DEFAULT_OPTIONS, TraceOptions
from yarn_advisor.simulator.readers.rumen import workload_from_jobs
from yarn_advisor.simulator.spec import Timing, Workload

READERS: dict[str, Callable[[list[Path]], JobReader]] = {
    "jhist": JhistReader, "spark-events": SparkEventLogReader, "tasks": TaskCsvReader}


def read_history(kind: str, paths: Iterable[str | Path],
                 opts: TraceOptions = DEFAULT_OPTIONS) -> tuple[Workload, ReadReport]:
    """The workload of the history at ``paths`` (``kind``: a key of
    :data:`READERS`) and the reader's report of what it read and skipped.
    Raises :class:`WorkloadError` naming the path when nothing usable is left."""
    given = [Path(p) for p in paths]
    missing = [f"{p}: no such file or directory" for p in given if not p.exists()]
    if missing:
        raise WorkloadError(missing)
    reader: JobReader = READERS[kind](given)
    try:
        read = list(reader)
    except SourceError as exc:
        raise WorkloadError([str(exc)]) from None
    report = reader.report
    raw = [two_waves(j) for j in read]
    barrier = frozenset(w.job_id for j, w in zip(read, raw, strict=True) if j.stage_tasks
                        or any(t.type not in MR_STAGES for t in (*j.maps, *j.reduces)))
    raw = [j for j in raw if j.maps or j.reduces]
    where = ", ".join(map(str, given))
    if not raw:
        lines = report.problem_lines()
        raise WorkloadError([f"{where}: no job with a task that ran ({report.files} file(s) "
                             f"read, {report.damaged} damaged record(s))", *lines])
    if opts.nodes == 0 and not any(a.host for j in raw for t in (*j.maps, *j.reduces)
                                   for a in t.attempts):
        raise WorkloadError([f"{where}: the history names no host: give the cluster "
                             "with --nodes N or --cluster-from"])
    name = given[0].name.split(".")[0] if len(given) == 1 else f"{kind}-history"
    wl = workload_from_jobs(given[0], raw, opts, name=name, barrier=barrier)
    return replace(wl, cluster=replace(wl.cluster, timing=am_timing(raw))), report


def am_timing(jobs: list[TraceJob]) -> Timing:
    """The application masters' start-up and wind-down as the history shows them
    (medians over the jobs that record them): submission to the AM's start, and
    the last task's end to the job's; YARN's usual figures where none does."""
    starts = sorted(j.launch_ms - j.submit_ms for j in jobs
                    if 0 < j.submit_ms <= j.launch_ms)
    ends = sorted(j.finish_ms - last for j in jobs
                  for last in [max((t.finish_ms for t in (*j.maps, *j.reduces)), default=0)]
                  if 0 < last <= j.finish_ms)
    default = Timing()
    return replace(default,
                   am_launch=starts[len(starts) // 2] if starts else default.am_launch,
                   am_finish=ends[len(ends) // 2] if ends else default.am_finish)


def two_waves(job: TraceJob) -> TraceJob:
    """A job as maps and reduces: a MapReduce job as it is (asking what its tasks
    asked where the job does not say); another framework's stage tasks as the
    first stage's tasks, then every later stage's."""
    stage_tasks = job.stage_tasks or tuple(
        t for t in (*job.maps, *job.reduces) if t.type not in MR_STAGES)
    if not stage_tasks:
        if job.map_mb > 0 and job.reduce_mb > 0:
            return job
        return replace(job, map_mb=job.map_mb if job.map_mb > 0 else _asked(job.maps),
                       reduce_mb=job.reduce_mb if job.reduce_mb > 0 else _asked(job.reduces))
    order: dict[str, int] = {}
    for t in sorted(stage_tasks, key=lambda t: (t.launch_ms, t.task_id)):
        order.setdefault(t.type, len(order))
    first = tuple(t for t in stage_tasks if order[t.type] == 0)
    later = tuple(t for t in stage_tasks if order[t.type] > 0)
    return replace(job, maps=first, reduces=later, stage_tasks=(),
                   map_mb=job.map_mb if job.map_mb > 0 else _asked(first),
                   reduce_mb=job.reduce_mb if job.reduce_mb > 0 else _asked(later))


def _asked(tasks: tuple[TraceTask, ...]) -> int:
    """The largest container ask of ``tasks`` (-1: none recorded)."""
    return max((t.memory_mb for t in tasks), default=-1)
