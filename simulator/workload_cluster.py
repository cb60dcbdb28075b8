"""The ``cluster`` and ``scheduler`` sections of a workload file."""

from __future__ import annotations

from typing import Any

from yarn_advisor.simulator.fields import Fields
from yarn_advisor.simulator.located import line_of
from yarn_advisor.simulator.spec import (
    Cluster,
    Hdfs,
    NodeGroup,
    QueueSpec,
    Res,
    SchedulerSpec,
    Timing,
)

CLUSTER_KEYS = ("nodes", "memory_mb", "vcores", "real_memory_mb", "real_cpu", "groups",
                "nodes_per_rack", "labels", "hdfs", "timing", "minimum_allocation",
                "maximum_allocation", "tags", "label")
GROUP_KEYS = ("count", "memory_mb", "vcores", "real_memory_mb", "real_cpu", "rack", "label",
              "tags")
SCHED_KEYS = ("type", "resource_calculator", "queues", "node_locality_delay",
              "rack_locality_additional_delay", "offswitch_per_heartbeat",
              "maximum_am_resource_percent", "max_application_priority", "fair_policy",
              "assign_multiple", "locality_threshold_node", "locality_threshold_rack")
QUEUE_KEYS = ("name", "capacity", "maximum_capacity", "user_limit_factor",
              "minimum_user_limit_percent", "maximum_am_resource_percent",
              "accessible_node_labels", "label_capacities", "default_node_label", "weight",
              "policy", "max_am_share")


def _res(f: Fields, key: str, default: Res) -> Res:
    if not f.has(key):
        return default
    r = f.sub(key, ("memory_mb", "vcores"))
    return Res(r.integer("memory_mb", default.memory_mb, minimum=1),
               r.integer("vcores", default.vcores, minimum=1))


def _group(g: Fields, default_count: int) -> NodeGroup:
    mem = g.integer("memory_mb", 8192, minimum=1)
    vc = g.integer("vcores", 8, minimum=1)
    return NodeGroup(
        count=g.integer("count", default_count, minimum=1), memory_mb=mem, vcores=vc,
        real_memory_mb=g.integer("real_memory_mb", mem, minimum=1),
        real_cpu=g.number("real_cpu", float(vc), minimum=0.001),
        rack=g.string("rack", "") if g.has("rack") else "",
        label=g.string("label", ""), tags=g.strings("tags"))


def read_cluster(data: Any, file: str, line: int, errors: list[str]) -> Cluster:
    f = Fields(data, file, "cluster.", errors, CLUSTER_KEYS, line=line)
    groups: list[NodeGroup] = []
    raw_groups = f.raw("groups")
    if raw_groups is not None:
        if f.has("nodes"):
            f.error("nodes", "give either nodes (with memory_mb, vcores) or groups")
        if not isinstance(raw_groups, list) or not raw_groups:
            f.error("groups", "must be a non-empty list")
        else:
            for i, raw in enumerate(raw_groups):
                g = Fields(raw, f.file, f"cluster.groups[{i}].", errors, GROUP_KEYS,
                           line=line_of(raw_groups, i))
                if not g.has("count"):
                    g.error("count", "required")
                groups.append(_group(g, 1))
    else:
        groups.append(_group(Fields({k: v for k, v in f.data.items() if k in (
            "memory_mb", "vcores", "real_memory_mb", "real_cpu", "label", "tags")} | {
            "count": f.integer("nodes", 1, minimum=1)}, f.file, "cluster.", errors, GROUP_KEYS,
            line=f.line), 1))
    h = f.sub("hdfs", ("replication", "pool_blocks", "placement"))
    t = f.sub("timing", ("nm_heartbeat_ms", "am_heartbeat_ms", "container_launch_ms",
                         "am_launch_ms", "am_finish_ms"))
    timing = Timing(
        nm_heartbeat=t.integer("nm_heartbeat_ms", 1000, minimum=1),
        am_heartbeat=t.integer("am_heartbeat_ms", 1000, minimum=1),
        container_launch=t.integer("container_launch_ms", 1000, minimum=0),
        am_launch=t.integer("am_launch_ms", 2000, minimum=0),
        am_finish=t.integer("am_finish_ms", 1000, minimum=0))
    biggest = max(groups, key=lambda g: (g.memory_mb, g.vcores)) if groups else None
    maximum = _res(f, "maximum_allocation",
                   Res(biggest.memory_mb, biggest.vcores) if biggest else Res(8192, 8))
    labels = f.strings("labels")
    for grp in groups:
        if grp.label and grp.label not in labels:
            labels = (*labels, grp.label)
    return Cluster(
        groups=tuple(groups), nodes_per_rack=f.integer("nodes_per_rack", 0, minimum=0),
        hdfs=Hdfs(replication=h.integer("replication", 3, minimum=1),
                  pool_blocks=h.integer("pool_blocks", 0, minimum=0),
                  placement=h.string("placement", "default", ("default", "even"))),
        timing=timing, minimum_allocation=_res(f, "minimum_allocation", Res(1024, 1)),
        maximum_allocation=maximum, labels=labels)


