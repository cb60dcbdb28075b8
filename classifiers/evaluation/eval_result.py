"""What a prequential evaluation counts (:class:`EvalResult`), and pooling.

Besides the confusion matrix the result counts *cold starts* (tasks called
long for want of history) and, stricter, tasks *first seen*: nothing at all
(finished or censored) was learned of their user's stage when they started.
No rule that needs a user's history can call those short, so the share of
short tasks not first seen is the *short recall ceiling* of the trace.

The *job-stage oracle* is a second bound: a rule told in advance each job
stage's share of short tasks, calling short every task of a stage at least
:data:`ORACLE_SHARE` short whose user had history (not first seen). It
cannot tell one task of a stage from another (the stragglers of a stage of
short tasks are called short), which no feature known at a task's start can
either, bar its job's progress; where it misses the targets, the trace's
stages are too mixed for them. :func:`stage_oracle_at` is its best form
under the long-called-short target: told every job stage's short and long
tasks (those not first seen), it calls short the stages with the smallest
share of long tasks first, as many as keep the long ones called short within
the target: no rule that calls each job stage as one reaches more.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

CLASSES = ("short", "long")
DEFAULT_CYCLE_MS = 1  # classify at each task's start, as in the paper
ORACLE_SHARE = 0.95
TARGET_LCS = 0.02  # the long-called-short budget the baselines are tuned to


def _per_class() -> dict[str, int]:
    return dict.fromkeys(CLASSES, 0)


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
    # rule -> [short, long] tasks it called long (both classes: what a looser rule would cost)
    called_long_by: dict[str, list[int]] = field(default_factory=dict)
    # rule -> [short, long] tasks it called short (``short``, ``short-within-budget``)
    called_short_by: dict[str, list[int]] = field(default_factory=dict)
    cold: dict[str, int] = field(default_factory=_per_class)
    first_seen: dict[str, int] = field(default_factory=_per_class)
    oracle: dict[str, int] = field(default_factory=_per_class)  # tasks it calls short
    skipped: int = 0  # tasks without usable start/finish times
    unresolved: int = 0  # failed or killed before the threshold: length unknown
    censored: int = 0  # still running at the trace's end, under the threshold: unknown
    repeated_jobs: int = 0  # jobs already replayed from an earlier trace: skipped
    rename: str | None = None  # every job renamed to this (a cluster of anonymous names)
    problems: list[str] = field(default_factory=list)
    read: dict[str, Any] | None = None  # the reader's counts (JobHistory, Spark, CSV)
    per_trace: list[EvalResult] = field(default_factory=list)  # learning across traces
    keep_scores: bool = False  # keep each scored task's (P(short), was long) in scores
    scores: list[tuple[float, bool]] = field(default_factory=list)
    # per job stage: its (short, long) tasks not first seen (for stage_oracle_at)
    stages: list[tuple[int, int]] = field(default_factory=list)
    # per scored task: the frequency rule's score (-1: no history) and whether it was long
    frequency: list[tuple[float, bool]] = field(default_factory=list)

    def n(self, actual: str) -> int:
        return sum(self.confusion[actual].values())

    def recall(self, actual: str) -> float | None:
        n = self.n(actual)
        return self.confusion[actual][actual] / n if n else None

    @property
    def short_called_long_by(self) -> dict[str, int]:
        """Rule -> short tasks it called long (from :attr:`called_long_by`)."""
        return {rule: n[0] for rule, n in sorted(self.called_long_by.items()) if n[0]}

    @property
    def long_called_short(self) -> float | None:
        n = self.n("long")
        return self.confusion["long"]["short"] / n if n else None

    def warm_recall(self, actual: str) -> float | None:
        """Recall over the tasks that were not cold starts (a cold start is
        called long, so a long one is among the long tasks called long)."""
        n = self.n(actual) - self.cold[actual]
        right = self.confusion[actual][actual] - (self.cold[actual] if actual == "long" else 0)
        return right / n if n else None

    @property
    def short_recall_ceiling(self) -> float | None:
        """The short recall of a rule that calls short every short task whose
        user's stage had history when it started (see :attr:`first_seen`)."""
        n = self.n("short")
        return (n - self.first_seen["short"]) / n if n else None

    def oracle_rate(self, actual: str) -> float | None:
        """Of the tasks of class ``actual``, the share the job-stage oracle calls short."""
        n = self.n(actual)
        return self.oracle[actual] / n if n else None

    def add(self, other: EvalResult) -> None:
        """Pool ``other``'s counts into this result."""
        for a in CLASSES:
            for p in CLASSES:
                self.confusion[a][p] += other.confusion[a][p]
            self.cold[a] += other.cold[a]
            self.first_seen[a] += other.first_seen[a]
            self.oracle[a] += other.oracle[a]
        for mine, theirs in ((self.called_long_by, other.called_long_by),
                             (self.called_short_by, other.called_short_by)):
            for rule, (short, long) in theirs.items():
                both = mine.setdefault(rule, [0, 0])
                both[0] += short
                both[1] += long
        self.skipped += other.skipped
        self.unresolved += other.unresolved
        self.censored += other.censored
        self.repeated_jobs += other.repeated_jobs
        self.problems.extend(other.problems)
        self.scores.extend(other.scores)
        self.stages.extend(other.stages)
        self.frequency.extend(other.frequency)

    def to_json(self) -> dict[str, Any]:
        """The ``classify-eval --json`` object (DESIGN.md, Interfaces)."""
        out: dict[str, Any] = {
            "trace": self.traces[0] if len(self.traces) == 1 else self.traces,
            "threshold_s": self.threshold_s,
            "min_confidence": self.min_confidence,
            "min_support": self.min_support,
            "cycle_s": self.cycle_ms / 1000,
            "renamed_to": self.rename,
        }
        for cls in CLASSES:
            out[cls] = {"n": self.n(cls), "recall": _round(self.recall(cls))}
        out["confusion"] = self.confusion
        out["long_called_short"] = _round(self.long_called_short)
        out["cold_starts"] = self.cold
        out["warm"] = {cls: {"recall": _round(self.warm_recall(cls))} for cls in CLASSES}
        out["first_seen"] = self.first_seen
        out["short_recall_ceiling"] = _round(self.short_recall_ceiling)
        out["job_stage_oracle"] = {
            "share": ORACLE_SHARE,
            "short_recall": _round(self.oracle_rate("short")),
            "long_called_short": _round(self.oracle_rate("long")),
        }
        oracle_short, oracle_long = stage_oracle_at(self, TARGET_LCS)
        freq_short, freq_long = frequency_rule_at(self, TARGET_LCS)
        out["baselines"] = {
            "long_called_short": TARGET_LCS,
            "frequency_rule": {"short_recall": _share(freq_short, self.n("short")),
                               "long_called_short": _share(freq_long, self.n("long"))},
            "job_stage_oracle": {"short_recall": _share(oracle_short, self.n("short")),
                                 "long_called_short": _share(oracle_long, self.n("long"))},
        }
        out["short_called_long_by"] = self.short_called_long_by
        out["called_short_by"] = {rule: dict(zip(CLASSES, n, strict=True))
                                  for rule, n in sorted(self.called_short_by.items())}
        out["skipped_tasks"] = self.skipped
        out["unresolved_tasks"] = self.unresolved
        out["censored_tasks"] = self.censored
        out["repeated_jobs"] = self.repeated_jobs
        out["problems"] = self.problems
        if self.read is not None:
            out["read"] = self.read
        if self.per_trace:
            out["per_trace"] = [r.to_json() for r in self.per_trace]
        return out


