"""PRISM's recommendations: lines 1-37 on this cycle's nodes, slow-start advice per job.

See the package docstring for what is published; README.md for the equations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yarn_advisor.advisor.model.jsonvalue import JsonDict, freeze, freeze_dict
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Advice
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Node, Snapshot
from yarn_advisor.advisor.policies._base import NO_READS, PolicyResult, Reads
from yarn_advisor.advisor.policies.prism import core as pc
from yarn_advisor.advisor.policies.prism.inputs import Inputs, build, first_phases, transitions
from yarn_advisor.advisor.policies.prism.params import NAME, Params
from yarn_advisor.advisor.policies.prism.profiles import Profiles
from yarn_advisor.advisor.policies.prism.state import State

SLOWSTART = "mapreduce.job.reduce.slowstart.completedmaps"


def advise(snapshot: Snapshot, state: State, params: Params,
           reads: Reads = NO_READS) -> PolicyResult[State]:
    """Phase-level scheduling on this Snapshot; slow-start advice and published inputs."""
    prof = state.profiles.copy(params.profile_window)
    inp = build(snapshot, prof)
    nodes = sorted((n for n in snapshot.nodes if n.state == "RUNNING"), key=lambda n: n.id)
    picks, cursor, stats = _schedule(snapshot, inp, prof, nodes, state.cursor, params)
    slow = _slowstart(state.slowstart, inp, picks, snapshot.taken_at)
    recs = _advice(snapshot, inp, slow, params)
    prof.prune({a.id for a in snapshot.apps})
    headroom = {k: (float(int(v[0])), round(v[1], 3)) for k, v in sorted(inp.headroom.items())
                if v[0] > 0 or v[1] > 0}
    return PolicyResult(tuple(recs), State(
        profiles=prof,
        cursor=cursor,
        updated_at=snapshot.taken_at,
        idle_headroom=headroom,
        urgency=dict(sorted(inp.urgency.items())),
        slowstart={k: freeze_dict(v) for k, v in slow.items()},
        plan={k: freeze(v) for k, v in inp.plan.items()},
        stats={"nodes_scheduled": stats["nodes"], "phases_picked": stats["phases"],
               "jobs": len(inp.pools), "profiles": len(prof.keys)},
    ))


def _schedule(
    snap: Snapshot, inp: Inputs, prof: Profiles, nodes: list[Node], cursor: int, params: Params
) -> tuple[dict[str, tuple[str, pc.Scored]], int, dict[str, int]]:
    """Lines 1-37 on this cycle's nodes; the first shuffle pick of each job."""
    if not nodes:
        return {}, 0, {"nodes": 0, "phases": 0}
    cluster = (float(sum(n.total.memory_mb for n in nodes)),
               float(sum(n.total.vcores for n in nodes)))
    active = [a for a in snap.apps if a.state in ("RUNNING", "ACCEPTED")]
    fair = 1.0 / len(active) if active else 0.0
    alloc = {a.id: (float(a.allocated.memory_mb), float(a.allocated.vcores)) for a in active}
    deficits = pc.Deficits(alloc, fair, cluster, inp.pools)
    pools = inp.pools
    start = cursor % len(nodes)
    chosen = (nodes[start:] + nodes[:start])[: params.max_nodes_per_cycle]
    jobs = {j.app_id: j for j in snap.jobs}
    trans_of = transitions(
        inp, prof, {a.id: a.name for a in snap.apps},
        {a: j.maps_completed >= j.maps_total for a, j in jobs.items()},
        {a: j.reduces_total == 0 for a, j in jobs.items()}, {n.id for n in chosen},
    )
    first_shuffle: dict[str, tuple[str, pc.Scored]] = {}
    stats = {"nodes": 0, "phases": 0}
    plan: dict[str, list[list[Any]]] = {}

    def alive(j: str) -> bool:
        return pools[j].maps_pending > 0 or pools[j].reduces_pending > 0

    for n in chosen:
        trans = trans_of.get(n.id, [])
        host = n.host

        def candidates(_used: pc.Vec, trans: list[pc.Phase] = trans, host: str = host
                       ) -> list[pc.Phase]:
            cp = list(trans)
            for j in deficits.top(params.top_k, alive):
                cp += first_phases(pools[j], host)
            return cp

        def commit(ph: pc.Phase, trans: list[pc.Phase] = trans, host: str = host) -> None:
            if ph.alloc == (0.0, 0.0):
                trans.remove(ph)
                return
            pool = pools[ph.job]
            if ph.task_type == "MAP":
                pool.maps_pending -= 1
                if ph.local:
                    pool.local[host] -= 1
            else:
                pool.reduces_pending -= 1
            deficits.add(ph.job, ph.alloc)

        cap = (float(n.total.memory_mb), float(n.total.vcores))
        used = inp.used.get(n.id, (0.0, 0.0))
        ps, _ = pc.schedule_machine(cap, used, candidates, commit, deficits.alloc_of, fair,
                                    cluster, params.a, params.max_phases_per_node)
        stats["nodes"] += 1
        stats["phases"] += len(ps)
        if ps:
            plan[n.id] = [[s.phase.job, s.phase.task_type, s.phase.name,
                           "start" if s.phase.alloc != (0.0, 0.0) else "next_phase",
                           round(s.utility, 6)] for s in ps]
        for s in ps:
            if s.phase.name == "SHUFFLE" and s.phase.alloc != (0.0, 0.0):
                first_shuffle.setdefault(s.phase.job, (n.id, s))
    inp.plan = plan
    return first_shuffle, (start + len(chosen)) % len(nodes), stats


