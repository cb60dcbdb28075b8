"""YARN's FairScheduler (``scheduler.fair``, 3.4.2), simulated.

- ``FairScheduler.attemptScheduling``: a reserved node first tries its
  reservation; then containers are assigned one per heartbeat
  (``yarn.scheduler.fair.assignmultiple`` false by default) or, with
  assignmultiple, while one fits.
- ``FSParentQueue`` / ``FSLeafQueue.assignContainer``: child queues and then
  runnable apps are offered the node in the order of the queue's policy:
  ``FairSharePolicy`` (memory used / weight, the furthest below its min share
  first), ``DominantResourceFairnessPolicy`` (dominant share / weight, DRF) or
  ``FifoPolicy`` (priority, then submission); ties by submission.
- ``FSAppAttempt.assignContainer``: most urgent priority first; node-local,
  rack-local, then off-switch, with delay scheduling only when
  ``locality.threshold.node|rack`` (fractions of the cluster's nodes) are set
  (default -1: off); an ask that fits the node but not its free room reserves
  it when at least the reservation threshold (the minimum allocation) and the
  app holds fewer reservations than ``reservable-nodes`` (5 % of the nodes).
- ``FSLeafQueue.canRunAppAM``: an AM starts only while the queue's AMs stay
  under ``maxAMShare`` (0.5) of its fair share.
- ``ComputeFairShares``: the instantaneous fair share of each active queue (one
  with apps) is its weight's part of the cluster (shares are capped by max
  shares only, which are unbounded here, not by demand).

No preemption, max running apps, min/max shares other than unbounded, or
queue hierarchy beyond root.leaf.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from yarn_advisor.simulator.schedulers.allocator import fulfil_reservation
from yarn_advisor.simulator.schedulers.base import QueueView
from yarn_advisor.simulator.spec import QueueSpec, SchedulerSpec

if TYPE_CHECKING:
    from yarn_advisor.simulator.rm import RMCore

RESERVABLE_NODES = 0.05


class FSQueue:
    """A leaf queue: its policy, weight, apps and usage."""

    def __init__(self, spec: QueueSpec, default_policy: str, index: int) -> None:
        self.name = spec.name
        self.weight = spec.weight
        self.policy = spec.policy or default_policy
        self.max_am_share = spec.max_am_share
        self.index = index
        self.apps: list[SimApp] = []
        self.used = [0, 0]
        self.am_used = [0, 0]
        self.containers = 0
        self.fair_share = (0, 0)



class FairScheduler:
    type_name = "fairScheduler"

    def __init__(self, spec: SchedulerSpec) -> None:
        self.spec = spec
        self.leaves = {q.name: FSQueue(q, spec.fair_policy, i) for i, q in enumerate(spec.queues)}
        self.rm: RMCore

    def attach(self, rm: RMCore) -> None:
        self.rm = rm

    def _queue(self, name: str) -> FSQueue:
        q = self.leaves.get(name[5:] if name.startswith("root.") else name)
        if q is None:
            raise ValueError(f"queue {name!r} does not exist (leaf queues: "
                             f"{', '.join(self.leaves)})")
        return q

    def add_app(self, app: SimApp) -> None:
        q = self._queue(app.queue)
        app.queue = q.name
        app.priority = self.rm.app_priority(app.job.priority)
        app.label = ""
        q.apps.append(app)
        self.rm.activate(app)

    def app_done(self, app: SimApp) -> None:
        q = self.leaves.get(app.queue)
        if q is not None and app in q.apps:
            q.apps.remove(app)

    # --- ordering -------------------------------------------------------------------
    def _key(self, policy: str, used: Sequence[int], weight: float, seq: int,
             priority: int = 0) -> tuple[float, ...]:
        tm, tv = self.rm.partition_total("")
        if policy == "fifo":
            return (-priority, seq)
        if policy == "drf":
            share = max(used[0] / tm if tm else 0.0, used[1] / tv if tv else 0.0)
            return (share / weight if weight else float("inf"), seq)
        return (used[0] / weight if weight else float("inf"), seq)

    def _update_fair_shares(self) -> None:
        tm, tv = self.rm.partition_total("")
        active = [q for q in self.leaves.values() if q.apps]
        weights = sum(q.weight for q in active)
        for q in self.leaves.values():
            q.fair_share = (0, 0)
        for q in active:
            f = q.weight / weights if weights > 0 else 1.0 / len(active)
            q.fair_share = (int(tm * f), int(tv * f))

    # --- heartbeat ------------------------------------------------------------------
    def node_update(self, node: SimNode) -> None:
        if node.reserved is not None:
            fulfil_reservation(self.rm, node)
            if node.reserved is not None:
                return
        if node.label:
            return
        self._update_fair_shares()
        while True:
            if not self._assign_once(node) or not self.spec.assign_multiple:
                return

    def _assign_once(self, node: SimNode) -> bool:
        order = sorted((q for q in self.leaves.values() if any(a.pending_total for a in q.apps)),
                       key=lambda q: self._key(q.policy, q.used, q.weight, q.index))
        for q in order:
            apps = sorted((a for a in q.apps if a.pending_total),
                          key=lambda a: self._key(q.policy, (a.alloc_mem, a.alloc_vc), 1.0,
                                                  a.seq, a.priority))
            for app in apps:
                if node.host in app.blacklisted:  # FSLeafQueue: isPlaceBlacklisted
                    continue
                done = self._app_on_node(q, app, node)
                if done is not None:
                    return done
        return False

    def _app_on_node(self, q: FSQueue, app: SimApp, node: SimNode) -> bool | None:
        """True allocated, False reserved (stop), None nothing (next app)."""
        rm = self.rm
        for priority in app.pending_priorities():
            ask = app.asks[priority]
            if priority == PRIORITY_AM and not self._can_run_am(q, app):
                continue
            locality = self._allowed(app, ask, node)
            if locality is None:
                continue
            if rm.calc.fits(ask.mem, ask.vc, node.free_mem, node.free_vc):
                rm.allocate(app, ask, node, locality)
                return True
            if (rm.calc.fits(ask.mem, ask.vc, node.total_mem, node.total_vc)
                    and ask.mem >= rm.minimum.memory_mb and node.reserved is None
                    and app.reservations.get(priority, 0) < ask.count
                    and sum(app.reservations.values()) < max(1, RESERVABLE_NODES * len(rm.nodes))):
                rm.reserve(app, ask, node, locality)
                return False
            return None
        return None

    def _allowed(self, app: SimApp, ask: Ask, node: SimNode) -> str | None:
        """``FSAppAttempt.getAllowedLocalityLevel`` with the node/rack thresholds."""
        n = len(self.rm.nodes)
        missed = app.missed.get(ask.priority, 0)
        if ask.host_count(node.host) > 0:
            app.missed[ask.priority] = 0
            return NODE_LOCAL
        tn, tr = self.spec.locality_threshold_node, self.spec.locality_threshold_rack
        has_locality = ask.unique_locations() > 1
        if has_locality and tn >= 0 and missed < tn * n:
            app.missed[ask.priority] = missed + 1
            return None
        if ask.rack_count(node.rack) > 0:
            return RACK_LOCAL
        if has_locality and tr >= 0 and missed < (tn + tr) * n:
            app.missed[ask.priority] = missed + 1
            return None
        return OFF_SWITCH

    def _can_run_am(self, q: FSQueue, app: SimApp) -> bool:
        if q.max_am_share < 0:
            return True
        share = q.fair_share
        if share[0] == 0:
            share = self.rm.partition_total("")
        lim = (share[0] * q.max_am_share, share[1] * q.max_am_share)
        ok = q.am_used[0] + app.am_mem <= lim[0] and (
            not self.rm.calc.dominant or q.am_used[1] + app.am_vc <= lim[1])
        return ok or q.am_used[0] == 0

    # --- accounting -----------------------------------------------------------------
    def on_allocate(self, c: SimContainer) -> None:
        q = self.leaves.get(c.app.queue)
        if q is None:
            return
        q.used[0] += c.mem
        q.used[1] += c.vc
        q.containers += 1
        if c.is_am:
            q.am_used[0] += c.mem
            q.am_used[1] += c.vc

    def on_release(self, c: SimContainer) -> None:
        q = self.leaves.get(c.app.queue)
        if q is None:
            return
        q.used[0] -= c.mem
        q.used[1] -= c.vc
        q.containers -= 1
        if c.is_am:
            q.am_used[0] -= c.mem
            q.am_used[1] -= c.vc

    def headroom(self, app: SimApp) -> tuple[int, int]:
        """``FSAppAttempt.getHeadroom``: the queue's fair share minus its usage,
        capped by what the cluster has free."""
        self._update_fair_shares()
        q = self.leaves[app.queue]
        free_m, free_v = self.rm.partition_free("")
        mem = min(q.fair_share[0] - q.used[0], free_m)
        vc = min(q.fair_share[1] - q.used[1], free_v)
        return max(0, mem), max(0, vc)

    # --- levers ---------------------------------------------------------------------
    def set_priority(self, app: SimApp, priority: int) -> int:
        app.priority = self.rm.app_priority(priority)
        return app.priority

    def move_app(self, app: SimApp, queue: str) -> str:
        target = self._queue(queue)
        source = self.leaves[app.queue]
        if target is source:
            return f"root.{target.name}"
        held = list(app.containers.values())
        for c in held:
            self.on_release(c)
        source.apps.remove(app)
        app.queue = target.name
        target.apps.append(app)
        for c in held:
            self.on_allocate(c)
        return f"root.{target.name}"

    def conf(self) -> dict[str, str]:
        return {}

    def update_conf(self, updates: Mapping[str, str | None], dry_run: bool = False) -> None:
        raise ValueError("scheduler configuration mutation needs the CapacityScheduler")

    def queue_path(self, app: SimApp) -> str:
        return f"root.{app.queue}"

    def queues(self) -> list[QueueView]:
        self._update_fair_shares()
        tm, tv = self.rm.partition_total("")
        out = []
        for q in self.leaves.values():
            share = self.rm.calc.share(q.used[0], q.used[1], tm, tv) * 100
            out.append(QueueView(
                path=f"root.{q.name}", name=q.name, parent="root", is_leaf=True,
                capacity=0.0, max_capacity=100.0, absolute_capacity=0.0,
                absolute_max_capacity=100.0, used_mem=q.used[0], used_vc=q.used[1],
                used_capacity=share, absolute_used_capacity=share, num_apps=len(q.apps),
                num_active=sum(1 for a in q.apps if a.registered_ms),
                num_pending=sum(1 for a in q.apps if not a.registered_ms),
                num_containers=q.containers,
                pending_containers=sum(a.pending_total for a in q.apps), node_labels=(),
                children=(), ordering_policy=q.policy, fair_share=q.fair_share,
                max_share=(tm, tv)))
        return out
