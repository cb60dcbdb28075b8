"""Hierarchical task features (OPERA, paper 002, section III-B, Eq. 1), widened
to what a production cluster tells apart.

Properties of a task t, all known when t starts (nothing measured during or
after the run is used), the same from a trace and live:

- F framework: the YARN application type (``MAPREDUCE``, ``SPARK``...).
- S stage: ``MAP`` or ``REDUCE``; a Spark stage ``STAGE<n>``.
- Q queue: the leaf queue the job runs in (``root.etl`` and ``etl`` are one).
- U user.
- A application: the job name with the parts that change from run to run
  replaced by ``#`` (:func:`app_name`); without a name, its tags likewise;
  else ``?``. Always read under its user and queue (every level but the job's
  own keys them), so one name shared by every job of a cluster (an
  anonymizer's) pools no two users' jobs.
- Z size: the job's numbers of maps and reduces, each rounded up to a power
  of two (``m64|r8``): the shape of a job whose name says nothing.
- R reduces: the job's number of reduces alone (the last part of Z): the
  shapes of one application and number of reduces form its reduce group. The
  number of maps follows the input's size; the number of reduces is how the
  job is configured, so a new number of maps of known reduces is the closer kin.
- D demand: the container memory asked for t's stage, rounded up to a power
  of two in MiB (``512``, ``1024``...).
- J job: the job itself (its id): its own finished and censored tasks of the
  stage, learned while it runs.
- P job progress when t starts: the share of the job's maps completed, ``0``,
  ``<50``, ``<100`` or ``100`` (all maps done; also a job without maps), and
  for a reduce starting while some maps still wait for a container,
  ``+wait`` (it waits for them in shuffle, however long the queue).

The levels (:data:`LEVELS`) are nested, coarse to fine, each under a parent:
the main chain ``{F,S,Q,U} > {F,S,Q,U,A} > {F,S,Q,U,A,R,D} > {F,S,Q,U,A,Z,D}
> {J,S}`` (the user's stage in its queue > the application > its reduce group
> its shape > the job itself)
and one side branch ``{F,S,Q,U,A,P}`` refining a reduce by its job's
progress. The model (:mod:`~yarn_advisor.classifiers.model.naive_bayes`) backs off
along them; what each adds, measured, is in its docstring. A feature is the
level's name and values joined in one string
(``F,S,Q,U=MAPREDUCE|MAP|etl|alice``). Live, every property comes from what
the RM and the MapReduce AM (or JobHistoryServer) expose: the application's
type, user, queue, name and tags, the job's numbers of maps and reduces and
of maps completed and pending, the container or request size; a trace gives
the same from its job records (a test on the mini cluster checks they agree).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from yarn_advisor.advisor.model.snapshot import App, MRJob, ResourceRequest, Task

UNKNOWN = "?"


@dataclass(frozen=True, slots=True)
class Level:
    """One level: its name (the properties it joins) and its parent's index
    in :data:`LEVELS` (-1: the root). ``branch``: a side refinement of its
    parent, not a step of the main chain."""

    name: str
    parent: int
    branch: bool = False

    @property
    def props(self) -> tuple[str, ...]:
        return tuple(self.name.split(","))


LEVELS: tuple[Level, ...] = (
    Level("F,S,Q,U", -1),
    Level("F,S,Q,U,A", 0),
    Level("F,S,Q,U,A,P", 1, branch=True),
    Level("J,S", 4),
    Level("F,S,Q,U,A,Z,D", 5),
    Level("F,S,Q,U,A,R,D", 1),  # last: the earlier levels keep their indexes
)
LEVEL_NAMES: tuple[str, ...] = tuple(level.name for level in LEVELS)
# The levels before the reduce group came (a checkpoint of then is migrated).
LEVEL_NAMES_BEFORE_R: tuple[str, ...] = LEVEL_NAMES[:-1]


def reduce_group_of(shape_feature: str) -> str:
    """The R-level feature of a shape-level one (``F,S,Q,U,A,Z,D=...``): the same
    values without Z's maps part. Split from the right (Z is ``m<n>|r<n>``, D has
    no ``|``), so a ``|`` in a user or application name stays where it was."""
    _, _, value = shape_feature.partition("=")
    head, _maps, reduces, demand = value.rsplit("|", 3)
    return f"{LEVELS[-1].name}={head}|{reduces}|{demand}"


# MRAppMaster container-request priorities (RMContainerAllocator).
MR_PRIORITY_STAGE = {5: "MAP", 19: "MAP", 20: "MAP", 10: "REDUCE"}
# What changes between runs of one job: see app_name.
_VOLATILE = re.compile(
    r"\d{4}(?:[-/._]\d{1,2}){1,2}(?:[T ]\d{1,2}(?::\d{2}){0,2})?"  # dates, maybe a time
    r"|\d{1,2}:\d{2}(?::\d{2})?"  # times
    r"|(?<==)\d+"  # partition values: hr=05
    r"|\d{4,}"  # compact dates, timestamps, ids
)
_ANONYMIZED = re.compile(r"job\d+")  # Rumen Anonymizer's job names


@dataclass(frozen=True, slots=True)
class TaskProps:
    """The properties of one task (already bucketed), see the module docstring."""

    framework: str
    stage: str
    queue: str
    user: str
    app: str
    size: str
    demand: str
    job: str
    progress: str


@lru_cache(maxsize=4096)
def app_name(name: str | None) -> str:
    """Normalise an application name so recurring runs share one value.

    Dates (``2009-04-20``, ``20100210``), times (``23:15``), partition values
    (``hr=05``) and runs of four or more digits (timestamps, ids) become ``#``,
    so the daily ``report-20100210`` and ``report-20100211`` are one
    application. Runs of up to three digits are kept: they often *name* the
    work (``tpch q12`` is not ``tpch q1``), and Rumen's ``Anonymizer`` names
    each distinct job name ``job0``, ``job1``... (kept whole). Rumen escapes
    removed, at most 80 characters.
    """
    if not name:
        return UNKNOWN
    if _ANONYMIZED.fullmatch(name):
        return name
    cleaned = _VOLATILE.sub("#", name.replace("\\", "")).strip()
    return cleaned[:80] or UNKNOWN


def app_identity(name: str | None, tags: Sequence[str] = ()) -> str:
    """The A property: the normalised name, else the normalised tags, else ``?``."""
    named = app_name(name)
    if named != UNKNOWN or not tags:
        return named
    return app_name(",".join(sorted(tags)))


def queue_leaf(queue: str | None) -> str:
    """The leaf queue name (the RM may report ``root.etl``, a job's history ``etl``)."""
    return (queue or "").rsplit(".", 1)[-1] or UNKNOWN


def count_bucket(n: int) -> str:
    """A task count rounded up to a power of two (``?`` if unknown)."""
    if n < 0:
        return UNKNOWN
    return str(_pow2_at_least(n, 1) if n else 0)


def size_bucket(maps: int, reduces: int) -> str:
    """The Z property: ``m<maps>|r<reduces>``, each a :func:`count_bucket`."""
    return f"m{count_bucket(maps)}|r{count_bucket(reduces)}"


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


def job_key(job_or_app_id: str) -> str:
    """The J property: one value for a MapReduce job and its YARN application."""
    return job_or_app_id.replace("application_", "job_", 1) or UNKNOWN


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
        "S": props.stage,
        "Q": props.queue,
        "U": props.user,
        "A": props.app,
        "Z": props.size,
        "R": props.size.rpartition("|")[2],
        "D": props.demand,
        "J": props.job,
        "P": props.progress,
    }
    return tuple(
        level.name + "=" + "|".join(values[p] for p in level.props) for level in LEVELS
    )


