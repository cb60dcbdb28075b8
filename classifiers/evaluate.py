"""Prequential (test-then-train) evaluation of the classifier on a job history.

The history (a Rumen trace, or what a reader of ``sources`` reads: JobHistory
files, Spark event logs, a task CSV) is replayed as the daemon would live it,
in cycles of ``cycle_ms``. At each cycle boundary the model observes the
tasks running at that instant (censored learning, overdue ages); then every
task starting before the next boundary is predicted from that state; only
then are the finishes of the cycle learned. So no task's own outcome, nor
anything that happened after the last cycle before its start, reaches its
prediction (a test checks this).
Features use only what is known then: the job's name (or user and shape),
the stage, the share of the job's maps finished by the cycle (and, for a
reduce, whether some maps have not started; unknown for a job of another
framework, such as a Spark application), the memory asked. Tasks are
timed from their launch (:attr:`~yarn_advisor.classifiers.rumen.RumenTask.launch_ms`).
SETUP/CLEANUP tasks are left out: on YARN they run inside the MapReduce AM, not in containers the
advisor could place. A task that failed or was killed is not learned at its
end, as live (its run time is not its length); it is scored long if it ran
past the threshold, else not scored (``unresolved``). The default 1 ms cycle
is the paper's setting (classify at each task's start); ``--cycle 30``
mimics the daemon's 30 s cycle.

Besides the confusion matrix the result counts *cold starts* (tasks called
long for want of history of their application stage) and, stricter, tasks
*first seen*: nothing at all was learned of their stage when they started.
The share of short tasks not first seen is the short recall ceiling of any
rule that needs a stage's history: on a trace where it is under the target,
the five features cannot reach it there, whatever the parameters.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarn_advisor.classifiers.features import (
    LEVEL_NAMES,
    TaskProps,
    app_identity,
    demand_bucket,
    features,
    progress_bucket,
)
from yarn_advisor.classifiers.naive_bayes import GROUP_LEVEL, NaiveBayesTaskClassifier
from yarn_advisor.classifiers.records import MAPREDUCE, TraceJob
from yarn_advisor.classifiers.rumen import RumenTrace
from yarn_advisor.classifiers.sources import JobReader

CLASSES = ("short", "long")
# Predictions made with no history of the task's application stage: the
# paper's conservative "long" for new applications. Counted apart so a report
# shows how much of the short-recall gap is cold start, which no model of
# the five features can close within one short trace.
COLD_RULES = frozenset({"unknown", "no-history"})
DEFAULT_CYCLE_MS = 1  # classify at each task's start, as in the paper
_GROUP = LEVEL_NAMES.index(GROUP_LEVEL)
_START, _FINISH = 0, 1


@dataclass
class EvalResult:
    """Confusion matrix ``confusion[actual][predicted]`` and derived figures."""

    traces: list[str]
    threshold_s: float
    min_confidence: float
    cycle_ms: int = DEFAULT_CYCLE_MS
    min_support: int = 3
    confusion: dict[str, dict[str, int]] = field(
        default_factory=lambda: {a: {p: 0 for p in CLASSES} for a in CLASSES}
    )
    short_called_long_by: dict[str, int] = field(default_factory=dict)  # rule -> tasks
    cold: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    # Cold starts of a stricter kind: tasks predicted before anything at all
    # (finished or censored) was learned of their application stage. No rule
    # that needs the stage's history can call them short.
    first_seen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    skipped: int = 0  # tasks without usable start/finish times
    unresolved: int = 0  # failed or killed before the threshold: length unknown
    problems: list[str] = field(default_factory=list)
    read: dict[str, Any] | None = None  # the reader's counts (JobHistory, Spark, CSV)

    def n(self, actual: str) -> int:
        return sum(self.confusion[actual].values())

    def recall(self, actual: str) -> float | None:
        n = self.n(actual)
        return self.confusion[actual][actual] / n if n else None

    @property
    def long_called_short(self) -> float | None:
        n = self.n("long")
        return self.confusion["long"]["short"] / n if n else None

    def warm_recall(self, actual: str) -> float | None:
        """Recall over the tasks that were not cold starts (see :data:`COLD_RULES`)."""
        n = self.n(actual) - self.cold[actual]
        return self.confusion[actual][actual] / n if n else None

    @property
    def short_recall_ceiling(self) -> float | None:
        """The short recall of a rule that calls short every short task whose
        application stage had history when it started (see :attr:`first_seen`):
        what the target can be held against on this trace."""
        n = self.n("short")
        return (n - self.first_seen["short"]) / n if n else None

    def to_json(self) -> dict[str, Any]:
        """The ``classify-eval --json`` object (DESIGN.md, Interfaces)."""
        out: dict[str, Any] = {
            "trace": self.traces[0] if len(self.traces) == 1 else self.traces,
            "threshold_s": self.threshold_s,
            "min_confidence": self.min_confidence,
            "min_support": self.min_support,
            "cycle_s": self.cycle_ms / 1000,
        }
        for cls in CLASSES:
            out[cls] = {"n": self.n(cls), "recall": _round(self.recall(cls))}
        out["confusion"] = self.confusion
        out["long_called_short"] = _round(self.long_called_short)
        out["cold_starts"] = self.cold
        out["warm"] = {cls: {"recall": _round(self.warm_recall(cls))} for cls in CLASSES}
        out["first_seen"] = self.first_seen
        out["short_recall_ceiling"] = _round(self.short_recall_ceiling)
        out["short_called_long_by"] = self.short_called_long_by
        out["skipped_tasks"] = self.skipped
        out["unresolved_tasks"] = self.unresolved
        out["problems"] = self.problems
        if self.read is not None:
            out["read"] = self.read
        return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


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
    first_seen: bool = False  # nothing learned of its application stage yet
    succeeded: bool = True  # its last attempt succeeded (else failed or killed)


def _events(jobs: Sequence[TraceJob]) -> tuple[list[_Task], list[tuple[int, int, int]]]:
    tasks: list[_Task] = []
    events: list[tuple[int, int, int]] = []
    for j, job in enumerate(jobs):
        for t in job.container_tasks:
            if t.duration_ms is None:
                continue
            succeeded = t.status in ("SUCCESS", "")  # "": not recorded
            i = len(tasks)
            # ids made unique: a trace may hold the same job twice (wordcount2.json)
            start = t.launch_ms  # when it gets a container: see RumenTask.launch_ms
            tasks.append(_Task(j, f"{i}:{t.task_id}", t.type, start, t.finish_ms,
                               job.demand_mb(t), succeeded=succeeded))
            events.append((start, _START, i))
            events.append((t.finish_ms, _FINISH, i))
    events.sort()
    return tasks, events


class _Running:
    """The tasks running at a cycle boundary, indexed so that one observation
    costs O(groups running x log tasks) instead of O(tasks running), which made
    a trace with thousands of concurrent tasks quadratic. Tasks are added in
    start order, so appending keeps each {F,A,S} group's start times sorted.
    :meth:`observe` gives the model what
    :meth:`NaiveBayesTaskClassifier.observe_running` computes from the whole
    list: censored learning, oldest age per group, overdue share (a test
    checks they agree)."""

    def __init__(self, threshold_ms: int) -> None:
        self.tasks: dict[int, _Task] = {}
        self._starts: dict[str, list[int]] = {}  # group -> sorted starts of its running tasks
        self._due: list[tuple[int, int]] = []  # (when it reaches the threshold, task index)
        self._threshold = threshold_ms

    def add(self, i: int, task: _Task) -> None:
        self.tasks[i] = task
        self._starts.setdefault(task.feats[_GROUP], []).append(task.start)
        heapq.heappush(self._due, (task.start + self._threshold, i))

    def remove(self, i: int) -> None:
        task = self.tasks.pop(i)
        group = task.feats[_GROUP]
        starts = self._starts[group]
        del starts[bisect_left(starts, task.start)]
        if not starts:
            del self._starts[group]

    def observe(self, model: NaiveBayesTaskClassifier, now: int) -> None:
        while self._due and self._due[0][0] <= now:  # censored: past the threshold
            _, i = heapq.heappop(self._due)
            task = self.tasks.get(i)
            if task is not None:
                model.learn_running(task.task_id, task.feats, now - task.start)
        ages: dict[str, int] = {}
        overdue = 0
        for group, starts in self._starts.items():
            ages[group] = now - starts[0]
            limit = model.overdue_after_ms(group)
            if limit is not None:  # overdue: age > limit, i.e. started before now - limit
                overdue += bisect_left(starts, now - limit)
        model.note_running(ages, overdue / len(self.tasks) if self.tasks else 0.0)


def evaluate_jobs(
    jobs: Sequence[TraceJob],
    model: NaiveBayesTaskClassifier,
    result: EvalResult,
    cycle_ms: int = DEFAULT_CYCLE_MS,
) -> None:
    """Replay one trace's jobs through ``model``, adding to ``result``."""
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
    names = [
        app_identity(j.name, j.user, maps, j.total_reduces)
        for j, maps in zip(jobs, maps_total, strict=True)
    ]
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
                job, j = jobs[task.job], task.job
                waiting = task.stage == "REDUCE" and maps_started[j] < maps_total[j]
                props = TaskProps(
                    framework=job.framework,
                    app=names[j],
                    stage=task.stage,
                    progress=progress_bucket(maps_done[j], maps_total[j], waiting),
                    demand=demand_bucket(task.demand_mb),
                )
                task.feats = features(props)
                task.first_seen = not model.knows_stage(task.feats)
                pred = model.predict(task.feats)
                task.predicted_short, task.reason = pred.short, pred.reason
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


