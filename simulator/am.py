"""The ApplicationMaster side: a MapReduce AM (hadoop-mapreduce-client-app 3.4.2).

- Registration: ``am_launch`` ms after its container is allocated the AM asks
  for every map at once (``PRIORITY_MAP`` 20, on the hosts and racks of its
  block's replicas, and ``*``).
- Containers reach the AM on its next heartbeat (every ``am_heartbeat`` ms
  from registration) and start ``container_launch`` ms later.
- Reduces, on each AM heartbeat after a change (``RMContainerAllocator.heartbeat``):
  ``scheduleReduces`` -- nothing before
  ceil(slowstart x maps) maps are done; then all remaining reduces once no map
  is waiting for a container; otherwise ramp up so reduces hold at most
  min(completed share, ``maxReduceRampupLimit`` 0.5) of the job's resource
  limit (headroom + what it holds), ramping down when over.
- ``preemptReducesIfNeeded``: with maps waiting, none running, and no room in
  the headroom (after pending reduces) for one map, or maps waiting over 300 s,
  the AM takes back its pending reduce asks and kills running reduces
  (fewest first by progress), enough for the waiting maps (at most
  ``maxReducePreemptionLimit`` 0.5 of its limit, at least one map's worth);
  a heartbeat that preempts asks for no new reduces.
- A killed attempt runs again: a map at ``PRIORITY_FAST_FAIL_MAP`` (5) on
  ``*``, a reduce through ``scheduleReduces``; a task that *fails* 4 times
  (``mapreduce.map.maxattempts``) fails its job. An attempt whose container
  the NM killed for memory has *failed* (its exit status is none of ABORTED,
  PREEMPTED, KILLED_BY_CONTAINER_SCHEDULER: ``createContainerFinishedEvent``
  sends TA_CONTAINER_COMPLETED, not TA_KILL); preemption, signals and the
  RM's kills are kills and do not count.
- Node blacklisting (``RMContainerRequestor.containerFailedOnHost``): 3 failed
  attempts of one job on a host (``mapreduce.job.maxtaskfailures.per.tracker``)
  blacklist it for the job, and the scheduler then skips that host for the
  app (``SchedulerAppUtils.isPlaceBlacklisted``); blacklisting is ignored while
  33 % or more of the nodes are blacklisted
  (``...node-blacklisting.ignore-threshold-node-percent``). The RM hears of it
  at once here, at the AM's next heartbeat in YARN.
- The AM finishes ``am_finish`` ms after its last task; a killed AM restarts
  once (``yarn.resourcemanager.am.max-attempts`` 2) keeping finished tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from yarn_advisor.simulator import am_reduces
from yarn_advisor.simulator.apps import (
    PRIORITY_FAST_FAIL_MAP,
    PRIORITY_MAP,
    SimApp,
    SimContainer,
    SimTask,
)
from yarn_advisor.simulator.events import EventQueue, next_aligned
from yarn_advisor.simulator.spec import MAP, Phase, Timing

if TYPE_CHECKING:
    from yarn_advisor.simulator.execution import NodeManagers
    from yarn_advisor.simulator.metrics import Metrics
    from yarn_advisor.simulator.rm import RMCore

MAX_TASK_FAILURES = 4
AM_MAX_ATTEMPTS = 2
MAX_FAILURES_PER_NODE = 3
BLACKLIST_IGNORE_PERCENT = 33
# container ends the AM counts as a failed attempt (the rest are kills)
ATTEMPT_FAILURES = frozenset({"FAILED", "KILLED_MEMORY"})


class MapReduceAM:
    """Every app's AM logic (one object serves all apps)."""

    def __init__(self, events: EventQueue, rm: RMCore, nms: NodeManagers, metrics: Metrics,
                 timing: Timing, on_finished: Callable[[SimApp], None]) -> None:
        self.events = events
        self.rm = rm
        self.nms = nms
        self.metrics = metrics
        self.timing = timing
        self.on_finished = on_finished

    @property
    def cpu_types(self) -> bool:
        """Whether the RM schedules on vcores (the AM then counts them too)."""
        return self.rm.calc.dominant

    # --- RM callbacks ---------------------------------------------------------------
    def container_allocated(self, c: SimContainer) -> None:
        now = self.events.now
        self.metrics.alloc_changed(c.mem, c.vc)
        self.metrics.last_progress_ms = now
        app = c.app
        if c.is_am:
            app.start_ms = app.start_ms or now
            self.metrics.jobs[app.id].start_ms = self.metrics.jobs[app.id].start_ms or now
            self.events.at(now + self.timing.am_launch, self._registered, app, c)
            return
        if c.task.kind == MAP and c.task.hosts:
            self.metrics.maps_with_input += 1
            if c.locality == "NODE_LOCAL":
                self.metrics.maps_node_local += 1
            elif c.locality == "RACK_LOCAL":
                self.metrics.maps_rack_local += 1
        pulled = next_aligned(now, app.registered_ms, self.timing.am_heartbeat)
        self.events.at(pulled + self.timing.container_launch, self._launch, c)
        self.arm_tick(app)

    def container_released(self, c: SimContainer) -> None:
        self.metrics.alloc_changed(-c.mem, -c.vc)

    # --- lifecycle ------------------------------------------------------------------
    def _registered(self, app: SimApp, c: SimContainer) -> None:
        if c.state != "ALLOCATED" or app.is_done:
            return
        self.nms.start(c)
        app.state = "RUNNING"
        app.registered_ms = self.events.now
        for task in app.maps:
            if task.state == "NEW":
                self._ask_map(app, task, PRIORITY_MAP)
        self._maybe_finish(app)
        self.arm_tick(app)

    def _ask_map(self, app: SimApp, task: SimTask, priority: int) -> None:
        stage = app.job.maps
        assert stage is not None
        # a rerun (fast-fail priority) asks on * only, as the MR AM does
        self.rm.add_ask(app, priority, stage.request.memory_mb, stage.request.vcores, task,
                        locality=priority == PRIORITY_MAP)
        app.maps_pending_since.setdefault(task, self.events.now)

    def _launch(self, c: SimContainer) -> None:
        if c.state != "ALLOCATED" or c.app.is_done:
            return
        task = c.task
        stage = c.app.job.maps if task.kind == MAP else c.app.job.reduces
        assert stage is not None
        task.phases = stage.phases
        task.run_ms = task.duration_ms
        if task.hosts and c.locality != "NODE_LOCAL":
            factor = stage.rack_local_factor if c.locality == "RACK_LOCAL" else \
                stage.off_switch_factor
            task.run_ms = int(task.duration_ms * factor)
        task.fail_at_ms = -1.0
        if self._doomed(c):
            task.fail_at_ms = stage.fail_at * task.run_ms
            task.phases = _truncate(stage.phases, stage.fail_at)
        if task.kind == MAP:
            c.app.running_maps += 1
        else:
            c.app.running_reduces += 1
        self.nms.start(c)

    def _doomed(self, c: SimContainer) -> bool:
        stage = c.app.job.maps if c.task.kind == MAP else c.app.job.reduces
        assert stage is not None
        if stage.fail_off_tag and stage.fail_off_tag not in c.node.tags:
            return True
        if stage.per_node_limit > 0:
            same = sum(1 for x in self.nms.running.get(c.node, {})
                       if x.app is c.app and x.task.kind == c.task.kind)
            return same >= stage.per_node_limit
        return False

    def task_done(self, task: SimTask) -> None:
        """A task's last phase ended: its container exits, the job counts it."""
        app = task.app
        c = task.container
        assert c is not None
        now = self.events.now
        task.state = "SUCCEEDED"
        task.finish_ms = now
        self.metrics.last_progress_ms = now
        self.metrics.progressed()
        self.nms.stop(c)
        self.rm.report_completed(c)
        if task.kind == MAP:
            app.maps_completed += 1
            app.running_maps -= 1
            since = app.maps_pending_since.pop(task, None)
            if since is not None:
                self.metrics.map_response_ms += now - since
                self.metrics.maps_finished += 1
            if app.maps_all_done():
                self.nms.maps_done(app.reduces)
        else:
            app.reduces_completed += 1
            app.running_reduces -= 1
        self.arm_tick(app)
        self._maybe_finish(app)

    def _maybe_finish(self, app: SimApp) -> None:
        if app.state != "RUNNING" or not app.maps_all_done():
            return
        if app.reduces_completed < len(app.reduces):
            return
        app.state = "FINISHING"
        self.events.at(self.events.now + self.timing.am_finish, self._finish, app, "FINISHED")

    def _finish(self, app: SimApp, state: str) -> None:
        if app.is_done:
            return
        app.state = state
        app.final_status = "SUCCEEDED" if state == "FINISHED" else state
        app.finish_ms = self.events.now
        self.rm.clear_asks(app)
        for node in self.rm.nodes:
            if node.reserved is not None and node.reserved.app is app:
                self.rm.unreserve(node)
        for c in list(app.containers.values()):
            self.nms.stop(c)
            if state == "FINISHED":
                self.rm.report_completed(c)
            else:
                self.rm.release(c)
        self.rm.scheduler.app_done(app)
        rec = self.metrics.jobs[app.id]
        rec.finish_ms = app.finish_ms
        rec.state = state
        self.on_finished(app)

    def kill_app(self, app: SimApp) -> None:
        """``PUT /apps/{id}/state KILLED``: everything stops now."""
        for c in list(app.containers.values()):
            if c.state in ("ALLOCATED", "RUNNING") and not c.is_am:
                self.metrics.killed("APP_KILLED", self.events.now - c.allocated_ms)
        self._finish(app, "KILLED")

    # --- kills ----------------------------------------------------------------------
    def container_killed(self, c: SimContainer, reason: str, by_rm: bool = False) -> None:
        """A container died before its task finished (memory, signal, preemption, RM)."""
        if c.state in ("COMPLETE", "EXITED"):
            return
        app = c.app
        now = self.events.now
        was_running = c.state == "RUNNING"
        self.nms.stop(c)
        if by_rm:
            self.rm.release(c)
        else:
            self.rm.report_completed(c)
        what = f"{c.task.kind.lower()} {c.task.index} of {app.job.id} on {c.node.host}"
        self.metrics.killed(reason, now - c.allocated_ms, what)
        app.kills += 1
        if app.is_done:
            return
        if c.is_am:
            self._am_lost(app)
            return
        task = c.task
        task.container = None
        task.version += 1
        task.waiting_maps = False
        if task.kind == MAP:
            if was_running:
                app.running_maps -= 1
        elif was_running:
            app.running_reduces -= 1
        if reason in ATTEMPT_FAILURES:
            self.attempt_failed_on(app, c.node.host)
            task.failures += 1
            if task.failures >= MAX_TASK_FAILURES:
                self._finish(app, "FAILED")
                return
        task.attempt += 1
        task.state = "NEW"
        if task.kind == MAP:
            self._ask_map(app, task, PRIORITY_FAST_FAIL_MAP)
        self.arm_tick(app)

    def attempt_failed_on(self, app: SimApp, host: str) -> None:
        """One more failed attempt of ``app`` on ``host``: blacklist it at 3."""
        n = app.failures_on.get(host, 0)
        if n >= MAX_FAILURES_PER_NODE:
            return  # already blacklisted
        app.failures_on[host] = n + 1
        if n + 1 < MAX_FAILURES_PER_NODE:
            return
        hosts = frozenset(h for h, k in app.failures_on.items() if k >= MAX_FAILURES_PER_NODE)
        known = max(self.rm.running_nodes, 1)
        ignored = len(hosts) * 100 // known >= BLACKLIST_IGNORE_PERCENT
        app.blacklisted = frozenset() if ignored else hosts

    def _am_lost(self, app: SimApp) -> None:
        """The AM container died: a new attempt, or the app fails."""
        for c in list(app.containers.values()):
            self.nms.stop(c)
            self.rm.release(c)
            if not c.is_am:
                self.metrics.killed("AM_LOST", self.events.now - c.allocated_ms)
        self.rm.clear_asks(app)
        app.failures_on, app.blacklisted = {}, frozenset()  # a new AM, a new blacklist
        if app.am_attempt >= AM_MAX_ATTEMPTS:
            self._finish(app, "FAILED")
            return
        app.am_attempt += 1
        for t in [*app.maps, *app.reduces]:
            if t.state != "SUCCEEDED":
                t.state, t.container, t.waiting_maps = "NEW", None, False
                t.version += 1
        app.running_maps = app.running_reduces = 0
        app.reduce_started = False
        app.registered_ms = 0
        self.rm.activate(app)

    # --- reduces --------------------------------------------------------------------
    def arm_tick(self, app: SimApp) -> None:
        if app.am_tick_armed or app.state != "RUNNING" or not app.reduces:
            return
        app.am_tick_armed = True
        t = next_aligned(self.events.now + 1, app.registered_ms, self.timing.am_heartbeat)
        self.events.at(t, self._tick, app)

    def _tick(self, app: SimApp) -> None:
        app.am_tick_armed = False
        if app.state != "RUNNING":
            return
        # RMContainerAllocator.heartbeat: no new reduces in a heartbeat that preempted
        if not self.preempt_reduces_if_needed(app):
            self.schedule_reduces(app)
        unrequested = any(t.state == "NEW" for t in app.reduces)
        sm, _, _, ar = self._counts(app)
        if unrequested or (sm and ar):
            self.arm_tick(app)

    def _counts(self, app: SimApp) -> tuple[int, int, int, int]:
        return am_reduces.counts(app)

    def schedule_reduces(self, app: SimApp) -> None:
        am_reduces.schedule_reduces(self, app)

    def preempt_reduces_if_needed(self, app: SimApp) -> bool:
        return am_reduces.preempt_reduces_if_needed(self, app)


def _truncate(phases: tuple[Phase, ...], at: float) -> tuple[Phase, ...]:
    """The phases of a doomed attempt: cut where it fails (share ``at``)."""
    out = []
    done = 0.0
    for p in phases:
        if done + p.share >= at:
            out.append(Phase(p.name, max(at - done, 0.0), p.memory_mb, p.cpu))
            break
        out.append(p)
        done += p.share
    return tuple(out) or (Phase("FAIL", at, 0, 0.0),)
