"""OPERA's hierarchical task features (paper 002, section III-B, Eq. 1).

Five properties of a task t, all known when t starts (nothing measured during
or after the run is used):

- F framework: ``MAPREDUCE`` for Rumen traces; the YARN application type
  (``MAPREDUCE``, ``SPARK``, ``TEZ``...) live.
- A application name: the job name with the parts that change from run to
  run replaced by ``#``: dates (``2009-04-20``, ``20100210``), times
  (``23:15``), partition values (``hr=05``) and any run of four or more
  digits (timestamps, ids), so the daily ``report-20100210`` and
  ``report-20100211`` are one application. Runs of up to three digits are
  kept: they often *name* the work (``tpch q12`` is not ``tpch q1``), and
  the Rumen ``Anonymizer`` names each distinct job name ``job0``,
  ``job1``... (kept whole, whatever its length). Keeping a number splits one
  application into several, which costs cold starts; dropping one would pool
  different applications, which calls long tasks short (on distcache_case5,
  anonymized, 20 of 25). Rumen escapes removed, at most 80 characters. A job
  without a name (older traces scrub them) is identified by what else is
  known when it starts: its user and its shape, the numbers of maps and
  reduces rounded up to powers of two (``?alice|m64|r8``); a recurring
  nameless pipeline keeps its user and shape, whereas one ``?`` for every
  nameless job pooled unrelated jobs (on goldFoldedTrace, 40 % long) into one
  application.
- S stage: ``MAP`` or ``REDUCE`` (a Spark stage would be ``STAGE<n>``).
- P job progress when t starts, bucketed on the fraction of the job's maps
  already completed: ``0`` (none), ``<50`` (under half), ``<100``, ``100``
  (all maps done; also jobs without maps); ``?`` if unknown. It tells a first
  wave from a later one, and a reduce that will wait in shuffle for maps from
  one that will not (the paper's slow-start example). A reduce starting while
  some of its job's maps still wait for a container gets ``+wait`` (``<100+wait``):
  it cannot finish before they get one and run, however long the queue, so
  its history must not be that of reduces whose maps were all running (on
  5m_stream_trace, 11 reduces that waited ~170 s for one queued map; learning
  across the gridmix traces they were 11 of the 26 long tasks called short).
- D resource demand: the container memory asked for t's type, rounded up to
  a power of two in MiB (``512``, ``1024``, ``2048``...); ``?`` if unknown.

They are combined hierarchically (:data:`LEVELS`), coarse to fine; every level
is one categorical feature of the naive Bayes model:

    {F}  {F,A}  {F,A,S}  {F,A,S,P}  {F,A,S,D}  {F,A,S,P,D}

The coarse levels let a task borrow evidence from its application, framework
or stage when its exact combination was never seen; the fine levels separate
tasks of one application that behave differently. A property is never used
alone (the paper: "map" across applications says little). A feature is the
level's name and values joined in one string (``F,A,S=MAPREDUCE|sort|MAP``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from yarn_advisor.advisor.model import App, MRJob, ResourceRequest, Task

UNKNOWN = "?"
LEVELS: tuple[tuple[str, ...], ...] = (
    ("F",),
    ("F", "A"),
    ("F", "A", "S"),
    ("F", "A", "S", "P"),
    ("F", "A", "S", "D"),
    ("F", "A", "S", "P", "D"),
)
LEVEL_NAMES: tuple[str, ...] = tuple(",".join(level) for level in LEVELS)
# MRAppMaster container-request priorities (RMContainerAllocator).
MR_PRIORITY_STAGE = {5: "MAP", 19: "MAP", 20: "MAP", 10: "REDUCE"}
# What changes between runs of one job: see the module docstring.
_VOLATILE = re.compile(
    r"\d{4}(?:[-/._]\d{1,2}){1,2}(?:[T ]\d{1,2}(?::\d{2}){0,2})?"  # dates, maybe a time
    r"|\d{1,2}:\d{2}(?::\d{2})?"  # times
    r"|(?<==)\d+"  # partition values: hr=05
    r"|\d{4,}"  # compact dates, timestamps, ids
)
_ANONYMIZED = re.compile(r"job\d+")  # Rumen Anonymizer's job names


@dataclass(frozen=True, slots=True)
class TaskProps:
    """The five properties F, A, S, P, D of one task (already bucketed)."""

    framework: str
    app: str
    stage: str
    progress: str
    demand: str


@lru_cache(maxsize=4096)
def app_name(name: str | None) -> str:
    """Normalise an application name so recurring runs share one value."""
    if not name:
        return UNKNOWN
    if _ANONYMIZED.fullmatch(name):
        return name
    cleaned = _VOLATILE.sub("#", name.replace("\\", "")).strip()
    return cleaned[:80] or UNKNOWN


def app_identity(name: str | None, user: str = "", maps: int = -1, reduces: int = -1) -> str:
    """The A property: :func:`app_name`, or for a nameless job its user and shape."""
    named = app_name(name)
    if named != UNKNOWN:
        return named
    return f"?{user or UNKNOWN}|m{count_bucket(maps)}|r{count_bucket(reduces)}"


def count_bucket(n: int) -> str:
    """A task count rounded up to a power of two (``?`` if unknown)."""
    if n < 0:
        return UNKNOWN
    return str(_pow2_at_least(n, 1) if n else 0)


def progress_bucket(done: int, total: int, maps_waiting: bool = False) -> str:
    """Bucket the share of a job's maps completed (see module docstring);
    ``maps_waiting``: for a reduce, some maps have no container yet."""
    if total < 0 or done < 0:
        return UNKNOWN
    if total == 0 or done >= total:
        return "100"
    bucket = "0" if done == 0 else "<50" if 2 * done < total else "<100"
    return bucket + "+wait" if maps_waiting else bucket


def demand_bucket(memory_mb: int) -> str:
    """Round a memory demand up to a power of two MiB (at least 512)."""
    if memory_mb <= 0:
        return UNKNOWN
    return str(_pow2_at_least(memory_mb, 512))


def _pow2_at_least(n: int, least: int) -> int:
    """The smallest ``least * 2**k`` (k >= 0) that is >= ``n``."""
    bucket = least
    while bucket < n:
        bucket *= 2
    return bucket


@lru_cache(maxsize=1 << 16)
def features(props: TaskProps) -> tuple[str, ...]:
    """Eq. 1: one feature string per level of :data:`LEVELS` (cached: a cycle's
    pending tasks share few distinct property tuples)."""
    values = {
        "F": props.framework,
        "A": props.app,
        "S": props.stage,
        "P": props.progress,
        "D": props.demand,
    }
    return tuple(
        name + "=" + "|".join(values[p] for p in level)
        for name, level in zip(LEVEL_NAMES, LEVELS, strict=True)
    )


def props_from_live(
    task: Task, job: MRJob | None = None, app: App | None = None, memory_mb: int = -1,
    look_up: bool = True,
) -> TaskProps:
    """Properties of a live MapReduce task (AM / JobHistory view).

    ``memory_mb`` is the container size when the caller knows it (the
    container's allocation); otherwise (and with ``look_up``) the app's pending
    request of the task's stage is used, if any. A caller scoring many tasks of
    one app looks that up once (:func:`request_memory`) and passes ``look_up``
    False: the requests of a big app are many.
    """
    stage = task.type.upper() or UNKNOWN
    if memory_mb <= 0 and app is not None and look_up:
        memory_mb = request_memory(app.resource_requests, stage)
    return TaskProps(
        framework=_framework(app),
        app=_app(app, job),
        stage=stage,
        progress=_job_progress(job, stage),
        demand=demand_bucket(memory_mb),
    )


def props_for_request(app: App, request: ResourceRequest, job: MRJob | None = None) -> TaskProps:
    """Properties shared by the pending tasks of one resource request (a task group)."""
    stage = MR_PRIORITY_STAGE.get(request.priority, f"PRIORITY{request.priority}")
    return TaskProps(
        framework=_framework(app),
        app=_app(app, job),
        stage=stage,
        progress=_job_progress(job, stage),
        demand=demand_bucket(request.capability.memory_mb),
    )


def _app(app: App | None, job: MRJob | None) -> str:
    name = app.name if app is not None and app.name else job.name if job else None
    user = app.user if app is not None and app.user else job.user if job else ""
    if job is None:
        return app_identity(name, user)
    return app_identity(name, user, job.maps_total, job.reduces_total)


def _framework(app: App | None) -> str:
    return (app.type.upper() if app is not None and app.type else "") or "MAPREDUCE"


def _job_progress(job: MRJob | None, stage: str) -> str:
    if job is None:
        return UNKNOWN
    waiting = stage == "REDUCE" and job.maps_pending > 0
    return progress_bucket(job.maps_completed, job.maps_total, waiting)


def request_memory(requests: Sequence[ResourceRequest], stage: str) -> int:
    """The memory of a stage's ``*`` requests when they agree on one size, else -1."""
    sizes = {
        rr.capability.memory_mb
        for rr in requests
        if rr.resource_name == "*" and MR_PRIORITY_STAGE.get(rr.priority) == stage
    }
    return sizes.pop() if len(sizes) == 1 else -1
