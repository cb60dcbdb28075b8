"""OPERA (Yang, Yao, Gao, Wang, Mi, Sheng; seed 002) as an advisor policy.

Status: experimental. OPERA lends the idle part of reserved resources to
short pending tasks and takes it back under contention. From outside the RM
each cycle plays one heartbeat round (``node_updates_per_cycle`` heartbeats
per RUNNING node, in node-id order) of the paper's algorithms
(:mod:`~yarn_advisor.advisor.policies.opera_core`) on the Snapshot
(:mod:`~yarn_advisor.advisor.policies.opera_inputs`):

1. Node monitor (Alg 1) on every node: contention (rho, memory first) when it
   runs opportunistic containers; relief per ``relief_policy``; PRESERVE's
   BR/BT/LastReliefTime live in the state. A node whose monitor relieved
   contention this cycle gets no opportunistic resources (OA = 0).
2. Assignment (Alg 2) with strict (Alg 3) or multi-chance (Alg 4, ``eps_r``,
   ``eps_s``) reservation over the Fair-ordered pending tasks; reservations
   and skip counts persist in the state.

Output (lever ``POST /nodes/{id}/resource`` and container signal):

* ``update_node_resource`` (value and previous ``{memory_mb, vcores}``): a
  node's schedulable capacity becomes ``C_i`` + the demand of the eligible
  (short) tasks opportunistically assigned to it this cycle, never below what
  is allocated on it while there is no contention (running opportunistic
  containers drain), back to ``C_i`` when its monitor relieves contention.
  The RM does not know which tasks are short: it may place other tasks in
  the raised capacity, which the monitor then treats as opportunistic.
* ``signal_container`` (value ``signal``, default GRACEFUL_SHUTDOWN) for the
  most recently launched opportunistic container of a relieved node, only
  with ``signal_containers: true`` (kill-like actions are opt-in).

State (JSON; keys others may read): *read* are ``predictions``, else
``classifier.groups`` (the classifier hook's payload, if the engine hands it
to OPERA): ``"<app_id>/<priority>"`` (or ``:``, or just ``"<app_id>"``) ->
``{"short": bool, "p_short": p}`` or ``"short"``/``"long"`` or ``{label|class,
confidence}``; absent = all long, so nothing is lent; and
``prism.idle_headroom`` (node id -> ``{memory_mb, vcores}``, PRISM's
phase-aware estimate, used for unmeasured containers).
Written: ``bases`` (node -> ``[memory_mb, vcores]`` before OPERA raised it),
``blocks`` (node -> ``{br, bt_ms, last_relief}`` where it differs from the
initial values), ``reservations`` (node -> ``[[group key, skip count], ...]``),
``lent`` (node -> ``{memory_mb, vcores}`` lent this cycle) and ``stats``.

With ``resource_calculator: auto`` vcores are ignored for assignment when the
scheduler conf does not name the DominantResourceCalculator and some node has
more vcores allocated than it has (the RM evidently schedules memory only).

Choices where the paper is silent or ambiguous (see also opera_core): the
paper gives rho = 0.95 only. ``alpha`` = 2 because the text says BR and BT
are "doubled"; the initial BR (1 GiB / 1 vcore, also its floor; the paper's
Fig. 12 shows a few vcores blocked before any contention) and BT (60 s,
capped at ``bt_max_s``), ``eps_r`` = ``eps_s`` = 3 and the default
PRESERVE + multi-chance are ours (the safest pair: fewest kills, no
starvation). MinTaskDemand is taken over what is pending at the start of the
cycle. The pending queue is shared by all nodes of the round, and a task
reserved on a node leaves it. A group's tasks are assigned in bulk
(:mod:`~yarn_advisor.advisor.policies.opera_bulk`, same result as one by one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.policies import opera_core as oc
from yarn_advisor.advisor.policies._base import PolicyResult, raise_problems
from yarn_advisor.advisor.policies.opera_bulk import node_update_multi_bulk
from yarn_advisor.advisor.policies.opera_inputs import (
    INF,
    NodeIn,
    QueueView,
    TaskQueue,
    node_inputs,
    pending_groups,
)
from yarn_advisor.advisor.policies.opera_state import OperaState, explain_node, parse_state
from yarn_advisor.advisor.recommendation import Explanation, JsonDict, Kind, Recommendation

NAME = "opera"
# states the engine copies into this policy's state (see advisor.engine)
READS = ("classifier", "prism")


@dataclass(frozen=True)
class Params:
    """OPERA parameters; rho = 0.95 is the paper's, alpha = 2 its "double", the rest ours."""

    relief_policy: Literal["AGGRESSIVE", "NEUTRAL", "PRESERVE"] = "PRESERVE"
    rho: float = 0.95
    alpha: float = 2.0
    br_initial_memory_mb: int = 1024
    br_initial_vcores: int = 1
    bt_initial_s: float = 60.0
    bt_max_s: float = 3600.0
    reservation: Literal["strict", "multi_chance"] = "multi_chance"
    eps_r: int = 3
    eps_s: int = 3
    node_updates_per_cycle: int = 1
    min_confidence: float = 0.5
    resource_calculator: Literal["auto", "memory", "dominant"] = "auto"
    signal_containers: bool = False
    signal: Literal["GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN", "OUTPUT_THREAD_DUMP"] = (
        "GRACEFUL_SHUTDOWN"
    )

    def __post_init__(self) -> None:
        p: list[tuple[str, str]] = []
        if not 0.0 < self.rho <= 1.0:
            p.append(("rho", f"must be in (0, 1], got {self.rho}"))
        if not self.alpha > 1.0:
            p.append(("alpha", f"must be > 1, got {self.alpha}"))
        for name in ("br_initial_memory_mb", "br_initial_vcores", "eps_r", "eps_s"):
            if getattr(self, name) < 0:
                p.append((name, f"must be >= 0, got {getattr(self, name)}"))
        if not self.bt_initial_s > 0:
            p.append(("bt_initial_s", f"must be > 0, got {self.bt_initial_s}"))
        if not self.bt_max_s >= self.bt_initial_s:
            p.append(("bt_max_s", f"must be >= bt_initial_s, got {self.bt_max_s}"))
        if self.node_updates_per_cycle < 1:
            p.append(("node_updates_per_cycle", "must be >= 1"))
        if not 0.0 <= self.min_confidence <= 1.0:
            p.append(("min_confidence", f"must be in [0, 1], got {self.min_confidence}"))
        raise_problems(p)

    @property
    def floor(self) -> oc.Block:
        """The initial (and minimum) BR and BT."""
        br = (float(self.br_initial_memory_mb), float(self.br_initial_vcores))
        return oc.Block(br, self.bt_initial_s * 1000.0, None)


