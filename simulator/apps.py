"""Applications, their tasks, containers and pending asks (run state).

An app's pending asks are kept per scheduler key (priority), as YARN's
``AppSchedulingInfo`` does: per host, per rack and ``*`` (ANY). MapReduce's AM
asks for each map on every host and rack holding a replica of its block, and
for reduces and the AM container on ``*`` only (``RMContainerRequestor``).
When the RM allocates a container, the task it will run is chosen at once, as
the AM does on its next heartbeat (``RMContainerAllocator.assignMapsWithLocality``:
a node-local map first, then a rack-local one, then any), and that task's
asks are removed everywhere; YARN's RM removes the node's, rack's and ANY
counts at allocation and the AM the other replicas' a heartbeat later (a
difference of at most one heartbeat of stale host counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from yarn_advisor.simulator.spec import MAP, Job, Phase

if TYPE_CHECKING:
    from yarn_advisor.simulator.cluster import SimNode

AM = "AM"
NODE_LOCAL = "NODE_LOCAL"
RACK_LOCAL = "RACK_LOCAL"
OFF_SWITCH = "OFF_SWITCH"

# MapReduce's request priorities (RMContainerAllocator): lower is served first
PRIORITY_AM = 0
PRIORITY_FAST_FAIL_MAP = 5
PRIORITY_REDUCE = 10
PRIORITY_MAP = 20


class SimTask:
    """One task (or the AM) of an app; ``attempt`` counts its attempts."""

    __slots__ = (
        "app",
        "attempt",
        "container",
        "duration_ms",
        "fail_at_ms",
        "failures",
        "finish_ms",
        "first_start_ms",
        "hosts",
        "index",
        "kind",
        "phase_idx",
        "phases",
        "racks",
        "rate",
        "requested_ms",
        "run_ms",
        "since",
        "start_ms",
        "state",
        "version",
        "waiting_maps",
        "work_left",
    )

    def __init__(self, app: SimApp, kind: str, index: int, duration_ms: int,
                 phases: tuple[Phase, ...]) -> None:
        self.app = app
        self.kind = kind
        self.index = index
        self.duration_ms = duration_ms
        self.run_ms = duration_ms  # this attempt's time at full speed (locality applied)
        self.phases = phases
        self.hosts: tuple[str, ...] = ()
        self.racks: tuple[str, ...] = ()
        self.attempt = 0
        self.state = "NEW"  # NEW | PENDING | ASSIGNED | RUNNING | SUCCEEDED | KILLED
        self.container: SimContainer | None = None
        self.phase_idx = 0
        self.work_left = 0.0
        self.rate = 1.0
        self.since = 0
        self.version = 0
        self.waiting_maps = False
        self.requested_ms = 0
        self.start_ms = 0
        self.first_start_ms = 0
        self.finish_ms = 0
        self.fail_at_ms = -1.0
        self.failures = 0

    @property
    def phase(self) -> Phase:
        return self.phases[min(self.phase_idx, len(self.phases) - 1)]

    @property
    def progress(self) -> float:
        """Fraction of the task's work done (0-1)."""
        if self.state == "SUCCEEDED":
            return 1.0
        if self.state != "RUNNING" or self.run_ms <= 0:
            return 0.0
        before = sum(p.share for p in self.phases[:self.phase_idx])
        current = self.phase.share * self.run_ms
        done_in_phase = current - self.work_left if current > 0 else 0.0
        return min(1.0, before + done_in_phase / self.run_ms)

    def __repr__(self) -> str:
        return f"SimTask({self.app.id} {self.kind}#{self.index} {self.state})"


