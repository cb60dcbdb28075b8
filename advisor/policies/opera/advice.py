"""OPERA's recommendations: one heartbeat round of Alg 1-4 per cycle, node by node.

See the package docstring for what is published; README.md for the equations.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable

from yarn_advisor.advisor.model.jsonvalue import JsonDict, JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ContainerSignal, ContainerStatus, NodeResource
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import NO_READS, PolicyResult, Reads
from yarn_advisor.advisor.policies.opera import core as oc
from yarn_advisor.advisor.policies.opera.bulk import node_update_lend, node_update_multi_bulk
from yarn_advisor.advisor.policies.opera.inputs import (
    INF,
    Group,
    NodeIn,
    QueueView,
    TaskQueue,
    memory_only,
    node_inputs,
    pending_groups,
)
from yarn_advisor.advisor.policies.opera.overflow import overflow
from yarn_advisor.advisor.policies.opera.params import NAME, Params
from yarn_advisor.advisor.policies.opera.state import Reservation, State


def advise(snapshot: Snapshot, state: State, params: Params,
           reads: Reads = NO_READS) -> PolicyResult[State]:
    """One heartbeat round of OPERA on ``snapshot``.

    ``reads.predictions``: this cycle's :class:`Predictions` (none: nothing is
    short, nothing is lent); ``reads.shared.idle_headroom``: PRISM's estimate of
    unmeasured containers' idle resources (previous cycle).
    """
    floor = params.floor
    predictions = reads.predictions
    headroom = reads.shared.idle_headroom or {}
    now = snapshot.taken_at
    mem_only = memory_only(snapshot, params.resource_calculator)
    nodes = node_inputs(snapshot, state.bases, headroom, params.settle_s)
    groups = pending_groups(snapshot, predictions, params.min_confidence, mem_only,
                            any_task=params.lend_to == "any")
    queue = TaskQueue(groups)
    reserved: dict[str, list[oc.Reserved]] = {}
    for n in nodes if params.reservation != "none" else ():
        for key, skip in state.reservations.get(n.node.id, ()):
            t = queue.take(key)
            if t is not None:
                reserved.setdefault(n.node.id, []).append(oc.Reserved(t, skip))
    demands = [g.task.demand for g in groups]
    demands += [r.task.demand for v in reserved.values() for r in v]
    min_demand = (min(d[0] for d in demands), min(d[1] for d in demands)) if demands else None
    room_takes = 0
    if params.lend_only_overflow and min_demand is not None:
        room_takes = _cap_to_overflow(nodes, groups, min_demand, mem_only)

    out: list[Recommendation] = []
    nxt = _Next()
    quiet_branch = "preserve.hold" if params.relief_policy == "PRESERVE" else (
        f"{params.relief_policy.lower()}.none")
    quiet = oc.Relief("NONE", False, floor, quiet_branch)
    views: dict[str, QueueView] = {}
    orders: dict[str, tuple[deque[Group], deque[Group]]] = {}
    later = _Deferred(params, mem_only)
    for n in nodes:
        nid = n.node.id
        block = state.blocks.get(nid)
        relief = quiet
        if n.opportunistic or block is not None:  # else Alg 1 cannot change anything
            relief = oc.monitor(
                n.measured, n.base, bool(n.opportunistic), params.relief_policy,
                block or floor, now, params.rho, params.alpha, floor, params.bt_max_s * 1000.0,
            )
            if relief.block.br != floor.br or relief.block.bt_ms != floor.bt_ms:
                nxt.blocks[nid] = relief.block
        view = views.get(n.partition) or views.setdefault(n.partition, queue.view(n.partition))
        res = reserved.get(nid, [])
        # not raised, not relieved, nothing reserved: nothing to give back
        plain = not res and nid not in state.bases and not relief.kill
        if plain:
            if nid in state.lent_at:
                later.run()  # skipping drops its lend time: the queue must be current
            if view.head() is None:
                continue  # nothing to assign, nothing lent: the node keeps its capacity
        branches: list[str] = []
        if min_demand is not None and params.reservation == "none":
            order = orders.get(n.partition) or orders.setdefault(
                n.partition, queue.in_order(n.partition))
            if not order[1] and plain and nid not in state.lent_at:
                later.add(n, relief, None, branches, order, min_demand)
                continue  # lends nothing, holds nothing: keeps C_i, recommends nothing
            slot = _slot(n, relief, params, mem_only)
            if order[1]:  # some group may still be lent: the scan decides
                branches.append(node_update_lend(slot, *order, min_demand))
            else:
                later.add(n, relief, slot, branches, order, min_demand)
        else:
            slot = _slot(n, relief, params, mem_only)
            if min_demand is not None:
                for _ in range(params.node_updates_per_cycle):
                    branches.append(_update(slot, res, view, min_demand, params))
        hold = (not relief.kill and slot.lent == oc.ZERO and nid in state.lent_at
                and now - state.lent_at[nid] < params.return_after_s * 1000)
        if slot.lent != oc.ZERO:
            nxt.lent_at[nid] = now
        elif hold:
            nxt.lent_at[nid] = state.lent_at[nid]
        out += _recommend(n, relief, slot, slot.lent, branches, queue, params, nxt, mem_only,
                          hold, later.run)
        if res:
            nxt.reservations[nid] = tuple((r.task.key, r.skip) for r in res)
    return PolicyResult(tuple(out), nxt.state(now, len(nodes), len(groups), room_takes))


def _cap_to_overflow(nodes: list[NodeIn], groups: list[Group], min_demand: oc.Vec,
                     mem_only: bool) -> int:
    """Lend only what the partition's unallocated room cannot take (see ``overflow``):
    a group that fits there entirely is not eligible this cycle, the others may lend
    at most their overflow. Returns how many eligible tasks were left to free room."""
    rooms: dict[str, list[oc.Vec]] = {}
    for n in nodes:
        ga = oc.guaranteed_available(n.base, n.normal_demand)
        rooms.setdefault(n.partition, []).append((ga[0], INF) if mem_only else ga)
    by_part: dict[str, list[Group]] = {}
    for g in groups:
        by_part.setdefault(g.partition, []).append(g)
    kept = 0
    for part, gs in by_part.items():
        if not any(g.task.eligible for g in gs):
            continue
        left = overflow(rooms.get(part, ()), gs, min_demand)
        for g in gs:
            if g.task.eligible:
                g.lend_cap = left[g.key]
                kept += g.left - left[g.key]
                if g.lend_cap <= 0:
                    g.task = oc.Task(g.task.key, g.task.demand, False)
    return kept


class _Deferred:
    """Lending scans put off while their partition has no eligible group left.

    Such a scan lends nothing: it only takes normal room (GA) for the queue's groups,
    which shows in this node's explanation and in what later scans find. So the scans
    run, in node order, only before an explanation is built (in a big cluster with
    nothing short, most nodes recommend nothing and their scans never run). Meanwhile
    the queue shows more left than there is: a node may not be skipped for an empty
    queue when it could be, which changes nothing (it has no scan to run and nothing to
    recommend) unless it holds a lend time, so then the scans run first."""

    def __init__(self, params: Params, mem_only: bool) -> None:
        self.params, self.mem_only = params, mem_only
        self.scans: list[tuple[NodeIn, oc.Relief, oc.Slot | None, list[str],
                               tuple[deque[Group], deque[Group]], oc.Vec]] = []

    def add(self, n: NodeIn, relief: oc.Relief, slot: oc.Slot | None, branches: list[str],
            order: tuple[deque[Group], deque[Group]], min_demand: oc.Vec) -> None:
        """Put off ``n``'s scan; without ``slot`` (no explanation will read it), the
        node's slot is made when the scan runs."""
        self.scans.append((n, relief, slot, branches, order, min_demand))

    def run(self) -> None:
        for n, relief, slot, branches, order, min_demand in self.scans:
            if slot is None:
                slot = _slot(n, relief, self.params, self.mem_only)
            branches.append(node_update_lend(slot, *order, min_demand))
        self.scans.clear()


