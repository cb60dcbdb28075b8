"""The confidence at which the classifier calls a task short, calibrated to its cluster.

Why. The target bounds the share of a cluster's *long* tasks called short
(2 %). A confidence chosen once on other traces (0.9, on generated Gridmix
and Rumen traces) calls nothing short on a real cluster where a user's jobs
recur with new sizes, and may call too much short on another. So the model
keeps its own record of how its scores turned out on *this* cluster:
:class:`Calibration` counts, per score bin, the tasks later learned short
and long (finished, or censored: still running past the threshold), and
picks the lowest threshold whose bins above it hold at most ``budget`` of
the long tasks learned, less one (the next long task is counted before it
comes). A learned task is recorded with the score, and the call, of the
oldest prediction of its job stage not yet matched with a learned task (else
of the stage's last one): the daemon learns tasks by id but predicts pending
requests, which have none, so predictions are matched to tasks per stage in
order (a censored long task is learned one threshold after its start, in
start order). Each prediction is noted as data by ``predict`` and applied in
the learn step: predicting changes nothing. Recording every task of a stage
with the stage's *last* score, and every long task of a stage ever called
short as called short, put the Google cell's long tasks of a job that its
first short tasks had made confident (4,147 long tasks in the top score bin,
37 of them predicted there) above the budget: the rate realized ran past it
and the threshold stayed high for a third of the trace.

The threshold aims at ``aim`` of the budget (the model's
``calibration_aim``, 0.75, chosen leaving one real trace out): a margin for
the calls made before their outcomes are known, on a cluster whose mix drifts.
Where the realized rate ran over the budget anyway, the rate aimed at is
lowered by as much, and nothing is called short past twice the budget.

Cold start is conservative: until ``1 / budget`` long tasks were learned
(50 at 2 %) no threshold can be afforded and the model's fixed
``min_confidence`` applies. A cluster where a user's history is a reliable
guide has few long tasks at high scores, so its threshold falls and more is
called short; one where it is not keeps it high. The threshold is never
under ``floor`` (the model's ``calibration_floor``, 0.25).

One call of a large job stage risks all its tasks at one score: on the
Google cell the threshold fell to 0.175 early, while the low bins were
clean, then one job at P(short) 0.2 ran 2,541 long tasks called short at
once and the realized rate held the threshold high for the rest of the
trace. So the record also counts, per stage, the tasks called short whose
outcomes are not yet learned (:meth:`pending_short`): the model calls no
more of a stage short at a score under 0.5 once it holds its
``stage_share`` of the budget that way (see ``NaiveBayesTaskClassifier``).
The bins and rates are checkpointed with the model (:meth:`to_json`); the
predictions waiting are not (a restart matches the next tasks learned with
the stage's next predictions).
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from typing import Any

BINS = 200  # score bins of width 0.005
NOTHING = 1.01  # a threshold above every score: nothing is called short
MAX_NOTED = 50_000  # job stages whose predictions are remembered
MAX_PENDING = 1_024  # predictions of one stage waiting for their task to be learned
# predictions waiting over all stages (about 100 bytes each): the stages least recently
# predicted are forgotten past it, so memory stays bounded however many stages a
# cluster runs (MAX_NOTED x MAX_PENDING alone would allow 51 M)
MAX_PENDING_TOTAL = 200_000
Noted = tuple[float, bool]  # a prediction: its score, whether it called the task short
RECOMPUTE_EVERY = 32  # learned outcomes between threshold updates (a long one: at once)


class _Stage:
    """A job stage's predictions not yet matched with a learned task (oldest
    first), its last one, and how many of those waiting called their task short."""

    __slots__ = ("last", "short", "waiting")

    def __init__(self) -> None:
        self.waiting: deque[Noted] = deque()
        self.last: Noted = (0.0, False)
        self.short = 0


def bin_of(p_short: float) -> int:
    return min(BINS - 1, max(0, int(p_short * BINS)))


class Calibration:
    """Outcomes by score bin, the calibrated threshold, the stages' predictions."""

    def __init__(self, budget: float = 0.02, floor: float = 0.5, aim: float = 1.0) -> None:
        if not (0.0 < budget < 1.0 and 0.0 <= floor <= 1.0 and 0.0 < aim <= 1.0):
            raise ValueError("need 0 < budget < 1, 0 <= floor <= 1 and 0 < aim <= 1")
        self.budget = budget
        self.floor = floor
        self.aim = aim  # the share of the budget the threshold aims at
        self.short = [0] * BINS
        self.long = [0] * BINS
        self.long_learned = 0  # every long task learned (the rate's denominator)
        self.long_called_short = 0  # long tasks learned whose prediction called them short
        # job stage -> its predictions not yet matched with a learned task
        self._noted: OrderedDict[str, _Stage] = OrderedDict()
        self._pending = 0  # predictions waiting, over every stage's deque
        # the calibrated threshold (a score bin's lower edge), None at cold start;
        # set by recompute only
        self.threshold: float | None = None
        self._since = 0

    def note(self, stage: str, p_short: float, called_short: bool = False) -> None:
        """The score a prediction gave a task of ``stage`` and whether it called it
        short (applied in the learn step)."""
        noted = self._noted
        entry = noted.get(stage)
        if entry is None:
            entry = noted[stage] = _Stage()
        else:
            noted.move_to_end(stage)
        waiting = entry.waiting
        if len(waiting) >= MAX_PENDING:  # the oldest is dropped unmatched
            entry.short -= waiting.popleft()[1]
        else:
            self._pending += 1
        entry.last = (p_short, called_short)
        waiting.append(entry.last)
        entry.short += called_short
        while len(noted) > MAX_NOTED or self._pending > MAX_PENDING_TOTAL:
            _, dropped = noted.popitem(last=False)
            self._pending -= len(dropped.waiting)

    def pending_short(self, stage: str) -> int:
        """How many tasks of ``stage`` were called short and not yet learned."""
        entry = self._noted.get(stage)
        return 0 if entry is None else entry.short

    def learned(self, stage: str, is_long: bool) -> None:
        """A task of ``stage`` was learned: record the outcome of the oldest
        prediction of its stage not yet matched (else of its last one), and a
        long task as called short if that prediction called it so."""
        entry = self._noted.get(stage)
        noted: Noted | None = None
        if entry is not None and entry.waiting:
            noted = entry.waiting.popleft()
            self._pending -= 1
            entry.short -= noted[1]
        elif entry is not None:
            noted = entry.last
        if is_long:
            self.long_learned += 1
            self.long_called_short += noted is not None and noted[1]
        if noted is None:
            return
        p = noted[0]
        b = bin_of(p)
        if is_long:
            self.long[b] += 1
        else:
            self.short[b] += 1
        self._since += 1
        above = self.threshold is not None and p >= self.threshold
        if self._since >= RECOMPUTE_EVERY or (is_long and above):
            self.recompute()

    def recompute(self) -> None:
        """The lowest bin edge whose bins above hold at most ``budget`` x the long
        tasks learned, less one; None while that allows no long task. Where the
        realized rate ran over the budget (calls made while the record was
        younger), the rate aimed at is lowered by as much (nothing is called
        short once it ran over twice the budget)."""
        self._since = 0
        # what the threshold may let through from now on: the budget, less what was
        # realized beyond it (calls made before the record showed their cost)
        n = self.long_learned
        rate = min(self.budget, 2 * self.budget - self.long_called_short / n) if n else 0.0
        allowed = self.aim * rate * n - 1.0
        if n and rate <= 0:
            self.threshold = NOTHING  # over the budget twice: call nothing until it recovers
            return
        if allowed < 0:
            self.threshold = None
            return
        floor_bin = bin_of(self.floor)
        called = 0
        chosen: int | None = None
        for b in range(BINS - 1, floor_bin - 1, -1):
            called += self.long[b]
            if called > allowed:
                break
            if self.short[b] or self.long[b]:
                chosen = b
        self.threshold = None if chosen is None else chosen / BINS

    def rates(self) -> tuple[float, float]:
        """(realized, allowed): long tasks learned that their stage's score had
        called short, as a share of the long tasks learned; the budget."""
        n = self.long_learned
        return (self.long_called_short / n if n else 0.0), self.budget

    def to_json(self) -> dict[str, Any]:
        return {"short": self.short, "long": self.long, "long_learned": self.long_learned,
                "long_called_short": self.long_called_short}

    @classmethod
    def from_json(cls, data: Any, budget: float = 0.02, floor: float = 0.5,
                  aim: float = 1.0) -> Calibration:
        """The record of a checkpoint (None: one from before it: empty). Raises
        ValueError on a malformed one."""
        cal = cls(budget, floor, aim)
        if data is None:
            return cal
        if not isinstance(data, dict):
            raise ValueError("'calibration' must be an object")
        short, long = data.get("short"), data.get("long")
        for name, counts in (("short", short), ("long", long)):
            if not (isinstance(counts, list) and len(counts) == BINS
                    and all(_count(c) for c in counts)):
                raise ValueError(f"'calibration.{name}' must be {BINS} non-negative integers")
        learned, called = data.get("long_learned"), data.get("long_called_short")
        if not (isinstance(learned, int) and isinstance(called, int) and _count(learned)
                and _count(called) and called <= learned):
            raise ValueError("'calibration.long_learned' and 'long_called_short' must be "
                             "non-negative integers, the second at most the first")
        cal.short, cal.long = list(short), list(long)  # type: ignore[arg-type]
        cal.long_learned, cal.long_called_short = learned, called
        cal.recompute()
        return cal


def _count(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and value >= 0
            and math.isfinite(value))
