"""The simulated clock: a heap of timed callbacks.

Events at the same millisecond run in the order they were scheduled, so a run
is deterministic. Nothing is cancelled in the heap; an owner that wants to
move an event bumps its own version number and the stale callback sees that
and returns (cheaper than removing from a heap).

A clock that stops: more than ``MAX_EVENTS_PER_INSTANT`` events at one
millisecond is a loop that schedules itself with no delay (the busiest real
instant, all of a SWIM day's submissions and a 600-node cluster's heartbeats
at once, is a few thousand), so :meth:`EventQueue.run` raises
:class:`ClockStopped`, naming the callbacks that repeat, instead of spinning.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from typing import Any

MAX_EVENTS_PER_INSTANT = 1_000_000
SAMPLED = 10_000  # events looked at, past the limit, to say what repeats


class ClockStopped(RuntimeError):
    """Too many events at one simulated millisecond: the clock no longer advances."""

    def __init__(self, at_ms: int, events: int, repeating: list[tuple[str, int]]) -> None:
        self.at_ms = at_ms
        self.events = events
        self.repeating = repeating
        what = ", ".join(f"{name} x{n}" for name, n in repeating)
        super().__init__(f"simulated time stopped at {at_ms} ms: over {events} events at "
                         f"that instant; repeating (of the last {SAMPLED}): {what}")


def _name(fn: Callable[..., None]) -> str:
    return str(getattr(fn, "__qualname__", None) or repr(fn))


class EventQueue:
    """``at(t, fn, *args)`` schedules; ``run()`` pops in time order."""

    __slots__ = ("_heap", "_instant", "_seen", "_seq", "at_instant", "max_per_instant", "now",
                 "processed", "stopped")

    def __init__(self, max_per_instant: int = MAX_EVENTS_PER_INSTANT) -> None:
        self._heap: list[tuple[int, int, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = 0
        self.now = 0
        self.processed = 0
        self.stopped = False
        self.max_per_instant = max_per_instant
        self._instant = -1  # the time of the last event run
        self.at_instant = 0  # events run so far at that time
        self._seen: list[str] = []  # past the limit: what ran

    def at(self, time_ms: int, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn(*args)`` at ``time_ms`` (never earlier than now)."""
        if time_ms < self.now:
            time_ms = self.now
        self._seq += 1
        heapq.heappush(self._heap, (time_ms, self._seq, fn, args))

    def after(self, delay_ms: int, fn: Callable[..., None], *args: Any) -> None:
        self.at(self.now + delay_ms, fn, *args)

    def __len__(self) -> int:
        return len(self._heap)

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def run(self, until_ms: int | None = None) -> None:
        """Process events until the heap is empty, ``stop()`` or ``until_ms``
        (events at exactly ``until_ms`` run)."""
        heap = self._heap
        pop = heapq.heappop
        self.stopped = False
        while heap and not self.stopped:
            if until_ms is not None and heap[0][0] > until_ms:
                self.now = until_ms
                return
            time_ms, _, fn, args = pop(heap)
            self.now = time_ms
            if time_ms != self._instant:
                self._instant = time_ms
                self.at_instant = 1
                if self._seen:
                    self._seen = []
            else:
                self.at_instant += 1
                if self.at_instant > self.max_per_instant:
                    self._watch(fn)
            self.processed += 1
            fn(*args)

    def _watch(self, fn: Callable[..., None]) -> None:
        """Past the per-instant limit: note what runs, then stop the run."""
        self._seen.append(_name(fn))
        if len(self._seen) >= SAMPLED:
            raise ClockStopped(self.now, self.max_per_instant,
                               Counter(self._seen).most_common(3))

    def stop(self) -> None:
        self.stopped = True


def next_aligned(now: int, phase: int, interval: int) -> int:
    """The first time >= ``now`` on the grid ``phase + k * interval``."""
    if now <= phase:
        return phase
    k = -(-(now - phase) // interval)
    return phase + k * interval
