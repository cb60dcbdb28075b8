"""Matchmaking as the RM's scheduler, and the baselines it was measured against
(He, Lu, Swanson 2011; seed 001).

All three keep Hadoop's job order (FIFO by submission, or ``order="fair"``:
fewest running containers first, the Fair scheduler's rule in Figs 6-7) and
differ only in how a node's free room goes to *map* tasks that read an HDFS
block:

* :class:`MatchmakingScheduler` (Tables 1-2): a local map of *any* job first;
  the first miss in a row marks the node (locality marker 0) and it gets no
  map this heartbeat; a miss while marked gets one non-local map of the first
  job, at most one per heartbeat. The markers come from the advisor's
  ``step_markers`` (Table 1 as printed never reaches its non-local branch; the
  rule of the text is implemented, see its docstring). Table 2: every marker
  is cleared when a new job's maps reach the queue -- in YARN a job's maps are
  asked when its AM registers, so that is when "a new job is added".
* :class:`DelayScheduler` (Zaharia et al., EuroSys 2010, as section II-B
  describes it, with the maximum delay D in time): a job with no local map for
  the node is skipped and starts waiting; once it has waited D it may launch
  non-local maps, several per heartbeat; a local launch resets its wait.
* :class:`HadoopFifoScheduler` (section II-A): the first job only; its local
  maps while there is room, else one non-local map, then the heartbeat ends.

Asks without block locations (AMs, reduces, re-run maps, which ask on ``*``)
are served first in job order, as many as fit, as YARN's priorities serve them
before maps; Hadoop 0.21 had separate map and reduce slots, so the papers'
map rules never compete with them. A map with no replica anywhere is local to
every node.
"""

from __future__ import annotations

from yarn_advisor.advisor.policies.matchmaking import core as mc
from yarn_advisor.simulator.apps import OFF_SWITCH, PRIORITY_MAP, Ask, SimApp
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.inrm.base import InRMBase
from yarn_advisor.simulator.spec import SchedulerSpec

ORDERS = ("fifo", "fair")


def map_ask(app: SimApp) -> Ask | None:
    """The app's pending maps that carry block locations, if any."""
    ask = app.asks.get(PRIORITY_MAP)
    return ask if ask is not None and ask.count > 0 else None


def local_to(ask: Ask, node: SimNode) -> bool:
    """Whether ``ask`` has a map whose block is on ``node`` (or that has no block)."""
    return ask.host_count(node.host) > 0 or not ask.by_host


class LocalityFifo(InRMBase):
    """Job order, non-map asks, and the per-heartbeat skeleton of the three."""

    def __init__(self, spec: SchedulerSpec, order: str = "fifo") -> None:
        super().__init__(spec)
        if order not in ORDERS:
            raise ValueError(f"unknown job order {order!r} (one of {', '.join(ORDERS)})")
        self.order = order

    def jobs(self) -> list[SimApp]:
        apps = self.pending()
        if self.order == "fair":
            apps.sort(key=lambda a: (len(a.containers), a.seq))
        return apps

    def node_update(self, node: SimNode) -> None:
        for app in self.jobs():
            for ask in self.asks_of(app):
                if ask.priority == PRIORITY_MAP:
                    continue
                while ask.count > 0 and self.fits_free(ask.mem, ask.vc, node):
                    self.place(app, ask, node)
        self.assign_maps(node)

    def assign_maps(self, node: SimNode) -> None:
        raise NotImplementedError

    def _map_jobs(self, node: SimNode) -> list[tuple[SimApp, Ask]]:
        """Jobs with pending located maps that fit the node's free room, in job order."""
        out = []
        for app in self.jobs():
            ask = map_ask(app)
            if ask is not None and self.fits_free(ask.mem, ask.vc, node):
                out.append((app, ask))
        return out

    def _local(self, app: SimApp, ask: Ask, node: SimNode) -> None:
        self.rm.allocate(app, ask, node, "NODE_LOCAL" if ask.by_host else OFF_SWITCH)

    def _nonlocal(self, app: SimApp, ask: Ask, node: SimNode) -> None:
        self.rm.allocate(app, ask, node, "RACK_LOCAL" if ask.rack_count(node.rack) > 0
                         else OFF_SWITCH)


class MatchmakingScheduler(LocalityFifo):
    """Tables 1-2 (see the module docstring)."""

    def __init__(self, spec: SchedulerSpec, order: str = "fifo") -> None:
        super().__init__(spec, order)
        self.type_name = f"inrm:matchmaking-{order}"
        self.markers: dict[str, mc.Marker] = {}
        self._seen: set[str] = set()

    def assign_maps(self, node: SimNode) -> None:
        fresh = [a.id for a in self.apps if a.id not in self._seen and map_ask(a) is not None]
        if fresh:  # Table 2: a new job's maps are in the queue
            self._seen.update(fresh)
            self.markers.clear()
        while True:
            jobs = self._map_jobs(node)
            if not jobs:
                return
            hit = next(((a, k) for a, k in jobs if local_to(k, node)), None)
            step = mc.step_markers(self.markers, {node.host: hit is not None}, reset=False)
            self.markers = step.markers
            if hit is not None:
                self._local(hit[0], hit[1], node)
                continue
            if step.eligible_nonlocal:  # marked at the last miss: one non-local map
                self._nonlocal(jobs[0][0], jobs[0][1], node)
            return


class DelayScheduler(LocalityFifo):
    """Delay scheduling with a maximum delay of ``delay_ms`` (see the module docstring)."""

    def __init__(self, spec: SchedulerSpec, delay_ms: int, order: str = "fifo") -> None:
        super().__init__(spec, order)
        if delay_ms < 0:
            raise ValueError(f"the delay must be >= 0 ms, got {delay_ms}")
        self.delay_ms = delay_ms
        self.type_name = f"inrm:delay-{order}-{delay_ms}ms"
        self.waiting_since: dict[SimApp, int] = {}

    def assign_maps(self, node: SimNode) -> None:
        now = self.rm.events.now
        while True:
            launched = False
            for app, ask in self._map_jobs(node):
                if local_to(ask, node):
                    self._local(app, ask, node)
                    self.waiting_since.pop(app, None)
                    launched = True
                    break
                since = self.waiting_since.setdefault(app, now)
                if now - since >= self.delay_ms:
                    self._nonlocal(app, ask, node)
                    launched = True
                    break
            if not launched:
                return

    def app_done(self, app: SimApp) -> None:
        super().app_done(app)
        self.waiting_since.pop(app, None)


class HadoopFifoScheduler(LocalityFifo):
    """Hadoop 0.21's FIFO locality rule (see the module docstring)."""

    def __init__(self, spec: SchedulerSpec) -> None:
        super().__init__(spec, "fifo")
        self.type_name = "inrm:hadoop-fifo"

    def assign_maps(self, node: SimNode) -> None:
        while True:
            jobs = self._map_jobs(node)
            if not jobs:
                return
            app, ask = jobs[0]
            if local_to(ask, node):
                self._local(app, ask, node)
                continue
            self._nonlocal(app, ask, node)
            return
