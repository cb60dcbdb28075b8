"""HaSTE and HaSTE-A as the RM's scheduler (Yao et al., IEEE TCC 2021; seed 000).

The math is the advisor's own (:mod:`yarn_advisor.advisor.policies.haste.core`):
Eq 1 fitness, Eq 2-3 urgency, Eq 4 / Eq 6 preference with AM requests first,
Eq 5 alignment, RTA's pick-shrink-repeat (``rta_fill``) and Algorithm 1's
knapsack (``ita_knapsack``). Here they drive the heartbeats:

* ITA (section 3.3): once, when the first batch of apps has registered and
  asked for tasks (no AM still starting), Algorithm 1 runs node after node
  (``for j = 1..m: AssignTask(j, T)``, T shrinking) on each node's free
  capacity; each node's plan is handed out at its next heartbeat.
* RTA (section 3.4): every heartbeat, the node's free capacity goes to the
  pending request groups one container at a time, best preference first,
  scores recomputed on the shrunken capacity after each pick (the section
  3.4.1 table); a picked request gets its best-placed task (node-local, then
  rack-local, else any: section 3.4.3).
* Variants: ``haste`` is Eq 4 (beta 1/1/0), ``haste-a`` Eq 6 with the
  configured beta (the paper's 0.2/0.2/0.6), ``ffd-dp`` the paper's
  FFD-DotProduct baseline (fitness only, beta 1/0/0).

Inputs a real RM has (section 3.4.2): per app, maps assigned ``A_m`` (done or
holding a container), ``T_m``, reduces assigned ``A_r``, ``A_am`` = 1,
``O_m`` / ``O_r`` holding containers; sizes ``R`` are the weighted normalised
requests. Iterations (HaSTE-A, footnote 2: known a priori) are the
``iteration:K/N`` tags; ``sum_j I_j`` runs over the apps in the pool. Both
resources count in every fit (the paper's ``R[i, p] <= C[j, p]`` for all p),
so the scheduler uses the dominant resource calculator.
"""

from __future__ import annotations

from dataclasses import dataclass

from yarn_advisor.advisor.policies.haste import core as hc
from yarn_advisor.advisor.policies.haste.params import Params as HasteParams
from yarn_advisor.simulator.apps import (
    PRIORITY_AM,
    PRIORITY_FAST_FAIL_MAP,
    PRIORITY_MAP,
    PRIORITY_REDUCE,
    SimApp,
)
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.inrm.base import InRMBase
from yarn_advisor.simulator.rm import RMCore
from yarn_advisor.simulator.schedulers.base import Calculator
from yarn_advisor.simulator.spec import MAP, SchedulerSpec

VARIANTS = {"haste": "Eq 4", "haste-a": "Eq 6", "ffd-dp": "FFD-DotProduct"}
LIVE = ("ALLOCATED", "RUNNING")


@dataclass(frozen=True, slots=True)
class Group:
    """One pending request group (app, priority) as RTA/ITA see it."""

    app: SimApp
    priority: int
    candidate: hc.Candidate
    count: int


def job_counts(app: SimApp, w: hc.Weights, sizes: tuple[hc.Vec, hc.Vec]) -> hc.JobCounts:
    """The Eq 2-3 inputs of one app from what the RM holds for it."""
    maps_on = reduces_on = 0
    for c in app.containers.values():
        if c.state in LIVE and not c.is_am:
            if c.task.kind == MAP:
                maps_on += 1
            else:
                reduces_on += 1
    return hc.JobCounts(
        maps_total=len(app.maps), maps_assigned=app.maps_completed + maps_on,
        reduces_assigned=app.reduces_completed + reduces_on, am_assigned=1,
        maps_running=maps_on, reduces_running=reduces_on, map_size=w.size(sizes[0]),
        reduce_size=w.size(sizes[1]), am_size=w.size((app.am_mem, app.am_vc)))


