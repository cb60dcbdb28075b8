"""One run: a workload on a simulated YARN cluster under one scheduler.

    sim = Simulation(workload)                      # the workload's own scheduler
    sim = Simulation(workload, scheduler="fair")    # or a named baseline
    sim = Simulation(workload, scheduler=MyScheduler(spec))  # or any Scheduler
    sim.every(10_000, hook)                          # hook(sim) every 10 s of sim time
    report = sim.run()

A run that can no longer progress (asks that can never be met, e.g. two AMs
holding a whole cluster) stops after ``stall_ms`` of simulated time without an
allocation, a task end or a submission while no task runs; its report says
``stalled``.

A run must never hang. One that loops without progress stops with
:class:`SimulationStuck`, naming the workload, the simulated time and what
repeats: more than ``MAX_EVENTS_PER_INSTANT`` (events.py) events at one
simulated millisecond (the clock stopped), or more than
``MAX_KILLS_WITHOUT_PROGRESS`` container kills in a row with no task
finishing and no job submitted or ended (kill and rerun without end; a
healthy run interleaves its kills with completions).

Times inside are milliseconds from the start of the run; snapshots and ids
add ``cluster_ts`` (the RM's start time in epoch ms) as a real RM would.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from yarn_advisor.simulator.am import MapReduceAM
from yarn_advisor.simulator.apps import SimApp, SimContainer, SimTask
from yarn_advisor.simulator.cluster import BlockMap, SimNode, build_nodes
from yarn_advisor.simulator.events import ClockStopped, EventQueue, next_aligned
from yarn_advisor.simulator.execution import NodeManagers
from yarn_advisor.simulator.metrics import JobRecord, Metrics, Report, Sample
from yarn_advisor.simulator.rm import RMCore
from yarn_advisor.simulator.schedulers import make_scheduler
from yarn_advisor.simulator.schedulers.base import Calculator, Scheduler
from yarn_advisor.simulator.spec import MAP, REDUCE, Job, Workload

CLUSTER_TS = 1_700_000_000_000
MAX_KILLS_WITHOUT_PROGRESS = 10_000
# the cyclic collector's young-generation threshold while a run goes on (Python's
# default: 700 allocations); see young_gc
YOUNG_GC_THRESHOLD = 10_000
Hook = Callable[["Simulation"], None]
Progress = Callable[[int, int, int], None]


class SimulationStuck(RuntimeError):
    """A run that no longer progresses (it would otherwise never end)."""


class Simulation:
    """Builds the cluster, RM, scheduler, NMs and AMs of one run and drives them."""

    def __init__(self, workload: Workload, scheduler: str | Scheduler | None = None,
                 mode: str = "baseline", sample_ms: int = 0,
                 cluster_ts: int = CLUSTER_TS, stall_ms: int = 3600_000,
                 max_kills_without_progress: int = MAX_KILLS_WITHOUT_PROGRESS) -> None:
        self.workload = workload
        self.mode = mode
        self.cluster_ts = cluster_ts
        self.stall_ms = stall_ms
        self.max_kills_without_progress = max_kills_without_progress
        spec = workload.scheduler
        if isinstance(scheduler, str) or scheduler is None:
            self.scheduler: Scheduler = make_scheduler(scheduler or spec.type, spec)
        else:
            self.scheduler = scheduler
        timing = workload.cluster.timing
        self.events = EventQueue()
        self.nodes: list[SimNode] = build_nodes(workload.cluster, timing.nm_heartbeat)
        rng = random.Random(workload.seed)
        self.blocks = BlockMap(self.nodes, workload.cluster.hdfs, rng)
        # CapacityScheduler: its configured calculator; FifoScheduler: memory only;
        # FairScheduler: containers must fit in memory and vcores (Resources.fitsIn)
        dominant = {"fifoScheduler": False, "fairScheduler": True}.get(
            self.scheduler.type_name, spec.resource_calculator == "dominant")
        self.rm: RMCore = RMCore(self.events, self.nodes, self.scheduler, Calculator(dominant),
                         workload.cluster.minimum_allocation, workload.cluster.maximum_allocation,
                         timing.nm_heartbeat, spec.max_application_priority,
                         workload.cluster.labels, cluster_ts)
        self.metrics = Metrics()
        self.nms = NodeManagers(self.events, self.metrics, self._task_done, self._killed)
        self.am = MapReduceAM(self.events, self.rm, self.nms, self.metrics, timing,
                              self._app_finished)
        self.rm.listener = self.am
        self.jobs = {j.id: j for j in workload.jobs}
        self.successors: dict[str, list[Job]] = {}
        for j in workload.jobs:
            if j.after:
                self.successors.setdefault(j.after, []).append(j)
        self.replicas = self._place_blocks(rng)
        self.apps: dict[str, SimApp] = {}
        self.app_of_job: dict[str, SimApp] = {}
        self._holding: list[SimApp] = []  # apps that may hold containers (submission order)
        self.unfinished = len(workload.jobs)
        self.hooks: list[tuple[int, Hook]] = []
        self.sample_ms = sample_ms or self._default_sample_ms()
        self.finished_tasks: list[tuple[SimTask, int]] = []  # (task, finish) since last take
        self._app_seq = 0
        self._sampling = False
        self._pending_submits = 0
        self._started = False

    # --- set-up ---------------------------------------------------------------------
    def _place_blocks(self, rng: random.Random) -> dict[str, list[tuple[int, ...]]]:
        """HDFS replicas of every map's input block, placed once before the run
        (so every mode and scheduler sees the same data layout)."""
        out: dict[str, list[tuple[int, ...]]] = {}
        for job in self.workload.jobs:
            stage = job.maps
            if stage is None or stage.input in ("none", "hosts"):
                continue
            reps = []
            for _ in range(stage.tasks):
                block = self.blocks.pool_block() if stage.input == "pool" else \
                    self.blocks.new_block()
                reps.append(self.blocks.replicas[block])
            out[job.id] = reps
        return out

    def _default_sample_ms(self) -> int:
        last = max((j.submit_ms for j in self.workload.jobs), default=0)
        return max(1000, (last // 2000) // 1000 * 1000)

    def every(self, interval_ms: int, hook: Hook) -> None:
        """Call ``hook(self)`` every ``interval_ms`` of simulated time while the
        workload runs (the sidecar's cycle). The first call is at the first
        interval boundary after the run starts."""
        if interval_ms <= 0:
            raise ValueError("interval must be positive")
        self.hooks.append((interval_ms, hook))

    @property
    def now(self) -> int:
        return self.events.now

    # --- running --------------------------------------------------------------------
    def run(self, until_ms: int | None = None, progress: Progress | None = None,
            progress_every_s: float = 0.5) -> Report:
        """Run to the end of the workload (or ``until_ms``) and report; raises
        :class:`SimulationStuck` when the run loops without progress."""
        with young_gc(YOUNG_GC_THRESHOLD):
            return self._run(until_ms, progress, progress_every_s)

    def _run(self, until_ms: int | None, progress: Progress | None,
             progress_every_s: float) -> Report:
        started = time.perf_counter()
        if not self._started:
            self._start()
        last_report = started
        step = max(self.sample_ms * 20, 60_000)
        while len(self.events) and self.unfinished > 0:
            nxt = self.events.next_time()
            assert nxt is not None
            horizon = nxt + step if until_ms is None else min(until_ms, nxt + step)
            try:
                self._run_until(horizon)
            except ClockStopped as exc:
                raise SimulationStuck(f"{self._where()}: {exc}") from None
            if self.metrics.kills_in_streak > self.max_kills_without_progress:
                raise SimulationStuck(self._kill_loop())
            if until_ms is not None and self.events.now >= until_ms:
                break
            if self.events.now - self.metrics.last_progress_ms > self.stall_ms and \
                    not self._submissions_ahead() and not self._tasks_running():
                self.metrics.stalled = True
                break
            if progress is not None and time.perf_counter() - last_report >= progress_every_s:
                last_report = time.perf_counter()
                progress(self.events.now, len(self.workload.jobs) - self.unfinished,
                         len(self.workload.jobs))
        if progress is not None:
            progress(self.events.now, len(self.workload.jobs) - self.unfinished,
                     len(self.workload.jobs))
        return self.report(time.perf_counter() - started)

    def _where(self) -> str:
        return (f"workload {self.workload.name!r} ({self.mode}, {self.scheduler.type_name}) "
                f"at simulated {_clock(self.events.now)}")

    def _kill_loop(self) -> str:
        m = self.metrics
        top = sorted(m.kill_streak.items(), key=lambda kv: -kv[1])[:3]
        what = "; ".join(f"{k} x{n}" for k, n in top)
        return (f"{self._where()}: {m.kills_in_streak} container kills in a row with no task "
                f"finished and no job submitted or ended (kill and rerun without end); "
                f"repeating: {what}")

    def _start(self) -> None:
        self._started = True
        for node in self.nodes:
            self.metrics.capacity_changed(node.total_mem, node.total_vc, node.real_mem,
                                          node.real_cpu)
        for job in self.workload.jobs:
            if not job.after:
                self._pending_submits += 1
                self.events.at(job.submit_ms, self._submit, job)
        first = min((j.submit_ms for j in self.workload.jobs if not j.after), default=0)
        for interval, hook in self.hooks:
            self.events.at(first + interval, self._hook, interval, hook)
        self.events.at(first, self._sample)
        self._sampling = True

    def _tasks_running(self) -> bool:
        return any(not c.is_am for running in self.nms.running.values() for c in running)

    def _submissions_ahead(self) -> bool:
        return self._pending_submits > 0

    def _run_until(self, horizon: int) -> None:
        metrics = self.metrics
        events = self.events
        heap_time = events.next_time
        while len(events) and self.unfinished > 0:
            t = heap_time()
            assert t is not None
            if t > horizon:
                events.now = max(events.now, horizon)
                return
            metrics.now = t
            events.run(until_ms=t)

    def report(self, wall_s: float = 0.0) -> Report:
        return self.metrics.report(self.mode, self.scheduler.type_name, self.workload.name,
                                   self.events.processed, wall_s)

    # --- jobs -----------------------------------------------------------------------
    def _submit(self, job: Job) -> None:
        now = self.events.now
        if not job.after:
            self._pending_submits -= 1
        self.metrics.last_progress_ms = now
        self.metrics.progressed()
        self.metrics.now = now
        self.metrics.begin(now)
        self._app_seq += 1
        app = SimApp(self._app_seq, self.cluster_ts, job, now)
        self._build_tasks(app)
        self.apps[app.id] = app
        self._holding.append(app)
        self.app_of_job[job.id] = app
        self.rm.apps[app.id] = app
        self.metrics.jobs[app.id] = JobRecord(app.id, job.id, job.name, job.queue, now,
                                              user=job.user)
        app.state = "SUBMITTED"
        try:
            self.scheduler.add_app(app)
        except ValueError:
            app.state = "FAILED"
            app.finish_ms = now
            rec = self.metrics.jobs[app.id]
            rec.finish_ms, rec.state = now, "FAILED"
            self._app_finished(app)
            return
        if not self._sampling:
            self._sampling = True
            self.events.at(now, self._sample)

    def _build_tasks(self, app: SimApp) -> None:
        job = app.job
        if job.maps is not None:
            reps = self.replicas.get(job.id)
            for i, d in enumerate(job.maps.durations_ms):
                t = SimTask(app, MAP, i, d, job.maps.phases)
                if reps is not None:
                    nodes = [self.nodes[k] for k in reps[i]]
                    t.hosts = tuple(n.host for n in nodes)
                    t.racks = tuple(dict.fromkeys(n.rack for n in nodes))
                elif job.maps.input == "hosts" and i < len(job.maps.hosts):
                    node = self.rm.node_by_host.get(job.maps.hosts[i])
                    if node is not None:
                        t.hosts, t.racks = (node.host,), (node.rack,)
                app.maps.append(t)
        if job.reduces is not None:
            for i, d in enumerate(job.reduces.durations_ms):
                app.reduces.append(SimTask(app, REDUCE, i, d, job.reduces.phases))

    def _app_finished(self, app: SimApp) -> None:
        self.unfinished -= 1
        self.metrics.progressed()
        for nxt in self.successors.get(app.job.id, []):
            if app.state == "FINISHED" or not nxt.after_success:
                self.events.at(self.events.now + nxt.submit_ms, self._submit, nxt)
            else:
                self._skip(nxt, app.finish_ms)

    def _skip(self, job: Job, at: int) -> None:
        """An iteration whose predecessor failed is never submitted."""
        self.unfinished -= 1
        for nxt in self.successors.get(job.id, []):
            self._skip(nxt, at)

    # --- NM callbacks ---------------------------------------------------------------
    def _task_done(self, task: SimTask) -> None:
        self.finished_tasks.append((task, self.events.now))
        self.am.task_done(task)

    def _killed(self, c: SimContainer, reason: str) -> None:
        if c.task.kind != "AM" and reason != "FAILED":
            self.finished_tasks.append((c.task, -self.events.now))
        self.am.container_killed(c, reason)

    # --- levers (the writer's effects) ------------------------------------------------
    def resize_node(self, node: SimNode, memory_mb: int, vcores: int, timeout_ms: int) -> None:
        """``POST /nodes/{id}/resource`` as Hadoop 3.4.2's RM takes it
        (``AbstractYarnScheduler.updateNodeResource``): the same size changes nothing,
        not even the timeout. A new size with a timeout >= 0 sets the node's overcommit
        deadline to now + timeout; a negative one keeps an earlier deadline
        (``SchedulerNode.setOvercommitTimeOut``). With 0 the RM kills at once; else at the
        node's first heartbeat at or past the deadline (``nodeUpdate`` ->
        ``signalContainersIfOvercommitted``). A node never given a deadline is never
        killed on: it only takes no new containers until it fits."""
        if (memory_mb, vcores) == (node.total_mem, node.total_vc):
            return
        now = self.events.now
        self.metrics.now = now
        self.metrics.capacity_changed(memory_mb - node.total_mem, vcores - node.total_vc)
        node.total_mem, node.total_vc = memory_mb, vcores
        if timeout_ms >= 0:
            node.overcommit_deadline = now + timeout_ms
        self.rm.topology_changed()
        deadline = node.overcommit_deadline
        if deadline < 0 or not self._overcommitted(node):
            return
        if timeout_ms == 0:
            self._kill_overcommitted(node)
            return
        beat = next_aligned(max(now + 1, deadline), node.hb_phase, self.rm.heartbeat_ms)
        self.events.at(beat, self._overcommit_beat, node, deadline)

    def _overcommitted(self, node: SimNode) -> bool:
        return node.alloc_mem > node.total_mem or (
            self.rm.calc.dominant and node.alloc_vc > node.total_vc)

    def _overcommit_beat(self, node: SimNode, deadline: int) -> None:
        """The node's heartbeat past its deadline: the completions it reports are
        released first (``nodeUpdate``), then the RM kills while it is overcommitted.
        A deadline reset since (a later write with a timeout) has its own beat."""
        if deadline != node.overcommit_deadline or node.state != "RUNNING":
            return
        for c in node.completed:
            if c.state != "COMPLETE":
                self.rm.release(c)
        node.completed = []
        self._kill_overcommitted(node)

    def _kill_overcommitted(self, node: SimNode) -> None:
        """Kill in ``SchedulerNode.getContainersToKill`` order (non-AM containers first,
        then the newest; the simulator has no opportunistic containers) until it fits."""
        while self._overcommitted(node):
            live = [c for c in node.containers.values() if c.state in ("ALLOCATED", "RUNNING")]
            if not live:
                return
            victim = max(live, key=lambda c: (not c.is_am, c.allocated_ms, c.seq))
            self.am.container_killed(victim, "OVERCOMMIT", by_rm=True)

    def kill_container(self, c: SimContainer, reason: str) -> None:
        """The NM kills a container (a signal): its task runs again."""
        self.metrics.now = self.events.now
        if c.task.kind != "AM":
            self.finished_tasks.append((c.task, -self.events.now))
        self.am.container_killed(c, reason)

    def take_finished_tasks(self) -> list[tuple[SimTask, int]]:
        """Tasks that ended since the last call: (task, finish ms; negative if killed)."""
        out, self.finished_tasks = self.finished_tasks, []
        return out

    # --- periodic -------------------------------------------------------------------
    def _hook(self, interval: int, hook: Hook) -> None:
        if self.unfinished <= 0:
            return
        self.metrics.now = self.events.now
        hook(self)
        self.events.at(self.events.now + interval, self._hook, interval, hook)

    def _sample(self) -> None:
        m = self.metrics
        # an app that ended and holds nothing never holds again: not looked at again
        self._holding = held = [a for a in self._holding if a.alloc_mem or not a.is_done]
        per_app = {a.job.id: a.alloc_mem for a in held if a.alloc_mem}
        m.samples.append(Sample(self.events.now, int(m.alloc_mem.value), int(m.alloc_vc.value),
                                m.used_mem.value, m.used_cpu.value, per_app))
        if self.unfinished > 0:
            self.events.at(self.events.now + self.sample_ms, self._sample)
        else:
            self._sampling = False


@contextmanager
def young_gc(threshold: int) -> Iterator[None]:
    """Collect the young generation every ``threshold`` allocations (not fewer than
    the threshold in force) while the block runs, then restore the thresholds.

    A run allocates millions of short-lived objects (events, containers, each
    cycle's Snapshot) beside a large long-lived state (every task of the trace).
    At Python's default of 700 the young collections come so often that the
    older generations' collections, which walk that whole state, follow them
    (FB-2009's day 0 in sidecar mode: 85.2 s of CPU with the default, 67.3 s
    at 10,000, one run each; the medians, simulator/README.md, speed). The
    collector still runs (nothing in a run depends on when): the cycles it
    frees are freed a little later, and the peak memory of a whole day stays
    as it was."""
    old = gc.get_threshold()
    gc.set_threshold(max(threshold, old[0]), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _clock(ms: int) -> str:
    """``12345678`` -> ``3:25:45.678 (12345678 ms)``."""
    s = ms // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}.{ms % 1000:03d} ({ms} ms)"
