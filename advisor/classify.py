"""The classifier step of each cycle: learn, predict, score, checkpoint.

Runs as the engine's classifier hook, before the policies. Each cycle it

1. learns from the Snapshot: finished tasks (JobHistory and AM) and censored
   running ones (a running task already past the threshold is long);
2. predicts every pending resource-request group and publishes the
   predictions in the policies' state under ``"classifier"``::

       {"threshold_s": 60.0,
        "groups": {"<app id>/<request priority>": {"short": bool, "p_short": float|None,
                   "reason": str, "stage": str, "memory_mb": int, "pending": int}},
        "learned": {"finished": int, "censored": int, "running": int}}

   (OPERA lends opportunistic headroom only to groups with ``short`` true);
3. scores its own earlier predictions: a pending MapReduce task's first
   prediction is remembered and compared with what the task turned out to be
   (finished: by duration; still running past the threshold: long), which
   gives the running accuracy by class in the metrics;
4. checkpoints the model (atomic write), so learning survives restarts.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.classifiers.live import LiveTaskClassifier
from yarn_advisor.classifiers.naive_bayes import NaiveBayesTaskClassifier, load_or_fresh

log = logging.getLogger("yarn_advisor")
MAX_REMEMBERED = 200_000
STATE_KEY = "classifier"


@dataclass
class ClassifierHook:
    """Callable as ``hook(snapshot, states) -> states`` (the engine's contract)."""

    live: LiveTaskClassifier
    checkpoint: Path | None = None
    predicted: OrderedDict[str, bool] = field(default_factory=OrderedDict)
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (actual, predicted)
    last: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, checkpoint: Path | None, **params: Any) -> ClassifierHook:
        """A hook around the checkpointed model, or a fresh one (with a warning
        when a checkpoint existed but was corrupt or incompatible)."""
        if checkpoint is None:
            return cls(LiveTaskClassifier(NaiveBayesTaskClassifier(**params)))
        model, warning = load_or_fresh(checkpoint, **params)
        if warning:
            log.warning("classifier: %s; starting with a fresh model", warning)
        return cls(LiveTaskClassifier(model), checkpoint)

    @property
    def threshold_ms(self) -> float:
        return float(self.live.model.threshold_s) * 1000

    def __call__(self, snapshot: Snapshot, states: Mapping[str, object]) -> Mapping[str, object]:
        self._score(snapshot)
        learned = self.live.update(snapshot)
        pending = self.live.pending_tasks(snapshot)
        for task, pred in zip(pending, self.live.classify_tasks(snapshot, pending), strict=True):
            if task.id not in self.predicted:
                self.predicted[task.id] = pred.short
        while len(self.predicted) > MAX_REMEMBERED:
            self.predicted.popitem(last=False)
        groups = {
            f"{g.app_id}/{g.priority}": {
                "short": g.prediction.short, "p_short": g.prediction.p_short,
                "reason": g.prediction.reason, "stage": g.stage,
                "memory_mb": g.memory_mb, "pending": g.pending,
            }
            for g in self.live.classify_pending_groups(snapshot)
        }
        self.last = {
            "threshold_s": self.threshold_ms / 1000,
            "groups": groups,
            "learned": {"finished": learned.finished, "censored": learned.censored,
                        "running": learned.running},
        }
        if self.checkpoint is not None:
            try:
                self.live.model.save(self.checkpoint)
            except OSError as exc:
                log.warning("classifier: checkpoint not written: %s", exc)
        return {**states, STATE_KEY: self.last}

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

    def summary(self) -> dict[str, Any]:
        """Figures for the metrics: predictions of this cycle, running accuracy."""
        groups = self.last.get("groups", {})
        by_class = Counter("short" if g["short"] else "long" for g in groups.values())
        recall = {}
        for cls in ("short", "long"):
            n = self.outcomes[cls, "short"] + self.outcomes[cls, "long"]
            recall[cls] = (self.outcomes[cls, cls] / n) if n else None
        return {"predictions": dict(by_class), "outcomes": dict(self.outcomes),
                "recall": recall, "learned": self.last.get("learned", {})}
