"""The task classifier in the daemon: predict in ``decide``, learn in ``learn``.

``predict(snapshot)`` learns nothing: the model as learned up to the previous
cycle predicts every pending resource-request group (OPERA lends
opportunistic headroom only to groups predicted short) and every pending
MapReduce task, as :class:`~yarn_advisor.classifiers.model.live.Predictions`.
The job stages it called short, for the account of long tasks called short
(:mod:`~yarn_advisor.classifiers.model.budget`), travel as data in the
predictions (``calls``): predicting the same snapshot twice gives the same
answers and leaves the model as it was.

``learn(snapshot, predictions)``, the daemon's learn step, then

0. applies the predictions' short calls to the model's account;
1. scores earlier predictions: a pending task's first prediction is
   remembered and compared with what the task turned out to be (finished:
   by duration; still running past the threshold: long), which gives the
   running recall by class in the metrics;
2. learns from the snapshot: finished tasks (JobHistory and AM) and censored
   running ones (a running task already past the threshold is long);
3. remembers this cycle's task predictions, to score them later;
4. checkpoints the model (atomic write), so learning survives restarts.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.classifiers.model.budget import Calls
from yarn_advisor.classifiers.model.live import CycleLearning, LiveTaskClassifier, Predictions
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier, load_or_fresh

log = logging.getLogger("yarn_advisor")
MAX_REMEMBERED = 200_000
CLASSES = ("short", "long")


@dataclass(frozen=True)
class ClassifierSummary:
    """What the metrics show of the classifier after a cycle."""

    predictions: Mapping[str, int]  # class -> pending request groups predicted so
    outcomes: Mapping[tuple[str, str], int]  # (actual, predicted) -> tasks, since start
    recall: Mapping[str, float | None]  # class -> running recall (None: none seen yet)
    learned: Mapping[str, int]  # finished | censored | running -> tasks, this cycle
    # long tasks called short, as a share of the long tasks learned: realized, allowed
    long_called_short: Mapping[str, float] = field(default_factory=dict)
    confidence: float | None = None  # P(short) a task needs now (calibrated or the default)


@dataclass
class TaskClassifier:
    """The live model, its checkpoint, and the predictions waiting to be scored."""

    live: LiveTaskClassifier
    checkpoint: Path | None = None
    predicted: OrderedDict[str, bool] = field(default_factory=OrderedDict)
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    learned: CycleLearning = field(default_factory=lambda: CycleLearning(0, 0, 0))

    @classmethod
    def load(cls, checkpoint: Path | None, **params: Any) -> TaskClassifier:
        """Around the checkpointed model, or a fresh one (with a warning when a
        checkpoint existed but was corrupt or incompatible)."""
        if checkpoint is None:
            return cls(LiveTaskClassifier(NaiveBayesTaskClassifier(**params)))
        model, warning = load_or_fresh(checkpoint, **params)
        if warning:
            log.warning("classifier: %s; starting with a fresh model", warning)
        return cls(LiveTaskClassifier(model), checkpoint)

    @property
    def threshold_ms(self) -> float:
        return float(self.live.model.threshold_s) * 1000

    def predict(self, snapshot: Snapshot) -> Predictions:
        """Predictions for every pending group and task (the model is not changed)."""
        calls = Calls()
        pending = self.live.pending_tasks(snapshot)
        tasks = {t.id: p.short for t, p in
                 zip(pending, self.live.classify_tasks(snapshot, pending, calls), strict=True)}
        groups = {(g.app_id, g.priority): g
                  for g in self.live.classify_pending_groups(snapshot, calls)}
        return Predictions(self.threshold_ms / 1000, groups, tasks, calls)

    def learn(self, snapshot: Snapshot, predictions: Predictions | None) -> CycleLearning:
        """Apply the predictions' short calls; score, learn, remember this cycle's
        predictions, checkpoint."""
        if predictions is not None:
            self.live.model.note(predictions.calls)
        self._score(snapshot)
        self.learned = self.live.update(snapshot)
        for task_id, short in (predictions.tasks.items() if predictions else ()):
            self.predicted.setdefault(task_id, short)
        while len(self.predicted) > MAX_REMEMBERED:
            self.predicted.popitem(last=False)
        if self.checkpoint is not None:
            try:
                self.live.model.save(self.checkpoint)
            except OSError as exc:
                log.warning("classifier: checkpoint not written: %s", exc)
        return self.learned

    def _score(self, snapshot: Snapshot) -> None:
        """Compare remembered predictions with what the tasks turned out to be."""
        for task in snapshot.finished_tasks:
            said = self.predicted.pop(task.id, None)
            if said is None or task.state != "SUCCEEDED":
                continue
            took = (task.finish_time - task.start_time) if task.finish_time > 0 else 0
            actual = "short" if (took or task.elapsed_time) < self.threshold_ms else "long"
            self.outcomes[actual, "short" if said else "long"] += 1
        for task in snapshot.tasks:
            if task.state == "RUNNING" and task.elapsed_time >= self.threshold_ms:
                said = self.predicted.pop(task.id, None)
                if said is not None:  # known long now, whatever happens next
                    self.outcomes["long", "short" if said else "long"] += 1

    def summary(self, predictions: Predictions | None) -> ClassifierSummary:
        """This cycle's predictions by class, the running recall, what was learned."""
        groups = predictions.groups.values() if predictions else ()
        by_class = Counter("short" if g.prediction.short else "long" for g in groups)
        recall: dict[str, float | None] = {}
        for cls in CLASSES:
            n = self.outcomes[cls, "short"] + self.outcomes[cls, "long"]
            recall[cls] = (self.outcomes[cls, cls] / n) if n else None
        learned = self.learned
        return ClassifierSummary(
            {c: by_class[c] for c in CLASSES}, dict(self.outcomes), recall,
            {"finished": learned.finished, "censored": learned.censored,
             "running": learned.running},
            dict(zip(("realized", "allowed"), self.live.model.calibration.rates(),
                     strict=True)),
            self.live.model.confidence())
