"""Rumen job traces, read with the advisor's own reader (``classifiers.rumen``).

Each job keeps its submission time (relative to the trace's first), queue,
user, name, map and reduce memory (``mapreduce.*.memory.mb`` from the job's
configuration; the default container size when absent) and, per task, its run
time (first attempt's launch to the task's finish) and, for maps, the host its
first attempt ran on as its preferred host. Nodes are the hosts the trace
names, unless ``--nodes`` is given (then maps read fresh HDFS blocks).
A truncated or corrupt trace, or a task that finishes before it starts, is
an error naming the file and the job.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from yarn_advisor.classifiers.readers.rumen import RumenJob, RumenTask, RumenTrace
from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.readers.common import (
    DEFAULT_OPTIONS,
    TraceOptions,
    cluster_from_hosts,
    scheduler_for,
    split_host,
)
from yarn_advisor.simulator.spec import MAP, REDUCE, Job, Phase, Res, Stage, Workload

DEFAULT_SLOWSTART = 0.05  # mapreduce.job.reduce.slowstart.completedmaps, YARN's default


def read_rumen(path: str | Path, opts: TraceOptions = DEFAULT_OPTIONS) -> Workload:
    p = Path(path)
    if not p.exists():
        raise WorkloadError([f"{p}: no such file"])
    trace = RumenTrace(p)
    try:
        raw = list(trace)
    except (OSError, EOFError, ValueError) as exc:
        raise WorkloadError([f"{p}: cannot read: {exc}"]) from None
    if trace.problem:
        raise WorkloadError([f"{p}: truncated or corrupt trace after {len(raw)} job(s): "
                             f"{trace.problem}"])
    if not raw:
        raise WorkloadError([f"{p}: no jobs"])
    return workload_from_jobs(p, raw, opts)


def workload_from_jobs(p: Path, raw: list[RumenJob], opts: TraceOptions,
                       name: str = "", barrier: frozenset[str] = frozenset()) -> Workload:
    """The workload of jobs read from ``p`` (a Rumen trace, or any history the
    classifier's readers read): submission times relative to the first. The
    jobs named in ``barrier`` start their reduces once every map ended."""
    errors: list[str] = []
    hosts: dict[str, list[str]] = {}
    synthetic = opts.nodes > 0
    start = min(j.submit_ms for j in raw if j.submit_ms > 0) if any(
        j.submit_ms > 0 for j in raw) else 0
    jobs = [_job(p, j, start, opts, hosts, synthetic, errors) for j in raw]
    if errors:
        raise WorkloadError(errors)
    jobs = [replace(j, slowstart=1.0) if j.id in barrier else j for j in jobs]
    queues = {j.queue for j in jobs}
    return Workload(name=name or p.name.split(".")[0], cluster=cluster_from_hosts(hosts, opts),
                    scheduler=scheduler_for(queues, opts), jobs=tuple(jobs), source=str(p))


def _durations(p: Path, job: RumenJob, tasks: tuple[RumenTask, ...],
               errors: list[str]) -> tuple[list[int], list[str]]:
    durs: list[int] = []
    where: list[str] = []
    for t in tasks:
        if t.launch_ms <= 0:
            continue  # never launched (a killed job's tail): nothing to replay
        d = t.duration_ms
        if d is None:
            errors.append(f"{p}: job {job.job_id}: task {t.task_id} finishes before it "
                          f"starts (negative duration)")
            continue
        durs.append(d)
        host = next((a.host for a in t.attempts if a.host), "")
        where.append(host)
    return durs, where


def _job(p: Path, job: RumenJob, start: int, opts: TraceOptions,
         hosts: dict[str, list[str]], synthetic: bool, errors: list[str]) -> Job:
    mdurs, mhosts = _durations(p, job, job.maps, errors)
    rdurs, _ = _durations(p, job, job.reduces, errors)
    names: list[str] = []
    for h in mhosts:
        if h:
            rack, name = split_host(h)
            if name not in hosts.setdefault(rack, []):
                hosts[rack].append(name)
            names.append(name)
        else:
            names.append("")
    mreq = Res(job.map_mb if job.map_mb > 0 else opts.map_mb, 1)
    rreq = Res(job.reduce_mb if job.reduce_mb > 0 else opts.reduce_mb, 1)
    maps = Stage(MAP, mreq, tuple(mdurs), (Phase(MAP, 1.0, mreq.memory_mb, 1.0),),
                 input="new" if synthetic else "hosts",
                 hosts=() if synthetic else tuple(names)) if mdurs else None
    reduces = Stage(REDUCE, rreq, tuple(rdurs),
                    (Phase("SHUFFLE", 1 / 3, rreq.memory_mb, 0.1),
                     Phase("REDUCE", 2 / 3, rreq.memory_mb, 1.0))) if rdurs else None
    return Job(id=job.job_id, name=job.name or job.job_id,
               submit_ms=max(0, job.submit_ms - start) if job.submit_ms > 0 else 0,
               maps=maps, reduces=reduces, user=job.user or "user",
               queue=(job.queue or "default").removeprefix("root."),
               am=Res(job.am_mb if job.am_mb > 0 else opts.am_mb, 1),
               app_type=job.framework or "MAPREDUCE",
               slowstart=job.slowstart if job.slowstart >= 0 else DEFAULT_SLOWSTART)
