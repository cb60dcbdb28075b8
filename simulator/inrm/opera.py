"""OPERA as the RM's scheduler (Yang et al.; seed 002, section III).

The algorithms are the advisor's (:mod:`yarn_advisor.advisor.policies.opera.core`
and ``bulk``); here they run where the paper put them, in the RM and the NMs:

* every heartbeat of node i (Alg 3 with ``reservation: strict``, else Alg 4:
  ``none``, the sidecar's default where YARN keeps its own reservations, means
  Alg 4 here, the paper's multi-chance reservation in the RM): ``GA_i = C_i - sum of the normal
  containers' demands`` (Eq 6), ``OA_i = C_i - sum TU_t`` (Eq 7) less the
  blocked ``BR_i`` under PRESERVE (Eq 4); the next task of the Fair-ordered
  queue (apps by deficit: an equal share ``1/N`` of the cluster minus the
  app's dominant share; an app's requests by priority) is assigned normally if
  it fits GA, else opportunistically if it is *short* and fits OA (Alg 2),
  else reserved on the node;
* every ``monitor_ms`` (YARN's container-monitor interval, 3 s), on each node
  running opportunistic containers, the NodeManager monitor (Alg 1) checks
  the measured use against ``rho * C_i`` (memory first) and, by the relief
  policy, kills the most recently launched opportunistic container; PRESERVE
  scales ``BR_i`` / ``BT_i`` by alpha.

Choices: ``TU_t`` is a running container's use in its current phase (what the
NM measures) and a container allocated but not yet started counts its demand
(else the next heartbeat would hand the same room out again). The paper's
strict ``D_t(r) < X(r)`` (Alg 2) is read as YARN's ``fitsIn`` (``<=``): with
the strict test a node whose free room equals a request could never take it;
the core is fed ``X + eps`` for that. ``C_i`` is the node's schedulable size
for GA/OA and its hardware for the contention check. Opportunistic containers
stay opportunistic until they end (the paper promotes none). Which tasks are
short: :mod:`.eligibility`.
"""

from __future__ import annotations

from dataclasses import dataclass

from yarn_advisor.advisor.policies.opera import core as oc
from yarn_advisor.advisor.policies.opera.bulk import node_update_multi_bulk
from yarn_advisor.advisor.policies.opera.params import Params as OperaParams
from yarn_advisor.simulator.apps import SimApp, SimContainer
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.inrm.base import InRMBase
from yarn_advisor.simulator.inrm.eligibility import Eligibility
from yarn_advisor.simulator.rm import RMCore
from yarn_advisor.simulator.schedulers.base import Calculator
from yarn_advisor.simulator.spec import SchedulerSpec

EPS = 1e-6  # X + EPS: the core's strict D < X becomes D <= X for whole resources
MONITOR_MS = 3000  # yarn.nodemanager.container-monitor.interval-ms
RELIEF = "OPPORTUNISTIC_RELIEF"


@dataclass(slots=True)
class Entry:
    """One request group in the queue: ``left`` units not yet taken this heartbeat."""

    app: SimApp
    priority: int
    task: oc.Task
    left: int


