"""YARN's CapacityScheduler (hadoop-yarn-server-resourcemanager 3.4.2), simulated.

What is kept, with the classes it follows:

- ``CapacityScheduler.allocateContainersToNode``: on a heartbeat a reserved
  node only tries its reservation; otherwise containers are assigned one at a
  time while the node has room for the minimum allocation, at most one
  off-switch container (``per-node-heartbeat.maximum-offswitch-assignments``)
  and ``per-node-heartbeat.maximum-container-assignments`` (100; -1 no limit)
  in all per heartbeat, one only with ``multiple-assignments-enabled`` false
  (``canAllocateMore``), stopping at a reservation;
- ``ParentQueue`` with ``PriorityUtilizationQueueOrderingPolicy``: leaf queues
  that can reach the node's partition are offered the node least used
  (relative to their guaranteed capacity) first;
- ``AbstractLeafQueue.assignContainers``: the queue stops at its maximum
  capacity (``canAssignToThisQueue``/headroom), apps go in
  ``FifoOrderingPolicy`` order (application priority, then submission), an
  app over its user limit (``UsersManager.computeUserLimit``: at most
  ``capacity x user-limit-factor``, checked as used > limit so a user may pass
  it by one container) is passed over, an app skipped for locality lets the
  next one try (``CSAssignment.SkippedType.OTHER``);
- ``activateApplications``: an app's AM is asked for only when the queue's
  and the user's AM usage stays under ``maximum-am-resource-percent`` (of the
  queue's usable resource, and of its guaranteed share for the user); the
  first app of a queue is always activated;
- node labels as exclusive partitions: a node with a label serves only apps
  whose label expression names it, in queues that may access it;
- ``yarn.cluster.max-application-priority`` caps app priorities;
- precision mode's plug-in (``plugin``, :mod:`yarn_advisor.simulator.plugin`):
  its allocator's ``precheckNode`` at each (app, priority, node) attempt and
  its ``OrderingPolicy`` in every leaf queue.

Not modelled: hierarchies deeper than root.leaf, preemption, the starvation
term of re-reservation, non-exclusive labels, absolute-resource capacities.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from yarn_advisor.advisor.model.mapping_rules import placement
from yarn_advisor.simulator.apps import OFF_SWITCH, SimApp, SimContainer
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.schedulers.allocator import (
    Locality,
    Outcome,
    Precheck,
    fulfil_reservation,
    try_app_on_node,
)
from yarn_advisor.simulator.schedulers.base import QueueView
from yarn_advisor.simulator.schedulers.capacity_conf import CSConf, LeafConf, initial_map, parse
from yarn_advisor.simulator.spec import SchedulerSpec

if TYPE_CHECKING:
    from yarn_advisor.simulator.rm import RMCore

_ZERO = (0, 0)


def _vec() -> list[int]:
    return [0, 0]


class LeafQueue:
    """A leaf queue's apps and usage (per partition, per user)."""

    def __init__(self, conf: LeafConf) -> None:
        self.conf = conf
        self.active: list[SimApp] = []
        self.pending: list[SimApp] = []
        self.dirty = False
        self.used: dict[str, list[int]] = {}
        self.user_used: dict[tuple[str, str], list[int]] = {}
        self.am_used: dict[str, list[int]] = {}
        self.user_am_used: dict[tuple[str, str], list[int]] = {}
        self.containers = 0

    def ordered(self, plugin: Plugin | None = None) -> list[SimApp]:
        """``FifoOrderingPolicy``: higher application priority first, then submission;
        with the plug-in's ordering policy, its rank first."""
        if self.dirty:
            if plugin is None:
                self.active.sort(key=lambda a: (-a.priority, a.seq))
            else:
                self.active.sort(key=lambda a: (plugin.rank(a), -a.priority, a.seq))
            self.dirty = False
        return self.active

    def u(self, label: str) -> list[int]:
        v = self.used.get(label)
        if v is None:
            v = self.used[label] = _vec()
        return v


