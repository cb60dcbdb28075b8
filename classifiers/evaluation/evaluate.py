"""Prequential (test-then-train) evaluation of the classifier on a job history.

The history (a Rumen trace, or what a reader of ``sources`` reads: JobHistory
files, Spark event logs, a task CSV) is replayed as the daemon would live it,
in cycles of ``cycle_ms``. At each cycle boundary the model observes the
tasks running at that instant (censored learning, overdue ages); then every
task starting before the next boundary is predicted from that state; only
then are the finishes of the cycle learned. So no task's own outcome, nor
anything that happened after the last cycle before its start, reaches its
prediction (a test checks this).
Features use only what is known then: the job's user, queue, name, numbers
of maps and reduces and id, the stage, the share of the job's maps finished
by the cycle (and, for a reduce, whether some maps have not started; unknown
for a job of another framework, such as a Spark application), the memory
asked. Tasks are timed from their launch
(:attr:`~yarn_advisor.classifiers.readers.records.TraceTask.launch_ms`).
SETUP/CLEANUP tasks are left out: on YARN they run inside the MapReduce AM,
not in containers the advisor could place. A task that failed or was killed
is not learned at its end, as live (its run time is not its length); it is
scored long if it ran past the threshold, else not scored (``unresolved``).
The default 1 ms cycle is the paper's setting (classify at each task's
start); ``--cycle 30`` mimics the daemon's 30 s cycle.

Two variants make a public history look like production: ``rename`` gives
every job one name (an anonymizer's, or a cluster whose job names say
nothing), and several traces are learned across, in time order (a daemon
keeping its checkpoint over days), a job already replayed from an earlier
trace being skipped (a daemon never sees a job twice).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from yarn_advisor.classifiers.evaluation.eval_result import (
    CLASSES,
    DEFAULT_CYCLE_MS,
    ORACLE_SHARE,
    EvalResult,
    pooled,
)
from yarn_advisor.classifiers.model.features import (
    LEVEL_NAMES,
    UNKNOWN,
    TaskProps,
    app_identity,
    demand_bucket,
    features,
    job_key,
    progress_bucket,
    queue_leaf,
    size_bucket,
)
from yarn_advisor.classifiers.model.naive_bayes import (
    JOB_LEVEL,
    SHAPE_LEVEL,
    NaiveBayesTaskClassifier,
)
from yarn_advisor.classifiers.readers.records import CENSORED, MAPREDUCE, SUCCESS, TraceJob
from yarn_advisor.classifiers.readers.rumen import RumenTrace
from yarn_advisor.classifiers.readers.sources import JobReader

__all__ = ["CLASSES", "EvalResult", "evaluate_jobs", "evaluate_reader", "evaluate_traces",
           "pooled"]
# Predictions made with no history: the paper's conservative "long" for new
# applications (here: new users). Counted apart so a report shows how much
# of the short-recall gap is cold start.
COLD_RULES = frozenset({"unknown", "no-history"})
MASKED = "*"  # the value of a property left out (``without``: what a level adds)
_OVERDUE = LEVEL_NAMES.index(JOB_LEVEL)
_LIMIT = LEVEL_NAMES.index(SHAPE_LEVEL)
_START, _FINISH = 0, 1


@dataclass(slots=True)
class _Task:
    job: int
    task_id: str
    stage: str
    start: int
    finish: int
    demand_mb: int = -1
    feats: tuple[str, ...] = ()
    predicted_short: bool = False
    reason: str = ""
    p_short: float | None = None
    first_seen: bool = False  # nothing learned of its user's stage yet
    frequency: float = -1.0  # the frequency rule's score: short share of its user's stage
    succeeded: bool = True  # its last attempt succeeded (else failed or killed)
    censored: bool = False  # still running at the trace's end (finish: the end)


def _events(jobs: Sequence[TraceJob]) -> tuple[list[_Task], list[tuple[int, int, int]]]:
    tasks: list[_Task] = []
    events: list[tuple[int, int, int]] = []
    for j, job in enumerate(jobs):
        for t in job.container_tasks:
            if t.duration_ms is None:
                continue
            succeeded = t.status in (SUCCESS, "")  # "": not recorded
            i = len(tasks)
            # ids made unique: a trace may hold the same job twice (wordcount2.json)
            start = t.launch_ms  # when it gets a container: see RumenTask.launch_ms
            tasks.append(_Task(j, f"{i}:{t.task_id}", t.type, start, t.finish_ms,
                               job.demand_mb(t), succeeded=succeeded,
                               censored=t.status == CENSORED))
            events.append((start, _START, i))
            events.append((t.finish_ms, _FINISH, i))
    events.sort()
    return tasks, events


class _Running:
    """The tasks running at a cycle boundary, indexed so that one observation
    costs O(groups running x log tasks) instead of O(tasks running), which made
    a trace with thousands of concurrent tasks quadratic. Tasks are added in
    start order, so appending keeps each job stage's start times sorted.
    :meth:`observe` gives the model what
    :meth:`NaiveBayesTaskClassifier.observe_running` computes from the whole
    list: censored learning, oldest age per job stage, overdue share (a test
    checks they agree)."""

    def __init__(self, threshold_ms: int) -> None:
        self.tasks: dict[int, _Task] = {}
        self._starts: dict[str, list[int]] = {}  # group -> sorted starts of its running tasks
        self._limits: dict[str, str] = {}  # overdue group -> its limit group
        self._due: list[tuple[int, int]] = []  # (when it reaches the threshold, task index)
        self._threshold = threshold_ms

    def add(self, i: int, task: _Task) -> None:
        self.tasks[i] = task
        group = task.feats[_OVERDUE]
        self._starts.setdefault(group, []).append(task.start)
        self._limits[group] = task.feats[_LIMIT]
        heapq.heappush(self._due, (task.start + self._threshold, i))

    def remove(self, i: int) -> None:
        task = self.tasks.pop(i)
        group = task.feats[_OVERDUE]
        starts = self._starts[group]
        del starts[bisect_left(starts, task.start)]
        if not starts:
            del self._starts[group], self._limits[group]

    def observe(self, model: NaiveBayesTaskClassifier, now: int) -> None:
        while self._due and self._due[0][0] <= now:  # censored: past the threshold
            _, i = heapq.heappop(self._due)
            task = self.tasks.get(i)
            if task is not None:
                model.learn_running(task.task_id, task.feats, now - task.start)
        late: dict[str, int] = {}
        overdue = 0
        for group, starts in self._starts.items():
            limit = model.overdue_after_ms(self._limits[group])
            if limit is not None:  # overdue: age > limit, i.e. started before now - limit
                n = bisect_left(starts, now - limit)
                overdue += n
                # less those past the threshold (age >= threshold): learned long already
                n -= bisect_right(starts, now - self._threshold, hi=n)
                if n > 0:
                    late[group] = n
        model.note_running(late, overdue / len(self.tasks) if self.tasks else 0.0)


def evaluate_jobs(
    jobs: Sequence[TraceJob],
    model: NaiveBayesTaskClassifier,
    result: EvalResult,
    cycle_ms: int = DEFAULT_CYCLE_MS,
    rename: str | None = None,
    job_prefix: str = "",
    without: Collection[str] = (),
) -> None:
    """Replay one trace's jobs through ``model``, adding to ``result``.

    ``rename``: every job carries this name instead of its own. ``job_prefix``
    keeps the jobs of one trace apart from another's with the same ids.
    ``without``: properties (``U``, ``A``, ``Z``, ``R``, ``D``, ``J``, ``P``, ``Q``)
    given one value for every task, to measure what their levels add."""
    cycle_ms = max(1, cycle_ms)
    tasks, events = _events(jobs)
    result.skipped += sum(len(j.maps) + len(j.reduces) + len(j.stage_tasks) for j in jobs) - len(
        tasks)
    maps_done = [0] * len(jobs)
    maps_started = [0] * len(jobs)
    # Only a MapReduce job has maps whose progress a task's start can be set
    # against; for other frameworks the P property is unknown (-1 total: "?").
    maps_total = [
        (j.total_maps if j.total_maps > 0 else len(j.maps)) if j.framework == MAPREDUCE else -1
        for j in jobs
    ]
    static = _job_props(jobs, maps_total, rename, job_prefix, without)
    mask_p, mask_d = "P" in without, "D" in without
    running = _Running(model.threshold_ms)
    e, first = 0, events[0][0] if events else 0
    while e < len(events):
        now = first + (events[e][0] - first) // cycle_ms * cycle_ms  # this event's cycle
        end = e
        while end < len(events) and events[end][0] < now + cycle_ms:
            end += 1
        window = events[e:end]
        e = end
        if any(kind == _START for _, kind, _ in window):  # else nothing to predict yet
            running.observe(model, now)
        for _, kind, i in window:  # predictions first: nothing of this cycle is known
            if kind == _START:
                task = tasks[i]
                j = task.job
                waiting = task.stage == "REDUCE" and maps_started[j] < maps_total[j]
                props = replace(
                    static[j],
                    stage=task.stage,
                    progress=MASKED if mask_p else progress_bucket(
                        maps_done[j], maps_total[j], waiting),
                    demand=MASKED if mask_d else demand_bucket(task.demand_mb),
                )
                task.feats = features(props)
                task.first_seen = not model.knows_stage(task.feats)
                task.frequency = model.stage_frequency(task.feats)
                pred = model.predict_and_note(task.feats)  # each its own batch
                task.predicted_short, task.reason = pred.short, pred.reason
                task.p_short = pred.p_short
                running.add(i, task)
        for _, kind, i in window:  # known from the next cycle on
            if kind == _START and tasks[i].stage == "MAP":
                maps_started[tasks[i].job] += 1
        for _, kind, i in window:
            if kind == _FINISH:
                _finish(tasks[i], model, result)
                running.remove(i)
                if tasks[i].stage == "MAP":
                    maps_done[tasks[i].job] += 1
    _oracle(tasks, model.threshold_ms, result)


def _job_props(jobs: Sequence[TraceJob], maps_total: Sequence[int], rename: str | None,
               prefix: str, without: Collection[str]) -> list[TaskProps]:
    """Each job's task properties but the stage, progress and demand. A job
    held twice in a trace (wordcount2.json) is two jobs."""
    out, seen = [], set()
    for job, maps in zip(jobs, maps_total, strict=True):
        key = prefix + job_key(job.job_id)
        while key in seen:
            key += "'"
        seen.add(key)
        props = TaskProps(
            framework=job.framework, stage="", queue=queue_leaf(job.queue),
            user=job.user or UNKNOWN, app=app_identity(job.name if rename is None else rename),
            # another framework's job may still give its size (its tasks), not its progress
            size=size_bucket(maps if maps >= 0 else job.total_maps, job.total_reduces),
            demand="", job=key, progress="",
        )  # fmt: skip
        masked = {name: MASKED for letter, name in _FIELDS.items() if letter in without}
        if "R" in without and "Z" not in without:  # one reduce group: R is the size's last part
            masked["size"] = f"{props.size}|{MASKED}"
        out.append(replace(props, **masked) if masked else props)
    return out


_FIELDS = {"Q": "queue", "U": "user", "A": "app", "Z": "size", "J": "job"}


def _oracle(tasks: Sequence[_Task], threshold_ms: int, result: EvalResult) -> None:
    """Count what the job-stage oracle calls short (see :mod:`.eval_result`)."""
    stages: dict[tuple[int, str], list[int]] = {}
    scored = [t for t in tasks if t.feats and (t.succeeded or t.finish - t.start >= threshold_ms)]
    for t in scored:
        stages.setdefault((t.job, t.stage), [0, 0])[t.finish - t.start >= threshold_ms] += 1
    known: dict[tuple[int, str], list[int]] = {}  # the same, tasks not first seen
    for t in scored:
        short, long = stages[(t.job, t.stage)]
        if not t.first_seen:
            is_long = t.finish - t.start >= threshold_ms
            known.setdefault((t.job, t.stage), [0, 0])[is_long] += 1
            if short >= ORACLE_SHARE * (short + long):
                result.oracle["long" if is_long else "short"] += 1
    result.stages.extend((s, n) for s, n in known.values())


def _finish(task: _Task, model: NaiveBayesTaskClassifier, result: EvalResult) -> None:
    duration = task.finish - task.start
    actual = "long" if duration >= model.threshold_ms else "short"
    if not task.succeeded:
        # As live: a failed or killed task's run time is not its length; one
        # that ran past the threshold is known long (censored, learned once).
        # A task still running at the trace's end is known long once past it, else unknown.
        if actual == "short":
            if task.censored:
                result.censored += 1
            else:
                result.unresolved += 1
            return
        model.learn_running(task.task_id, task.feats, duration)
    else:
        model.learn_finished(task.task_id, task.feats, duration)
    if task.reason in COLD_RULES:
        result.cold[actual] += 1
    if task.first_seen:
        result.first_seen[actual] += 1
    by = result.called_short_by if task.predicted_short else result.called_long_by
    by.setdefault(task.reason, [0, 0])[actual == "long"] += 1
    result.confusion[actual]["short" if task.predicted_short else "long"] += 1
    result.frequency.append((task.frequency, actual == "long"))
    if result.keep_scores and task.p_short is not None:
        result.scores.append((task.p_short, actual == "long"))


def _start(
    names: list[str],
    threshold_s: float,
    min_confidence: float | None,
    cycle_ms: int,
    min_support: int | None,
    params: Mapping[str, Any] | None = None,
    model_class: type[NaiveBayesTaskClassifier] = NaiveBayesTaskClassifier,
) -> tuple[NaiveBayesTaskClassifier, EvalResult]:
    """A fresh model (``params``: more of its keyword arguments) and an empty
    result for it."""
    kw: dict[str, Any] = {**(params or {}), "threshold_s": threshold_s}
    if min_confidence is not None:
        kw["min_confidence"] = min_confidence
    if min_support is not None:
        kw["min_support"] = min_support
    model = model_class(**kw)
    result = EvalResult(names, threshold_s, model.min_confidence, cycle_ms, model.min_support)
    return model, result


def evaluate_traces(
    paths: Iterable[str | Path],
    threshold_s: float = 60.0,
    min_confidence: float | None = None,
    cycle_ms: int = DEFAULT_CYCLE_MS,
    min_support: int | None = None,
    *,
    rename: str | None = None,
    time_order: bool = False,
    params: Mapping[str, Any] | None = None,
    without: Collection[str] = (),
    keep_scores: bool = False,
    model_class: type[NaiveBayesTaskClassifier] = NaiveBayesTaskClassifier,
) -> EvalResult:
    """Evaluate one fresh model over the Rumen traces, learning across them
    in the order given (``time_order``: of their first task launch). With
    several traces, :attr:`EvalResult.per_trace` holds each trace's figures
    and a job already replayed from an earlier trace is skipped.
    ``model_class``: the model's class (a bench may record what it saw)."""
    traces = [(str(p), RumenTrace(p)) for p in paths]
    loaded = [(name, trace, list(trace)) for name, trace in traces]
    if time_order:
        loaded.sort(key=lambda t: _first_launch(t[2]))
    names = [name for name, _, _ in loaded]
    model, result = _start(names, threshold_s, min_confidence, cycle_ms, min_support, params,
                           model_class)
    result.rename, result.keep_scores = rename, keep_scores
    replayed: set[str] = set()
    for k, (name, trace, jobs) in enumerate(loaded):
        part = EvalResult([name], threshold_s, model.min_confidence, cycle_ms, model.min_support,
                          rename=rename, keep_scores=keep_scores)
        if trace.problem:
            part.problems.append(trace.problem)
        fresh = [j for j in jobs if j.job_id not in replayed]
        part.repeated_jobs = len(jobs) - len(fresh)
        replayed.update(j.job_id for j in jobs)
        evaluate_jobs(fresh, model, part, cycle_ms, rename, f"{k}/" if k else "", without)
        result.add(part)
        if len(loaded) > 1:
            result.per_trace.append(part)
    return result


def _first_launch(jobs: Sequence[TraceJob]) -> int:
    starts = [t.launch_ms for j in jobs for t in j.container_tasks if t.launch_ms > 0]
    return min(starts, default=0)


def evaluate_reader(
    reader: JobReader,
    threshold_s: float = 60.0,
    min_confidence: float | None = None,
    cycle_ms: int = DEFAULT_CYCLE_MS,
    min_support: int | None = None,
    *,
    rename: str | None = None,
    params: Mapping[str, Any] | None = None,
    without: Collection[str] = (),
) -> EvalResult:
    """Evaluate one fresh model over the history ``reader`` reads (JobHistory
    files, Spark event logs, a task CSV): all its jobs are one timeline, so
    tasks are replayed in time order across files. The reader's counts go to
    :attr:`EvalResult.read`, its damaged records to :attr:`EvalResult.problems`.
    ``without``: properties given one value for every task (see :func:`evaluate_jobs`)."""
    model, result = _start(reader.paths, threshold_s, min_confidence, cycle_ms, min_support,
                           params)
    result.rename = rename
    evaluate_jobs(list(reader), model, result, cycle_ms, rename, without=without)
    result.read = reader.report.to_json()
    result.problems.extend(reader.report.problem_lines())
    return result