def memory_only(snap: Snapshot, params: Params) -> bool:
    """Whether the RM schedules memory only (see the module doc)."""
    if params.resource_calculator != "auto":
        return params.resource_calculator == "memory"
    calc = snap.scheduler_conf.get("yarn.scheduler.capacity.resource-calculator", "")
    if "Dominant" in calc:
        return False
    return any(n.used.vcores > n.total.vcores for n in snap.nodes if n.state == "RUNNING")


def advise(snapshot: Snapshot, state: object, params: Params) -> PolicyResult:
    """One heartbeat round of OPERA on ``snapshot``."""
    floor = params.floor
    st = parse_state(state, floor)
    now = snapshot.taken_at
    mem_only = memory_only(snapshot, params)
    nodes = node_inputs(snapshot, st.bases, st.headroom)
    groups = pending_groups(snapshot, st.predictions, params.min_confidence, mem_only)
    queue = TaskQueue(groups)
    reserved: dict[str, list[oc.Reserved]] = {}
    for n in nodes:
        for key, skip in st.reservations.get(n.node.id, []):
            t = queue.take(key)
            if t is not None:
                reserved.setdefault(n.node.id, []).append(oc.Reserved(t, skip))
    demands = [g.task.demand for g in groups]
    demands += [r.task.demand for v in reserved.values() for r in v]
    min_demand = (min(d[0] for d in demands), min(d[1] for d in demands)) if demands else None

    out: list[Recommendation] = []
    nxt = OperaState(bases={}, blocks={}, reservations={}, lent={})
    quiet_branch = "preserve.hold" if params.relief_policy == "PRESERVE" else (
        f"{params.relief_policy.lower()}.none")
    quiet = oc.Relief("NONE", False, floor, quiet_branch)
    views: dict[str, QueueView] = {}
    for n in nodes:
        nid = n.node.id
        block = st.blocks.get(nid)
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
        if not res and nid not in st.bases and not relief.kill and view.head() is None:
            continue  # nothing to assign, nothing lent: the node keeps its capacity
        slot = _slot(n, relief, params, mem_only)
        branches: list[str] = []
        if min_demand is not None:
            for _ in range(params.node_updates_per_cycle):
                branches.append(_update(slot, res, view, min_demand, params))
        out += _recommend(n, relief, slot, slot.lent, branches, queue, params, nxt)
        if res:
            nxt.reservations[nid] = [[r.task.key, r.skip] for r in res]
    return PolicyResult(tuple(out), nxt.to_json(now, len(nodes), len(groups)))


def _slot(n: NodeIn, relief: oc.Relief, params: Params, mem_only: bool) -> oc.Slot:
    ga = oc.guaranteed_available(n.base, n.normal_demand)
    blocked = relief.block.br if params.relief_policy == "PRESERVE" else oc.ZERO
    oa = oc.opportunistic_available(n.base, n.usage, blocked)
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
    nxt: OperaState,
) -> list[Recommendation]:
    node = n.node
    cur = (node.total.memory_mb, node.total.vcores)
    base = (int(n.base[0]), int(n.base[1]))
    if relief.kill:
        desired = base
        rule = "opera.relieve_contention"
    else:
        keep = (min(cur[0], node.used.memory_mb), min(cur[1], node.used.vcores))
        want = (base[0] + int(borrow[0]), base[1] + int(borrow[1]))
        desired = (max(want[0], keep[0], base[0]), max(want[1], keep[1], base[1]))
        rule = "opera.opportunistic_assign" if borrow != (0, 0) else "opera.return_headroom"
    if desired[0] > base[0] or desired[1] > base[1]:
        nxt.bases[node.id] = n.base
    if borrow != (0, 0):
        nxt.lent[node.id] = {"memory_mb": int(borrow[0]), "vcores": int(borrow[1])}
    out: list[Recommendation] = []
    signal = relief.kill and params.signal_containers and bool(n.opportunistic)
    if desired == cur and not signal:
        return out
    expl = explain_node(n, relief, slot, borrow, desired, branches, queue, params, rule)
    if desired != cur:
        value: JsonDict = {"memory_mb": desired[0], "vcores": desired[1]}
        previous: JsonDict = {"memory_mb": cur[0], "vcores": cur[1]}
        out.append(Recommendation(Kind.UPDATE_NODE_RESOURCE, node.id, value, NAME, expl, previous))
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
        out.append(Recommendation(Kind.SIGNAL_CONTAINER, c.id, params.signal, NAME, e, c.state))
    return out
