"""Matchmaking (He, Lu, Swanson; UNL CSE 2011) as an advisor policy.

Status: experimental. The paper gives every node one chance per heartbeat
round to grab a local map task before any node takes a non-local one, instead
of a hand-tuned delay ``D``. The CapacityScheduler's equivalent knob is
``yarn.scheduler.capacity.node-locality-delay``: the number of missed
scheduling opportunities (node heartbeats offered to an app) after which it
accepts a rack-local container. One heartbeat round offers at most one
opportunity per node, so we recommend ``rounds x RUNNING nodes`` (clamped to
``[min_delay, max_delay]``) -- the Hadoop docs' own "typically the number of
nodes in the cluster". ``rack-locality-additional-delay`` is left to the RM
(its default -1 derives the off-switch delay from the request); the paper's
evaluation is one rack, where rack-local is any node.

Each cycle counts as one heartbeat round for the locality markers (Tables
1-2, ``matchmaking_core.step_markers``): a RUNNING node with free resources
either has node-local pending work (a pending row named after its host),
or is marked, or -- marked already -- would take one non-local task under
matchmaking. Markers are cleared when an app id appears that the previous
cycle did not show. The counts are reported in the explanation.

Locality (Eq 1, node-local / all): cluster-wide from the RM's QueueMetrics
``AggregateNodeLocalContainersAllocated`` / rack-local / off-switch counters
(the ``root`` bean, else the leaf beans summed): cumulative and, from the
previous cycle's counters kept in state, for the last cycle. These count
every container, AMs and reduces (ANY-only asks, counted off-switch)
included, so they are a lower bound of the paper's map-only rate. Per app,
the MapReduce counters ``DATA_LOCAL_MAPS`` / ``RACK_LOCAL_MAPS`` /
``OTHER_LOCAL_MAPS`` are used when the model's MRJob carries them
(``data_local_maps`` etc.; absent today), else the app inherits its queue's
rate (``source: queue``).

Hysteresis: the held value changes only when the new one differs from it by
more than ``hysteresis`` (relative), so nodes joining and leaving do not
flap the scheduler configuration. A recommendation is emitted unless the
RM's current value already equals the held value: the live value read from
``GET /scheduler-conf`` (``Snapshot.scheduler_conf``), else the
``current_node_locality_delay`` parameter, else unknown (always emitted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yarn_advisor.advisor.model import QueueMetricsBean, Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, raise_problems
from yarn_advisor.advisor.policies.matchmaking_core import Marker, locality_rate, step_markers
from yarn_advisor.advisor.recommendation import (
    Explanation,
    JsonDict,
    JsonValue,
    Kind,
    Recommendation,
)

NAME = "matchmaking"
CONF_KEY = "yarn.scheduler.capacity.node-locality-delay"
ACTIVE = frozenset({"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING"})


@dataclass(frozen=True)
class Params:
    """Matchmaking parameters."""

    rounds: int = 1
    min_delay: int = 1
    max_delay: int | None = None
    hysteresis: float = 0.1
    current_node_locality_delay: int | None = None
    top_apps: int = 10

    def __post_init__(self) -> None:
        p: list[tuple[str, str]] = []
        for name in ("rounds", "min_delay"):
            if getattr(self, name) < 1:
                p.append((name, f"must be >= 1, got {getattr(self, name)}"))
        if self.max_delay is not None and self.max_delay < self.min_delay:
            p.append(
                ("max_delay", f"must be >= min_delay ({self.min_delay}), got {self.max_delay}")
            )
        if not 0.0 <= self.hysteresis < 1.0:
            p.append(("hysteresis", f"must be in [0, 1), got {self.hysteresis}"))
        if self.current_node_locality_delay is not None and self.current_node_locality_delay < -1:
            p.append(("current_node_locality_delay", "must be >= -1 or null"))
        if self.top_apps < 0:
            p.append(("top_apps", f"must be >= 0, got {self.top_apps}"))
        raise_problems(p)


@dataclass(frozen=True)
class State:
    """Carried between cycles: markers, app ids seen, held delay, counters."""

    markers: dict[str, Marker] = field(default_factory=dict)
    apps: frozenset[str] = frozenset()
    held_delay: int | None = None
    counters: tuple[int, int, int] | None = None


def advise(snapshot: Snapshot, state: object, params: Params) -> PolicyResult:
    """The node-locality-delay recommendation and the next marker state."""
    st = state if isinstance(state, State) else State()
    app_ids = frozenset(a.id for a in snapshot.apps)
    new_apps = sorted(app_ids - st.apps)
    local_hosts = _local_hosts(snapshot)
    running = [n for n in snapshot.nodes if n.state == "RUNNING"]
    free = {
        n.id: n.host in local_hosts or n.id in local_hosts
        for n in running
        if n.available.memory_mb > 0 and n.available.vcores > 0
    }
    step = step_markers(st.markers, free, reset=bool(new_apps))

    computed = min(
        max(params.rounds * len(running), params.min_delay),
        params.max_delay if params.max_delay is not None else 1 << 31,
    )
    held = st.held_delay
    if held is None or abs(computed - held) > params.hysteresis * held:
        held = computed
    counters = _cluster_counters(snapshot)
    nxt = State(step.markers, app_ids, held, counters)
    current = _current_delay(snapshot, params)
    if current == held:
        return PolicyResult((), nxt)

    racks = len({n.rack for n in running})
    cluster = _locality_json(counters, st.counters)
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
        "apps_lowest_locality": _app_locality(snapshot, params),
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
        {CONF_KEY: held},
        NAME,
        Explanation("matchmaking.node_locality_delay", summary, inputs, scores, thresholds),
        None if current is None else {CONF_KEY: current},
    )
    return PolicyResult((rec,), nxt)


def _current_delay(snapshot: Snapshot, params: Params) -> int | None:
    """The RM's live value (``Snapshot.scheduler_conf``), else the operator's
    ``current_node_locality_delay``, else unknown."""
    live = snapshot.scheduler_conf.get(CONF_KEY)
    if live is not None and live.strip().lstrip("-").isdigit():
        return int(live)
    return params.current_node_locality_delay


def _pct(rate: JsonValue) -> str:
    return f"{rate:.1%}" if isinstance(rate, float) else "unknown"


def _local_hosts(snap: Snapshot) -> set[str]:
    """Hosts named by pending node-local rows of unfinished apps (racks start with '/')."""
    hosts: set[str] = set()
    for app in snap.apps:
        if app.state not in ACTIVE:
            continue
        for rr in app.resource_requests:
            name = rr.resource_name
            if rr.num_containers > 0 and name != "*" and not name.startswith("/"):
                hosts.add(name)
    return hosts


def _sum(beans: list[QueueMetricsBean]) -> tuple[int, int, int]:
    return (
        sum(b.aggregate_node_local for b in beans),
        sum(b.aggregate_rack_local for b in beans),
        sum(b.aggregate_off_switch for b in beans),
    )


def _cluster_counters(snap: Snapshot) -> tuple[int, int, int] | None:
    beans = list(snap.queue_metrics)
    if not beans:
        return None
    root = [b for b in beans if b.queue_path == "root"]
    if root:
        return _sum(root)
    leaves = {q.path for q in snap.queues if q.is_leaf} | {q.name for q in snap.queues if q.is_leaf}
    chosen = [b for b in beans if b.queue_path in leaves]
    return _sum(chosen or beans)


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


def _app_locality(snap: Snapshot, params: Params) -> list[JsonValue]:
    """Per-app Eq 1 from MR counters when present, else the queue's rate; lowest first."""
    queue_rate: dict[str, float | None] = {}
    for b in snap.queue_metrics:
        r = locality_rate(
            b.aggregate_node_local,
            b.aggregate_node_local + b.aggregate_rack_local + b.aggregate_off_switch,
        )
        queue_rate[b.queue_path] = r
        queue_rate.setdefault(b.queue_path.rsplit(".", 1)[-1], r)
    jobs = {j.app_id: j for j in snap.jobs}
    rows: list[tuple[float, str, JsonDict]] = []
    for app in snap.apps:
        if app.state not in ACTIVE:
            continue
        job = jobs.get(app.id)
        counts = (
            [
                getattr(job, f, None)
                for f in ("data_local_maps", "rack_local_maps", "other_local_maps")
            ]
            if job
            else [None] * 3
        )
        if all(isinstance(c, int) for c in counts):
            n = sum(c for c in counts if isinstance(c, int))
            rate, src = (
                locality_rate(counts[0] if isinstance(counts[0], int) else 0, n),
                "mr-counters",
            )
        else:
            rate, src = queue_rate.get(app.queue), "queue"
        if rate is not None:
            rows.append((rate, app.id, {"app": app.id, "rate": round(rate, 6), "source": src}))
    rows.sort(key=lambda t: (t[0], t[1]))
    return [r[2] for r in rows[: params.top_apps]]