class _Next:
    """The next state, filled node by node."""

    def __init__(self) -> None:
        self.bases: dict[str, oc.Vec] = {}
        self.blocks: dict[str, oc.Block] = {}
        self.reservations: dict[str, tuple[Reservation, ...]] = {}
        self.lent: dict[str, tuple[int, int]] = {}
        self.lent_at: dict[str, int] = {}

    def state(self, now: int, nodes: int, groups: int, left_to_room: int) -> State:
        stats = {"nodes": nodes, "pending_groups": groups, "nodes_lending": len(self.lent),
                 "short_tasks_left_to_free_room": left_to_room,
                 "nodes_raised": len(self.bases),
                 "reserved_tasks": sum(len(v) for v in self.reservations.values())}
        return State(dict(sorted(self.bases.items())), dict(sorted(self.blocks.items())),
                     dict(sorted(self.reservations.items())), dict(sorted(self.lent.items())),
                     now, stats, dict(sorted(self.lent_at.items())))


def _slot(n: NodeIn, relief: oc.Relief, params: Params, mem_only: bool) -> oc.Slot:
    ga = oc.guaranteed_available(n.base, n.normal_demand)
    # PRESERVE's BR is held back once the node has seen contention (a relief); before
    # that, lend_up_to is the margin (with 1.0, the paper's initial BR applies)
    preserve = params.relief_policy == "PRESERVE"
    blocked = relief.block.br if preserve and (
        relief.block.last_relief is not None or params.lend_up_to >= 1.0) else oc.ZERO
    f = params.lend_up_to  # Eq 4 / Eq 7 on the share of C_i that may be used
    oa = oc.opportunistic_available((n.base[0] * f, n.base[1] * f), n.usage, blocked)
    if relief.kill:
        oa = oc.ZERO
    if mem_only:
        ga, oa = (ga[0], INF), (oa[0], INF)
    return oc.Slot(ga, oa)


