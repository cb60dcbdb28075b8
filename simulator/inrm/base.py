"""What every in-RM scheduler shares: one pool of apps, accounting, the AM limit,
locality of a placement, and heartbeats for nodes the RM thinks are full.

The papers' algorithms know no queues: every app joins one pool (its queue is
reported as ``root.default``), priorities may be set but moves and scheduler
configuration are refused. As YARN's schedulers all do, AMs may hold at most
``maximum_am_resource_percent`` of the cluster's memory (one AM always may
run), so a burst of submissions cannot fill the cluster with AMs.

Over-commit: OPERA and PRISM place containers on what nodes *use*, so a node
may hold more than its schedulable size. The simulated RM then sees no room
and stops that node's heartbeats until a container ends; :class:`InRMBase`
keeps such nodes beating (``rm.arm``) once per heartbeat interval while the
scheduler says they have room (:meth:`InRMBase.room`) and asks are pending,
and calls :meth:`InRMBase.on_tick` on that clock (OPERA's node monitor).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from yarn_advisor.simulator.apps import (
    NODE_LOCAL,
    OFF_SWITCH,
    PRIORITY_AM,
    RACK_LOCAL,
    Ask,
    SimApp,
    SimContainer,
)
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.schedulers.base import QueueView
from yarn_advisor.simulator.spec import SchedulerSpec

if TYPE_CHECKING:
    from yarn_advisor.simulator.rm import RMCore
    from yarn_advisor.simulator.simulation import Simulation

Vec = tuple[float, float]


def locality_on(ask: Ask, node: SimNode) -> str:
    """The best locality a container of ``ask`` gets on ``node``."""
    if ask.host_count(node.host) > 0:
        return NODE_LOCAL
    if ask.rack_count(node.rack) > 0:
        return RACK_LOCAL
    return OFF_SWITCH


class InRMBase:
    """The Scheduler protocol's bookkeeping for a paper's algorithm; subclasses
    implement :meth:`node_update` (and may override :meth:`room`, :meth:`on_tick`)."""

    type_name = "inrm"
    needs_ticks = False  # keep over-committed nodes beating, call on_tick

    def __init__(self, spec: SchedulerSpec) -> None:
        self.spec = spec
        self.apps: list[SimApp] = []
        self.used = [0, 0]
        self.am_used = [0, 0]
        self.containers = 0
        self.rm: RMCore
        self.sim: Simulation | None = None
        self._ticking = False

    # --- wiring -------------------------------------------------------------------
    def attach(self, rm: RMCore) -> None:
        self.rm = rm

    def bind(self, sim: Simulation) -> None:
        """The simulation whose NMs this scheduler may signal (container kills)."""
        self.sim = sim

    # --- apps ---------------------------------------------------------------------
    def add_app(self, app: SimApp) -> None:
        app.queue = "default"
        app.priority = self.rm.app_priority(app.job.priority)
        app.label = ""
        self.apps.append(app)
        self.app_added(app)
        self.rm.activate(app)
        if self.needs_ticks and not self._ticking:
            self._ticking = True
            self.rm.events.at(self.rm.events.now, self._tick)

    def app_added(self, app: SimApp) -> None:
        """Hook: a new app joined the pool (before its AM is asked for)."""

    def app_done(self, app: SimApp) -> None:
        if app in self.apps:
            self.apps.remove(app)

    def pending(self) -> list[SimApp]:
        """Apps with pending asks, in submission order."""
        return [a for a in self.apps if a.pending_total > 0]

    # --- the AM limit -------------------------------------------------------------
    def am_allowed(self, app: SimApp) -> bool:
        """Whether the app's AM may start now (``maximum_am_resource_percent``)."""
        if self.am_used[0] == 0:
            return True
        total_mem, _ = self.rm.partition_total("")
        return self.am_used[0] + app.am_mem <= self.spec.maximum_am_resource_percent * total_mem

    def asks_of(self, app: SimApp) -> Iterable[Ask]:
        """The app's pending asks, most urgent first, its AM only within the AM limit."""
        for priority in app.pending_priorities():
            if priority == PRIORITY_AM and not self.am_allowed(app):
                continue
            yield app.asks[priority]

    # --- heartbeat ----------------------------------------------------------------
    def node_update(self, node: SimNode) -> None:
        """One NodeManager heartbeat: the paper's algorithm places containers on ``node``."""
        raise NotImplementedError

    # --- placing ------------------------------------------------------------------
    def fits_free(self, mem: float, vc: float, node: SimNode) -> bool:
        return self.rm.calc.fits(int(mem), int(vc), node.free_mem, node.free_vc)

    def place(self, app: SimApp, ask: Ask, node: SimNode) -> SimContainer:
        """One container of ``ask`` on ``node``, for its best-placed task."""
        return self.rm.allocate(app, ask, node, locality_on(ask, node))

    # --- heartbeats for over-committed nodes ---------------------------------------
    def room(self, node: SimNode) -> bool:
        """Whether ``node`` may take a container although the RM thinks it full."""
        return False

    def on_tick(self, now: int) -> None:
        """Hook: called once per heartbeat interval while apps are in the pool."""

    def _tick(self) -> None:
        rm = self.rm
        if not self.apps:
            self._ticking = False
            return
        self.on_tick(rm.events.now)
        if rm.pending_total > 0:
            for node in rm.nodes:
                if (not node.hb_armed and node.state == "RUNNING" and self.room(node)
                        and not self.fits_free(rm.minimum.memory_mb, rm.minimum.vcores, node)):
                    rm.arm(node)
        rm.events.at(rm.events.now + rm.heartbeat_ms, self._tick)

    # --- accounting ---------------------------------------------------------------
    def on_allocate(self, c: SimContainer) -> None:
        self.used[0] += c.mem
        self.used[1] += c.vc
        self.containers += 1
        if c.is_am:
            self.am_used[0] += c.mem
            self.am_used[1] += c.vc

    def on_release(self, c: SimContainer) -> None:
        self.used[0] -= c.mem
        self.used[1] -= c.vc
        self.containers -= 1
        if c.is_am:
            self.am_used[0] -= c.mem
            self.am_used[1] -= c.vc

    def headroom(self, app: SimApp) -> tuple[int, int]:
        free_m, free_v = self.rm.partition_free("")
        return max(0, free_m), max(0, free_v)

    # --- levers the papers' schedulers do not offer ----------------------------------
    def move_app(self, app: SimApp, queue: str) -> str:
        raise ValueError(f"the {self.type_name} scheduler has one pool of apps (no queues)")

    def set_priority(self, app: SimApp, priority: int) -> int:
        app.priority = self.rm.app_priority(priority)
        return app.priority

    def conf(self) -> dict[str, str]:
        return {}

    def update_conf(self, updates: Mapping[str, str | None], dry_run: bool = False) -> None:
        raise ValueError("scheduler configuration mutation needs the CapacityScheduler")

    def queue_path(self, app: SimApp) -> str:
        return "root.default"

    def queues(self) -> list[QueueView]:
        tm, tv = self.rm.partition_total("")
        share = self.rm.calc.share(self.used[0], self.used[1], tm, tv) * 100
        return [QueueView(
            path="root.default", name="default", parent="", is_leaf=True, capacity=100.0,
            max_capacity=100.0, absolute_capacity=100.0, absolute_max_capacity=100.0,
            used_mem=self.used[0], used_vc=self.used[1], used_capacity=share,
            absolute_used_capacity=share, num_apps=len(self.apps), num_active=len(self.apps),
            num_pending=0, num_containers=self.containers,
            pending_containers=sum(a.pending_total for a in self.apps), node_labels=(),
            children=(), ordering_policy=self.type_name)]
