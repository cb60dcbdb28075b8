"""From a Snapshot to OPERA's inputs: per-node C, GA, usage, opportunistic
containers, and the fair-ordered queue of pending tasks with their eligibility.

* ``C_i`` is the node's capacity before OPERA raised it (kept in state as
  ``base``), else its current total.
* ``OT_i`` (opportunistic tasks): containers of execution type OPPORTUNISTIC,
  and on a node OPERA raised, the containers that do not fit in ``C_i`` when
  the node's containers are stacked oldest first (they run on borrowed
  headroom). ``NT_i`` is the rest; ``GA_i`` is Eq 6 over ``NT_i``.
* ``TU`` (for OA): the NM's aggregated container utilization from the node
  heartbeat (``containersCPUUsage`` is in vcores: the NM scales the
  containers' share of the machine to its configured vcores); without it the
  containers' NM JMX averages (percent of one core -> vcores 1:1); a
  container never measured counts its allocation, less PRISM's phase-aware
  idle headroom of the node when PRISM published one. ``NU`` for the
  contention check is only the *measured* part: no measurement, no check.
* Pending tasks: one task per pending container of the ``'*'`` rows of
  RUNNING/ACCEPTED apps, apps ordered by the Fair-queuing deficit (equal
  share ``1/N`` of the cluster minus the app's dominant share), requests by
  scheduler priority (lower first). A task is eligible (short) only if the
  classifier said so (see :func:`prediction_of`); otherwise it is long.
* Whether vcores count at all: :func:`memory_only`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from yarn_advisor.advisor.model.snapshot import App, Container, Node, Snapshot
from yarn_advisor.advisor.policies.opera.core import Task, Vec
from yarn_advisor.classifiers.model.live import Predictions

ACTIVE = frozenset({"RUNNING", "ACCEPTED"})
INF = math.inf


class NodeIn(NamedTuple):
    """One RUNNING node as OPERA's algorithms see it (a NamedTuple: made for every node
    each cycle, at a third of a frozen dataclass's cost)."""

    node: Node
    partition: str
    base: Vec
    normal_demand: Vec
    usage: Vec
    measured: Vec | None
    usage_source: str
    opportunistic: tuple[Container, ...]  # newest last


def _vec(mem: float, vcores: float) -> Vec:
    return (float(mem), float(vcores))


def _measured(n: Node) -> bool:
    u = n.utilization
    return u is not None and (u.containers_pmem_mb > 0 or u.containers_cpu > 0
                              or n.num_containers == 0)


def unread_nodes(snap: Snapshot) -> frozenset[str]:
    """Nodes whose containers OPERA could not read: when a containers read failed
    (``Snapshot.sources``), those where the RM counts more containers than were read.
    Their young containers (its margin) are unknown, so they lend nothing."""
    if snap.sources.get("containers", True):
        return frozenset()
    seen: dict[str, int] = {}
    for c in snap.containers:
        seen[c.node_id] = seen.get(c.node_id, 0) + 1
    return frozenset(n.id for n in snap.nodes if n.num_containers > seen.get(n.id, 0))