def pooled(results: Iterable[EvalResult], threshold_s: float = 60.0) -> EvalResult:
    """One result with the counts of all ``results`` (their traces listed)."""
    out: EvalResult | None = None
    for r in results:
        if out is None:
            out = EvalResult([], r.threshold_s, r.min_confidence, r.cycle_ms, r.min_support,
                             rename=r.rename)
        out.traces.extend(r.traces)
        out.add(r)
    return out if out is not None else EvalResult([], threshold_s, 0.0)


def stage_oracle_at(result: EvalResult, long_called_short: float) -> tuple[int, int]:
    """(short, long) tasks called short by the best rule that calls each job
    stage as one, told the stages' tasks in advance, with at most
    ``long_called_short`` of ``result``'s long tasks called short (greedy by
    the stages' share of long tasks: the fractional knapsack's order)."""
    budget = long_called_short * result.n("long")
    short = long = 0
    for s, n_long in sorted(result.stages, key=lambda st: st[1] / (st[0] + st[1])):
        if s and long + n_long <= budget:
            short += s
            long += n_long
    return short, long


def frequency_rule_at(result: EvalResult, long_called_short: float) -> tuple[int, int]:
    """(short, long) tasks called short by the (user, task type) frequency rule
    tuned in hindsight to ``long_called_short``: a task is short when the share
    of short tasks learned (finished and censored) of its user's stage when it
    started is at least a threshold, the lowest threshold that keeps the long
    tasks called short within ``long_called_short`` of the long tasks (ties
    called together; no history: long)."""
    budget = long_called_short * result.n("long")
    by_score: dict[float, list[int]] = {}
    for score, is_long in result.frequency:
        if score >= 0:
            by_score.setdefault(score, [0, 0])[is_long] += 1
    short = long = 0
    for score in sorted(by_score, reverse=True):
        s, n = by_score[score]
        if long + n > budget:
            break
        short, long = short + s, long + n
    return short, long


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