def read_scheduler(data: Any, file: str, line: int, errors: list[str]) -> SchedulerSpec:
    f = Fields(data, file, "scheduler.", errors, SCHED_KEYS, line=line)
    queues: list[QueueSpec] = []
    raw = f.raw("queues")
    if raw is not None and (not isinstance(raw, list) or not raw):
        f.error("queues", "must be a non-empty list")
    for i, item in enumerate(raw or []):
        q = Fields(item, f.file, f"scheduler.queues[{i}].", errors, QUEUE_KEYS,
                   line=line_of(raw, i))
        caps = q.raw("label_capacities", {})
        label_caps: list[tuple[str, float]] = []
        if not isinstance(caps, dict):
            q.error("label_capacities", "must be a mapping label -> percent")
        else:
            for label, value in caps.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    q.error("label_capacities", f"{label}: must be a number")
                else:
                    label_caps.append((str(label), float(value)))
        if not q.has("name"):
            q.error("name", "required")
        am = q.raw("maximum_am_resource_percent")
        queues.append(QueueSpec(
            name=q.string("name", f"q{i}"), capacity=q.number("capacity", 100.0, 0, 100),
            maximum_capacity=q.number("maximum_capacity", 100.0, 0, 100),
            user_limit_factor=q.number("user_limit_factor", 1.0, minimum=-1),
            minimum_user_limit_percent=q.number("minimum_user_limit_percent", 100.0, 0, 100),
            maximum_am_resource_percent=None if am is None else q.number(
                "maximum_am_resource_percent", 0.1, 0, 1),
            accessible_node_labels=q.strings("accessible_node_labels"),
            label_capacities=tuple(label_caps),
            default_node_label=q.string("default_node_label", ""),
            weight=q.number("weight", 1.0, minimum=0),
            policy=q.string("policy", "", ("", "fair", "drf", "fifo")),
            max_am_share=q.number("max_am_share", 0.5, minimum=-1)))
    return SchedulerSpec(
        type=f.string("type", "capacity", ("capacity", "fair", "fifo")),
        resource_calculator=f.string("resource_calculator", "default", ("default", "dominant")),
        queues=tuple(queues) or SchedulerSpec().queues,
        node_locality_delay=f.integer("node_locality_delay", 40, minimum=-1),
        rack_locality_additional_delay=f.integer("rack_locality_additional_delay", -1,
                                                 minimum=-1),
        offswitch_per_heartbeat=f.integer("offswitch_per_heartbeat", 1, minimum=1),
        maximum_am_resource_percent=f.number("maximum_am_resource_percent", 0.1, 0, 1),
        max_application_priority=f.integer("max_application_priority", 0, minimum=0),
        fair_policy=f.string("fair_policy", "fair", ("fair", "drf", "fifo")),
        assign_multiple=f.boolean("assign_multiple", False),
        locality_threshold_node=f.number("locality_threshold_node", -1.0, -1, 1),
        locality_threshold_rack=f.number("locality_threshold_rack", -1.0, -1, 1))
