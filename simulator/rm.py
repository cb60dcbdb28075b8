"""The simulated ResourceManager: node heartbeats, asks, allocation and release.

Heartbeats are event-driven, not a loop over every node every second. Node i
heartbeats on its own grid ``phase_i + k * interval`` (YARN's NMs do not beat
together), but only while a beat can change something: it has finished
containers to report, a reservation to fulfil, or room for the minimum
allocation while some app has a pending ask. A node that beats with nothing to
do goes idle (if it has room) or is parked (if full: its next completion wakes
it). A new ask starts a *sweep*: the idle nodes beat one after another on
their own grid times, each then keeping its own chain while it has work; the
sweep stops as soon as no ask is left, so a one-container ask on a 600-node
cluster costs one beat, not 600. This is exact for the scheduler: a beat
that would find no ask changes nothing, and YARN's CapacityScheduler ignores a
heartbeat from a node without room for the minimum allocation before any
queue or app sees it, so no scheduling opportunity is lost or invented.

Finished containers are released when their node next heartbeats (the NM
reports completions in its heartbeat); containers the RM itself kills (app
kill, over-commit timeout) are released at once, as ``RMContainerImpl`` does.
"""

from __future__ import annotations

import bisect
from typing import Protocol

from yarn_advisor.simulator.apps import (
    LIVE_STATES,
    NODE_LOCAL,
    OFF_SWITCH,
    PRIORITY_AM,
    RACK_LOCAL,
    Ask,
    Reservation,
    SimApp,
    SimContainer,
    SimTask,
    live_count,
)
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.events import EventQueue, next_aligned
from yarn_advisor.simulator.schedulers.base import Calculator, Scheduler
from yarn_advisor.simulator.spec import Res


class Listener(Protocol):
    """Who hears about containers (the AM and NM side of the simulation)."""

    def container_allocated(self, container: SimContainer) -> None: ...

    def container_released(self, container: SimContainer) -> None: ...