class Plugin(Precheck, Protocol):
    """Precision mode's plug-in as the scheduler calls it (simulator/plugin.py)."""

    def rank(self, app: SimApp) -> tuple[int, int]: ...

    def allocated(self, app: SimApp, priority: int) -> None: ...

    def order_version(self) -> object: ...


class CapacityScheduler:
    """The CapacityScheduler over :class:`~yarn_advisor.simulator.rm.RMCore`."""

    type_name = "capacityScheduler"
    plugin: Plugin | None = None  # precision mode: the RM plug-in (simulator/plugin.py)
    _order_seen: object = None

    def __init__(self, spec: SchedulerSpec) -> None:
        self._map = initial_map(spec)
        self.cs: CSConf = parse(self._map)
        self.leaves: dict[str, LeafQueue] = {q.name: LeafQueue(q) for q in self.cs.leaves}
        self.loc = Locality(self.cs.node_locality_delay, self.cs.rack_locality_additional_delay)
        self.rm: RMCore

    def attach(self, rm: RMCore) -> None:
        self.rm = rm

    # --- apps ---------------------------------------------------------------------
    def _leaf(self, queue: str) -> LeafQueue:
        name = queue[5:] if queue.startswith("root.") else queue
        leaf = self.leaves.get(name)
        if leaf is None:
            raise ValueError(f"queue {queue!r} does not exist (leaf queues: "
                             f"{', '.join(self.leaves)})")
        return leaf

    def add_app(self, app: SimApp) -> None:
        placed = placement(self._map, app.name, app.job.user, app.queue,
                           lambda q: q.rsplit(".", 1)[-1] in self.leaves)
        if placed is not None:
            app.queue = placed  # the JSON mapping rules place it at submission
        leaf = self._leaf(app.queue)
        if leaf.conf.state != "RUNNING":
            raise ValueError(f"queue {leaf.conf.path} is {leaf.conf.state}")
        app.queue = leaf.conf.name
        app.priority = self.rm.app_priority(app.job.priority or leaf.conf.default_priority)
        app.label = app.job.node_label or leaf.conf.default_label
        if app.label and not leaf.conf.accessible(app.label):
            raise ValueError(f"queue {leaf.conf.path} cannot access node label {app.label!r}")
        leaf.pending.append(app)
        self._activate(leaf)

    def app_done(self, app: SimApp) -> None:
        leaf = self.leaves.get(app.queue)
        if leaf is None:
            return
        if app in leaf.pending:
            leaf.pending.remove(app)
        if app in leaf.active:
            leaf.active.remove(app)
            self._am_add(leaf, app, -1)
        self._activate(leaf)

    def _am_add(self, leaf: LeafQueue, app: SimApp, sign: int) -> None:
        for vec in (leaf.am_used.setdefault(app.label, _vec()),
                    leaf.user_am_used.setdefault((app.user, app.label), _vec())):
            vec[0] += sign * app.am_mem
            vec[1] += sign * app.am_vc

    def _am_limits(self, leaf: LeafQueue, label: str) -> tuple[tuple[int, int], tuple[int, int]]:
        tm, tv = self.rm.partition_total(label)
        pct = leaf.conf.maximum_am_resource_percent
        usable = max(leaf.conf.guaranteed(label), leaf.conf.maximum(label))
        queue_lim = (self._round_up(tm * usable * pct), self._round_up(tv * usable * pct, True))
        ulf = leaf.conf.user_limit_factor
        if ulf == -1:
            return queue_lim, queue_lim
        g = leaf.conf.guaranteed(label)
        users = max(1, len({a.user for a in leaf.active}))
        eff = max(leaf.conf.minimum_user_limit_percent / 100.0, 1.0 / users)
        user_lim = (min(queue_lim[0], self._round_up(tm * g * pct * eff * ulf)),
                    min(queue_lim[1], self._round_up(tv * g * pct * eff * ulf, True)))
        return queue_lim, user_lim

    def _round_up(self, x: float, vcores: bool = False) -> int:
        step = self.rm.minimum.vcores if vcores else self.rm.minimum.memory_mb
        step = max(step, 1)
        return int(-(-x // step) * step)

    def _activate(self, leaf: LeafQueue) -> None:
        """``AbstractLeafQueue.activateApplications``."""
        for app in list(leaf.pending):
            queue_lim, user_lim = self._am_limits(leaf, app.label)
            q = leaf.am_used.get(app.label, _vec())
            u = leaf.user_am_used.get((app.user, app.label), _vec())
            calc = self.rm.calc
            if not calc.fits(q[0] + app.am_mem, q[1] + app.am_vc, *queue_lim) and \
                    any(a.label == app.label for a in leaf.active):
                continue
            if not calc.fits(u[0] + app.am_mem, u[1] + app.am_vc, *user_lim) and \
                    any(a.user == app.user and a.label == app.label for a in leaf.active):
                continue
            leaf.pending.remove(app)
            leaf.active.append(app)
            leaf.dirty = True
            self._am_add(leaf, app, +1)
            self.rm.activate(app)

    # --- heartbeat ----------------------------------------------------------------
    def node_update(self, node: SimNode) -> None:
        """``CapacityScheduler.allocateContainersToNode`` for one heartbeat."""
        if fulfil_reservation(self.rm, node):
            return
        rm = self.rm
        offswitch = assigned = 0
        minimum = rm.minimum
        while rm.calc.fits(minimum.memory_mb, minimum.vcores, node.free_mem, node.free_vc):
            out = self._assign_once(node)
            if out is not Outcome.ALLOCATED:
                return
            assigned += 1
            if rm.last_allocated is not None and rm.last_allocated.locality == OFF_SWITCH:
                offswitch += 1
            cs = self.cs
            if offswitch >= cs.offswitch_per_heartbeat or not cs.assign_multiple or \
                    (cs.max_assign_per_heartbeat != -1 and
                     assigned >= cs.max_assign_per_heartbeat):
                return

    def _assign_once(self, node: SimNode) -> Outcome | None:
        """One container for ``node``: the leaves by used / guaranteed capacity, each
        leaf's apps in its ordering. Nothing an app's attempt does short of an
        allocation or a reservation (which end the call) changes the apps that ask,
        their users or the queue's use, so each leaf's asking apps and user limit are
        found once per call (they were a quarter of a SWIM day's scheduling)."""
        rm = self.rm
        plugin = self.plugin
        if plugin is not None and plugin.order_version() != self._order_seen:
            self._order_seen = plugin.order_version()
            for leaf in self.leaves.values():
                leaf.dirty = True
        label = node.label
        tm, tv = rm.partition_total(label)
        share_of = rm.calc.share
        order = []
        for i, leaf in enumerate(self.leaves.values()):
            conf = leaf.conf
            if conf.state != "RUNNING" or not conf.accessible(label):
                continue
            for a in leaf.active:
                if a.pending_total and a.label == label:
                    break
            else:
                continue
            used = leaf.u(label)
            g = conf.guaranteed(label)
            share = share_of(used[0], used[1], tm, tv)
            ratio = share / g if g > 0 else (float("inf") if share > 0 else 0.0)
            order.append((ratio, -g, i, leaf))
        order.sort(key=lambda x: x[:3])
        greater = rm.calc.greater
        for _, _, _, leaf in order:
            used = leaf.u(label)
            mx = leaf.conf.maximum(label)
            lim_mem, lim_vc = tm * mx, tv * mx
            if not greater(lim_mem, lim_vc, used[0], used[1], tm, tv):
                continue  # used >= maximum capacity
            headroom = (int(lim_mem) - used[0], int(lim_vc) - used[1])
            asking = [a for a in leaf.ordered(plugin) if a.pending_total and a.label == label]
            limit = self._user_limit(leaf, label, tm, tv, asking)
            user_used = leaf.user_used
            for app in asking:
                uu = user_used.get((app.user, label), _ZERO)
                if greater(uu[0], uu[1], limit[0], limit[1], tm, tv):
                    continue  # the user is at its limit
                out = try_app_on_node(rm, app, node, label, headroom, self.loc, plugin)
                if out is Outcome.ALLOCATED or out is Outcome.RESERVED:
                    return out
                if out is Outcome.QUEUE_LIMIT:
                    break
        return None

    def user_limit(self, leaf: LeafQueue, label: str, tm: int, tv: int) -> tuple[float, float]:
        """``UsersManager.computeUserLimit`` for an active user."""
        return self._user_limit(leaf, label, tm, tv, [
            a for a in leaf.active if a.pending_total and a.label == label])

    def _user_limit(self, leaf: LeafQueue, label: str, tm: int, tv: int,
                    asking: list[SimApp]) -> tuple[float, float]:
        """:meth:`user_limit` given the leaf's apps that ask at ``label``."""
        conf = leaf.conf
        mx = conf.maximum(label)
        if conf.user_limit_factor == -1:
            return tm * mx, tv * mx
        calc = self.rm.calc
        mn = self.rm.minimum
        g = conf.guaranteed(label)
        cap = (max(tm * g, mn.memory_mb), max(tv * g, mn.vcores))
        used = leaf.u(label)
        if calc.greater(cap[0], cap[1], used[0], used[1], tm, tv):
            current = cap
        else:
            current = (used[0] + mn.memory_mb, used[1] + mn.vcores)
        users = {a.user for a in asking} or {""}
        active_used = [0, 0]
        for (user, lab), vec in leaf.user_used.items():
            if lab == label and user in users:
                active_used[0] += vec[0]
                active_used[1] += vec[1]
        share = ((active_used[0] + mn.memory_mb) / len(users),
                 (active_used[1] + mn.vcores) / len(users))
        floor = (current[0] * conf.minimum_user_limit_percent / 100,
                 current[1] * conf.minimum_user_limit_percent / 100)
        limit = share if calc.greater(*share, *floor, tm, tv) else floor
        cap_ulf = (cap[0] * conf.user_limit_factor, cap[1] * conf.user_limit_factor)
        if calc.greater(*limit, *cap_ulf, tm, tv):
            limit = cap_ulf
        return limit

    # --- accounting -----------------------------------------------------------------
    def on_allocate(self, c: SimContainer) -> None:
        self._account(c, +1)
        if self.plugin is not None:
            self.plugin.allocated(c.app, c.priority)

    def on_release(self, c: SimContainer) -> None:
        self._account(c, -1)

    def _account(self, c: SimContainer, sign: int) -> None:
        leaf = self.leaves.get(c.app.queue)
        if leaf is None:
            return
        label = c.node.label
        for vec in (leaf.u(label), leaf.user_used.setdefault((c.app.user, label), _vec())):
            vec[0] += sign * c.mem
            vec[1] += sign * c.vc
        leaf.containers += sign

    def headroom(self, app: SimApp) -> tuple[int, int]:
        """``computeUserLimitAndSetHeadroom``: min(user limit - user used, queue
        maximum - queue used, cluster free)."""
        leaf = self.leaves[app.queue]
        label = app.label
        tm, tv = self.rm.partition_total(label)
        um, uv = self.user_limit(leaf, label, tm, tv)
        uu = leaf.user_used.get((app.user, label), _vec())
        qu = leaf.u(label)
        mx = leaf.conf.maximum(label)
        free_m, free_v = self.rm.partition_free(label)
        mem = min(um - uu[0], tm * mx - qu[0], free_m)
        vc = min(uv - uu[1], tv * mx - qu[1], free_v)
        return max(0, int(mem)), max(0, int(vc))

    # --- levers ---------------------------------------------------------------------
    def set_priority(self, app: SimApp, priority: int) -> int:
        app.priority = self.rm.app_priority(priority)
        leaf = self.leaves.get(app.queue)
        if leaf is not None:
            leaf.dirty = True
        return app.priority

    def move_app(self, app: SimApp, queue: str) -> str:
        """``CapacityScheduler.moveApplication``: to a running leaf that can
        reach the app's partition; its usage moves with it."""
        target = self._leaf(queue)
        source = self.leaves[app.queue]
        if target is source:
            return target.conf.path
        if target.conf.state != "RUNNING":
            raise ValueError(f"queue {target.conf.path} is {target.conf.state}")
        if app.label and not target.conf.accessible(app.label):
            raise ValueError(f"queue {target.conf.path} cannot access node label {app.label!r}")
        containers = list(app.containers.values())
        for c in containers:
            self._account(c, -1)
        was_active = app in source.active
        if was_active:
            source.active.remove(app)
            self._am_add(source, app, -1)
        elif app in source.pending:
            source.pending.remove(app)
        app.queue = target.conf.name
        for c in containers:
            self._account(c, +1)
        if was_active:
            target.active.append(app)
            target.dirty = True
            self._am_add(target, app, +1)
        else:
            target.pending.append(app)
        self._activate(source)
        self._activate(target)
        return target.conf.path

    def conf(self) -> dict[str, str]:
        return dict(self._map)

    def update_conf(self, updates: Mapping[str, str | None], dry_run: bool = False) -> None:
        """Apply (or with ``dry_run`` only validate) scheduler-conf updates."""
        new = dict(self._map)
        for key, value in updates.items():
            if key == "yarn.scheduler.capacity.root.queues" and value != new.get(key):
                raise ValueError("queues are added or removed with add-queue/remove-queue, "
                                 "not by editing root.queues")
            if value is None:
                new.pop(key, None)
            else:
                new[key] = str(value)
        parsed = parse(new)  # raises ValueError; nothing changed then
        if parsed.dominant != self.cs.dominant:
            raise ValueError("resource-calculator cannot change while the RM runs")
        if dry_run:
            return
        self._map, self.cs = new, parsed
        for leaf_conf in parsed.leaves:
            self.leaves[leaf_conf.name].conf = leaf_conf
        self.loc = Locality(parsed.node_locality_delay, parsed.rack_locality_additional_delay)
        for leaf in self.leaves.values():
            self._activate(leaf)

    def queue_path(self, app: SimApp) -> str:
        return f"root.{app.queue}"

    def queues(self) -> list[QueueView]:
        rm = self.rm
        tm, tv = rm.partition_total("")
        views = []
        root_used = [0, 0]
        for leaf in self.leaves.values():
            c = leaf.conf
            used = leaf.u("")
            root_used[0] += used[0]
            root_used[1] += used[1]
            share = rm.calc.share(used[0], used[1], tm, tv) * 100
            pending = sum(a.pending_total for a in leaf.active)
            views.append(QueueView(
                path=c.path, name=c.name, parent="root", is_leaf=True, capacity=c.capacity,
                max_capacity=c.maximum_capacity, absolute_capacity=c.capacity,
                absolute_max_capacity=c.maximum_capacity, used_mem=used[0], used_vc=used[1],
                used_capacity=share / c.capacity * 100 if c.capacity else 0.0,
                absolute_used_capacity=share, num_apps=len(leaf.active) + len(leaf.pending),
                num_active=len(leaf.active), num_pending=len(leaf.pending),
                num_containers=leaf.containers, pending_containers=pending,
                node_labels=tuple(sorted(c.labels)) or ("*",), children=(),
                ordering_policy="fifo", default_priority=c.default_priority))
        share = rm.calc.share(root_used[0], root_used[1], tm, tv) * 100
        root = QueueView(
            path="root", name="root", parent="", is_leaf=False, capacity=100.0,
            max_capacity=100.0, absolute_capacity=100.0, absolute_max_capacity=100.0,
            used_mem=root_used[0], used_vc=root_used[1], used_capacity=share,
            absolute_used_capacity=share, num_apps=sum(v.num_apps for v in views),
            num_active=sum(v.num_active for v in views),
            num_pending=sum(v.num_pending for v in views),
            num_containers=sum(v.num_containers for v in views),
            pending_containers=sum(v.pending_containers for v in views), node_labels=("*",),
            children=tuple(v.path for v in views), ordering_policy="utilization")
        return [root, *views]