def node_inputs(
    snap: Snapshot, bases: Mapping[str, Vec], headroom: Mapping[str, Vec], settle_s: float = 0.0
) -> list[NodeIn]:
    """Per RUNNING node, sorted by node id (the heartbeat order OPERA simulates).

    A container not RUNNING yet, or started less than ``settle_s`` ago, counts its
    whole allocation in TU on top of what is measured: a process that has just
    started has not grown to its working size, and idle memory read then is not idle
    a few seconds later (lending it is what killed containers on a simulated day of
    Facebook jobs whose tasks use what they ask). A node whose containers were not
    all read (:func:`unread_nodes`) counts as used up to ``C_i``: nothing is lent there."""
    nodes = sorted((n for n in snap.nodes if n.state == "RUNNING"), key=lambda n: n.id)
    unread = unread_nodes(snap)
    need = set(bases) | {n.id for n in nodes if not _measured(n)} | unread
    by_node: dict[str, list[Container]] = {}
    young: dict[str, Vec] = {}
    settled_before = snap.taken_at - settle_s * 1000.0
    for c in snap.containers:  # only where the containers themselves are needed
        if c.node_id in need or c.execution_type == "OPPORTUNISTIC":
            by_node.setdefault(c.node_id, []).append(c)
        if c.state != "RUNNING" or c.started_time > settled_before:
            yc = young.get(c.node_id, (0.0, 0.0))
            young[c.node_id] = (yc[0] + c.allocated.memory_mb, yc[1] + c.allocated.vcores)
    out: list[NodeIn] = []
    for n in nodes:
        if n.id not in need and n.id not in by_node and n.utilization is not None:
            u, t, used_ = n.utilization, n.total, n.used  # the common case, inlined
            v = (float(u.containers_pmem_mb), float(u.containers_cpu))
            yn = young.get(n.id)
            tu = v if yn is None else (v[0] + yn[0], v[1] + yn[1])
            out.append(NodeIn(n, n.labels[0] if n.labels else "",
                              (float(t.memory_mb), float(t.vcores)),
                              (float(used_.memory_mb), float(used_.vcores)), tu, v,
                              "nm_heartbeat" if yn is None else "nm_heartbeat+young", ()))
            continue
        cs = by_node.get(n.id, [])
        base = bases.get(n.id, _vec(n.total.memory_mb, n.total.vcores))
        opp = _opportunistic(cs, base, n.id in bases)
        opp_mem = sum(c.allocated.memory_mb for c in opp)
        opp_vc = sum(c.allocated.vcores for c in opp)
        used = _vec(n.used.memory_mb - opp_mem, n.used.vcores - opp_vc)
        usage, measured, src = _usage(n, cs, headroom.get(n.id))
        yn = young.get(n.id)
        if yn is not None and measured is not None:
            usage, src = (usage[0] + yn[0], usage[1] + yn[1]), src + "+young"
        if n.id in unread:
            usage, src = (max(usage[0], base[0]), max(usage[1], base[1])), src + "+unread"
        part = n.labels[0] if n.labels else ""
        out.append(NodeIn(n, part, base, used, usage, measured, src, opp))
    return out


def _opportunistic(cs: list[Container], base: Vec, raised: bool) -> tuple[Container, ...]:
    explicit = [c for c in cs if c.execution_type == "OPPORTUNISTIC"]
    if not raised:
        if not explicit:
            return ()
        return tuple(sorted(explicit, key=lambda c: (c.started_time, c.id)))
    mem = vc = 0.0
    out = list(explicit)
    for c in sorted(cs, key=lambda c: (c.started_time, c.id)):
        if c.execution_type == "OPPORTUNISTIC":
            continue
        mem += c.allocated.memory_mb
        vc += c.allocated.vcores
        if mem > base[0] or vc > base[1]:
            out.append(c)
    return tuple(sorted(out, key=lambda c: (c.started_time, c.id)))


def _usage(n: Node, cs: list[Container], headroom: Vec | None) -> tuple[Vec, Vec | None, str]:
    u = n.utilization
    if u is not None and _measured(n):
        v = _vec(u.containers_pmem_mb, u.containers_cpu)
        return v, v, "nm_heartbeat"
    mem = vc = 0.0
    alloc_mem = alloc_vc = 0.0
    measured = 0
    for c in cs:
        if c.usage is not None and c.usage.samples > 0:
            mem += c.usage.pmem_avg_mb
            vc += c.usage.cpu_avg_percent / 100.0
            measured += 1
        else:
            alloc_mem += c.allocated.memory_mb
            alloc_vc += c.allocated.vcores
    if measured == len(cs):
        return _vec(mem, vc), _vec(mem, vc), "container_jmx"
    src = "container_jmx+allocation" if measured else "allocation"
    if headroom is not None:
        alloc_mem = max(0.0, alloc_mem - headroom[0])
        alloc_vc = max(0.0, alloc_vc - headroom[1])
        src += "-prism_headroom"
    return _vec(mem + alloc_mem, vc + alloc_vc), None, src


def prediction_of(
    predictions: Predictions | None, app_id: str, priority: int, min_confidence: float
) -> tuple[bool, str]:
    """(eligible, label) of a request group: short only if the classifier said so
    with ``p_short`` at least ``min_confidence``; no prediction means long."""
    found = predictions.group(app_id, priority) if predictions is not None else None
    if found is None or not found.prediction.short:
        return False, "long"
    p = found.prediction.p_short
    if p is not None and p < min_confidence:
        return False, f"short@{p:.2f}<min"
    return True, "short"


