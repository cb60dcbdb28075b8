"""HaSTE per-node advice: ITA plans for idle nodes, RTA picks for the others.

See the ``haste`` module docstring for what is published and why; this
module turns :class:`~yarn_advisor.advisor.policies.haste.inputs.Inputs` and the nodes
into ``advise_app_config`` recommendations targeted at node ids.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from yarn_advisor.advisor.model.jsonvalue import (
    FrozenJson,
    JsonDict,
    JsonValue,
    freeze,
    freeze_dict,
)
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Advice
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Node
from yarn_advisor.advisor.policies.haste import core as hc
from yarn_advisor.advisor.policies.haste.inputs import Inputs, Request
from yarn_advisor.advisor.policies.haste.nodes import IntArray, NodeChoice, best_per_node, rank_on
from yarn_advisor.advisor.policies.haste.params import NAME, Params


def thresholds(params: Params) -> JsonDict:
    """The parameters every HaSTE explanation reports."""
    b = params.effective_beta
    return {
        "beta": [b[0], b[1], b[2]],
        "weights": {
            "memory": params.memory_weight,
            "vcores": params.vcores_weight,
            "memory_unit_mb": params.memory_unit_mb,
        },
        "max_priority": params.max_priority,
        "reduce_ratio_cap": params.reduce_ratio_cap,
    }


def request_json(r: Request) -> JsonDict:
    """A request as explanation input."""
    out: JsonDict = {
        "app": r.app.id,
        "request_priority": r.priority,
        "role": r.role,
        "memory_mb": r.resource[0],
        "vcores": r.resource[1],
        "containers": r.containers,
    }
    if r.partition:
        out["partition"] = r.partition
    return out


def _partition(node: Node) -> str:
    return node.labels[0] if node.labels else ""


def _serve(r: Request) -> JsonDict:
    return {
        "app": r.app.id,
        "request_priority": r.priority,
        "role": r.role,
        "memory_mb": r.resource[0],
        "vcores": r.resource[1],
    }


def node_advice(inp: Inputs, nodes: list[Node], params: Params) -> list[Recommendation]:
    """One recommendation per node with free resources that some request fits."""
    w = params.weights
    free = [n for n in nodes if n.available.memory_mb > 0 and n.available.vcores > 0]
    if params.max_node_advice is not None:
        free.sort(key=lambda n: (-w.size((n.available.memory_mb, n.available.vcores)), n.id))
        free = free[: params.max_node_advice]
    free.sort(key=lambda n: n.id)
    idle = [n for n in free if n.num_containers == 0 and n.used.memory_mb == 0]
    idle = idle[: params.ita_max_nodes] if params.ita else []
    out: list[Recommendation] = []
    left = np.array([r.containers for r in inp.requests], dtype=np.int64)
    parts_of = np.array([r.partition for r in inp.requests], dtype=object)
    th = freeze_dict(thresholds(params))
    ita_ids: set[str] = set()
    for n in idle:
        rec = _ita(inp, n, left, parts_of, th, params)
        if rec is not None:
            ita_ids.add(n.id)
            out.append(rec)
    rest = [n for n in free if n.id not in ita_ids]
    shared: dict[int, tuple[JsonValue, Advice]] = {}  # per request: (request, value)
    for part in sorted({_partition(n) for n in rest}):
        pn = [n for n in rest if _partition(n) == part]
        # RTA candidates: what the ITA plans above left in the pool (Algorithm 1's T - L).
        cidx = np.nonzero((parts_of == part) & (left > 0))[0]
        avail = np.array([(n.available.memory_mb, n.available.vcores) for n in pn], dtype=np.int64)
        choices = best_per_node(
            avail.reshape(-1, 2),
            inp.res[cidx],
            inp.urgency[cidx],
            inp.alignment[cidx],
            inp.is_am[cidx],
            w,
            params.effective_beta,
            decimals=6,
        )
        for ch in choices:
            node, ci = pn[ch.node], int(cidx[ch.candidate])
            r = inp.requests[ci]
            if ci not in shared:
                shared[ci] = (
                    freeze(request_json(r)),
                    Advice.of({"advice": "serve_next", "serve_next": _serve(r)}),
                )
            req, value = shared[ci]
            out.append(_rta_rec(node, part, r, ch, req, value, th, inp.rounded[ci]))
    return out


def _rta_rec(
    node: Node,
    part: str,
    r: Request,
    ch: NodeChoice,
    req: JsonValue,
    value: Advice,
    th: FrozenJson,
    ua: tuple[float, float],
) -> Recommendation:
    rule = "haste.am_first" if r.role == "am" else "haste.rta.serve_next"
    free = node.available
    inputs: JsonDict = {
        "node_available": {"memory_mb": free.memory_mb, "vcores": free.vcores},
        "partition": part,
        "fitting_requests": ch.n_candidates,
        "request": req,
    }
    scores: JsonDict = {
        "fitness": ch.fitness,
        "fitness_norm": ch.n_fitness,
        "urgency": ua[0],
        "urgency_norm": ch.n_urgency,
        "alignment": ua[1],
        "alignment_norm": ch.n_alignment,
        "preference": ch.preference,
    }
    why = " (AM first)" if r.role == "am" else f", preference {ch.preference:.3f}"
    summary = (
        f"node {node.id} (free {free.memory_mb} MiB/{free.vcores} vcores): serve {r.app.id} "
        f"priority {r.priority} <{r.resource[0]} MiB, {r.resource[1]} vcores> next{why} "
        f"of {ch.n_candidates} fitting requests"
    )
    return Recommendation(
        Kind.ADVISE_APP_CONFIG,
        node.id,
        value,
        NAME,
        Explanation(rule, summary, inputs, scores, th),
    )


def _ita(
    inp: Inputs,
    node: Node,
    left: IntArray,
    parts_of: NDArray[np.object_],
    th: FrozenJson,
    params: Params,
) -> Recommendation | None:
    """Algorithm 1 on one idle node; takes planned requests out of ``left``."""
    w, cap = params.weights, (node.available.memory_mb, node.available.vcores)
    part = _partition(node)
    ok = (left > 0) & (parts_of == part) & (inp.res[:, 0] <= cap[0]) & (inp.res[:, 1] <= cap[1])
    pool = np.nonzero(ok)[0]
    if len(pool) == 0:
        return None
    order, *_ = rank_on(
        (float(cap[0]), float(cap[1])),
        inp.res[pool],
        inp.urgency[pool],
        inp.alignment[pool],
        inp.is_am[pool],
        w,
        params.effective_beta,
    )
    ranked = pool[order]
    am = inp.is_am[ranked]
    plan: list[tuple[int, int]] = []
    room = cap
    for i in ranked[am].tolist():  # AM requests first, greedily
        res, k = inp.requests[i].resource, 0
        while k < left[i] and hc.fits(res, room):
            room, k = (room[0] - res[0], room[1] - res[1]), k + 1
        if k:
            plan.append((i, k))
    items = ranked[~am][: params.ita_max_items].tolist()
    dp = hc.ita_knapsack(
        room,
        [(inp.requests[i].resource, int(left[i])) for i in items],
        w,
        params.ita_memory_quantum_mb,
        params.ita_max_cells,
        params.ita_max_items,
    )
    plan += [(i, k) for i, k in zip(items, dp.taken, strict=True) if k > 0]
    if not plan:
        return None
    for i, k in plan:
        left[i] -= k
    used = (
        sum(inp.requests[i].resource[0] * k for i, k in plan),
        sum(inp.requests[i].resource[1] * k for i, k in plan),
    )
    first = inp.requests[plan[0][0]]
    value: JsonDict = {
        "advice": "serve_next",
        "serve_next": _serve(first),
        "plan": [
            {
                "app": inp.requests[i].app.id,
                "request_priority": inp.requests[i].priority,
                "containers": k,
            }
            for i, k in plan
        ],
    }
    inputs: JsonDict = {
        "node_capacity": {"memory_mb": cap[0], "vcores": cap[1]},
        "partition": part,
        "fitting_requests": len(pool),
        "dp_items": len(items),
        "request": request_json(first),
    }
    scores: JsonDict = {
        "plan_value": round(
            dp.value
            + sum(
                w.size(inp.requests[i].resource) * k
                for i, k in plan
                if inp.requests[i].role == "am"
            ),
            6,
        ),
        "memory_utilisation": round(used[0] / cap[0], 6) if cap[0] else 0.0,
        "vcores_utilisation": round(used[1] / cap[1], 6) if cap[1] else 0.0,
    }
    th_ita: JsonDict = {
        **th,
        "ita_memory_quantum_mb": dp.memory_quantum_mb,
        "ita_cells": dp.cells,
        "ita_max_items": params.ita_max_items,
    }
    summary = (
        f"idle node {node.id} <{cap[0]} MiB, {cap[1]} vcores>: ITA plans "
        f"{sum(k for _, k in plan)} containers (memory {scores['memory_utilisation']:.0%}, "
        f"vcores {scores['vcores_utilisation']:.0%}); serve {first.app.id} priority "
        f"{first.priority} first"
    )
    return Recommendation(
        Kind.ADVISE_APP_CONFIG,
        node.id,
        Advice.of(value),
        NAME,
        Explanation("haste.ita.knapsack", summary, inputs, scores, th_ita),
    )
