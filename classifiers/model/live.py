"""Live wiring: each cycle's Snapshot -> features -> the online classifier.

The daemon calls, once per cycle and in this order::

    live.classify_tasks(snapshot, tasks, calls)   # per pending MapReduce task
    live.classify_pending_groups(snapshot, calls) # one per pending resource request
    live.model.note(calls)                 # learn: apply the short calls made above,
    live.update(snapshot)                  # then finished tasks, censored running ones

Predicting changes nothing in the model: the short calls it made are data
(``calls``) until the learn step applies them, so ``decide`` is pure.

A task is learned with the features it had when it started, which is what a
prediction sees: they are computed when the task is first seen running (or,
for a task that started and finished between two cycles, from the job progress
recorded at the last cycle before its start) and remembered until it finishes.
Only SUCCEEDED tasks are learned at finish: a killed or failed task's run time
is not its natural length (a killed long one was already learned as censored).
The properties come from the Snapshot: the application (type, user, queue,
name, tags, resource requests), the MapReduce job (maps and reduces, completed
and pending; the JobHistoryServer's view once the application is gone) and
the container a task runs in.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from yarn_advisor.advisor.model.snapshot import App, MRJob, Snapshot, Task
from yarn_advisor.classifiers.model.budget import Calls
from yarn_advisor.classifiers.model.features import (
    MR_PRIORITY_STAGE,
    features,
    props_for_request,
    props_from_live,
)
from yarn_advisor.classifiers.model.naive_bayes import (
    NaiveBayesTaskClassifier,
    Prediction,
    RunningTask,
)

MAX_TASKS_REMEMBERED = 500_000
MAX_PROGRESS_POINTS = 240  # per job: 2 h of 30 s cycles
PENDING_STATES = frozenset({"NEW", "SCHEDULED"})


@dataclass(frozen=True, slots=True)
class GroupPrediction:
    """The prediction for the pending containers of one resource request."""

    app_id: str
    priority: int
    stage: str
    memory_mb: int
    pending: int
    prediction: Prediction


@dataclass(frozen=True)
class Predictions:
    """One cycle's predictions, as policies read them (``reads["classifier"]``).

    ``groups`` holds one prediction per pending resource-request row, by
    ``(app id, request priority)``; ``tasks`` the predicted class of each
    pending MapReduce task (True: short), kept to score them when they end.
    """

    threshold_s: float
    groups: Mapping[tuple[str, int], GroupPrediction] = field(default_factory=dict)
    tasks: Mapping[str, bool] = field(default_factory=dict)
    # the short calls these predictions made: the model's account applies them
    # when it learns (predicting changed nothing)
    calls: Calls = field(default_factory=Calls, compare=False)

    def group(self, app_id: str, priority: int) -> GroupPrediction | None:
        """The prediction for the pending containers of one request, if any."""
        return self.groups.get((app_id, priority))


@dataclass(frozen=True, slots=True)
class CycleLearning:
    """What one :meth:`LiveTaskClassifier.update` learned."""

    finished: int
    censored: int
    running: int


class LiveTaskClassifier:
    """Keeps per-task features and per-job progress between cycles."""

    def __init__(self, model: NaiveBayesTaskClassifier) -> None:
        self.model = model
        self._feats: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._progress: dict[str, tuple[list[int], list[MRJob]]] = {}  # job -> (times, states)
        self._asked: dict[tuple[str, str], int] = {}  # (app, stage) -> last memory asked

    def update(self, snap: Snapshot) -> CycleLearning:
        """Learn from this cycle's finished tasks and running tasks."""
        apps = {a.id: a for a in snap.apps}
        jobs = {j.id: j for j in snap.jobs}
        for job in snap.jobs:
            times, states = self._progress.setdefault(job.id, ([], []))
            if not times or times[-1] < snap.taken_at:
                times.append(snap.taken_at)
                states.append(job)
                del times[:-MAX_PROGRESS_POINTS], states[:-MAX_PROGRESS_POINTS]
        for app in snap.apps:
            for rr in app.resource_requests:
                if rr.resource_name == "*" and rr.priority in MR_PRIORITY_STAGE:
                    self._asked[app.id, MR_PRIORITY_STAGE[rr.priority]] = rr.capability.memory_mb
        memory = {c.id: c.allocated.memory_mb for c in snap.containers}
        running = []
        for task in snap.tasks:
            if task.state == "RUNNING":
                elapsed = task.elapsed_time or max(0, snap.taken_at - task.start_time)
                feats = self._features_at_start(task, jobs, apps, memory)
                running.append(RunningTask(task.id, feats, elapsed))
        censored = self.model.observe_running(running)
        finished = 0
        for task in snap.finished_tasks:
            if task.state != "SUCCEEDED" or task.start_time <= 0:
                continue
            duration = task.finish_time - task.start_time if task.finish_time > 0 else 0
            feats = self._features_at_start(task, jobs, apps, memory)
            finished += self.model.learn_finished(task.id, feats, duration or task.elapsed_time)
            self._feats.pop(task.id, None)
        self._prune(jobs)
        return CycleLearning(finished, censored, len(running))

    def classify_pending_groups(self, snap: Snapshot,
                                calls: Calls | None = None) -> list[GroupPrediction]:
        """One prediction per pending off-switch ('*') request of every app (short
        calls noted in ``calls``)."""
        jobs = {j.app_id: j for j in snap.jobs}
        out = []
        for app in snap.apps:
            for rr in app.resource_requests:
                if rr.resource_name != "*" or rr.num_containers <= 0 or rr.priority == 0:
                    continue  # priority 0: the AM container itself
                props = props_for_request(app, rr, jobs.get(app.id))
                pred = self.model.predict(features(props), calls)
                out.append(
                    GroupPrediction(
                        app.id,
                        rr.priority,
                        props.stage,
                        rr.capability.memory_mb,
                        rr.num_containers,
                        pred,
                    )
                )
        return out

    def classify_tasks(self, snap: Snapshot, tasks: Iterable[Task],
                       calls: Calls | None = None) -> list[Prediction]:
        """Predictions for pending tasks (state NEW/SCHEDULED) with the job's
        current progress; tasks sharing properties are scored once (short calls
        noted in ``calls``)."""
        apps = {a.id: a for a in snap.apps}
        jobs = {j.id: j for j in snap.jobs}
        feats: dict[tuple[str, str, str], tuple[str, ...]] = {}  # a job's tasks of a type share
        batch = []
        for t in tasks:
            key = (t.job_id, t.app_id, t.type)
            found = feats.get(key)
            if found is None:
                found = feats[key] = features(
                    props_from_live(t, jobs.get(t.job_id), apps.get(t.app_id)))
            batch.append(found)
        return self.model.predict_many(batch, calls)

    def pending_tasks(self, snap: Snapshot) -> list[Task]:
        """The MapReduce tasks of the snapshot still waiting for a container."""
        return [t for t in snap.tasks if t.state in PENDING_STATES]

    def _features_at_start(
        self, task: Task, jobs: dict[str, MRJob], apps: dict[str, App], memory: dict[str, int]
    ) -> tuple[str, ...]:
        feats = self._feats.get(task.id)
        if feats is None:
            job = self._job_at(task.job_id, task.start_time) or jobs.get(task.job_id)
            mem = memory.get(task.container_id) or self._asked.get((task.app_id, task.type), -1)
            feats = features(props_from_live(task, job, apps.get(task.app_id), mem))
            self._feats[task.id] = feats
            if len(self._feats) > MAX_TASKS_REMEMBERED:
                self._feats.popitem(last=False)
        return feats

    def _job_at(self, job_id: str, when: int) -> MRJob | None:
        """The job as seen at the last cycle before ``when`` (else the first seen)."""
        times, states = self._progress.get(job_id, ([], []))
        if not states:
            return None
        return states[max(0, bisect_right(times, when) - 1)]

    def _prune(self, live_jobs: dict[str, MRJob]) -> None:
        if len(self._progress) > 4 * max(64, len(live_jobs)):
            for job_id in [j for j in self._progress if j not in live_jobs]:
                del self._progress[job_id]
            self._asked.clear()  # refilled from the live apps' requests next cycle
