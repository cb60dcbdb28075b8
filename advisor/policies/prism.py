"""PRISM (Mahendrakar, Patil; IJCA 172(4), 2017, after Zhang et al., IEEE TCC
2015; seed 004) as an advisor policy.

Status: experimental. PRISM schedules MapReduce work per *phase*, each with
its own resource profile. YARN allocates whole containers and does not gate
phase transitions, so the advisor runs the algorithm of section 4.1
(:mod:`~yarn_advisor.advisor.policies.prism_core`) on the Snapshot and publishes what it
implies:

* Profiles per (app, task type, phase) learned from running tasks and their
  containers' NM measurements (:mod:`~yarn_advisor.advisor.policies.prism_profiles`).
* Each cycle, up to ``max_nodes_per_cycle`` RUNNING nodes (rotating, so every
  node gets its "status message" over a few cycles) run lines 1-37: the
  candidates are the next phases of the tasks running there and the first
  phases of pending tasks of the ``top_k`` jobs with the highest deficit
  (data-local map first, else the non-local map and the reduce's shuffle),
  at most ``max_phases_per_node`` picks per node; utility with weight ``a``.
* ``advise_app_config`` per MapReduce app (value
  ``{"mapreduce.job.reduce.slowstart.completedmaps": x}``, advisory, for the
  app's next runs): x is the fraction of maps completed when PRISM first
  picked a shuffle phase of the job, or 1.0 if its maps finished with
  reduces still pending and no shuffle was ever picked (no room for them
  earlier). Decided once per app and kept in the state.

Published in ``next_state`` for other policies (read them as
``states["prism"]``): ``idle_headroom`` (node id -> ``{memory_mb, vcores}``:
allocated but idle by the phase profile of what runs there, e.g. reduces
waiting in shuffle; OPERA reads it as ``prism.idle_headroom``), ``urgency``
(app id -> share of the app's allocated memory held by reduces waiting in
shuffle for maps not yet done, 0-1; a HaSTE urgency input: finishing those
maps frees them), ``plan`` (node -> the phases picked this cycle, ``[app,
task type, phase, start | next_phase, utility]``), ``profiles`` (columnar
``{keys, n, memory_mb, vcores}``, see prism_profiles), ``samples`` (the
containers' last NM counters, columnar), ``slowstart`` and ``cursor``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yarn_advisor.advisor.model import Node, Snapshot
from yarn_advisor.advisor.policies import prism_core as pc
from yarn_advisor.advisor.policies._base import PolicyResult, raise_problems
from yarn_advisor.advisor.policies.prism_inputs import Inputs, build, first_phases, transitions
from yarn_advisor.advisor.policies.prism_profiles import Profiles
from yarn_advisor.advisor.recommendation import Explanation, JsonDict, Kind, Recommendation

NAME = "prism"
SLOWSTART = "mapreduce.job.reduce.slowstart.completedmaps"


@dataclass(frozen=True)
class Params:
    """PRISM parameters (the paper gives none; these are ours)."""

    a: float = 1.0
    top_k: int = 5
    max_nodes_per_cycle: int = 128
    max_phases_per_node: int = 8
    profile_window: int = 20
    default_slowstart: float = 0.05

    def __post_init__(self) -> None:
        p: list[tuple[str, str]] = []
        if not self.a >= 0:
            p.append(("a", f"must be >= 0, got {self.a}"))
        for name in ("top_k", "max_nodes_per_cycle", "max_phases_per_node", "profile_window"):
            if getattr(self, name) < 1:
                p.append((name, f"must be >= 1, got {getattr(self, name)}"))
        if not 0.0 <= self.default_slowstart <= 1.0:
            p.append(("default_slowstart", "must be in [0, 1]"))
        raise_problems(p)


def advise(snapshot: Snapshot, state: object, params: Params) -> PolicyResult:
    """Phase-level scheduling on this Snapshot; slow-start advice and published inputs."""
    st: dict[str, Any] = dict(state) if isinstance(state, dict) else {}
    prof = Profiles.load(st, params.profile_window)
    inp = build(snapshot, prof)
    nodes = sorted((n for n in snapshot.nodes if n.state == "RUNNING"), key=lambda n: n.id)
    cursor = st.get("cursor") if isinstance(st.get("cursor"), int) else 0
    picks, cursor, stats = _schedule(snapshot, inp, prof, nodes, int(cursor or 0), params)
    slow = _slowstart(st.get("slowstart"), inp, picks, snapshot.taken_at)
    recs = _advice(snapshot, inp, slow, params)
    prof.prune({a.id for a in snapshot.apps})
    profiles = prof.to_json()
    return PolicyResult(tuple(recs), {
        "version": 1,
        "updated_at": snapshot.taken_at,
        "cursor": cursor,
        "idle_headroom": _vecs(inp.headroom),
        "urgency": dict(sorted(inp.urgency.items())),
        "slowstart": slow,
        "plan": inp.plan,
        "profiles": profiles,
        "samples": inp.samples,
        "stats": {"nodes_scheduled": stats["nodes"], "phases_picked": stats["phases"],
                  "jobs": len(inp.pools), "profiles": len(prof.keys)},
    })


def _vecs(d: dict[str, pc.Vec]) -> dict[str, Any]:
    return {k: {"memory_mb": int(v[0]), "vcores": round(v[1], 3)}
            for k, v in sorted(d.items()) if v[0] > 0 or v[1] > 0}


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


def _slowstart(raw: object, inp: Inputs, picks: dict[str, tuple[str, pc.Scored]],
               now: int) -> dict[str, Any]:
    """Decide each job's slow-start once (see the module doc); keep live apps only."""
    prev = raw if isinstance(raw, dict) else {}
    out: dict[str, Any] = {}
    for aid, pool in inp.pools.items():
        if pool.map_only:
            continue
        p = prev.get(aid) if isinstance(prev.get(aid), dict) else None
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
        out.append(Recommendation(Kind.ADVISE_APP_CONFIG, aid, {SLOWSTART: x}, NAME, e))
    return out
