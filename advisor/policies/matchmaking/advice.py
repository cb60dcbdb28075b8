"""Matchmaking's recommendation: one ``node-locality-delay`` for the scheduler, explained."""

from __future__ import annotations

from yarn_advisor.advisor.model.jsonvalue import JsonDict, JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ConfUpdate
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import NO_READS, PolicyResult, Reads
from yarn_advisor.advisor.policies.matchmaking.core import locality_rate, step_markers
from yarn_advisor.advisor.policies.matchmaking.inputs import (
    CONF_KEY,
    app_locality,
    cluster_counters,
    current_delay,
    local_hosts,
)
from yarn_advisor.advisor.policies.matchmaking.params import NAME, Params
from yarn_advisor.advisor.policies.matchmaking.state import State


def advise(snapshot: Snapshot, state: State, params: Params,
           reads: Reads = NO_READS) -> PolicyResult[State]:
    """The node-locality-delay recommendation and the next marker state."""
    app_ids = frozenset(a.id for a in snapshot.apps)
    new_apps = sorted(app_ids - state.apps)
    hosts = local_hosts(snapshot)
    running = [n for n in snapshot.nodes if n.state == "RUNNING"]
    free = {
        n.id: n.host in hosts or n.id in hosts
        for n in running
        if n.available.memory_mb > 0 and n.available.vcores > 0
    }
    step = step_markers(state.markers, free, reset=bool(new_apps))

    computed = min(
        max(params.rounds * len(running), params.min_delay),
        params.max_delay if params.max_delay is not None else 1 << 31,
    )
    held = state.held_delay
    if held is None or abs(computed - held) > params.hysteresis * held:
        held = computed
    counters = cluster_counters(snapshot)
    nxt = State(step.markers, app_ids, held, counters)
    current = current_delay(snapshot, params.current_node_locality_delay)
    if current == held:
        return PolicyResult((), nxt)

    racks = len({n.rack for n in running})
    cluster = _locality_json(counters, state.counters)
    inputs: JsonDict = {
        "running_nodes": len(running),
        "racks": racks,
        "nodes_with_free_resources": len(free),
        "nodes_with_local_work": len(step.local_hits),
        "new_apps": len(new_apps),
        "markers_reset": bool(new_apps),
        "markers": {
            "local_hits": len(step.local_hits),
            "newly_marked": len(step.newly_marked),
            "eligible_nonlocal": len(step.eligible_nonlocal),
            "eligible_nonlocal_sample": list(step.eligible_nonlocal[:10]),
        },
        "cluster_locality": cluster,
        "apps_lowest_locality": app_locality(snapshot, params.top_apps),
    }
    scores: JsonDict = {
        "computed_delay": computed,
        "held_delay": held,
        "cluster_node_local_rate": cluster.get("rate"),
    }
    thresholds: JsonDict = {
        "rounds": params.rounds,
        "min_delay": params.min_delay,
        "max_delay": params.max_delay,
        "hysteresis": params.hysteresis,
        "current_node_locality_delay": current,
    }
    rate = cluster.get("rate")
    summary = (
        f"set {CONF_KEY} to {held} (= {params.rounds} round(s) x {len(running)} running "
        f"nodes, was {'unknown' if current is None else current}): "
        f"every node gets one local chance per heartbeat round; "
        f"{len(step.eligible_nonlocal)} marked node(s) would take a non-local task; "
        f"cluster node-local rate {_pct(rate)}"
    )
    rec = Recommendation(
        Kind.UPDATE_SCHEDULER_CONF,
        "scheduler",
        ConfUpdate.of({CONF_KEY: held}),
        NAME,
        Explanation("matchmaking.node_locality_delay", summary, inputs, scores, thresholds),
        None if current is None else ConfUpdate.of({CONF_KEY: current}),
    )
    return PolicyResult((rec,), nxt)


def _pct(rate: JsonValue) -> str:
    return f"{rate:.1%}" if isinstance(rate, float) else "unknown"


def _locality_json(
    now: tuple[int, int, int] | None, before: tuple[int, int, int] | None
) -> JsonDict:
    if now is None:
        return {"source": "none (no QueueMetrics beans)", "rate": None}
    total = sum(now)
    out: JsonDict = {
        "source": "rm-queue-metrics",
        "node_local": now[0],
        "rack_local": now[1],
        "off_switch": now[2],
        "rate": _round(locality_rate(now[0], total)),
        "rack_local_rate": _round(locality_rate(now[1], total)),
    }
    if before is not None and all(a >= b for a, b in zip(now, before, strict=True)):
        d = [a - b for a, b in zip(now, before, strict=True)]
        out["last_cycle"] = {
            "node_local": d[0],
            "rack_local": d[1],
            "off_switch": d[2],
            "rate": _round(locality_rate(d[0], sum(d))),
        }
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)
