"""Which pending tasks OPERA may run on opportunistic resources: the short ones.

OPERA's Task Classifier (section III-B) is a naive Bayes model over the
hierarchical features {F}, {F,A}, {F,A,S}, {F,A,S,P}, ... learned online from
finished tasks, and it calls a task with no history long. The in-RM scheduler
uses the project's own implementation of it
(:class:`~yarn_advisor.classifiers.model.naive_bayes.NaiveBayesTaskClassifier`,
the one the sidecar's OPERA reads), fed what a real RM knows: each task's
features when its container is allocated, its run time when it finishes, and
censored evidence for tasks still running past the threshold. That is the
default because it is what the paper evaluates (Table III) and it makes the
in-RM and sidecar modes see the same predictions' quality.
:class:`OracleEligibility` instead reads the workload's own task durations (a
perfect classifier), for tests and to bound what the classifier costs.
"""

from __future__ import annotations

from typing import Protocol

from yarn_advisor.classifiers.model.features import (
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
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier, RunningTask
from yarn_advisor.simulator.apps import (
    PRIORITY_AM,
    PRIORITY_FAST_FAIL_MAP,
    PRIORITY_MAP,
    PRIORITY_REDUCE,
    Ask,
    SimApp,
    SimContainer,
)

STAGES = {PRIORITY_MAP: "MAP", PRIORITY_FAST_FAIL_MAP: "MAP", PRIORITY_REDUCE: "REDUCE"}


class Eligibility(Protocol):
    """Short/long calls for OPERA's opportunistic assignment."""

    def short(self, app: SimApp, ask: Ask) -> bool:
        """Whether the pending tasks of ``ask`` may run opportunistically."""

    def allocated(self, c: SimContainer) -> None:
        """A task got a container (its features are those of now)."""

    def released(self, c: SimContainer) -> None:
        """A container ended (a finished task is learned)."""

    def observe(self, now: int, running: list[SimContainer]) -> None:
        """Once in a while, with every running task container (censored evidence)."""


def task_features(app: SimApp, ask: Ask) -> tuple[str, ...] | None:
    """Eq 1 features of the pending tasks of ``ask`` (None for an AM request)."""
    stage = STAGES.get(ask.priority)
    if stage is None:
        return None
    maps_waiting = stage == "REDUCE" and any(
        a.count for p, a in app.asks.items() if p in (PRIORITY_MAP, PRIORITY_FAST_FAIL_MAP))
    return features(_props(app, stage, ask.mem, maps_waiting))


def _props(app: SimApp, stage: str, memory_mb: int, maps_waiting: bool = False) -> TaskProps:
    """The classifier's properties of a simulated task, as the live sensor builds them."""
    return TaskProps(
        framework=app.job.app_type, stage=stage, queue=queue_leaf(app.job.queue),
        user=app.user or UNKNOWN, app=app_identity(app.name, app.job.tags),
        size=size_bucket(len(app.maps), len(app.reduces)), demand=demand_bucket(memory_mb),
        job=job_key(app.id),
        progress=progress_bucket(app.maps_completed, len(app.maps), maps_waiting))


class ClassifierEligibility:
    """The project's online naive Bayes classifier (see the module docstring)."""

    def __init__(self, model: NaiveBayesTaskClassifier) -> None:
        self.model = model
        self.feats: dict[SimContainer, tuple[str, ...]] = {}

    def short(self, app: SimApp, ask: Ask) -> bool:
        if ask.priority == PRIORITY_AM:
            return False
        feats = task_features(app, ask)
        return feats is not None and self.model.predict_and_note(feats).short

    def allocated(self, c: SimContainer) -> None:
        if c.is_am:
            return
        ask = c.app.asks.get(c.priority)
        feats = task_features(c.app, ask) if ask is not None else None
        if feats is None:
            stage = STAGES.get(c.priority, "MAP")
            feats = features(_props(c.app, stage, c.mem))
        self.feats[c] = feats

    def released(self, c: SimContainer) -> None:
        feats = self.feats.pop(c, None)
        t = c.task
        if feats is not None and t.state == "SUCCEEDED" and t.container is c and c.started_ms:
            self.model.learn_finished(_task_id(c), feats, t.finish_ms - c.started_ms)

    def observe(self, now: int, running: list[SimContainer]) -> None:
        batch = [RunningTask(_task_id(c), self.feats[c], now - c.started_ms)
                 for c in running if c in self.feats and c.started_ms]
        self.model.observe_running(batch)


class OracleEligibility:
    """Short = the task's known run time is below the threshold."""

    def __init__(self, threshold_ms: int) -> None:
        self.threshold_ms = threshold_ms
        self._known: dict[tuple[str, str], bool] = {}

    def short(self, app: SimApp, ask: Ask) -> bool:
        stage = STAGES.get(ask.priority)
        if stage is None:
            return False
        known = self._known.get((app.id, stage))
        if known is None:
            tasks = app.maps if stage == "MAP" else app.reduces
            known = bool(tasks) and max(t.duration_ms for t in tasks) < self.threshold_ms
            self._known[(app.id, stage)] = known
        return known

    def allocated(self, c: SimContainer) -> None:
        return None

    def released(self, c: SimContainer) -> None:
        return None

    def observe(self, now: int, running: list[SimContainer]) -> None:
        return None


def _task_id(c: SimContainer) -> str:
    return f"{c.app.task_id(c.task)}_{c.task.attempt}"
