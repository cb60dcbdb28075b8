"""A one-line progress bar on stderr for long runs (no dependency)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """``bar(sim_ms, done_jobs, total_jobs)``; redraws in place, ``close()`` ends the line.

    Nothing is drawn during the first ``delay_s`` of wall time, so short runs
    stay quiet.
    """

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30,
                 delay_s: float = 1.0) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.delay_s = delay_s
        self.started = time.monotonic()
        self.drawn = False

    def __call__(self, sim_ms: int, done: int, total: int) -> None:
        elapsed = time.monotonic() - self.started
        if elapsed < self.delay_s:
            return
        frac = done / total if total else 1.0
        filled = int(frac * self.width)
        s = sim_ms // 1000
        clock = f"{s // 3600:d}:{s // 60 % 60:02d}:{s % 60:02d}"
        line = (f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{100 * frac:5.1f}% jobs {done}/{total} sim {clock} wall {elapsed:.0f}s")
        self.stream.write(line)
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
