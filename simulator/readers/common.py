"""What the trace readers share: the cluster they build and their options."""

from __future__ import annotations

from dataclasses import dataclass

from yarn_advisor.simulator.spec import (
    Cluster,
    Hdfs,
    NodeGroup,
    QueueSpec,
    Res,
    SchedulerSpec,
)


@dataclass(frozen=True)
class TraceOptions:
    """How a trace becomes a workload (CLI ``--nodes``, ``--node-memory-mb``, ...).

    ``nodes`` 0 means: the hosts the trace names (SLS, Rumen), or the trace's
    own cluster size (SWIM: 600 for FB-2009).
    """

    nodes: int = 0
    node_memory_mb: int = 8192
    node_vcores: int = 8
    nodes_per_rack: int = 20
    map_mb: int = 1024
    reduce_mb: int = 1024
    am_mb: int = 1024
    scheduler: str = "capacity"


DEFAULT_OPTIONS = TraceOptions()


def split_host(name: str) -> tuple[str, str]:
    """``/rack/host`` (Rumen, SLS; anonymized traces escape dots) -> (rack, host)."""
    name = name.replace("\\.", ".").strip()
    if "/" in name.strip("/"):
        rack, _, host = name.rpartition("/")
        return rack if rack.startswith("/") else f"/{rack}", host
    return "/default-rack", name.strip("/")


def cluster_from_hosts(hosts: dict[str, list[str]], opts: TraceOptions) -> Cluster:
    """One node group per rack, named as the trace names its hosts; or
    ``opts.nodes`` synthetic nodes when given (or when the trace names none)."""
    if opts.nodes or not hosts:
        n = opts.nodes or 1
        return Cluster(groups=(NodeGroup(n, opts.node_memory_mb, opts.node_vcores),),
                       nodes_per_rack=opts.nodes_per_rack if n > opts.nodes_per_rack else 0,
                       minimum_allocation=Res(1024, 1),
                       maximum_allocation=Res(opts.node_memory_mb, opts.node_vcores))
    groups = tuple(
        NodeGroup(len(names), opts.node_memory_mb, opts.node_vcores, rack=rack,
                  hosts=tuple(names))
        for rack, names in sorted(hosts.items()))
    return Cluster(groups=groups, hdfs=Hdfs(), minimum_allocation=Res(1024, 1),
                   maximum_allocation=Res(opts.node_memory_mb, opts.node_vcores))


def scheduler_for(queues: set[str], opts: TraceOptions) -> SchedulerSpec:
    """The trace's queues, sharing the cluster equally (the remainder on the first)."""
    names = sorted(queues) or ["default"]
    share = round(100.0 / len(names), 4)
    caps = [share] * len(names)
    caps[0] = round(100.0 - share * (len(names) - 1), 4)
    return SchedulerSpec(
        type=opts.scheduler,
        queues=tuple(QueueSpec(n, capacity=c) for n, c in zip(names, caps, strict=True)),
        maximum_am_resource_percent=0.5)
