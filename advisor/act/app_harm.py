"""The harm watchdog's view of applications (act/watchdog.py counts, this module sees):
AM attempts that failed, containers the RM preempted, and runs slower than the same
job's recent runs, each with when it was seen, so the watchdog can tell harm after a
policy's change from harm before it.

What it reads of each snapshot (``App``): the running AM attempt's number and node, the
app's preempted containers, its user, name, queue and elapsed time. An app whose attempt
number rose failed an AM attempt on the node the previous attempt ran on; a rise of its
preempted containers is a preemption in its queue. A run's time is its elapsed time
when last seen live (within one cycle of its end); a live run of a job (same user and
name) with at least ``slow_min_runs`` such times kept is slowed past ``slow_factor``
times their median and ``slow_margin_s`` beyond it. Bounded: live apps only, and the
last ``RUNS_KEPT`` times of at most ``JOBS_KEPT`` jobs.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from statistics import median

from yarn_advisor.advisor.model.snapshot import App, Snapshot
from yarn_advisor.config.schema import WatchdogSettings

RUNS_KEPT = 5
JOBS_KEPT = 10_000


@dataclass(frozen=True, slots=True)
class Seen:
    """What an app showed last cycle."""

    attempt: int
    am_node: str
    preempted: int
    elapsed_ms: int
    job: tuple[str, str]  # (user, name)
    running: bool


@dataclass(frozen=True, slots=True)
class Event:
    """Harm seen on one app at ``at``: ``count`` AM attempts or preempted containers."""

    at: float
    app: str
    node: str  # an AM failure: the node the failed attempt ran on
    queue: str
    count: int


@dataclass
class AppHarm:
    """Per-app harm seen over the window (see the module docstring)."""

    settings: WatchdogSettings
    am_failures: list[Event] = field(default_factory=list)
    preemptions: list[Event] = field(default_factory=list)
    # app id -> (first seen slowed, the nodes its containers ran on then)
    slowed: dict[str, tuple[float, frozenset[str]]] = field(default_factory=dict)
    _seen: dict[str, Seen] = field(default_factory=dict)
    _runs: OrderedDict[tuple[str, str], tuple[int, ...]] = field(default_factory=OrderedDict)

    def observe(self, snap: Snapshot, now: float) -> None:
        """Take this cycle's apps in; forget what left the window."""
        since = now - self.settings.window_s
        self.am_failures = [e for e in self.am_failures if e.at > since]
        self.preemptions = [e for e in self.preemptions if e.at > since]
        live = {a.id: a for a in snap.apps}
        self.slowed = {a: s for a, s in self.slowed.items() if s[0] > since}
        for app_id, seen in self._seen.items():
            if app_id not in live and seen.running and seen.elapsed_ms > 0:
                self._ran(seen.job, seen.elapsed_ms)
        seen_now: dict[str, Seen] = {}
        for app in live.values():
            before = self._seen.get(app.id)
            if before is not None:
                self._compare(app, before, now)
            if app.id not in self.slowed and app.state == "RUNNING" and self._slow(app):
                self.slowed[app.id] = (now, frozenset(
                    c.node_id for c in snap.containers if c.app_id == app.id))
            seen_now[app.id] = Seen(app.am_attempt, app.am_node_id, app.preempted_containers,
                                    app.elapsed_time, (app.user, app.name),
                                    app.state == "RUNNING")
        self._seen = seen_now

    def _compare(self, app: App, before: Seen, now: float) -> None:
        if before.attempt > 0 and app.am_attempt > before.attempt:
            self.am_failures.append(Event(now, app.id, before.am_node, app.queue,
                                          app.am_attempt - before.attempt))
        if app.preempted_containers > before.preempted:
            self.preemptions.append(Event(now, app.id, "", app.queue,
                                          app.preempted_containers - before.preempted))

    def _slow(self, app: App) -> bool:
        s = self.settings
        runs = self._runs.get((app.user, app.name), ())
        if len(runs) < s.slow_min_runs:
            return False
        usual = median(runs)
        return app.elapsed_time > s.slow_factor * usual and \
            app.elapsed_time - usual >= s.slow_margin_s * 1000

    def _ran(self, job: tuple[str, str], elapsed_ms: int) -> None:
        self._runs[job] = (*self._runs.pop(job, ()), elapsed_ms)[-RUNS_KEPT:]
        while len(self._runs) > JOBS_KEPT:
            self._runs.popitem(last=False)

    def runs(self, user: str, name: str) -> tuple[int, ...]:
        """The recent run times (ms) kept for a job, oldest first."""
        return self._runs.get((user, name), ())
