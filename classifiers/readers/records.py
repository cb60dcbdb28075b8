"""The job and task records every trace reader produces and the evaluation replays.

Rumen traces, JobHistory ``.jhist`` files, Spark event logs and the task CSV
all come down to these: a :class:`TraceJob` (a MapReduce job, or a Spark
application) holding :class:`TraceTask` records, each with its
:class:`TraceAttempt` records. Times are epoch milliseconds; ``-1`` means
unknown, as in Rumen. ``classifiers.rumen`` keeps its historical names for
them (``RumenJob``, ``RumenTask``, ``RumenAttempt``).

A task's *status* uses Rumen's values: ``SUCCESS``, ``FAILED``, ``KILLED``,
or ``""`` when the source does not say (then it is taken as succeeded);
``RUNNING`` for a task still running when the trace ends (*censored*: its
``finish_ms`` is the trace's end, so only "ran at least this long" is known).
"""

from __future__ import annotations

from dataclasses import dataclass

SUCCESS, FAILED, KILLED = "SUCCESS", "FAILED", "KILLED"
CENSORED = "RUNNING"  # still running at the trace's end (finish_ms: the end)
MAPREDUCE = "MAPREDUCE"
MR_STAGES = ("MAP", "REDUCE")  # the MapReduce task types that run in containers


@dataclass(frozen=True, slots=True)
class TraceAttempt:
    """One attempt of a task: where it ran and when."""

    attempt_id: str
    host: str
    start_ms: int
    finish_ms: int
    result: str


@dataclass(frozen=True, slots=True)
class TraceTask:
    """One task: MAP, REDUCE, SETUP/CLEANUP (in ``others``), or for another
    framework a task whose ``type`` is its stage (in ``stage_tasks``).

    ``memory_mb`` and ``vcores`` are the task's own container ask when the
    source gives one per task (the task CSV, a Spark stage's resource
    profile); -1 otherwise, and the job's per-type ask applies
    (:meth:`TraceJob.demand_mb`).
    """

    task_id: str
    type: str
    status: str
    start_ms: int
    finish_ms: int
    attempts: tuple[TraceAttempt, ...]
    input_bytes: int = -1
    input_records: int = -1
    memory_mb: int = -1
    vcores: int = -1

    @property
    def launch_ms(self) -> int:
        """When the task first got a container: its earliest attempt's start.

        Older traces (Hadoop 0.20-0.22 job history) record a task's
        ``startTime`` when it was *scheduled*, so it includes the wait for a
        slot or container, up to minutes on a busy cluster; YARN's MapReduce
        AM and JobHistoryServer report the first attempt's launch instead
        (checked on the recordings of the test cluster). The launch is when a
        scheduler places the task, and what a live advisor sees, so durations
        are measured from it. Falls back to ``start_ms`` without attempt times.
        """
        starts = [a.start_ms for a in self.attempts if a.start_ms > 0]
        return min(starts) if starts else self.start_ms

    @property
    def duration_ms(self) -> int | None:
        """Time in containers: launch (:attr:`launch_ms`) to final finish; None if unknown."""
        launch = self.launch_ms
        if launch <= 0 or self.finish_ms < launch:
            return None
        return self.finish_ms - launch


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One job with its tasks. ``*_mb`` are -1 when not recorded.

    ``framework`` is the YARN application type (the F feature). A MapReduce
    job's tasks are in ``maps``, ``reduces`` and ``others`` (setup, cleanup);
    another framework's (a Spark application's) are in ``stage_tasks``, each
    with its stage as ``type``, and ``total_maps``/``total_reduces`` are -1.
    """

    job_id: str
    user: str
    name: str
    queue: str
    job_type: str
    outcome: str
    submit_ms: int
    launch_ms: int
    finish_ms: int
    total_maps: int
    total_reduces: int
    map_mb: int
    reduce_mb: int
    heap_mb: int
    maps: tuple[TraceTask, ...]
    reduces: tuple[TraceTask, ...]
    others: tuple[TraceTask, ...] = ()
    framework: str = MAPREDUCE
    stage_tasks: tuple[TraceTask, ...] = ()
    am_mb: int = -1  # the application master's container (the what-if's AM ask)
    slowstart: float = -1.0  # mapreduce.job.reduce.slowstart.completedmaps (-1: unknown)

    def memory_mb(self, task_type: str) -> int:
        """Memory asked for a task of this type, -1 if unknown. Hadoop 1 traces
        often record only the task JVM heap, the slot-era demand: used then."""
        asked = self.map_mb if task_type == "MAP" else self.reduce_mb
        return asked if asked > 0 else self.heap_mb

    def demand_mb(self, task: TraceTask) -> int:
        """The container memory ``task`` asked for: its own, else its type's."""
        return task.memory_mb if task.memory_mb > 0 else self.memory_mb(task.type)

    @property
    def container_tasks(self) -> tuple[TraceTask, ...]:
        """The tasks that ran in containers an advisor could place: MAP and
        REDUCE tasks (setup and cleanup run inside the MapReduce AM), and
        every stage task of another framework."""
        mr = tuple(t for t in (*self.maps, *self.reduces) if t.type in MR_STAGES)
        return mr + self.stage_tasks if self.stage_tasks else mr
