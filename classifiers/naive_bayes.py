"""Online naive Bayes short/long task classifier (OPERA Eq. 2-3).

Each level of :mod:`yarn_advisor.classifiers.features` is one categorical feature. With
n(v, C) tasks of class C having value v at level i, N_C tasks of class C, K_i
values seen at level i and Laplace smoothing a::

    P(C) = (N_C + a) / (N + 2a)          P(v_i | C) = (n(v_i, C) + a) / (N_C + a K_i)
    P(C | F_t) ~ P(C) * prod_i P(v_i | C)^w                               (Eq. 2-3)

over the levels whose value was seen before; w = 1 is the paper's formula
(``temper=False``; a test checks it equals scikit-learn's ``CategoricalNB``).
By default w = 1/(number of known levels): the levels are nested ({F,A,S,P,D}
determines all the others), so the plain product counts one piece of evidence
up to six times; on folder-input-trace a group with 7.5 % long tasks got
P(short) = 1.0000. The geometric mean keeps the ranking and calibrates.

Why not scikit-learn: a value never seen must be *dropped* (hierarchical
back-off: an unseen {F,A,S,P,D} falls back on {F,A,S}, {F,A}, {F}), whereas
``CategoricalNB`` rejects unseen categories and ``FeatureHasher`` +
``MultinomialNB`` scores them by class totals; the vocabulary grows daily (new
application names) while ``CategoricalNB`` wants fixed ordinal codes; counts in
versioned JSON are a safe checkpoint, unlike a pickle; a dict lookup per level
costs a few microseconds with no NumPy call overhead per cycle.

Decision rule (a task is short only if every check passes, else long):
``unknown`` no feature seen; ``no-history`` fewer than ``min_support`` tasks
of its {F,A,S} group (application stage) learned, and for a reduce of its
{F,A,S,P} group: a reduce's run time depends on how far its job's maps were
when it started (the paper's P example; one that starts before the maps end
waits for them in shuffle), so the stage's history at another progress says
little (on 5m_stream_trace it called 13 of 13 long reduces short); ``low-confidence``
P(short) < ``min_confidence``; ``overdue`` a task of its group is running
longer than ``overdue_factor`` x the longest short task the group ever had;
``cluster-overdue`` more than ``max_overdue_share`` of the running tasks are
overdue (a cluster-wide stall). Defaults (0.9, 3, 1.25, 0.2) were chosen once
for all 33 Rumen traces of ../shared/data (prequential, per-task cycle; see
``bench/eval_rumen.py``): long tasks called short 0.5 % pooled, within the 2 %
budget; a lower ``min_support`` or a higher ``overdue_factor`` buys a few
points of short recall for two to three times the long tasks called short.

Bias of learning only from finished tasks: short tasks finish first, so at
any instant the finished sample is short-heavy. Counters: (1) censoring: a
running task reaching the threshold is learned long at once
(:meth:`learn_running`) and not again at finish, so each task's label is
learned at min(finish, start + threshold), when it becomes certain; (2) the
overdue rules use running tasks still inside that window: one that outlives
every short task of its group is probably long, which the counts cannot know
yet; (3) ``min_support``: the first finishers of a new group are its fastest.
Learning is idempotent per task id (bounded id memory, checkpointed).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yarn_advisor.classifiers import checkpoint
from yarn_advisor.classifiers.checkpoint import FORMAT, VERSION, CheckpointError, validate
from yarn_advisor.classifiers.features import LEVEL_NAMES

__all__ = ["CheckpointError", "NaiveBayesTaskClassifier", "Prediction", "load_or_fresh"]

SHORT, LONG = 0, 1
GROUP_LEVEL = "F,A,S"
REDUCE_SUPPORT_LEVEL = "F,A,S,P"  # see the decision rule in the module docstring
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
    """Counts, the Eq. 2-3 posterior, the conservative decision rule, checkpoints."""

    def __init__(
        self,
        threshold_s: float = 60.0,
        min_confidence: float = 0.9,
        alpha: float = 1.0,
        min_support: int = 3,
        temper: bool = True,
        overdue_factor: float = 1.25,
        max_overdue_share: float = 0.2,
    ) -> None:
        if threshold_s <= 0 or not 0.0 <= min_confidence <= 1.0 or alpha <= 0:
            raise ValueError("need threshold_s > 0, 0 <= min_confidence <= 1, alpha > 0")
        self.threshold_ms = round(threshold_s * 1000)
        self.min_confidence = min_confidence
        self.alpha = alpha
        self.min_support = min_support
        self.temper = temper
        self.overdue_factor = overdue_factor
        self.max_overdue_share = max_overdue_share
        self._group = LEVEL_NAMES.index(GROUP_LEVEL)
        self._reduce_support = LEVEL_NAMES.index(REDUCE_SUPPORT_LEVEL)
        self.class_counts = [0, 0]
        self.level_values = [0] * len(LEVEL_NAMES)
        self.counts: dict[str, list[int]] = {}
        self.short_max_ms: dict[str, int] = {}  # group -> longest short task learned
        self.running_age_ms: dict[str, int] = {}  # group -> oldest running task, last cycle
        self.overdue_share = 0.0  # share of running tasks overdue, last cycle
        self._seen: OrderedDict[str, bool] = OrderedDict()  # task id -> learned censored
        self._factors: list[float] | None = None

    @property
    def threshold_s(self) -> float:
        return self.threshold_ms / 1000

    # ---- learning -------------------------------------------------------
    def learn(self, feats: Sequence[str], is_long: bool) -> None:
        """Add one task of known class (features in level order)."""
        cls = LONG if is_long else SHORT
        self.class_counts[cls] += 1
        self._factors = None
        for i, feat in enumerate(feats):
            row = self.counts.get(feat)
            if row is None:
                row = self.counts[feat] = [0, 0]
                self.level_values[i] += 1
            row[cls] += 1

    def learn_finished(self, task_id: str, feats: Sequence[str], duration_ms: int) -> bool:
        """Learn a finished task unless already learned (e.g. censored); True if learned."""
        if task_id in self._seen:
            return False
        self._remember(task_id, censored=False)
        is_long = duration_ms >= self.threshold_ms
        self.learn(feats, is_long)
        if not is_long and len(feats) > self._group:
            group = feats[self._group]
            self.short_max_ms[group] = max(duration_ms, self.short_max_ms.get(group, 0))
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
        the oldest running task per group and the overdue share. Returns the
        number of tasks learned."""
        learned = overdue = total = 0
        ages: dict[str, int] = {}
        for task in running:
            learned += self.learn_running(task.task_id, task.features, task.elapsed_ms)
            if len(task.features) > self._group:
                group = task.features[self._group]
                ages[group] = max(task.elapsed_ms, ages.get(group, 0))
                overdue += self._is_overdue(group, task.elapsed_ms)
                total += 1
        self.note_running(ages, overdue / total if total else 0.0)
        return learned

    def note_running(self, oldest_age_ms: dict[str, int], overdue_share: float) -> None:
        """What the overdue rules read: per {F,A,S} group the age of its oldest
        running task, and the share of running tasks overdue. Set by
        :meth:`observe_running`, or directly by a caller that keeps its running
        tasks indexed (the evaluation, where they can be many thousands)."""
        self.running_age_ms = oldest_age_ms
        self.overdue_share = overdue_share

    def overdue_after_ms(self, group: str) -> float | None:
        """The age past which a running task of ``group`` is overdue; None
        before a short task of the group was learned."""
        longest_short = self.short_max_ms.get(group)
        return None if longest_short is None else self.overdue_factor * longest_short

    def _remember(self, task_id: str, censored: bool) -> None:
        self._seen[task_id] = censored
        if len(self._seen) > MAX_REMEMBERED_TASKS:
            self._seen.popitem(last=False)

    # ---- prediction -----------------------------------------------------
    def _level_factors(self) -> list[float]:
        """Per level, (N_l + a K_i) / (N_s + a K_i): the class-total part of Eq. 3
        (cached until the next learning)."""
        if self._factors is None:
            n_s, n_l = self.class_counts
            a = self.alpha
            self._factors = [(n_l + a * k) / (n_s + a * k) if k else 1.0 for k in self.level_values]
        return self._factors

    def posterior(
        self, feats: Sequence[str], factors: Sequence[float] | None = None
    ) -> float | None:
        """P(short | known features) by Eq. 2-3; None if no feature is known."""
        return self._score(feats, factors)[0]

    def _score(
        self, feats: Sequence[str], factors: Sequence[float] | None
    ) -> tuple[float | None, int]:
        """(posterior, tasks learned in the group that must support a prediction:
        {F,A,S}, or {F,A,S,P} for a reduce)."""
        a, counts = self.alpha, self.counts
        support_index = self._support_index(feats)
        ratio, known, support = 1.0, 0, 0  # prod_i P(v_i|short) / P(v_i|long), known levels
        for i, (feat, factor) in enumerate(
            zip(feats, factors or self._level_factors(), strict=False)
        ):
            row = counts.get(feat)
            if row is not None:
                known += 1
                ratio *= (row[0] + a) * factor / (row[1] + a)
                if i == support_index:
                    support = row[0] + row[1]
        if known == 0:
            return None, 0
        evidence = math.log(max(ratio, 1e-300))
        if self.temper:
            evidence /= known
        n_s, n_l = self.class_counts
        log_odds = math.log((n_s + a) / (n_l + a)) + evidence
        return 1.0 / (1.0 + math.exp(-max(-700.0, min(700.0, log_odds)))), support

    def _support_index(self, feats: Sequence[str]) -> int:
        """The level whose count gates ``no-history``; the stage is the last
        value of the {F,A,S} feature (``F,A,S=MAPREDUCE|sort|REDUCE``)."""
        group = feats[self._group] if len(feats) > self._group else ""
        return self._reduce_support if group.endswith("|REDUCE") else self._group

    def knows_stage(self, feats: Sequence[str]) -> bool:
        """Whether anything was learned of the task's application stage ({F,A,S})."""
        return len(feats) > self._group and feats[self._group] in self.counts

    def _is_overdue(self, group: str, age_ms: int) -> bool:
        limit = self.overdue_after_ms(group)
        return limit is not None and age_ms > limit

    def predict(self, feats: Sequence[str], factors: Sequence[float] | None = None) -> Prediction:
        """Classify a task about to start (features in level order)."""
        p_short, support = self._score(feats, factors)
        if p_short is None:
            return UNKNOWN_TASK
        if support < max(1, self.min_support):
            return Prediction(False, p_short, "no-history")
        if p_short < self.min_confidence:
            return Prediction(False, p_short, "low-confidence")
        group = feats[self._group]
        if self._is_overdue(group, self.running_age_ms.get(group, 0)):
            return Prediction(False, p_short, "overdue")
        if self.overdue_share > self.max_overdue_share:
            return Prediction(False, p_short, "cluster-overdue")
        return Prediction(True, p_short, "short")

    def predict_many(self, batch: Iterable[Sequence[str]]) -> list[Prediction]:
        """Predict a batch; identical feature tuples (a task group) are scored once."""
        cache: dict[tuple[str, ...], Prediction] = {}
        factors = self._level_factors()
        out = []
        for feats in batch:
            key = tuple(feats)
            pred = cache.get(key)
            if pred is None:
                pred = cache[key] = self.predict(key, factors)
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
        for feat in state.counts:
            model.level_values[LEVEL_NAMES.index(feat.split("=", 1)[0])] += 1
        model.short_max_ms = state.short_max_ms
        model._seen = OrderedDict(state.seen)
        model._factors = None
        return model

    @classmethod
    def load(cls, path: str | Path, **params: Any) -> NaiveBayesTaskClassifier:
        """Read a checkpoint; raise :class:`CheckpointError` if it is unusable."""
        try:
            return cls.from_dict(checkpoint.read(path), **params)
        except CheckpointError as exc:
            raise CheckpointError(f"{path}: unusable checkpoint: {exc}") from exc


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