def _finish(task: _Task, model: NaiveBayesTaskClassifier, result: EvalResult) -> None:
    duration = task.finish - task.start
    actual = "long" if duration >= model.threshold_ms else "short"
    if not task.succeeded:
        # As live: a failed or killed task's run time is not its length; one
        # that ran past the threshold is known long (censored, learned once).
        if actual == "short":
            result.unresolved += 1
            return
        model.learn_running(task.task_id, task.feats, duration)
    else:
        model.learn_finished(task.task_id, task.feats, duration)
    if task.reason in COLD_RULES:
        result.cold[actual] += 1
    if task.first_seen:
        result.first_seen[actual] += 1
    if actual == "short" and not task.predicted_short:
        by = result.short_called_long_by
        by[task.reason] = by.get(task.reason, 0) + 1
    result.confusion[actual]["short" if task.predicted_short else "long"] += 1


def _start(
    names: list[str],
    threshold_s: float,
    min_confidence: float | None,
    cycle_ms: int,
    min_support: int | None,
) -> tuple[NaiveBayesTaskClassifier, EvalResult]:
    """A fresh model and an empty result for it."""
    params: dict[str, Any] = {"threshold_s": threshold_s}
    if min_confidence is not None:
        params["min_confidence"] = min_confidence
    if min_support is not None:
        params["min_support"] = min_support
    model = NaiveBayesTaskClassifier(**params)
    result = EvalResult(names, threshold_s, model.min_confidence, cycle_ms, model.min_support)
    return model, result