def _update(
    slot: oc.Slot,
    res: list[oc.Reserved],
    view: QueueView,
    min_demand: oc.Vec,
    params: Params,
) -> str:
    if params.reservation == "strict":
        return oc.node_update_strict(slot, res, view.next, min_demand)
    return node_update_multi_bulk(slot, res, view, min_demand, params.eps_r, params.eps_s)


def _recommend(
    n: NodeIn,
    relief: oc.Relief,
    slot: oc.Slot,
    borrow: oc.Vec,
    branches: list[str],
    queue: TaskQueue,
    params: Params,
    nxt: _Next,
    mem_only: bool,
    hold: bool,
    settle: Callable[[], None],
) -> list[Recommendation]:
    node = n.node
    cur = (node.total.memory_mb, node.total.vcores)
    base = (int(n.base[0]), int(n.base[1]))
    if relief.kill:
        desired = base
        rule = "opera.relieve_contention"
    elif hold:  # lent a moment ago: the next wave would borrow it again
        desired, rule = cur, "opera.hold_headroom"
    else:
        keep = (min(cur[0], node.used.memory_mb), min(cur[1], node.used.vcores))
        # lending now: on top of C_i, what runs on borrowed headroom already and what
        # is lent now (vcores only where the RM counts them)
        opp = (0, 0)
        if borrow != (0, 0):
            opp = (max(0, node.used.memory_mb - int(n.normal_demand[0])),
                   0 if mem_only else max(0, node.used.vcores - int(n.normal_demand[1])))
        unit = [t.demand for t, how in slot.assigned if how == "opportunistic"]
        step = (max((d[0] for d in unit), default=0.0), max((d[1] for d in unit), default=0.0))
        want = _bounded((base[0] + opp[0] + int(borrow[0]), base[1] + opp[1] + int(borrow[1])),
                        base, cur, (int(step[0]), int(step[1])), params)
        desired = (max(want[0], keep[0], base[0]), max(want[1], keep[1], base[1]))
        rule = "opera.opportunistic_assign" if borrow != (0, 0) else "opera.return_headroom"
    if not params.lend_memory:  # memory stays at C_i: only vcores are lent, where they count
        desired = (base[0], base[1] if mem_only else desired[1])
    if desired[0] > base[0] or desired[1] > base[1]:
        nxt.bases[node.id] = n.base
    if borrow != (0, 0):
        nxt.lent[node.id] = (int(borrow[0]), int(borrow[1]))
    out: list[Recommendation] = []
    signal = relief.kill and params.signal_containers and bool(n.opportunistic)
    if desired == cur and not signal:
        return out
    settle()  # the deferred scans, this node's included: the explanation shows them
    expl = explain_node(n, relief, slot, borrow, desired, branches, queue, params, rule)
    if desired != cur:
        out.append(Recommendation(Kind.UPDATE_NODE_RESOURCE, node.id,
                                  NodeResource(int(desired[0]), int(desired[1])), NAME, expl,
                                  NodeResource(int(cur[0]), int(cur[1]))))
    if signal:
        c = n.opportunistic[-1]
        summary = (
            f"{node.id}: {relief.contention} contention under {params.relief_policy}: "
            f"signal {params.signal} to the most recently launched opportunistic container {c.id}"
        )
        inputs: JsonDict = {
            "node": node.id,
            "container": {"id": c.id, "app": c.app_id, "started_time": c.started_time,
                          "memory_mb": c.allocated.memory_mb, "vcores": c.allocated.vcores},
            "opportunistic_containers": len(n.opportunistic),
        }
        e = Explanation("opera.relieve_contention.kill", summary, inputs,
                        expl.scores, expl.thresholds)
        out.append(Recommendation(Kind.SIGNAL_CONTAINER, c.id, ContainerSignal(params.signal),
                                  NAME, e, ContainerStatus(c.state, c.node_id)))
    return out


