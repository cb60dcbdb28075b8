"""The simulated clock: a heap of timed callbacks.

Events at the same millisecond run in the order they were scheduled, so a run
is deterministic. Nothing is cancelled in the heap; an owner that wants to
move an event bumps its own version number and the stale callback sees that
and returns (cheaper than removing from a heap).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any


class EventQueue:
    """``at(t, fn, *args)`` schedules; ``run()`` pops in time order."""

    __slots__ = ("_heap", "_seq", "now", "processed", "stopped")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = 0
        self.now = 0
        self.processed = 0
        self.stopped = False

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
            self.processed += 1
            fn(*args)

    def stop(self) -> None:
        self.stopped = True


def next_aligned(now: int, phase: int, interval: int) -> int:
    """The first time >= ``now`` on the grid ``phase + k * interval``."""
    if now <= phase:
        return phase
    k = -(-(now - phase) // interval)
    return phase + k * interval
