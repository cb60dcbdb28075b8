"""Online short/long task classifier: hierarchical back-off over nested levels.

DOCSTRING PLACEHOLDER (rewritten with the measured table once chosen)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from yarn_advisor.classifiers import backoff, checkpoint
from yarn_advisor.classifiers.backoff import Row, Structure
from yarn_advisor.classifiers.checkpoint import FORMAT, VERSION, CheckpointError, validate
from yarn_advisor.classifiers.features import LEVEL_NAMES

__all__ = ["CheckpointError", "NaiveBayesTaskClassifier", "Prediction", "load_or_fresh"]

SUPPORT_LEVEL = "F,S,Q,U"  # tasks of the user's stage needed before a short call
REDUCE_SUPPORT_LEVEL = "F,S,Q,U,A,P"  # for a reduce: of its application at its progress
PROGRESS_LEVEL = "F,S,Q,U,A,P"
JOB_LEVEL = "J,S"  # the job itself: running ages for the overdue rule
SHAPE_LEVEL = "F,S,Q,U,A,Z,D"  # its longest short task sets the overdue limit
MAX_REMEMBERED_TASKS = 200_000


@dataclass(frozen=True, slots=True)
class Prediction:
    """``p_short`` is None when no feature was known; ``reason`` names the rule."""

    short: bool
    p_short: float | None
    reason: str

    @property
    def label(self) -> str:
        return "short" if self.short else "long"


UNKNOWN_TASK = Prediction(short=False, p_short=None, reason="unknown")


@dataclass(frozen=True, slots=True)
class RunningTask:
    """A task seen running this cycle: id, features, elapsed time."""

    task_id: str
    features: tuple[str, ...]
    elapsed_ms: int


class NaiveBayesTaskClassifier:
    """Counts per feature, the back-off estimate, the decision rule, checkpoints."""

    def __init__(
        self,
        threshold_s: float = 60.0,
        min_confidence: float = 0.9,
        alpha: float = 1.0,
        min_support: int = 3,
        overdue_factor: float = 1.25,
        max_overdue_share: float = 0.2,
        shape_correlation: float = 0.4,
        long_while_maps_wait: bool = True,
        reduce_support_at_progress: bool = True,
    ) -> None:
        if threshold_s <= 0 or not 0.0 <= min_confidence <= 1.0 or alpha <= 0:
            raise ValueError("need threshold_s > 0, 0 <= min_confidence <= 1, alpha > 0")
        if not 0.0 <= shape_correlation <= 1.0:
            raise ValueError("shape_correlation must be within [0, 1]")
        self.threshold_ms = round(threshold_s * 1000)
        self.min_confidence = min_confidence
        self.alpha = alpha
        self.min_support = min_support
        self.overdue_factor = overdue_factor
        self.max_overdue_share = max_overdue_share
        self.shape_correlation = shape_correlation
        self.long_while_maps_wait = long_while_maps_wait
        self.reduce_support_at_progress = reduce_support_at_progress
        self._structure = Structure.of({SHAPE_LEVEL: shape_correlation})
        # the progress branch refines reduces only: a map's later waves have its job's history
        self._map_structure = replace(self._structure, branches=())
        self._support = LEVEL_NAMES.index(SUPPORT_LEVEL)
        self._reduce_support = LEVEL_NAMES.index(REDUCE_SUPPORT_LEVEL)
        self._progress = LEVEL_NAMES.index(PROGRESS_LEVEL)
        self._job = LEVEL_NAMES.index(JOB_LEVEL)
        self._shape = LEVEL_NAMES.index(SHAPE_LEVEL)
        self.class_counts = [0, 0]
        self.counts: dict[str, Row] = {}  # feature -> [short, long, tasks]: see backoff
        self.short_max_ms: dict[str, int] = {}  # shape -> longest short task learned
        self.running_age_ms: dict[str, int] = {}  # job stage -> oldest running, last cycle
        self.overdue_share = 0.0  # share of running tasks overdue, last cycle
        self._seen: OrderedDict[str, bool] = OrderedDict()  # task id -> learned censored

    @property
    def threshold_s(self) -> float:
        return self.threshold_ms / 1000

    # ---- learning -------------------------------------------------------
    def learn(self, feats: Sequence[str], is_long: bool) -> None:
        """Add one task of known class (features in level order)."""
        self.class_counts[1 if is_long else 0] += 1
        backoff.add(self.counts, feats, is_long, self._structure_of(feats))

    def learn_finished(self, task_id: str, feats: Sequence[str], duration_ms: int) -> bool:
        """Learn a finished task unless already learned (e.g. censored); True if learned."""
        if task_id in self._seen:
            return False
        self._remember(task_id, censored=False)
        is_long = duration_ms >= self.threshold_ms
        self.learn(feats, is_long)
        if not is_long and len(feats) > self._shape:
            key = feats[self._shape]
            self.short_max_ms[key] = max(duration_ms, self.short_max_ms.get(key, 0))
        return True

    def learn_running(self, task_id: str, feats: Sequence[str], elapsed_ms: int) -> bool:
        """Censored evidence: a running task past the threshold is long (learned once)."""
        if elapsed_ms < self.threshold_ms or task_id in self._seen:
            return False
        self._remember(task_id, censored=True)
        self.learn(feats, True)
        return True

    def observe_running(self, running: Iterable[RunningTask]) -> int:
        """Once per cycle with every running task: learn censored evidence, note
        the oldest running task of each job stage and the overdue share.
        Returns the number of tasks learned."""
        learned = overdue = total = 0
        ages: dict[str, int] = {}
        for task in running:
            learned += self.learn_running(task.task_id, task.features, task.elapsed_ms)
            if len(task.features) > max(self._job, self._shape):
                group = task.features[self._job]
                ages[group] = max(task.elapsed_ms, ages.get(group, 0))
                limit = self.overdue_after_ms(task.features[self._shape])
                overdue += limit is not None and task.elapsed_ms > limit
                total += 1
        self.note_running(ages, overdue / total if total else 0.0)
        return learned

    def note_running(self, oldest_age_ms: dict[str, int], overdue_share: float) -> None:
        """What the overdue rules read: per job stage (its :data:`JOB_LEVEL`
        feature) the age of its oldest running task, and the share of running
        tasks overdue. Set by :meth:`observe_running`, or directly by a caller
        that keeps its running tasks indexed (the evaluation)."""
        self.running_age_ms = oldest_age_ms
        self.overdue_share = overdue_share

    def overdue_after_ms(self, shape: str) -> float | None:
        """The age past which a running task of ``shape`` (its
        :data:`SHAPE_LEVEL` feature) is overdue; None before a short one was learned."""
        longest_short = self.short_max_ms.get(shape)
        return None if longest_short is None else self.overdue_factor * longest_short

    def _remember(self, task_id: str, censored: bool) -> None:
        self._seen[task_id] = censored
        if len(self._seen) > MAX_REMEMBERED_TASKS:
            self._seen.popitem(last=False)

    # ---- prediction -----------------------------------------------------
    def posterior(self, feats: Sequence[str]) -> float | None:
        """P(short | features) by back-off; None if no feature is known."""
        return self._score(feats)[0]

    def _score(self, feats: Sequence[str]) -> tuple[float | None, int]:
        """(P(short), tasks learned at the level that must support a call)."""
        rows = list(map(self.counts.get, feats))
        p_short = backoff.estimate(rows, self._structure_of(feats), self.alpha)
        if self.reduce_support_at_progress and feats[self._job].endswith("|REDUCE"):
            # a reduce: its application's at its progress, or its own job's
            support = max(_tasks(rows[self._reduce_support]), _tasks(rows[self._job]))
        else:
            support = _tasks(rows[self._support])
        return p_short, support

    def _structure_of(self, feats: Sequence[str]) -> Structure:
        is_reduce = len(feats) > self._job and feats[self._job].endswith("|REDUCE")
        return self._structure if is_reduce else self._map_structure

    def knows_stage(self, feats: Sequence[str]) -> bool:
        """Whether anything was learned of the task's user stage (the level
        that must support a short call): else it can only be called long."""
        return len(feats) > self._support and feats[self._support] in self.counts

    def predict(self, feats: Sequence[str]) -> Prediction:
        """Classify a task about to start (features in level order)."""
        p_short, support = self._score(feats)
        if p_short is None:
            return UNKNOWN_TASK
        if support < max(1, self.min_support):
            return Prediction(False, p_short, "no-history")
        if self.long_while_maps_wait and feats[self._progress].endswith("+wait"):
            return Prediction(False, p_short, "maps-waiting")
        if p_short < self.min_confidence:
            return Prediction(False, p_short, "low-confidence")
        limit = self.overdue_after_ms(feats[self._shape])
        if limit is not None and self.running_age_ms.get(feats[self._job], 0) > limit:
            return Prediction(False, p_short, "overdue")
        if self.overdue_share > self.max_overdue_share:
            return Prediction(False, p_short, "cluster-overdue")
        return Prediction(True, p_short, "short")

    def predict_many(self, batch: Iterable[Sequence[str]]) -> list[Prediction]:
        """Predict a batch; identical feature tuples (a task group) are scored once."""
        cache: dict[tuple[str, ...], Prediction] = {}
        out = []
        for feats in batch:
            key = tuple(feats)
            pred = cache.get(key)
            if pred is None:
                pred = cache[key] = self.predict(key)
            out.append(pred)
        return out

    # ---- checkpoint -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The learned state as a JSON-able checkpoint (config is not included)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "levels": list(LEVEL_NAMES),
            "threshold_s": self.threshold_s,
            "class_counts": list(self.class_counts),
            "counts": self.counts,
            "short_max_ms": self.short_max_ms,
            "seen": [[tid, c] for tid, c in self._seen.items()],
        }

    def save(self, path: str | Path) -> None:
        """Write the checkpoint atomically (temp file, then rename)."""
        checkpoint.write_atomic(path, self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, **params: Any) -> NaiveBayesTaskClassifier:
        """A model with ``params`` and the checkpoint's learned state.

        Raises :class:`CheckpointError` if the data is unusable or was learned
        with another threshold than ``params['threshold_s']``."""
        state = validate(data, LEVEL_NAMES)
        params.setdefault("threshold_s", state.threshold_s)
        model = cls(**params)
        if round(state.threshold_s * 1000) != model.threshold_ms:
            raise CheckpointError(
                f"learned with threshold {state.threshold_s:g}s, configured {model.threshold_s:g}s"
            )
        model.class_counts = list(state.class_counts)
        model.counts = state.counts
        model.short_max_ms = state.short_max_ms
        model._seen = OrderedDict(state.seen)
        return model

    @classmethod
    def load(cls, path: str | Path, **params: Any) -> NaiveBayesTaskClassifier:
        """Read a checkpoint; raise :class:`CheckpointError` if it is unusable."""
        try:
            return cls.from_dict(checkpoint.read(path), **params)
        except CheckpointError as exc:
            raise CheckpointError(f"{path}: unusable checkpoint: {exc}") from exc


def _tasks(row: Row | None) -> int:
    return 0 if row is None else int(row[2])


def load_or_fresh(path: str | Path, **params: Any) -> tuple[NaiveBayesTaskClassifier, str | None]:
    """The checkpointed model, or a fresh one and why the checkpoint was not
    used (the warning is None when there was simply no checkpoint yet)."""
    fresh = NaiveBayesTaskClassifier(**params)  # bad params raise here, not below
    if not Path(path).exists():
        return fresh, None
    try:
        return NaiveBayesTaskClassifier.load(path, **params), None
    except CheckpointError as exc:
        return fresh, f"{exc}; starting with a fresh model"
