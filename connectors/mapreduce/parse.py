"""Pure parsers for the MapReduce REST APIs: the running AM through the RM
proxy (``/proxy/<app>/ws/v1/mapreduce``) and the JobHistory server
(``/ws/v1/history/mapreduce``). Both share the job/task/attempt shapes; the
AM adds running/pending counts, the JHS adds queue and average times.

Ids are decomposed with ``split``: ``job_<ts>_<seq>`` -> ``application_<ts>_<seq>``
(sequence zero-padded to 4 digits as YARN prints it), ``task_<job part>_<m|r>_<n>``
and ``attempt_<task part>_<k>``. The REST docs use odd ids such as
``task_1326232085508_4_4_r_0``; everything before the type letter is taken as
the job part, so those resolve to ``job_1326232085508_4_4``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from yarn_advisor.advisor.model.snapshot import MRJob, Task
from yarn_advisor.connectors._json import (
    JSON,
    as_bool,
    as_float,
    as_int,
    as_str,
    items_or_single,
    nonneg,
    require_str,
)

__all__ = [
    "TaskAttempt",
    "app_id_of_job",
    "attempt_phase",
    "job_id_of_task",
    "parse_jobs",
    "parse_task_attempts",
    "parse_tasks",
    "task_with_attempt",
]

JOBS = "/ws/v1/mapreduce/jobs"
TASKS = "/ws/v1/mapreduce/jobs/{jobid}/tasks"
ATTEMPTS = "/ws/v1/mapreduce/jobs/{jobid}/tasks/{taskid}/attempts"

_TYPES = {"m": "MAP", "r": "REDUCE"}


@dataclass(frozen=True, slots=True)
class TaskAttempt:
    """One task attempt (``.../tasks/{taskid}/attempts``). Times are epoch ms,
    0 when not reached; the shuffle/merge finish times are 0 for maps."""

    id: str
    task_id: str
    job_id: str
    type: str  # MAP | REDUCE
    state: str
    progress: float
    node_http_address: str
    rack: str
    container_id: str
    start_time: int
    finish_time: int
    elapsed_time: int
    shuffle_finish_time: int = 0
    merge_finish_time: int = 0


# --------------------------------------------------------------------------- ids


def app_id_of_job(job_id: str) -> str:
    """``job_<ts>_<seq>[...]`` -> ``application_<ts>_<seq:04>`` ('' if malformed)."""
    parts = job_id.split("_")
    if len(parts) < 3 or parts[0] != "job" or not parts[1].isdigit():
        return ""
    seq = parts[2]
    return f"application_{parts[1]}_{seq.zfill(4) if seq.isdigit() else seq}"


def _split_task(task_id: str) -> tuple[str, str]:
    """``task_<job part>_<m|r>_<n>`` -> (job id, MAP|REDUCE); ('', '') if malformed."""
    parts = task_id.split("_")
    if len(parts) < 5 or parts[0] != "task":
        return "", ""
    kind = parts[-2].lower()
    return "job_" + "_".join(parts[1:-2]), _TYPES.get(kind, kind.upper())


def job_id_of_task(task_id: str) -> str:
    """``task_1326232085508_0004_r_000000`` -> ``job_1326232085508_0004``."""
    return _split_task(task_id)[0]


# --------------------------------------------------------------------------- jobs


def parse_jobs(body: object) -> tuple[MRJob, ...]:
    """``{"jobs": {"job": [...]}}`` (AM or JHS; ``{"jobs": null}`` when none) or
    ``{"job": {...}}`` -> MRJobs."""
    return tuple(_job(j) for j in items_or_single(body, "jobs", "job", JOBS))


def _job(j: JSON) -> MRJob:
    g = j.get
    job_id = require_str(j, "id", "job", JOBS)
    return MRJob(
        id=job_id,
        app_id=app_id_of_job(job_id),
        name=as_str(g("name")),
        user=as_str(g("user")),
        queue=as_str(g("queue")),
        state=as_str(g("state")),
        start_time=nonneg(g("startTime")),
        finish_time=nonneg(g("finishTime")),
        maps_total=as_int(g("mapsTotal")),
        maps_completed=as_int(g("mapsCompleted")),
        reduces_total=as_int(g("reducesTotal")),
        reduces_completed=as_int(g("reducesCompleted")),
        maps_running=as_int(g("mapsRunning")),
        reduces_running=as_int(g("reducesRunning")),
        maps_pending=as_int(g("mapsPending")),
        reduces_pending=as_int(g("reducesPending")),
        map_progress=as_float(g("mapProgress")),
        reduce_progress=as_float(g("reduceProgress")),
        avg_map_time=nonneg(g("avgMapTime")),
        avg_reduce_time=nonneg(g("avgReduceTime")),
        uberized=as_bool(g("uberized")),
    )


# --------------------------------------------------------------------------- tasks


def parse_tasks(body: object, job_id: str = "") -> tuple[Task, ...]:
    """``{"tasks": {"task": [...]}}`` or ``{"task": {...}}`` -> Tasks.

    The job id comes from the task id, else from ``job_id``. ``startTime`` -1
    (never started) becomes 0. ``attempt_id`` is the successful attempt, if any.
    """
    return tuple(_task(t, job_id) for t in items_or_single(body, "tasks", "task", TASKS))


def _task(t: JSON, fallback_job: str) -> Task:
    g = t.get
    task_id = require_str(t, "id", "task", TASKS)
    job_id, kind = _split_task(task_id)
    job_id = job_id or fallback_job
    return Task(
        id=task_id,
        job_id=job_id,
        app_id=app_id_of_job(job_id),
        type=as_str(g("type")).upper() or kind,
        state=as_str(g("state")),
        progress=as_float(g("progress")),
        start_time=nonneg(g("startTime")),
        finish_time=nonneg(g("finishTime")),
        elapsed_time=nonneg(g("elapsedTime")),
        attempt_id=as_str(g("successfulAttempt")),
    )


# --------------------------------------------------------------------------- attempts


def parse_task_attempts(body: object, task_id: str = "") -> tuple[TaskAttempt, ...]:
    """``{"taskAttempts": {"taskAttempt": [...]}}`` or ``{"taskAttempt": {...}}``
    -> TaskAttempts. The task id comes from the attempt id, else from ``task_id``."""
    items = items_or_single(body, "taskAttempts", "taskAttempt", ATTEMPTS)
    return tuple(_attempt(a, task_id) for a in items)


def _attempt(a: JSON, fallback_task: str) -> TaskAttempt:
    g = a.get
    attempt_id = require_str(a, "id", "taskAttempt", ATTEMPTS)
    head = attempt_id.rpartition("_")[0]
    task_id = "task_" + head[len("attempt_") :] if attempt_id.startswith("attempt_") else ""
    job_id, kind = _split_task(task_id)
    if not job_id:
        task_id = fallback_task
        job_id, kind = _split_task(task_id)
    return TaskAttempt(
        id=attempt_id,
        task_id=task_id,
        job_id=job_id,
        type=as_str(g("type")).upper() or kind,
        state=as_str(g("state")),
        progress=as_float(g("progress")),
        node_http_address=as_str(g("nodeHttpAddress")),
        rack=as_str(g("rack")),
        container_id=as_str(g("assignedContainerId")),
        start_time=nonneg(g("startTime")),
        finish_time=nonneg(g("finishTime")),
        elapsed_time=nonneg(g("elapsedTime")),
        shuffle_finish_time=nonneg(g("shuffleFinishTime")),
        merge_finish_time=nonneg(g("mergeFinishTime")),
    )


def attempt_phase(attempt: TaskAttempt, now_ms: int) -> str:
    """MAP for maps; for reduces SHUFFLE until shuffle finished, then MERGE
    until merge finished, then REDUCE. A finish time after ``now_ms`` (clock
    skew between the AM and the advisor) counts as not reached. '' otherwise."""
    if attempt.type == "MAP":
        return "MAP"
    if attempt.type != "REDUCE":
        return ""
    if attempt.shuffle_finish_time <= 0 or attempt.shuffle_finish_time > now_ms:
        return "SHUFFLE"
    if attempt.merge_finish_time <= 0 or attempt.merge_finish_time > now_ms:
        return "MERGE"
    return "REDUCE"


def task_with_attempt(task: Task, attempt: TaskAttempt, now_ms: int) -> Task:
    """``task`` with phase, container and attempt id taken from ``attempt``
    (node_id is left alone: an attempt only knows its node's HTTP address;
    join on ``container_id`` to the RM containers for the node id)."""
    return replace(
        task,
        phase=attempt_phase(attempt, now_ms),
        container_id=attempt.container_id,
        attempt_id=attempt.id,
    )