class SimContainer:
    """One allocated container; ``seq`` orders containers by allocation (newest last)."""

    __slots__ = (
        "allocated_ms",
        "app",
        "exit",
        "finished_ms",
        "id",
        "is_am",
        "locality",
        "mem",
        "node",
        "priority",
        "seq",
        "started_ms",
        "state",
        "task",
        "vc",
    )

    def __init__(self, cid: str, seq: int, app: SimApp, node: SimNode, mem: int, vc: int,
                 priority: int, task: SimTask, locality: str, now: int) -> None:
        self.id = cid
        self.seq = seq
        self.app = app
        self.node = node
        self.mem = mem
        self.vc = vc
        self.priority = priority
        self.task = task
        self.is_am = task.kind == AM
        self.locality = locality
        self.allocated_ms = now
        self.started_ms = 0
        self.finished_ms = 0
        # ALLOCATED -> RUNNING -> EXITED (process ended, the NM reports it at its next
        # heartbeat) -> COMPLETE (released by the RM)
        self.state = "ALLOCATED"
        self.exit = ""

    def __repr__(self) -> str:
        return f"SimContainer({self.id} on {self.node.host} {self.state})"


LIVE_STATES = ("ALLOCATED", "RUNNING")  # a container that holds its task


def live_count(c: SimContainer, sign: int) -> None:
    """Count ``c`` into (+1) or out of (-1) its app's ``live_maps`` / ``live_reduces``
    as it enters or leaves :data:`LIVE_STATES` (an AM's container counts in neither)."""
    if c.task.kind == MAP:
        c.app.live_maps += sign
    elif not c.is_am:
        c.app.live_reduces += sign


class Ask:
    """Pending containers of one priority: ANY, per rack and per host."""

    __slots__ = ("any", "by_host", "by_rack", "mem", "priority", "vc")

    def __init__(self, priority: int, mem: int, vc: int) -> None:
        self.priority = priority
        self.mem = mem
        self.vc = vc
        self.any: dict[SimTask, None] = {}
        self.by_host: dict[str, dict[SimTask, None]] = {}
        self.by_rack: dict[str, dict[SimTask, None]] = {}

    @property
    def count(self) -> int:
        return len(self.any)

    def unique_locations(self) -> int:
        """Distinct resource names with a pending ask (hosts, racks and ``*``)."""
        return len(self.by_host) + len(self.by_rack) + (1 if self.any else 0)

    def add(self, task: SimTask, locality: bool = True) -> None:
        self.any[task] = None
        if not locality:
            return
        for h in task.hosts:
            self.by_host.setdefault(h, {})[task] = None
        for r in task.racks:
            self.by_rack.setdefault(r, {})[task] = None

    def remove(self, task: SimTask) -> None:
        self.any.pop(task, None)
        for h in task.hosts:
            d = self.by_host.get(h)
            if d is not None:
                d.pop(task, None)
                if not d:
                    del self.by_host[h]
        for r in task.racks:
            d = self.by_rack.get(r)
            if d is not None:
                d.pop(task, None)
                if not d:
                    del self.by_rack[r]

    def host_count(self, host: str) -> int:
        d = self.by_host.get(host)
        return len(d) if d else 0

    def rack_count(self, rack: str) -> int:
        d = self.by_rack.get(rack)
        return len(d) if d else 0

    def pick(self, node: SimNode, locality: str) -> SimTask:
        """The task a container of this locality on ``node`` will run."""
        if locality == NODE_LOCAL and node.host in self.by_host:
            return next(iter(self.by_host[node.host]))
        if locality != OFF_SWITCH and node.rack in self.by_rack:
            return next(iter(self.by_rack[node.rack]))
        return next(iter(self.any))


class Reservation:
    """A node kept for one app's ask that did not fit (CapacityScheduler/FairScheduler)."""

    __slots__ = ("app", "locality", "mem", "node", "priority", "vc")

    def __init__(self, app: SimApp, priority: int, mem: int, vc: int, node: SimNode,
                 locality: str) -> None:
        self.app = app
        self.priority = priority
        self.mem = mem
        self.vc = vc
        self.node = node
        self.locality = locality


