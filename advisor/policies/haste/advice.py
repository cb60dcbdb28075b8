"""HaSTE's recommendations: application priorities per leaf queue, and per-node advice.

What is published and why: see the package docstring and README.md.
"""

from __future__ import annotations

import numpy as np

from yarn_advisor.advisor.model.jsonvalue import JsonDict, freeze_dict
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Priority
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Node, Snapshot
from yarn_advisor.advisor.policies._base import NO_READS, PolicyResult, Reads
from yarn_advisor.advisor.policies.haste.inputs import Inputs, Request, build_inputs
from yarn_advisor.advisor.policies.haste.node_advice import node_advice, request_json, thresholds
from yarn_advisor.advisor.policies.haste.nodes import rank_on
from yarn_advisor.advisor.policies.haste.params import NAME, Params
from yarn_advisor.advisor.policies.haste.state import State


def advise(snapshot: Snapshot, state: State, params: Params,
           reads: Reads = NO_READS) -> PolicyResult[State]:
    """Priorities per leaf queue and per-node advice for ``snapshot`` (stateless)."""
    w, _beta = params.weights, params.effective_beta
    inp = build_inputs(snapshot, w, params.iteration_rules, params.reduce_ratio_cap)
    nodes = [n for n in snapshot.nodes if n.state == "RUNNING"]
    recs = _priorities(snapshot, inp, nodes, params)
    if params.node_advice:
        recs += node_advice(inp, nodes, params)
    return PolicyResult(tuple(recs), state)


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
        running = [lv for lv in level_of.values() if not lv[0]]
        if not params.am_first_alone and len(running) > 1 and len(set(running)) == 1:
            # nothing ranks the running apps: an AM boost alone, applied from outside as
            # a whole-app priority for a cycle, is newest-first (+17 % mean JCT on SLS)
            level_of = dict.fromkeys(level_of, (False, 0.0))
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
            desired = _level_priority(k, len(levels), top)
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
                Recommendation(Kind.SET_APP_PRIORITY, app_id, Priority(desired), NAME, expl,
                               Priority(r.app.priority))
            )
    return out


def _level_priority(k: int, levels: int, top: int) -> int:
    """Level ``k`` (0 best) of ``levels`` spread over ``0..top``: the best gets
    ``top``, the worst 0, one level alone 0 (nothing tells the apps apart, so
    they keep YARN's default; a raised app comes back down). The lowest level at 0
    matters from outside the RM: an app raised for its AM falls back to 0 once the
    AM runs, and a write back to a target's original value is never held by the
    actuator's cooldown, so the boost does not stick."""
    if levels < 2:
        return 0
    return round(top * (levels - 1 - k) / (levels - 1))


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