def _bounded(want: tuple[int, int], base: tuple[int, int], cur: tuple[int, int],
             task: tuple[int, int], params: Params) -> tuple[int, int]:
    """``want`` within ``max_overcommit`` x C_i, grown from ``cur`` by at most
    ``ramp_step`` x C_i this cycle, or one lent ``task`` if that is more (measured
    use catches up before the next step)."""
    out = []
    for w, b, c, t in zip(want, base, cur, task, strict=True):
        if params.max_overcommit is not None:
            w = min(w, int(b * params.max_overcommit))
        if params.ramp_step is not None and w > c:
            w = min(w, max(c, b) + max(1, t, int(b * params.ramp_step)))
        out.append(w)
    return out[0], out[1]


def _v(x: oc.Vec) -> JsonDict:
    return {"memory_mb": round(x[0], 3), "vcores": round(x[1], 3)} if x[1] != float("inf") else {
        "memory_mb": round(x[0], 3), "vcores": None}


def explain_node(
    n: NodeIn,
    relief: oc.Relief,
    slot: oc.Slot,
    borrow: oc.Vec,
    desired: tuple[int, int],
    branches: list[str],
    queue: TaskQueue,
    params: Params,
    rule: str,
) -> Explanation:
    """Inputs, scores and thresholds of one node's decision."""
    node = n.node
    lent = Counter(t.key for t, how in slot.assigned if how == "opportunistic")
    tasks: list[JsonValue] = [
        {"group": k, "app": queue.groups[k].app_id, "priority": queue.groups[k].priority,
         "memory_mb": queue.groups[k].task.demand[0], "vcores": queue.groups[k].task.demand[1],
         "tasks": c, "prediction": queue.groups[k].label}
        for k, c in sorted(lent.items()) if k in queue.groups
    ]
    inputs: JsonDict = {
        "node": {
            "capacity": _v(n.base),
            "total": {"memory_mb": node.total.memory_mb, "vcores": node.total.vcores},
            "allocated": {"memory_mb": node.used.memory_mb, "vcores": node.used.vcores},
            "partition": n.partition,
        },
        "usage": {"source": n.usage_source, "tu": _v(n.usage),
                  "measured": None if n.measured is None else _v(n.measured)},
        "opportunistic_containers": len(n.opportunistic),
        "lent_to": tasks,
        "heartbeats": list(branches),
    }
    scores: JsonDict = {
        "contention": relief.contention,
        "relief": relief.branch,
        "borrow": _v(borrow),
        "ga_after": _v(slot.ga),
        "oa_after": _v(slot.oa),
        "desired": {"memory_mb": desired[0], "vcores": desired[1]},
    }
    if params.relief_policy == "PRESERVE":
        b = relief.block
        scores["block"] = {"br": _v(b.br), "bt_s": round(b.bt_ms / 1000.0, 3),
                           "last_relief": b.last_relief}
    thresholds: JsonDict = {
        "rho": params.rho, "relief_policy": params.relief_policy, "alpha": params.alpha,
        "reservation": params.reservation, "eps_r": params.eps_r, "eps_s": params.eps_s,
        "min_confidence": params.min_confidence, "lend_memory": params.lend_memory,
    }
    cur = f"{node.total.memory_mb} MiB/{node.total.vcores} vcores"
    new = f"{desired[0]} MiB/{desired[1]} vcores"
    if rule == "opera.relieve_contention":
        summary = (f"{node.id}: {relief.contention} usage above {params.rho:g} x capacity with "
                   f"{len(n.opportunistic)} opportunistic container(s): {params.relief_policy} "
                   f"relief returns the borrowed headroom ({cur} -> {new})")
    elif rule == "opera.opportunistic_assign" and not params.lend_memory:
        summary = (f"{node.id}: lend {int(borrow[1])} vcores of idle reserved resources to "
                   f"{sum(lent.values())} short pending task(s) (memory is not lent: "
                   f"lend_memory off); the node grows by at most one ramp step a cycle "
                   f"({cur} -> {new})")
    elif rule == "opera.opportunistic_assign":
        summary = (f"{node.id}: lend {int(borrow[0])} MiB/{int(borrow[1])} vcores of idle "
                   f"reserved resources to {sum(lent.values())} short pending task(s); "
                   f"the node grows by at most one ramp step a cycle ({cur} -> {new})")
    else:
        summary = f"{node.id}: no short task uses the borrowed headroom any more ({cur} -> {new})"
    return Explanation(rule, summary, inputs, scores, thresholds)
