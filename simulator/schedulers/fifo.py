"""YARN's FifoScheduler (``scheduler.fifo.FifoScheduler``, 3.4.2), simulated.

Apps are served in submission order (the scheduler keys its apps by id); on
each heartbeat every app, most urgent container priority first, takes as many
node-local containers as fit, then rack-local, then off-switch, with no
locality delay and memory alone deciding the fit (``assignContainer`` divides
the node's unallocated memory by the ask's). No queues but ``default``, no AM
limit, no reservations, no labels; priority changes and moves are refused, as
the FifoScheduler does not support them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from yarn_advisor.simulator.apps import (
    NODE_LOCAL,
    OFF_SWITCH,
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


class FifoScheduler:
    type_name = "fifoScheduler"

    def __init__(self, spec: SchedulerSpec) -> None:
        self.spec = spec
        self.apps: list[SimApp] = []
        self.used = [0, 0]
        self.containers = 0
        self.rm: RMCore

    def attach(self, rm: RMCore) -> None:
        self.rm = rm

    def add_app(self, app: SimApp) -> None:
        if app.queue not in ("default", "root.default"):
            raise ValueError(f"queue {app.queue!r} does not exist (the FifoScheduler has "
                             "only 'default')")
        app.queue = "default"
        app.priority = self.rm.app_priority(app.job.priority)
        app.label = ""
        self.apps.append(app)
        self.rm.activate(app)

    def app_done(self, app: SimApp) -> None:
        if app in self.apps:
            self.apps.remove(app)

    def node_update(self, node: SimNode) -> None:
        minimum = self.rm.minimum.memory_mb
        for app in list(self.apps):
            if node.free_mem < minimum:
                return
            if not app.pending_total or node.label or node.host in app.blacklisted:
                continue
            for priority in app.pending_priorities():
                ask = app.asks[priority]
                self._assign(app, ask, node, NODE_LOCAL, ask.host_count(node.host))
                self._assign(app, ask, node, RACK_LOCAL, ask.rack_count(node.rack))
                self._assign(app, ask, node, OFF_SWITCH, ask.count)

    def _assign(self, app: SimApp, ask: Ask, node: SimNode, locality: str, wanted: int) -> None:
        if wanted <= 0 or ask.count <= 0 or ask.mem <= 0:
            return
        fit = min(wanted, ask.count, node.free_mem // ask.mem)
        for _ in range(fit):
            self.rm.allocate(app, ask, node, locality)

    def on_allocate(self, c: SimContainer) -> None:
        self.used[0] += c.mem
        self.used[1] += c.vc
        self.containers += 1

    def on_release(self, c: SimContainer) -> None:
        self.used[0] -= c.mem
        self.used[1] -= c.vc
        self.containers -= 1

    def headroom(self, app: SimApp) -> tuple[int, int]:
        free_m, free_v = self.rm.partition_free("")
        return max(0, free_m), max(0, free_v)

    def move_app(self, app: SimApp, queue: str) -> str:
        raise ValueError("the FifoScheduler does not support moving applications")

    def set_priority(self, app: SimApp, priority: int) -> int:
        raise ValueError("the FifoScheduler does not support application priorities")

    def conf(self) -> dict[str, str]:
        return {}

    def update_conf(self, updates: Mapping[str, str | None], dry_run: bool = False) -> None:
        raise ValueError("scheduler configuration mutation needs the CapacityScheduler")

    def queue_path(self, app: SimApp) -> str:
        return "root.default"

    def queues(self) -> list[QueueView]:
        tm, tv = self.rm.partition_total("")
        share = self.rm.calc.share(self.used[0], self.used[1], tm, tv) * 100
        pending = sum(a.pending_total for a in self.apps)
        return [QueueView(
            path="root.default", name="default", parent="", is_leaf=True, capacity=100.0,
            max_capacity=100.0, absolute_capacity=100.0, absolute_max_capacity=100.0,
            used_mem=self.used[0], used_vc=self.used[1], used_capacity=share,
            absolute_used_capacity=share, num_apps=len(self.apps), num_active=len(self.apps),
            num_pending=0, num_containers=self.containers, pending_containers=pending,
            node_labels=(), children=(), ordering_policy="fifo")]
