"""The advisor's loop: sense -> decide -> act -> learn -> observe, once or forever.

``run_once`` is the whole cycle in a few lines, each step timed: ``decide`` is
pure; ``learn`` is the only step that changes what the advisor knows (the
classifier learns from the snapshot and checkpoints, the policies' next
states are kept). A cycle that cannot sense fresh data acts on nothing and
learns nothing: it is skipped, counted
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
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Protocol

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.engine.classify import ClassifierSummary, TaskClassifier
from yarn_advisor.advisor.engine.decide import AdvisorState, Decision, EngineConfig, decide
from yarn_advisor.advisor.ha.status import HaStatus
from yarn_advisor.advisor.loop.report import CycleReport, Totals
from yarn_advisor.advisor.loop.sense import SenseError, SourceStat
from yarn_advisor.advisor.loop.text import cycle_line
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.connectors.errors import one_line

log = logging.getLogger("yarn_advisor")


class Sensor(Protocol):
    """Where snapshots come from: the live RM, a recording, or a simulated RM."""

    stats: dict[str, SourceStat]

    def sense(self, now_ms: int) -> Snapshot: ...


class CycleHooks(Protocol):
    """What runs around each cycle besides it: the HA coordinator (advisor/ha/coordinator.py)
    re-reads the shared state before a leader acts and saves it after."""

    def before_cycle(self, advisor: Advisor) -> None: ...

    def after_act(self, advisor: Advisor) -> None: ...

    def after_cycle(self, advisor: Advisor) -> None: ...

    def status(self) -> HaStatus: ...


@dataclass
class Advisor:
    """One advisor: its sensor, engine configuration, actuator, classifier and state."""

    sensor: Sensor
    engine: EngineConfig
    actuator: Actuator
    classifier: TaskClassifier | None = None
    state: AdvisorState = field(default_factory=AdvisorState)
    clock_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    latest: CycleReport | None = None
    totals: Totals = field(default_factory=Totals)
    cycle: int = 0
    ha: CycleHooks | None = None  # None: this advisor runs alone
    _stop: threading.Event = field(default_factory=threading.Event)

    def run_once(self, now_ms: int | None = None) -> CycleReport:
        """One cycle: sense -> decide -> act -> learn -> observe."""
        self.cycle += 1
        report = CycleReport(self.cycle, time.time())
        try:
            if self.ha is not None:
                self.ha.before_cycle(self)
            snapshot = report.timed("sense", self.sensor.sense, now_ms or self.clock_ms())
            decision = report.timed("decide", decide, snapshot, self.state, self.engine)
            actions = report.timed("act", self.actuator.act, decision.recommendations, snapshot,
                                   decision.table)
            if self.ha is not None:
                self.ha.after_act(self)
            self.state = report.timed("learn", self.learn, snapshot, decision)
            if self.ha is not None:
                self.ha.after_cycle(self)
            report.done(snapshot, decision, actions, self._summary(decision))
        except SenseError as exc:
            report.skip(f"{exc.reason}: {exc}")
        except OSError as exc:  # a full, read-only or size-limited disk: fail closed, say it once
            why = f"{type(exc).__name__}: {one_line(exc)}"
            log.error("cycle %d: disk error, nothing more was done this cycle: %s",
                      self.cycle, why)
            report.skip(f"disk: {why}")
        except Exception as exc:  # a bug must cost one cycle, never the daemon
            log.exception("cycle %d failed unexpectedly; nothing more was done", self.cycle)
            report.skip(f"internal error: {exc!r}")
        report.sources = dict(self.sensor.stats)
        self.observe(report)
        return report

    def learn(self, snapshot: Snapshot, decision: Decision) -> AdvisorState:
        """The classifier learns from the snapshot; the policies' next states are kept."""
        if self.classifier is not None:
            self.classifier.learn(snapshot, decision.predictions)
        return replace(self.state, policies=decision.states)

    def observe(self, report: CycleReport) -> None:
        """Publish the cycle: the latest report, the counters, one log line."""
        self.latest = report
        self.totals.add(report)
        log.info("%s", cycle_line(report))

    def _summary(self, decision: Decision) -> ClassifierSummary | None:
        return None if self.classifier is None else self.classifier.summary(decision.predictions)

    def run_forever(self, interval_s: float) -> None:
        """Run cycles every ``interval_s`` seconds until stop() or a signal."""
        self.install_signal_handlers()
        while not self._stop.is_set():
            started = time.monotonic()
            self.run_once()
            self._stop.wait(max(0.0, interval_s - (time.monotonic() - started)))
        if self.actuator.publisher is not None:  # precision mode: the RM back to its default
            self.actuator.publisher.stop()
        log.info("stopped after %d cycles", self.cycle)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def install_signal_handlers(self) -> None:
        """SIGTERM / SIGINT stop after the cycle; SIGUSR1 / SIGUSR2 the kill switch."""
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("received %s, stopping after this cycle", signal.Signals(signum).name)
            self.stop()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)
        self.actuator.install_signal_handlers()