class SimApp:
    """One application: its spec, state, tasks, asks and accounting."""

    __slots__ = (
        "activated",
        "alloc_mem",
        "alloc_vc",
        "am_attempt",
        "am_mem",
        "am_task",
        "am_tick_armed",
        "am_vc",
        "asks",
        "blacklisted",
        "containers",
        "failures_on",
        "final_status",
        "finish_ms",
        "id",
        "job",
        "job_id",
        "kills",
        "label",
        "live_maps",
        "live_reduces",
        "locality_counts",
        "maps",
        "maps_completed",
        "maps_pending_since",
        "memory_ms",
        "missed",
        "name",
        "next_container",
        "pending_total",
        "priority",
        "queue",
        "reduce_started",
        "reduces",
        "reduces_completed",
        "registered_ms",
        "reservations",
        "running_maps",
        "running_reduces",
        "seq",
        "start_ms",
        "state",
        "submit_ms",
        "tags",
        "user",
        "vcore_ms",
    )

    def __init__(self, seq: int, cluster_ts: int, job: Job, submit_ms: int) -> None:
        self.seq = seq
        self.id = f"application_{cluster_ts}_{seq:04d}"
        self.job_id = f"job_{cluster_ts}_{seq:04d}"
        self.job = job
        self.name = job.name
        self.user = job.user
        self.queue = job.queue
        self.priority = job.priority
        self.tags = job.tags
        self.label = job.node_label
        self.submit_ms = submit_ms
        self.state = "NEW"
        self.final_status = "UNDEFINED"
        self.activated = False
        self.start_ms = 0
        self.registered_ms = 0
        self.finish_ms = 0
        self.am_attempt = 1
        self.am_mem = job.am.memory_mb
        self.am_vc = job.am.vcores
        self.am_task = SimTask(self, AM, 0, 0, (job.am_use,))
        self.maps: list[SimTask] = []
        self.reduces: list[SimTask] = []
        self.asks: dict[int, Ask] = {}
        self.missed: dict[int, int] = {}  # scheduling opportunities per priority
        self.reservations: dict[int, int] = {}
        self.containers: dict[str, SimContainer] = {}
        self.alloc_mem = 0
        self.alloc_vc = 0
        self.maps_completed = 0
        self.reduces_completed = 0
        self.running_maps = 0
        self.running_reduces = 0
        # containers of maps / of reduces ALLOCATED or RUNNING (the AM's assigned
        # counts, am_reduces.counts): kept by RMCore.allocate, NodeManagers.stop and
        # RMCore.release, the only places a container enters or leaves those states
        self.live_maps = 0
        self.live_reduces = 0
        self.reduce_started = False
        self.am_tick_armed = False
        self.next_container = 1
        self.pending_total = 0
        self.maps_pending_since: dict[SimTask, int] = {}
        self.memory_ms = 0
        self.vcore_ms = 0
        self.locality_counts = {NODE_LOCAL: 0, RACK_LOCAL: 0, OFF_SWITCH: 0}
        self.kills = 0
        # the MR AM's node blacklist: failed attempts per host; the hosts the
        # scheduler must skip for this app (empty while blacklisting is ignored)
        self.failures_on: dict[str, int] = {}
        self.blacklisted: frozenset[str] = frozenset()

    @property
    def attempt_id(self) -> str:
        ts_seq = self.id.split("_", 1)[1]
        return f"appattempt_{ts_seq}_{self.am_attempt:06d}"

    def container_id(self) -> str:
        ts_seq = self.id.split("_", 1)[1]
        n = self.next_container
        self.next_container += 1
        return f"container_{ts_seq}_{self.am_attempt:02d}_{n:06d}"

    def task_id(self, task: SimTask) -> str:
        ts_seq = self.id.split("_", 1)[1]
        kind = "m" if task.kind == "MAP" else "r"
        return f"task_{ts_seq}_{kind}_{task.index:06d}"

    def pending_priorities(self) -> list[int]:
        """Scheduler keys with pending asks, most urgent first."""
        return sorted(p for p, a in self.asks.items() if a.any)

    def ask_for(self, priority: int, mem: int, vc: int) -> Ask:
        ask = self.asks.get(priority)
        if ask is None:
            ask = self.asks[priority] = Ask(priority, mem, vc)
        return ask

    def maps_all_done(self) -> bool:
        return self.maps_completed >= len(self.maps)

    @property
    def is_done(self) -> bool:
        return self.state in ("FINISHED", "FAILED", "KILLED")

    def __repr__(self) -> str:
        return f"SimApp({self.id} {self.name} {self.state})"