class RMCore:
    """Nodes, apps, pending asks, and the allocation primitives schedulers call."""

    def __init__(self, events: EventQueue, nodes: list[SimNode], scheduler: Scheduler,
                 calculator: Calculator, minimum: Res, maximum: Res, heartbeat_ms: int,
                 max_priority: int, labels: tuple[str, ...], cluster_ts: int) -> None:
        self.events = events
        self.nodes = nodes
        self.node_by_id = {n.id: n for n in nodes}
        self.node_by_host = {n.host: n for n in nodes}
        self.scheduler = scheduler
        self.calc = calculator
        self.minimum = minimum
        self.maximum = maximum
        self.heartbeat_ms = heartbeat_ms
        self.max_priority = max_priority
        self.cluster_labels: set[str] = set(labels) | {n.label for n in nodes if n.label}
        self.cluster_ts = cluster_ts
        self.apps: dict[str, SimApp] = {}
        self.pending_total = 0
        self.container_seq = 0
        self.idle: dict[SimNode, None] = {}
        self._idle_order: list[tuple[int, int]] = []  # (heartbeat phase, node index)
        self._sweep_armed = False
        for n in nodes:
            self._idle_add(n)
        self.last_beat: dict[SimNode, int] = {}
        self.listener: Listener | None = None
        # QueueMetrics Aggregate*ContainersAllocated per queue path:
        # [all, node-local, rack-local, off-switch]
        self.aggregates: dict[str, list[int]] = {}
        self.standby = False
        self.last_allocated: SimContainer | None = None
        self._totals: dict[str, tuple[int, int]] | None = None
        self._running: int | None = None
        self.alloc_by_label: dict[str, list[int]] = {}
        scheduler.attach(self)

    # --- cluster size -----------------------------------------------------------
    def partition_total(self, label: str) -> tuple[int, int]:
        """Schedulable resource of the running nodes of one partition ('' = default)."""
        if self._totals is None:
            totals: dict[str, tuple[int, int]] = {}
            for n in self.nodes:
                if n.state == "RUNNING":
                    m, v = totals.get(n.label, (0, 0))
                    totals[n.label] = (m + n.total_mem, v + n.total_vc)
            self._totals = totals
        return self._totals.get(label, (0, 0))

    def partition_free(self, label: str) -> tuple[int, int]:
        tm, tv = self.partition_total(label)
        used = self.alloc_by_label.get(label, [0, 0])
        return tm - used[0], tv - used[1]

    def topology_changed(self) -> None:
        """A node's size, label or state changed: drop cached totals, wake it."""
        self._totals = None
        self._running = None
        for n in self.nodes:
            if n.hb_armed:
                continue
            if self._wants_beat(n):
                self.arm(n)
            elif self._has_room(n):
                self._idle_add(n)
            else:
                self._idle_remove(n)

    @property
    def running_nodes(self) -> int:
        if self._running is None:
            self._running = sum(1 for n in self.nodes if n.state == "RUNNING")
        return self._running

    # --- asks -------------------------------------------------------------------
    def normalize(self, mem: int, vc: int) -> tuple[int, int]:
        """``SchedulerUtils.normalizeRequest``: round up to the minimum allocation,
        cap at the maximum. ``DefaultResourceCalculator.normalize`` keeps memory
        only, so every container then holds one vcore."""
        mn, mx = self.minimum, self.maximum
        step = mn.memory_mb
        if step > 0:
            mem = -(-max(mem, step) // step) * step
        mem = min(mem, mx.memory_mb)
        if not self.calc.dominant:
            return mem, 1 if mem > 0 else 0
        if mn.vcores > 0:
            vc = -(-max(vc, mn.vcores) // mn.vcores) * mn.vcores
        return mem, min(vc, mx.vcores)

    def add_ask(self, app: SimApp, priority: int, mem: int, vc: int, task: SimTask,
                locality: bool = True) -> None:
        """Ask for a container for ``task`` (on its hosts and racks too, unless
        ``locality`` is False: then on ``*`` only)."""
        mem, vc = self.normalize(mem, vc)
        ask = app.ask_for(priority, mem, vc)
        ask.add(task, locality)
        task.state = "PENDING"
        task.requested_ms = self.events.now
        app.pending_total += 1
        self.pending_total += 1
        if self.idle and not self._sweep_armed:
            self._schedule_sweep(None)

    def remove_ask(self, app: SimApp, task: SimTask) -> bool:
        for ask in app.asks.values():
            if task in ask.any:
                ask.remove(task)
                app.pending_total -= 1
                self.pending_total -= 1
                return True
        return False

    def activate(self, app: SimApp) -> None:
        """The scheduler admits the app: its AM container is asked for."""
        app.activated = True
        app.state = "ACCEPTED"
        self.add_ask(app, PRIORITY_AM, app.am_mem, app.am_vc, app.am_task)

    def clear_asks(self, app: SimApp) -> None:
        self.pending_total -= app.pending_total
        app.pending_total = 0
        app.asks.clear()

    # --- heartbeats -------------------------------------------------------------
    def _idle_add(self, node: SimNode) -> None:
        if node not in self.idle:
            self.idle[node] = None
            bisect.insort(self._idle_order, (node.hb_phase, node.index))

    def _idle_remove(self, node: SimNode) -> None:
        if node in self.idle:
            del self.idle[node]
            i = bisect.bisect_left(self._idle_order, (node.hb_phase, node.index))
            del self._idle_order[i]

    def _schedule_sweep(self, after: tuple[int, int] | None) -> None:
        """The next idle node on the heartbeat grid beats, while asks remain
        (``after``: the key of the node just swept, to go on past it)."""
        order = self._idle_order
        if self._sweep_armed or not order or self.pending_total <= 0:
            return
        now = self.events.now
        hb = self.heartbeat_ms
        i = bisect.bisect_left(order, (now % hb, -1)) if after is None else \
            bisect.bisect_right(order, after)
        fallback: tuple[int, SimNode] | None = None
        for step in range(len(order)):
            phase, index = order[(i + step) % len(order)]
            node = self.nodes[index]
            same_ms = after is not None and phase == after[0] and i + step < len(order)
            t = now if same_ms else next_aligned(now if after is None else now + 1, phase, hb)
            if self.last_beat.get(node) != t:
                fallback = (t, node)
                break
            if fallback is None:  # it beat this very ms: its next grid time, unless
                fallback = (next_aligned(t + 1, phase, hb), node)  # another comes first
        if fallback is not None:
            self._sweep_armed = True
            self.events.at(fallback[0], self._sweep, fallback[1])

    def _sweep(self, node: SimNode) -> None:
        self._sweep_armed = False
        if node in self.idle and not node.hb_armed:
            self._idle_remove(node)
            node.hb_armed = True
            self._heartbeat(node)
        self._schedule_sweep((node.hb_phase, node.index))

    def _has_room(self, node: SimNode) -> bool:
        return node.state == "RUNNING" and self.calc.fits(
            self.minimum.memory_mb, self.minimum.vcores, node.free_mem, node.free_vc)

    def arm(self, node: SimNode) -> None:
        """Make sure ``node`` heartbeats at its next grid time."""
        if node.hb_armed:
            return
        node.hb_armed = True
        self._idle_remove(node)
        now = self.events.now
        if self.last_beat.get(node) == now:
            now += 1
        self.events.at(next_aligned(now, node.hb_phase, self.heartbeat_ms), self._heartbeat, node)

    def _wants_beat(self, node: SimNode) -> bool:
        if node.completed or node.reserved is not None:
            return True
        return self.pending_total > 0 and self._has_room(node)

    def _heartbeat(self, node: SimNode) -> None:
        # hb_armed stays True while the beat runs: releases and asks made now are
        # served by this beat or the next one of the same chain, never a second chain
        self.last_beat[node] = self.events.now
        if node.completed:
            done = node.completed
            node.completed = []
            for c in done:
                if c.state != "COMPLETE":
                    self.release(c)
        if node.state == "RUNNING" and not self.standby and (
                self.pending_total > 0 or node.reserved is not None):
            self.scheduler.node_update(node)
        if self._wants_beat(node):
            self.events.at(self.events.now + self.heartbeat_ms, self._heartbeat, node)
        else:
            node.hb_armed = False
            if self._has_room(node):
                self._idle_add(node)

    def report_completed(self, container: SimContainer) -> None:
        """The container exited on its node; the RM learns at the next heartbeat."""
        container.node.completed.append(container)
        self.arm(container.node)

    # --- allocation -------------------------------------------------------------
    def allocate(self, app: SimApp, ask: Ask, node: SimNode, locality: str,
                 from_reservation: bool = False) -> SimContainer:
        """Give ``node``'s room to one of the app's pending tasks at ``ask``'s priority."""
        task = ask.pick(node, locality)
        ask.remove(task)
        app.pending_total -= 1
        self.pending_total -= 1
        now = self.events.now
        self.container_seq += 1
        c = SimContainer(app.container_id(), self.container_seq, app, node, ask.mem, ask.vc,
                         ask.priority, task, locality, now)
        node.alloc_mem += ask.mem
        node.alloc_vc += ask.vc
        lab = self.alloc_by_label.setdefault(node.label, [0, 0])
        lab[0] += ask.mem
        lab[1] += ask.vc
        node.containers[c.id] = c
        app.containers[c.id] = c
        live_count(c, +1)
        app.alloc_mem += ask.mem
        app.alloc_vc += ask.vc
        task.container = c
        task.state = "ASSIGNED"
        app.locality_counts[locality] += 1
        # RegularContainerAllocator.doAllocation: reset the missed opportunities
        # on a first node-local or rack-local allocation (rack-locality-full-reset)
        if not from_reservation and locality != OFF_SWITCH:
            app.missed[ask.priority] = 0
        agg = self.aggregates.setdefault(self.scheduler.queue_path(app), [0, 0, 0, 0])
        agg[0] += 1
        agg[{NODE_LOCAL: 1, RACK_LOCAL: 2}.get(locality, 3)] += 1
        self.scheduler.on_allocate(c)
        self.last_allocated = c
        if self.listener is not None:
            self.listener.container_allocated(c)
        return c

    def reserve(self, app: SimApp, ask: Ask, node: SimNode, locality: str) -> None:
        node.reserved = Reservation(app, ask.priority, ask.mem, ask.vc, node, locality)
        app.reservations[ask.priority] = app.reservations.get(ask.priority, 0) + 1

    def unreserve(self, node: SimNode) -> None:
        res = node.reserved
        if res is None:
            return
        node.reserved = None
        n = res.app.reservations.get(res.priority, 0) - 1
        if n > 0:
            res.app.reservations[res.priority] = n
        else:
            res.app.reservations.pop(res.priority, None)

    def unreserve_one(self, app: SimApp, priority: int) -> bool:
        """Drop one of the app's reservations at ``priority`` (continuous reservation
        looking: an allocation elsewhere replaces it)."""
        for node in self.nodes:
            res = node.reserved
            if res is not None and res.app is app and res.priority == priority:
                self.unreserve(node)
                return True
        return False

    def release(self, c: SimContainer) -> None:
        """Return a container's resources to its node, app and queue."""
        if c.state == "COMPLETE":
            return
        if c.state in LIVE_STATES:
            live_count(c, -1)
        c.state = "COMPLETE"
        node, app = c.node, c.app
        if node.containers.pop(c.id, None) is not None:
            node.alloc_mem -= c.mem
            node.alloc_vc -= c.vc
            lab = self.alloc_by_label.setdefault(node.label, [0, 0])
            lab[0] -= c.mem
            lab[1] -= c.vc
        if app.containers.pop(c.id, None) is not None:
            app.alloc_mem -= c.mem
            app.alloc_vc -= c.vc
            held = self.events.now - c.allocated_ms
            app.memory_ms += c.mem * held
            app.vcore_ms += c.vc * held
            self.scheduler.on_release(c)
        c.finished_ms = c.finished_ms or self.events.now
        if self.listener is not None:
            self.listener.container_released(c)
        if node.state == "RUNNING" and not node.hb_armed:
            if self._wants_beat(node):
                self.arm(node)
            elif self._has_room(node):
                self._idle_add(node)

    def relabel(self, node: SimNode, label: str) -> None:
        """``replace-labels``: the node moves partition with its containers."""
        if node.label == label:
            return
        held = list(node.containers.values())
        for c in held:
            self.scheduler.on_release(c)
        old = self.alloc_by_label.setdefault(node.label, [0, 0])
        old[0] -= node.alloc_mem
        old[1] -= node.alloc_vc
        node.label = label
        new = self.alloc_by_label.setdefault(label, [0, 0])
        new[0] += node.alloc_mem
        new[1] += node.alloc_vc
        for c in held:
            self.scheduler.on_allocate(c)
        if node.reserved is not None:
            self.unreserve(node)
        if label:
            self.cluster_labels.add(label)
        self.topology_changed()

    def app_priority(self, requested: int) -> int:
        """``yarn.cluster.max-application-priority`` caps what an app may have."""
        return max(0, min(requested, self.max_priority))
