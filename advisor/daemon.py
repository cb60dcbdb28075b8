"""The advisor's loop: sense -> decide -> act -> observe, once or forever.

``run_once`` is the whole cycle in a few lines; each step is timed. A cycle
that cannot sense fresh data acts on nothing: it is skipped, counted
(``yarn_advisor_cycles_total{outcome="skipped"}``) and logged with the
reason. ``run_forever`` is a ticker around it that stops cleanly on SIGTERM
or SIGINT, between cycles or while waiting.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, ParamSpec, TypeVar

from yarn_advisor.advisor.decider import Decider
from yarn_advisor.advisor.engine import EngineConfig
from yarn_advisor.advisor.metrics import CycleReport, Totals
from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.sense import SenseError, Sensor

log = logging.getLogger("yarn_advisor")
P = ParamSpec("P")
R = TypeVar("R")

Act = Callable[[list[dict[str, Any]], Snapshot], dict[tuple[str, str, str], int]]


def act_dry_run(
    recs: list[dict[str, Any]], snapshot: Snapshot
) -> dict[tuple[str, str, str], int]:
    """Dry-run: nothing is sent to the RM; count what would have been done."""
    counts: dict[tuple[str, str, str], int] = {}
    for rec in recs:
        key = (str(rec.get("kind")), str(rec.get("policy")), "dry_run")
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass
class Advisor:
    sensor: Sensor
    decide: Decider = field(default_factory=lambda: Decider(EngineConfig()))
    act: Act = act_dry_run
    actuator: Any = None  # the Actuator behind ``act``, for its signal handlers and counters
    clock_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    latest: CycleReport | None = None
    totals: Totals = field(default_factory=Totals)
    cycle: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run_once(self, now_ms: int | None = None) -> CycleReport:
        """One cycle: sense -> decide -> act -> observe."""
        self.cycle += 1
        report = CycleReport(self.cycle, time.time(), "ok")
        try:
            snapshot = self._timed(report, "sense", self.sensor.sense, now_ms or self.clock_ms())
            recs = self._timed(report, "decide", self.decide, snapshot)
            report.policy_seconds = dict(self.decide.timings())
            report.policy_errors = self.decide.errors()
            report.classifier = self.decide.classifier_summary()
            report.actions.update(self._timed(report, "act", self.act, recs, snapshot))
            report.snapshot, report.recommendations = snapshot, recs
        except SenseError as exc:
            report.outcome, report.reason = "skipped", f"{exc.reason}: {exc}"
        except Exception as exc:  # a bug must cost one cycle, never the daemon
            log.exception("cycle %d failed unexpectedly; nothing was done", self.cycle)
            report.outcome, report.reason = "skipped", f"internal error: {exc!r}"
        report.sources = dict(self.sensor.stats)
        self._observe(report)
        return report

    def _timed(self, report: CycleReport, step: str, fn: Callable[P, R], *args: P.args,
               **kwargs: P.kwargs) -> R:
        started = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            report.step_seconds[step] = time.monotonic() - started

    def _observe(self, report: CycleReport) -> None:
        self.latest = report
        self.totals.add(report)
        log.info("%s", cycle_line(report))

    def run_forever(self, interval_s: float) -> None:
        """Run cycles every ``interval_s`` seconds until stop() or a signal."""
        self.install_signal_handlers()
        while not self._stop.is_set():
            started = time.monotonic()
            self.run_once()
            self._stop.wait(max(0.0, interval_s - (time.monotonic() - started)))
        log.info("stopped after %d cycles", self.cycle)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("received %s, stopping after this cycle", signal.Signals(signum).name)
            self.stop()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
        if self.actuator is not None:
            self.actuator.install_signal_handlers()  # the run-time kill switch


def cycle_line(report: CycleReport) -> str:
    """One readable line per cycle."""
    took = sum(report.step_seconds.values())
    if report.outcome != "ok" or report.snapshot is None:
        return f"cycle {report.number}: skipped ({report.reason}) after {took:.2f}s; no action"
    s = report.snapshot
    down = [name for name, st in report.sources.items() if not st.ok]
    by_policy: dict[str, int] = {}
    for rec in report.recommendations:
        by_policy[str(rec.get("policy"))] = by_policy.get(str(rec.get("policy")), 0) + 1
    recs = ", ".join(f"{p} {n}" for p, n in sorted(by_policy.items())) or "none"
    failed = [str(e.get("policy")) for e in report.policy_errors]
    applied = sum(n for (_, _, outcome), n in report.actions.items() if outcome == "applied")
    return (
        f"cycle {report.number}: {len(s.nodes)} nodes, {len(s.apps)} apps, "
        f"{len(s.containers)} containers, {s.pending_requests} pending asks, "
        f"{len(s.tasks)} tasks (+{len(s.finished_tasks)} finished); "
        f"recommendations: {recs}; applied {applied}"
        + (f"; sources down: {', '.join(sorted(down))}" if down else "")
        + (f"; policies failed: {', '.join(failed)}" if failed else "")
        + f"; {took:.2f}s"
    )
