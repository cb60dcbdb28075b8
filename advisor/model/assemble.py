"""Assemble one immutable :class:`Snapshot` from parsed parts (pure, no I/O).

This is the only place where the parts are joined: measured usage onto
containers (by container id), nodes onto tasks (through their container),
and where ordering is made deterministic (everything sorted by id) so that
replays and golden files are stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from operator import attrgetter

from yarn_advisor.advisor.model.plugin import PluginStatus
from yarn_advisor.advisor.model.snapshot import (
    App,
    ClusterInfo,
    ClusterMetrics,
    Container,
    ContainerUsage,
    MRJob,
    Node,
    Queue,
    QueueMetricsBean,
    Snapshot,
    Task,
)


def build_snapshot(
    *,
    taken_at: int,
    rm_url: str,
    cluster: ClusterInfo,
    metrics: ClusterMetrics,
    scheduler_type: str,
    queues: Iterable[Queue],
    nodes: Iterable[Node],
    apps: Iterable[App],
    containers: Iterable[Container] = (),
    usage: Iterable[ContainerUsage] = (),
    jobs: Iterable[MRJob] = (),
    tasks: Iterable[Task] = (),
    finished_tasks: Iterable[Task] = (),
    queue_metrics: Iterable[QueueMetricsBean] = (),
    sources: Mapping[str, bool] | None = None,
    scheduler_conf: Mapping[str, str] | None = None,
    rm_conf: Mapping[str, str] | None = None,
    plugin: PluginStatus | None = None,
) -> Snapshot:
    """Join and order the parts; every argument is already parsed."""
    by_container = {u.container_id: u for u in usage}
    # copy only the containers that gain a measurement (replace() is costly
    # at 100,000 containers); the rest are shared as they are (immutable)
    if by_container:
        containers = (replace(c, usage=by_container[c.id]) if c.id in by_container else c
                      for c in containers)
    live = tuple(sorted(containers, key=_ID))
    tasks, finished_tasks = tuple(tasks), tuple(finished_tasks)
    # only a task without a node needs it (100k containers: skip it when none does)
    node_of = ({c.id: c.node_id for c in live}
               if any(not t.node_id for t in (*tasks, *finished_tasks)) else {})
    return Snapshot(
        taken_at=taken_at,
        rm_url=rm_url,
        cluster=cluster,
        metrics=metrics,
        nodes=tuple(sorted(nodes, key=_ID)),
        queues=tuple(queues),
        apps=tuple(sorted(apps, key=_ID)),
        containers=live,
        jobs=tuple(sorted(jobs, key=_ID)),
        tasks=tuple(sorted(_with_nodes(tasks, node_of), key=_ID)),
        finished_tasks=tuple(sorted(_with_nodes(finished_tasks, node_of), key=_ID)),
        queue_metrics=tuple(sorted(queue_metrics, key=lambda q: q.queue_path)),
        sources=dict(sources or {}),
        scheduler_type=scheduler_type,
        scheduler_conf=dict(scheduler_conf or {}),
        rm_conf=dict(rm_conf or {}),
        plugin=plugin,
    )


_ID = attrgetter("id")  # the sort key of every part: C code, not a lambda per item


def _with_nodes(tasks: Iterable[Task], node_of: Mapping[str, str]) -> Iterable[Task]:
    for t in tasks:
        if not t.node_id and t.container_id in node_of:
            yield replace(t, node_id=node_of[t.container_id])
        else:
            yield t