def memory_only(snap: Snapshot, resource_calculator: str) -> bool:
    """Whether the RM schedules memory only: ``resource_calculator`` when not
    ``auto``; else not if the scheduler conf names the DominantResourceCalculator,
    else yes if some node has more vcores allocated than it has."""
    if resource_calculator != "auto":
        return resource_calculator == "memory"
    calc = snap.scheduler_conf.get("yarn.scheduler.capacity.resource-calculator", "")
    if "Dominant" in calc:
        return False
    return any(n.used.vcores > n.total.vcores for n in snap.nodes if n.state == "RUNNING")


@dataclass(slots=True)
class Group:
    """The pending containers of one request row; ``left`` still in the queue."""

    key: str
    app_id: str
    priority: int
    task: Task
    left: int
    partition: str
    label: str
    lend_cap: int = 1 << 62  # at most this many more of its tasks may be lent


def pending_groups(
    snap: Snapshot, predictions: Predictions | None, min_confidence: float, mem_only: bool,
    any_task: bool = False,
) -> list[Group]:
    """All pending request rows in Fair-queuing order (see the module doc); with
    ``any_task`` every row is eligible, whatever the classifier says."""
    apps = [a for a in snap.apps if a.state in ACTIVE]
    total = snap.metrics.total
    cm = float(total.memory_mb) or 1.0
    cv = float(total.vcores) or 1.0
    fair = 1.0 / len(apps) if apps else 0.0

    def deficit(a: App) -> float:
        return fair - max(a.allocated.memory_mb / cm, a.allocated.vcores / cv)

    out: list[Group] = []
    asking = [a for a in apps
              if any(r.resource_name == "*" and r.num_containers > 0 for r in a.resource_requests)]
    for a in sorted(asking, key=lambda a: (-deficit(a), a.id)):
        rows = [r for r in a.resource_requests if r.resource_name == "*" and r.num_containers > 0]
        if len(rows) > 1:
            rows.sort(key=lambda r: (r.priority, r.allocation_request_id))
        seen: dict[str, int] = {}
        for r in rows:
            key = f"{a.id}:{r.priority}"
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                key = f"{key}:{seen[key]}"
            ok, label = prediction_of(predictions, a.id, r.priority, min_confidence)
            if any_task and not ok:
                ok, label = True, f"{label}(any)"
            d = _vec(r.capability.memory_mb, 0 if mem_only else r.capability.vcores)
            out.append(Group(key, a.id, r.priority, Task(key, d, ok), r.num_containers,
                             r.node_label_expression, label))
    return out


class TaskQueue:
    """GetNextTaskFromQueue: per partition, the head of the ordered groups."""

    def __init__(self, groups: list[Group]) -> None:
        self.groups = {g.key: g for g in groups}
        self._parts: dict[str, deque[Group]] = {}
        for g in groups:
            self._parts.setdefault(g.partition, deque()).append(g)

    def take(self, key: str) -> Task | None:
        """Remove one unit of group ``key`` (a restored reservation); None if gone."""
        g = self.groups.get(key)
        if g is None or g.left <= 0:
            return None
        g.left -= 1
        return g.task

    def in_order(self, partition: str) -> tuple[deque[Group], deque[Group]]:
        """The partition's groups in queue order, and the eligible (short) ones (deques:
        :func:`~.bulk.node_update_lend` drops the served front, so that a big cluster's
        nodes do not each walk past every group already served)."""
        groups = deque(self._parts.get(partition, ()))
        return groups, deque(g for g in groups if g.task.eligible)

    def view(self, partition: str) -> QueueView:
        """The queue as seen by a node of ``partition``."""
        return QueueView(self._parts.setdefault(partition, deque()))

    def min_demand(self) -> Vec | None:
        """Componentwise minimum demand of what is still queued."""
        ds = [g.task.demand for g in self.groups.values() if g.left > 0]
        if not ds:
            return None
        return (min(d[0] for d in ds), min(d[1] for d in ds))


class QueueView:
    """One partition's queue: the head group, for Alg 3 (``next``) and Alg 4 (bulk)."""

    def __init__(self, q: deque[Group]) -> None:
        self._q = q

    def _front(self) -> Group | None:
        q = self._q
        while q and q[0].left <= 0:
            q.popleft()
        return q[0] if q else None

    def head(self) -> Task | None:
        g = self._front()
        return None if g is None else g.task

    def peek(self) -> tuple[Task, int] | None:
        g = self._front()
        return None if g is None else (g.task, g.left)

    def take(self, n: int) -> None:
        g = self._front()
        if g is not None:
            g.left -= n

    def next(self) -> Task | None:
        g = self._front()
        if g is None:
            return None
        g.left -= 1
        return g.task