def props_from_live(
    task: Task, job: MRJob | None = None, app: App | None = None, memory_mb: int = -1
) -> TaskProps:
    """Properties of a live MapReduce task (AM / JobHistory view).

    ``memory_mb`` is the container size when the caller knows it (the
    container's allocation); otherwise the app's pending request of the
    task's stage is used, if any.
    """
    stage = task.type.upper() or UNKNOWN
    if memory_mb <= 0 and app is not None:
        memory_mb = _request_memory(app.resource_requests, stage)
    return _props(app, job, stage, memory_mb, task.job_id or task.app_id)


def props_for_request(app: App, request: ResourceRequest, job: MRJob | None = None) -> TaskProps:
    """Properties shared by the pending tasks of one resource request (a task group)."""
    stage = MR_PRIORITY_STAGE.get(request.priority, f"PRIORITY{request.priority}")
    return _props(app, job, stage, request.capability.memory_mb, job.id if job else app.id)


def _props(app: App | None, job: MRJob | None, stage: str, memory_mb: int,
           job_id: str) -> TaskProps:
    name = app.name if app is not None and app.name else job.name if job else None
    user = app.user if app is not None and app.user else job.user if job else ""
    queue = app.queue if app is not None and app.queue else job.queue if job else ""
    maps, reduces = (job.maps_total, job.reduces_total) if job is not None else (-1, -1)
    return TaskProps(
        framework=(app.type.upper() if app is not None and app.type else "") or "MAPREDUCE",
        stage=stage,
        queue=queue_leaf(queue),
        user=user or UNKNOWN,
        app=app_identity(name, app.tags if app is not None else ()),
        size=size_bucket(maps, reduces),
        demand=demand_bucket(memory_mb),
        job=job_key(job_id),
        progress=_job_progress(job, stage),
    )


def _job_progress(job: MRJob | None, stage: str) -> str:
    if job is None:
        return UNKNOWN
    waiting = stage == "REDUCE" and job.maps_pending > 0
    return progress_bucket(job.maps_completed, job.maps_total, waiting)


def _request_memory(requests: Sequence[ResourceRequest], stage: str) -> int:
    sizes = {
        rr.capability.memory_mb
        for rr in requests
        if rr.resource_name == "*" and MR_PRIORITY_STAGE.get(rr.priority) == stage
    }
    return sizes.pop() if len(sizes) == 1 else -1
