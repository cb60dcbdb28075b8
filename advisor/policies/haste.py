"""HaSTE / HaSTE-A (Yao, Gao, Wang, Sheng, Mi; IEEE TCC 9(3), 2021) as an advisor policy.

Status: experimental. The paper's scheduler runs inside the RM; from outside
we publish two things each cycle:

* ``set_app_priority`` (lever ``PUT /apps/{id}/priority``): inside each leaf
  queue, apps with pending requests are ranked by their best request's
  preference (Eq 6; Eq 4 when ``alignment`` is off), AM requests first, and
  the K distinct score levels are spread evenly over ``0..max_priority``:
  level k (0 = best) gets ``max_priority - k * (max_priority + 1) // K``, so
  equal scores share a priority and the best level always gets
  ``max_priority`` (lowered to the cluster's ``yarn.cluster.max-application-priority``
  when the RM reports it). The fitness here is computed on a *reference
  capacity* -- the mean residual capacity of RUNNING nodes with free
  resources (mean total capacity when none is free) -- because a priority
  applies on every node; normalisation is over the queue's own requests,
  because priority only orders apps within a leaf queue. Only queues with at
  least two competing apps, and only apps whose priority would change, get
  a recommendation. The lever exists only on the CapacityScheduler and only
  FIFO-ordered leaf queues honour it, so nothing is recommended on other
  schedulers or in queues whose ordering policy is ``fair``. Note: with
  intra-queue preemption enabled, the RM may preempt lower-priority apps to
  serve the raised ones.
* ``advise_app_config`` with ``target`` = node id (advisory only, no RM
  lever): for each RUNNING node with free resources, the request it should
  serve next (``value.serve_next``). Idle nodes (no containers) get the ITA
  plan of Algorithm 1 (``value.plan``; AM requests are placed greedily before
  the DP; the requests it plans are taken out of the pool for the next idle
  node, as in the paper's loop over servers; at most ``ita_max_nodes`` per
  cycle, the others get RTA), the rest get RTA (haste_nodes). RTA advice is
  per heartbeat: nodes do not see each other's picks. A request's partition
  (node label) must equal the node's first label ('' = default partition).
  ``max_node_advice`` keeps the nodes with the most free resources.

Deviations and choices: see ``haste_core`` (Eq 1 on residual capacity,
Eq 3 cap, fallback urgency, flat normalisation, tie-breaks, ITA bounds) and
``haste_inputs`` (roles, counts, tag format). ``beta`` is used as given
(the paper's default 0.2/0.2/0.6 is not renormalised).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from yarn_advisor.advisor.model import Node, Snapshot
from yarn_advisor.advisor.policies import haste_core as hc
from yarn_advisor.advisor.policies._base import PolicyResult, raise_problems
from yarn_advisor.advisor.policies.haste_advice import node_advice, request_json, thresholds
from yarn_advisor.advisor.policies.haste_inputs import Inputs, IterationRule, Request, build_inputs
from yarn_advisor.advisor.policies.haste_nodes import rank_on
from yarn_advisor.advisor.recommendation import (
    Explanation,
    JsonDict,
    Kind,
    Recommendation,
    freeze_dict,
)

NAME = "haste"

__all__ = ["NAME", "IterationRule", "Params", "advise"]


@dataclass(frozen=True)
class Params:
    """HaSTE parameters (defaults follow the paper where it gives one)."""

    memory_weight: float = 1.0
    vcores_weight: float = 1.0
    memory_unit_mb: int = 1024
    beta: tuple[float, float, float] = (0.2, 0.2, 0.6)
    alignment: bool = True
    max_priority: int = 10
    reduce_ratio_cap: float = 10.0
    iteration_rules: tuple[IterationRule, ...] = ()
    node_advice: bool = True
    max_node_advice: int | None = None
    ita: bool = True
    ita_max_nodes: int = 16
    ita_memory_quantum_mb: int = 512
    ita_max_cells: int = 8192
    ita_max_items: int = 64

    def __post_init__(self) -> None:
        p: list[tuple[str, str]] = []
        for name in ("memory_weight", "vcores_weight", "reduce_ratio_cap"):
            if not getattr(self, name) >= 0:
                p.append((name, f"must be >= 0, got {getattr(self, name)}"))
        if self.memory_weight + self.vcores_weight <= 0:
            p.append(("vcores_weight", "memory_weight + vcores_weight must be > 0"))
        if len(self.beta) != 3 or any(not b >= 0 for b in self.beta) or sum(self.beta) <= 0:
            p.append(("beta", f"must be three numbers >= 0 with a positive sum, got {self.beta}"))
        for name, low in (
            ("memory_unit_mb", 1),
            ("max_priority", 1),
            ("ita_max_nodes", 0),
            ("ita_memory_quantum_mb", 1),
            ("ita_max_cells", 4),
            ("ita_max_items", 1),
        ):
            if getattr(self, name) < low:
                p.append((name, f"must be >= {low}, got {getattr(self, name)}"))
        if self.max_node_advice is not None and self.max_node_advice < 0:
            p.append(("max_node_advice", f"must be >= 0 or null, got {self.max_node_advice}"))
        raise_problems(p)

    @property
    def weights(self) -> hc.Weights:
        """The resource weights of Eq 1-3."""
        return hc.Weights(self.memory_weight, self.vcores_weight, self.memory_unit_mb)

    @property
    def effective_beta(self) -> tuple[float, float, float]:
        """``beta`` for HaSTE-A (Eq 6), ``(1, 1, 0)`` for plain HaSTE (Eq 4)."""
        return self.beta if self.alignment else (1.0, 1.0, 0.0)


def advise(snapshot: Snapshot, state: object, params: Params) -> PolicyResult:
    """Priorities per leaf queue and per-node advice for ``snapshot`` (stateless)."""
    w, _beta = params.weights, params.effective_beta
    inp = build_inputs(snapshot, w, params.iteration_rules, params.reduce_ratio_cap)
    nodes = [n for n in snapshot.nodes if n.state == "RUNNING"]
    recs = _priorities(snapshot, inp, nodes, params)
    if params.node_advice:
        recs += node_advice(inp, nodes, params)
    return PolicyResult(tuple(recs), None)


def _reference_capacity(nodes: list[Node]) -> tuple[float, float]:
    free = [n.available for n in nodes if n.available.memory_mb > 0 and n.available.vcores > 0]
    pool = free or [n.total for n in nodes]
    if not pool:
        return (0.0, 0.0)
    return (float(np.mean([r.memory_mb for r in pool])), float(np.mean([r.vcores for r in pool])))


def _priorities(
    snap: Snapshot, inp: Inputs, nodes: list[Node], params: Params
) -> list[Recommendation]:
    if snap.scheduler_type != "capacityScheduler":
        return []
    ref = _reference_capacity(nodes)
    by_queue: dict[str, list[int]] = {}
    for i, r in enumerate(inp.requests):
        by_queue.setdefault(r.app.queue, []).append(i)
    policies = {q.path: q.ordering_policy for q in snap.queues} | {
        q.name: q.ordering_policy for q in snap.queues if q.is_leaf
    }
    th = freeze_dict(thresholds(params))
    cluster = freeze_dict(
        {
            "reference_capacity": {"memory_mb": round(ref[0], 3), "vcores": round(ref[1], 3)},
            "scheduler_type": snap.scheduler_type,
        }
    )
    out: list[Recommendation] = []
    for queue in sorted(by_queue):
        if "fair" in policies.get(queue, "").lower():
            continue  # the fair ordering policy ignores application priority
        idx = np.array(by_queue[queue], dtype=np.int64)
        order, *cols = rank_on(
            ref,
            inp.res[idx],
            inp.urgency[idx],
            inp.alignment[idx],
            inp.is_am[idx],
            params.weights,
            params.effective_beta,
            require_fit=False,
        )
        best: dict[str, int] = {}
        for j in order.tolist():  # best first, so the first row seen per app is its best
            best.setdefault(inp.requests[int(idx[j])].app.id, j)
        if len(best) < 2:
            continue
        f, nf, nu, na, pref = (np.round(c, 6).tolist() for c in cols)
        level_of = {a: (bool(inp.is_am[idx[j]]), round(pref[j], 6)) for a, j in best.items()}
        levels = sorted(set(level_of.values()), reverse=True)
        rank = {lv: k for k, lv in enumerate(levels)}
        ctx = freeze_dict(
            {
                "path": queue,
                "ordering_policy": policies.get(queue, ""),
                "competing_apps": len(best),
                "levels": len(levels),
            }
        )
        top = _priority_ceiling(snap, params)
        for app_id, j in best.items():
            i = int(idx[j])
            r = inp.requests[i]
            k = rank[level_of[app_id]]
            desired = top - (k * (top + 1)) // len(levels)
            if r.app.priority == desired:
                continue
            u, a = inp.rounded[i]
            scores: JsonDict = {
                "fitness": f[j],
                "urgency": u,
                "alignment": a,
                "fitness_norm": nf[j],
                "urgency_norm": nu[j],
                "alignment_norm": na[j],
                "preference": pref[j],
                "rank": k + 1,
            }
            inputs: JsonDict = {"queue": ctx, "cluster": cluster, "app_state": r.app.state}
            inputs.update(_job_inputs(r))
            why = "AM request first" if r.role == "am" else f"preference {pref[j]:.3f}"
            summary = (
                f"{app_id}: {why}, rank {k + 1}/{len(levels)} in queue {queue} "
                f"-> priority {desired} (was {r.app.priority})"
            )
            rule = "haste.am_first" if r.role == "am" else "haste.rta.preference_rank"
            expl = Explanation(rule, summary, inputs, scores, th)
            out.append(
                Recommendation(Kind.SET_APP_PRIORITY, app_id, desired, NAME, expl, r.app.priority)
            )
    return out


def _job_inputs(r: Request) -> JsonDict:
    out: JsonDict = {"request": request_json(r)}
    if r.job is not None:
        j = r.job
        out["job"] = {
            "maps_total": j.maps_total,
            "maps_assigned": j.maps_assigned,
            "reduces_assigned": j.reduces_assigned,
            "maps_running": j.maps_running,
            "reduces_running": j.reduces_running,
            "map_size": round(j.map_size, 6),
            "reduce_size": round(j.reduce_size, 6),
            "am_size": round(j.am_size, 6),
        }
    elif r.role != "am":
        out["urgency_source"] = "fallback: app progress x allocated (no MapReduce counts)"
    if r.iteration is not None:
        it = r.iteration
        out["iteration"] = {"total": it.total, "finished": it.finished, "source": it.source}
    return out


def _priority_ceiling(snapshot: Snapshot, params: Params) -> int:
    """``max_priority``, lowered to the cluster's own
    ``yarn.cluster.max-application-priority`` when the RM reported it (the RM
    caps higher values anyway, which would collapse the ranking)."""
    cluster_max = snapshot.max_app_priority
    if cluster_max is None or cluster_max < 1:
        return params.max_priority
    return min(params.max_priority, cluster_max)
