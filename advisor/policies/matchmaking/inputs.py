"""From a Snapshot to Matchmaking's terms: free nodes with local work, locality counters."""

from __future__ import annotations

from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.snapshot import QueueMetricsBean, Snapshot, conf_int
from yarn_advisor.advisor.policies.matchmaking.core import locality_rate

CONF_KEY = "yarn.scheduler.capacity.node-locality-delay"
ACTIVE = frozenset({"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING"})


def current_delay(snapshot: Snapshot, configured: int | None) -> int | None:
    """The RM's live value (``Snapshot.scheduler_conf``), else the operator's
    ``current_node_locality_delay``, else unknown."""
    live = conf_int(snapshot.scheduler_conf.get(CONF_KEY))
    return configured if live is None else live


def local_hosts(snap: Snapshot) -> set[str]:
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


def cluster_counters(snap: Snapshot) -> tuple[int, int, int] | None:
    beans = list(snap.queue_metrics)
    if not beans:
        return None
    root = [b for b in beans if b.queue_path == "root"]
    if root:
        return _sum(root)
    leaves = {q.path for q in snap.queues if q.is_leaf} | {q.name for q in snap.queues if q.is_leaf}
    chosen = [b for b in beans if b.queue_path in leaves]
    return _sum(chosen or beans)


def app_locality(snap: Snapshot, top_apps: int) -> list[JsonValue]:
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
    rows: list[tuple[float, str, str]] = []
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
            rows.append((rate, app.id, src))
    rows.sort(key=lambda t: (t[0], t[1]))
    return [{"app": app_id, "rate": round(r, 6), "source": source}  # only the kept ones
            for r, app_id, source in rows[:top_apps]]
