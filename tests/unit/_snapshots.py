"""Small factories for Snapshots built from the model dataclasses (pure-policy unit tests)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    ResourceRequest,
    Resources,
    Snapshot,
    Task,
)

TS = 1_700_000_000_000


def J(value: object) -> Any:
    """A JSON payload (or a policy state's JSON form) typed as Any, for indexing in
    assertions."""
    to_json = getattr(value, "to_json", None)
    return to_json() if callable(to_json) else value


def res(memory_mb: int, vcores: int) -> Resources:
    return Resources(memory_mb, vcores)


def node(
    nid: str,
    total: tuple[int, int] = (8192, 8),
    used: tuple[int, int] = (0, 0),
    rack: str = "/default-rack",
    labels: Sequence[str] = (),
    state: str = "RUNNING",
    containers: int | None = None,
) -> Node:
    host = nid.split(":")[0]
    t, u = res(*total), res(*used)
    n = containers if containers is not None else (0 if used == (0, 0) else 1)
    return Node(
        id=nid,
        host=host,
        rack=rack,
        state=state,
        http_address=f"{host}:8042",
        labels=tuple(labels),
        total=t,
        used=u,
        available=t - u,
        num_containers=n,
        utilization=None,
    )


def rr(
    priority: int, memory_mb: int, vcores: int, count: int, name: str = "*", label: str = ""
) -> ResourceRequest:
    return ResourceRequest(
        priority=priority,
        resource_name=name,
        capability=res(memory_mb, vcores),
        num_containers=count,
        relax_locality=True,
        node_label_expression=label,
    )


def app(
    aid: str,
    requests: Sequence[ResourceRequest] = (),
    queue: str = "default",
    state: str = "RUNNING",
    app_type: str = "MAPREDUCE",
    tags: Sequence[str] = (),
    priority: int = 0,
    progress: float = 0.0,
    allocated: tuple[int, int] = (0, 0),
    running: int = 0,
    am: tuple[int, int] = (1024, 1),
    name: str | None = None,
    started: int = TS - 60_000,
) -> App:
    return App(
        id=aid,
        name=name or aid,
        user="u",
        queue=queue,
        type=app_type,
        tags=tuple(tags),
        state=state,
        final_status="UNDEFINED",
        priority=priority,
        progress=progress,
        started_time=started,
        finished_time=0,
        elapsed_time=TS - started,
        allocated=res(*allocated),
        reserved=res(0, 0),
        running_containers=running,
        am_host_http_address="",
        tracking_url="",
        resource_requests=tuple(requests),
        am_resource=res(*am),
    )


def job(
    app_id: str,
    maps: int,
    maps_done: int = 0,
    maps_running: int = 0,
    reduces: int = 1,
    reduces_done: int = 0,
    reduces_running: int = 0,
) -> MRJob:
    return MRJob(
        id=app_id.replace("application", "job"),
        app_id=app_id,
        name=app_id,
        user="u",
        queue="default",
        state="RUNNING",
        start_time=TS - 60_000,
        finish_time=0,
        maps_total=maps,
        maps_completed=maps_done,
        reduces_total=reduces,
        reduces_completed=reduces_done,
        maps_running=maps_running,
        reduces_running=reduces_running,
    )


def task(app_id: str, n: int, kind: str, state: str) -> Task:
    return Task(
        id=f"task_{app_id}_{kind}_{n}",
        job_id=app_id.replace("application", "job"),
        app_id=app_id,
        type=kind,
        state=state,
        progress=0.0,
        start_time=TS,
        finish_time=0,
        elapsed_time=0,
    )


def container(
    cid: str, app_id: str, node_id: str, size: tuple[int, int], priority: int, is_am: bool = False
) -> Container:
    """A running container without usage (see :func:`ctr` for the other fields)."""
    return ctr(cid, app_id, node_id, size, priority, is_am=is_am)


def queue(path: str, leaf: bool = True, ordering: str = "fifo") -> Queue:
    name = path.rsplit(".", 1)[-1]
    parent = path.rsplit(".", 1)[0] if "." in path else ""
    return Queue(
        path=path,
        name=name,
        parent=parent,
        is_leaf=leaf,
        capacity=100.0,
        max_capacity=100.0,
        used_capacity=0.0,
        absolute_capacity=100.0,
        absolute_max_capacity=100.0,
        absolute_used_capacity=0.0,
        used=res(0, 0),
        num_applications=0,
        num_active_applications=0,
        num_pending_applications=0,
        num_containers=0,
        pending_containers=0,
        state="RUNNING",
        node_labels=(),
        children=(),
        ordering_policy=ordering,
    )


def bean(path: str, node_local: int, rack_local: int, off_switch: int) -> QueueMetricsBean:
    z = res(0, 0)
    return QueueMetricsBean(
        queue_path=path,
        apps_pending=0,
        apps_running=0,
        pending=z,
        pending_containers=0,
        allocated=z,
        allocated_containers=0,
        available=z,
        reserved=z,
        aggregate_containers_allocated=node_local + rack_local + off_switch,
        aggregate_node_local=node_local,
        aggregate_rack_local=rack_local,
        aggregate_off_switch=off_switch,
    )


def snapshot(
    nodes: Sequence[Node] = (),
    apps: Sequence[App] = (),
    containers: Sequence[Container] = (),
    queues: Sequence[Queue] = (),
    **extra: Any,
) -> Snapshot:
    z = res(0, 0)
    total = Resources(sum(n.total.memory_mb for n in nodes), sum(n.total.vcores for n in nodes))
    metrics = ClusterMetrics(
        apps_submitted=len(apps),
        apps_completed=0,
        apps_pending=0,
        apps_running=len(apps),
        apps_failed=0,
        apps_killed=0,
        total=total,
        allocated=z,
        available=total,
        reserved=z,
        containers_allocated=len(containers),
        containers_pending=0,
        containers_reserved=0,
        active_nodes=len(nodes),
        total_nodes=len(nodes),
        unhealthy_nodes=0,
        lost_nodes=0,
        decommissioning_nodes=0,
    )
    info = ClusterInfo(
        cluster_id=1,
        state="STARTED",
        ha_state="ACTIVE",
        hadoop_version="3.4.1",
        rm_version="3.4.1",
        started_on=TS - 3_600_000,
    )
    return Snapshot(
        taken_at=extra.pop("taken_at", TS),
        rm_url="http://rm:8088",
        cluster=info,
        metrics=metrics,
        nodes=tuple(nodes),
        queues=tuple(queues),
        apps=tuple(apps),
        containers=tuple(containers),
        **extra,
    )


# --- factories for OPERA / ANACRAC / PRISM (measured usage, phases) ----------


def with_util(n: Node, pmem: int = 0, cpu: float = 0.0, node_cpu: float = 0.0) -> Node:
    """``n`` with a heartbeat utilization (containers' pmem MiB and vcores in use)."""
    from dataclasses import replace

    from yarn_advisor.advisor.model.snapshot import NodeUtilization

    u = NodeUtilization(
        node_pmem_mb=pmem,
        node_vmem_mb=pmem,
        node_cpu=node_cpu,
        containers_pmem_mb=pmem,
        containers_vmem_mb=pmem,
        containers_cpu=cpu,
    )
    return replace(n, utilization=u)


def usage(cid: str, pmem_mb: float, cpu_percent: float, samples: int = 10) -> ContainerUsage:
    """NM JMX usage of a container (cpu in percent of one core)."""
    return ContainerUsage(cid, pmem_mb, pmem_mb, cpu_percent, cpu_percent, 0.0, 0.0, samples)


def ctr(
    cid: str,
    app_id: str,
    node_id: str,
    size: tuple[int, int] = (1024, 1),
    priority: int = 20,
    started: int = TS,
    use: tuple[float, float, int] | None = None,
    execution_type: str = "GUARANTEED",
    is_am: bool = False,
) -> Container:
    """A running container; ``use`` = (pmem MiB, cpu percent, samples)."""
    return Container(
        id=cid,
        app_id=app_id,
        node_id=node_id,
        allocated=res(*size),
        priority=priority,
        started_time=started,
        state="RUNNING",
        execution_type=execution_type,
        is_am=is_am,
        usage=None if use is None else usage(cid, use[0], use[1], use[2]),
    )


def rtask(
    app_id: str,
    n: int,
    kind: str,
    phase: str = "",
    progress: float = 0.0,
    container_id: str = "",
    node_id: str = "",
    state: str = "RUNNING",
) -> Task:
    """A MapReduce task with its phase, progress (percent) and container."""
    return Task(
        id=f"task_{app_id}_{kind}_{n}",
        job_id=app_id.replace("application", "job"),
        app_id=app_id,
        type=kind,
        state=state,
        progress=progress,
        start_time=TS - 10_000,
        finish_time=0,
        elapsed_time=10_000,
        phase=phase,
        node_id=node_id,
        container_id=container_id,
    )