def _slowstart(prev: Mapping[str, Mapping[str, Any]], inp: Inputs,
               picks: dict[str, tuple[str, pc.Scored]], now: int) -> dict[str, Any]:
    """Decide each job's slow-start once (see the package doc); keep live apps only."""
    out: dict[str, Any] = {}
    for aid, pool in inp.pools.items():
        if pool.map_only:
            continue
        p = prev.get(aid)
        if p is not None and isinstance(p.get("fraction"), int | float):
            out[aid] = p
        elif aid in picks:
            node, s = picks[aid]
            out[aid] = {"fraction": round(pool.done, 4), "decided_at": now, "how": "picked",
                        "node": node, "utility": round(s.utility, 6),
                        "u_fairness": round(s.u_fairness, 6), "u_perf": round(s.u_perf, 6)}
        elif pool.done >= 1.0 and p is not None and pool.seen_pending[1] > 0:
            out[aid] = {"fraction": 1.0, "decided_at": now, "how": "maps_done"}
        elif pool.done < 1.0 and pool.seen_pending[1] > 0:
            out[aid] = {"fraction": None, "watching_since": (p or {}).get("watching_since", now)}
    return out


def _advice(snap: Snapshot, inp: Inputs, slow: dict[str, Any], params: Params
            ) -> list[Recommendation]:
    out: list[Recommendation] = []
    jobs = {j.app_id: j for j in snap.jobs}
    th: JsonDict = {"a": params.a, "top_k": params.top_k,
                    "max_phases_per_node": params.max_phases_per_node,
                    "mapreduce_default": params.default_slowstart}
    for aid, d in sorted(slow.items()):
        frac = d.get("fraction")
        pool = inp.pools.get(aid)
        if not isinstance(frac, int | float) or pool is None:
            continue
        x = round(float(frac), 2)
        job = jobs.get(aid)
        if d.get("how") == "picked":
            why = (f"PRISM first started one of its reduces' shuffle phase at "
                   f"{float(frac):.0%} of maps completed (utility {d.get('utility')} on "
                   f"{d.get('node')})")
        else:
            why = "its maps finished before PRISM found room for a shuffle phase"
        summary = (f"{aid} ({pool.app.name}): {why}: set {SLOWSTART}={x} for its next runs "
                   f"(MapReduce default {params.default_slowstart})")
        inputs: JsonDict = {
            "maps_total": job.maps_total if job else None,
            "maps_completed": job.maps_completed if job else None,
            "reduces_total": job.reduces_total if job else None,
            "maps_pending": pool.seen_pending[0], "reduces_pending": pool.seen_pending[1],
            "reduces_waiting_in_shuffle": inp.shuffling.get(aid, 0),
            "decision": {k: v for k, v in d.items() if k != "fraction"},
        }
        scores: JsonDict = {"slowstart": x, "urgency": inp.urgency.get(aid, 0.0),
                            "maps_done_fraction": round(pool.done, 4)}
        e = Explanation(f"prism.slowstart.{d.get('how')}", summary, inputs, scores, th)
        out.append(Recommendation(Kind.ADVISE_APP_CONFIG, aid, Advice.of({SLOWSTART: x}), NAME, e))
    return out