def evaluate_traces(
    paths: Iterable[str | Path],
    threshold_s: float = 60.0,
    min_confidence: float | None = None,
    cycle_ms: int = DEFAULT_CYCLE_MS,
    min_support: int | None = None,
) -> EvalResult:
    """Evaluate one fresh model over the traces in order (it learns across them)."""
    names = [str(p) for p in paths]
    model, result = _start(names, threshold_s, min_confidence, cycle_ms, min_support)
    for path in names:
        trace = RumenTrace(path)
        jobs = list(trace)
        if trace.problem:
            result.problems.append(trace.problem)
        evaluate_jobs(jobs, model, result, cycle_ms)
    return result


def evaluate_reader(
    reader: JobReader,
    threshold_s: float = 60.0,
    min_confidence: float | None = None,
    cycle_ms: int = DEFAULT_CYCLE_MS,
    min_support: int | None = None,
) -> EvalResult:
    """Evaluate one fresh model over the history ``reader`` reads (JobHistory
    files, Spark event logs, a task CSV): all its jobs are one timeline, so
    tasks are replayed in time order across files. The reader's counts go to
    :attr:`EvalResult.read`, its damaged records to :attr:`EvalResult.problems`."""
    model, result = _start(reader.paths, threshold_s, min_confidence, cycle_ms, min_support)
    evaluate_jobs(list(reader), model, result, cycle_ms)
    result.read = reader.report.to_json()
    result.problems.extend(reader.report.problem_lines())
    return result