class HasteScheduler(InRMBase):
    """HaSTE / HaSTE-A / FFD-DotProduct in the RM (see the module docstring)."""

    def __init__(self, spec: SchedulerSpec, params: HasteParams | None = None,
                 variant: str = "haste-a", ita: bool | None = None) -> None:
        super().__init__(spec)
        if variant not in VARIANTS:
            raise ValueError(f"unknown HaSTE variant {variant!r} (one of {', '.join(VARIANTS)})")
        self.params = params or HasteParams()
        self.variant = variant
        self.type_name = f"inrm:{variant}"
        self.w = self.params.weights
        self.beta: tuple[float, float, float] = {
            "haste": (1.0, 1.0, 0.0), "haste-a": self.params.beta, "ffd-dp": (1.0, 0.0, 0.0),
        }[variant]
        self.ita_pending = self.params.ita if ita is None else ita
        self.plans: dict[SimNode, list[tuple[SimApp, int, int]]] = {}

    def attach(self, rm: RMCore) -> None:
        super().attach(rm)
        rm.calc = Calculator(dominant=True)

    # --- request groups -------------------------------------------------------------
    def groups(self) -> list[Group]:
        """Every pending request group, canonically ordered (app submission, priority)."""
        active = [a for a in self.apps if not a.is_done]
        sum_i = sum(_iteration(a)[0] for a in active)
        out: list[Group] = []
        for app in active:
            if not app.pending_total:
                continue
            total, done = _iteration(app)
            align = hc.alignment(total, done, sum_i)
            counts: hc.JobCounts | None = None
            for ask in self.asks_of(app):
                if ask.priority == PRIORITY_AM:
                    urgency, is_am = 0.0, True
                else:
                    if counts is None:
                        counts = job_counts(app, self.w, self._sizes(app))
                    is_am = False
                    urgency = (hc.reduce_urgency(counts, self.params.reduce_ratio_cap)
                               if ask.priority == PRIORITY_REDUCE else hc.map_urgency(counts))
                key = f"{app.id}#{ask.priority}"
                out.append(Group(app, ask.priority,
                                 hc.Candidate(key, (ask.mem, ask.vc), urgency, align, is_am),
                                 ask.count))
        return out

    def _sizes(self, app: SimApp) -> tuple[hc.Vec, hc.Vec]:
        def size(priorities: tuple[int, ...], stage_kind: str) -> hc.Vec:
            for p in priorities:
                ask = app.asks.get(p)
                if ask is not None:
                    return ask.mem, ask.vc
            stage = app.job.maps if stage_kind == MAP else app.job.reduces
            if stage is None:
                return 0, 0
            return self.rm.normalize(stage.request.memory_mb, stage.request.vcores)
        return (size((PRIORITY_MAP, PRIORITY_FAST_FAIL_MAP), MAP),
                size((PRIORITY_REDUCE,), "REDUCE"))

    # --- heartbeat --------------------------------------------------------------------
    def node_update(self, node: SimNode) -> None:
        if self.ita_pending and self._ita_ready():
            self.ita_pending = False
            self._plan_ita()
        plan = self.plans.pop(node, None)
        if plan:
            for app, priority, k in plan:
                for _ in range(k):
                    ask = app.asks.get(priority)
                    if ask is None or ask.count == 0 or not self.fits_free(ask.mem, ask.vc, node):
                        break
                    self.place(app, ask, node)
        self.rta(node)

    def rta(self, node: SimNode) -> list[str]:
        """Real-time task assignment on ``node``; returns the keys picked, in order."""
        groups = self.groups()
        if not groups:
            return []
        picks = hc.rta_fill((node.free_mem, node.free_vc), [g.candidate for g in groups],
                            [g.count for g in groups], self.w, self.beta)
        done = []
        for i in picks:
            g = groups[i]
            ask = g.app.asks.get(g.priority)
            if ask is None or ask.count == 0 or not self.fits_free(ask.mem, ask.vc, node):
                continue
            self.place(g.app, ask, node)
            done.append(g.candidate.key)
        return done

    # --- ITA ----------------------------------------------------------------------------
    def _ita_ready(self) -> bool:
        """All apps so far registered (or held back by the AM limit) and tasks asked."""
        asked = False
        for app in self.apps:
            if app.is_done:
                continue
            if not app.registered_ms:
                if PRIORITY_AM in app.asks and app.asks[PRIORITY_AM].count and \
                        not self.am_allowed(app):
                    continue
                return False
            asked = asked or any(p != PRIORITY_AM for p in app.pending_priorities())
        return asked

    def _plan_ita(self) -> None:
        """Algorithm 1: AssignTask(j, T) for j = 1..m, T shrinking."""
        groups = [g for g in self.groups() if not g.candidate.is_am]
        left = [g.count for g in groups]
        p = self.params
        for node in self.rm.nodes:
            if node.state != "RUNNING":
                continue
            items = [(g.candidate.resource, n) for g, n in zip(groups, left, strict=True)]
            plan = hc.ita_knapsack((node.free_mem, node.free_vc), items, self.w,
                                   p.ita_memory_quantum_mb, p.ita_max_cells, p.ita_max_items)
            chosen = []
            for i, k in enumerate(plan.taken):
                if k:
                    left[i] -= k
                    chosen.append((groups[i].app, groups[i].priority, k))
            if chosen:
                self.plans[node] = chosen


def _iteration(app: SimApp) -> tuple[int, int]:
    """(I, I_done) of Eq 5: from ``iteration:K/N`` tags, else a one-step job."""
    it = hc.iteration_from_tags(app.tags)
    return (it.total, it.finished) if it is not None else (1, 0)