class Queue:
    """GetNextTaskFromQueue over request groups (the ``bulk.Pool`` protocol)."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.i = 0

    def peek(self) -> tuple[oc.Task, int] | None:
        while self.i < len(self.entries) and self.entries[self.i].left <= 0:
            self.i += 1
        if self.i >= len(self.entries):
            return None
        e = self.entries[self.i]
        return e.task, e.left

    def take(self, n: int) -> None:
        self.entries[self.i].left -= n

    def next_task(self) -> oc.Task | None:
        head = self.peek()
        if head is None:
            return None
        self.take(1)
        return head[0]


class OperaScheduler(InRMBase):
    """OPERA (see the module docstring)."""

    needs_ticks = True

    def __init__(self, spec: SchedulerSpec, eligibility: Eligibility,
                 params: OperaParams | None = None, monitor_ms: int = MONITOR_MS) -> None:
        super().__init__(spec)
        self.params = params or OperaParams()
        self.eligibility = eligibility
        self.monitor_ms = monitor_ms
        self.type_name = f"inrm:opera-{self.params.relief_policy.lower()}"
        self.normal: dict[SimNode, list[float]] = {}
        self.opportunistic: dict[SimContainer, None] = {}  # allocation order: newest last
        self.blocks: dict[SimNode, oc.Block] = {}
        self.reserved: dict[SimNode, list[oc.Reserved]] = {}
        self.claims: dict[str, int] = {}  # request key -> units reserved on some node
        self.keys: dict[str, tuple[SimApp, int]] = {}
        self._next_monitor = 0
        self._placing_opportunistic = False

    def attach(self, rm: RMCore) -> None:
        super().attach(rm)
        rm.calc = Calculator(dominant=True)  # the Fair scheduler's Resources.fitsIn

    # --- the queue --------------------------------------------------------------------
    def queue(self) -> list[Entry]:
        """Pending request groups, Fair-ordered, less what reservations claim."""
        tm, tv = self.rm.partition_total("")
        apps = self.pending()
        fair = 1.0 / len(apps) if apps else 0.0

        def deficit(a: SimApp) -> float:
            share = max(a.alloc_mem / tm if tm else 0.0, a.alloc_vc / tv if tv else 0.0)
            return fair - share

        out: list[Entry] = []
        for app in sorted(apps, key=lambda a: (-deficit(a), a.seq)):
            for ask in self.asks_of(app):
                key = f"{app.id}#{ask.priority}"
                left = ask.count - self.claims.get(key, 0)
                if left <= 0:
                    continue
                self.keys[key] = (app, ask.priority)
                task = oc.Task(key, (float(ask.mem), float(ask.vc)),
                               self.eligibility.short(app, ask))
                out.append(Entry(app, ask.priority, task, left))
        return out

    # --- GA, OA ---------------------------------------------------------------------
    def usage(self, node: SimNode) -> oc.Vec:
        """``sum TU_t``: running containers' phase use, allocated ones their demand."""
        mem = cpu = 0.0
        for c in node.containers.values():
            if c.state == "RUNNING":
                ph = c.task.phase
                mem += ph.memory_mb
                cpu += ph.cpu
            elif c.state == "ALLOCATED":
                mem += c.mem
                cpu += c.vc
        return mem, cpu

    def available(self, node: SimNode) -> tuple[oc.Vec, oc.Vec]:
        """(GA_i, OA_i) of Eq 6 and Eq 7 (Eq 4 under PRESERVE)."""
        cap = (float(node.total_mem), float(node.total_vc))
        normal = self.normal.get(node, [0.0, 0.0])
        ga = (cap[0] - normal[0], cap[1] - normal[1])
        blocked = self.block(node).br if self.params.relief_policy == "PRESERVE" else oc.ZERO
        return ga, oc.opportunistic_available(cap, self.usage(node), blocked)

    def block(self, node: SimNode) -> oc.Block:
        b = self.blocks.get(node)
        if b is None:
            b = self.blocks[node] = self.params.floor
        return b

    def room(self, node: SimNode) -> bool:
        ga, oa = self.available(node)
        least = (self.rm.minimum.memory_mb, self.rm.minimum.vcores)
        return not oc.below(ga, least) or not oc.below(oa, least)

    # --- heartbeat (Alg 3 / Alg 4) ------------------------------------------------------
    def node_update(self, node: SimNode) -> None:
        reserved = self.reserved.setdefault(node, [])
        self._drop_stale(reserved)
        entries = self.queue()
        if not entries and not reserved:
            return
        demands = [e.task.demand for e in entries] + [r.task.demand for r in reserved]
        least = (min(d[0] for d in demands), min(d[1] for d in demands))
        ga, oa = self.available(node)
        slot = oc.Slot((ga[0] + EPS, ga[1] + EPS), (oa[0] + EPS, oa[1] + EPS))
        before = {id(r): r for r in reserved}
        pool = Queue(entries)
        p = self.params
        if p.reservation != "strict":
            node_update_multi_bulk(slot, reserved, pool, least, p.eps_r, p.eps_s)
        else:
            oc.node_update_strict(slot, reserved, pool.next_task, least)
        after = {id(r) for r in reserved}
        for rid, r in before.items():  # by identity: equal Reserved entries are distinct claims
            if rid not in after:
                self.claims[r.task.key] -= 1
        for r in reserved:
            if id(r) not in before:
                self.claims[r.task.key] = self.claims.get(r.task.key, 0) + 1
        for task, kind in slot.assigned:
            app, priority = self.keys[task.key]
            ask = app.asks.get(priority)
            if ask is None or ask.count == 0 or app.is_done:
                continue
            self._placing_opportunistic = kind == "opportunistic"
            self.place(app, ask, node)
            self._placing_opportunistic = False

    def _drop_stale(self, reserved: list[oc.Reserved]) -> None:
        for r in list(reserved):
            app, priority = self.keys[r.task.key]
            ask = app.asks.get(priority)
            if app.is_done or ask is None or ask.count < self.claims.get(r.task.key, 0):
                reserved.remove(r)
                self.claims[r.task.key] -= 1

    # --- the NodeManager monitor (Alg 1) -------------------------------------------------
    def on_tick(self, now: int) -> None:
        if now < self._next_monitor:
            return
        self._next_monitor = now + self.monitor_ms
        p = self.params
        floor = p.floor
        on: dict[SimNode, list[SimContainer]] = {}
        for c in self.opportunistic:  # launched ones: the NM knows no other
            if c.state == "RUNNING":
                on.setdefault(c.node, []).append(c)
        for node in set(on) | {n for n, b in self.blocks.items() if b.last_relief is not None}:
            mine = on.get(node, [])
            relief = oc.monitor((float(node.use_mem), node.use_cpu),
                                (float(node.real_mem), node.real_cpu), bool(mine),
                                p.relief_policy, self.block(node), now, p.rho, p.alpha, floor,
                                p.bt_max_s * 1000.0)
            self.blocks[node] = relief.block
            if relief.kill and mine and self.sim is not None:
                self.sim.kill_container(max(mine, key=lambda c: c.seq), RELIEF)
        self.eligibility.observe(now, [c for n in self.rm.nodes for c in n.containers.values()
                                       if c.state == "RUNNING" and not c.is_am])

    # --- accounting ---------------------------------------------------------------------
    def on_allocate(self, c: SimContainer) -> None:
        super().on_allocate(c)
        self.eligibility.allocated(c)
        if self._placing_opportunistic:
            self.opportunistic[c] = None
        else:
            n = self.normal.setdefault(c.node, [0.0, 0.0])
            n[0] += c.mem
            n[1] += c.vc

    def on_release(self, c: SimContainer) -> None:
        super().on_release(c)
        self.eligibility.released(c)
        if c in self.opportunistic:
            del self.opportunistic[c]
        else:
            n = self.normal.setdefault(c.node, [0.0, 0.0])
            n[0] -= c.mem
            n[1] -= c.vc

    def app_done(self, app: SimApp) -> None:
        super().app_done(app)
        for reserved in self.reserved.values():
            for r in list(reserved):
                if self.keys[r.task.key][0] is app:
                    reserved.remove(r)
                    self.claims[r.task.key] -= 1
