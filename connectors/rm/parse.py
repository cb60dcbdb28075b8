"""Pure parsers for ResourceManager REST bodies (``/ws/v1/cluster/...``).

Each function takes the decoded JSON of one endpoint and returns model values;
there is no I/O here. Parsing is lenient about what Hadoop versions vary
(single-element lists as objects, empty collections as ``{}``/``null``, numbers
as strings, missing optional fields) and strict only about the shape: a body
that is not an object, lacks its top-level key, or has an item without its id
raises :class:`~yarn_advisor.connectors.errors.ParseError`.
"""

from __future__ import annotations

from dataclasses import fields
from functools import lru_cache

from yarn_advisor.advisor.model.gcpause import paused_gc
from yarn_advisor.advisor.model.snapshot import (
    ZERO,
    App,
    AppAttempt,
    ClusterInfo,
    ClusterMetrics,
    Container,
    Node,
    NodeUtilization,
    Queue,
    ResourceRequest,
    Resources,
)
from yarn_advisor.connectors._json import (
    JSON,
    as_bool,
    as_float,
    as_int,
    as_list,
    as_resources,
    as_str,
    as_str_tuple,
    items_or_single,
    nonneg,
    obj,
    require_str,
    res_pair,
    resources,
    small_int,
    split_csv,
    top,
    wrapped_list,
)
from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.lean_json import (
    RAW,
    LeanDecoder,
    RawJSON,
    decode_json,
    lean_object,
    materialized,
)

__all__ = [
    "app_id_of_attempt",
    "app_id_of_container",
    "parse_app_attempts",
    "parse_apps",
    "parse_cluster_info",
    "parse_cluster_metrics",
    "parse_containers",
    "parse_nodes",
    "parse_scheduler",
]

INFO = "/ws/v1/cluster/info"
METRICS = "/ws/v1/cluster/metrics"
SCHEDULER = "/ws/v1/cluster/scheduler"
NODES = "/ws/v1/cluster/nodes"
APPS = "/ws/v1/cluster/apps"
ATTEMPTS = "/ws/v1/cluster/apps/{appid}/appattempts"
CONTAINERS = "/ws/v1/cluster/apps/{appid}/appattempts/{attemptid}/containers"


# --------------------------------------------------------------------------- cluster


def parse_cluster_info(body: object) -> ClusterInfo:
    """``{"clusterInfo": {...}}`` -> ClusterInfo (``id`` is required)."""
    ci = obj(top(body, "clusterInfo", INFO), "clusterInfo", INFO)
    if "id" not in ci:
        raise ParseError(f"{INFO}: clusterInfo without 'id'")
    return ClusterInfo(
        cluster_id=as_int(ci["id"]),
        state=as_str(ci.get("state")),
        ha_state=as_str(ci.get("haState")),
        hadoop_version=as_str(ci.get("hadoopVersion")),
        rm_version=as_str(ci.get("resourceManagerVersion")),
        started_on=as_int(ci.get("startedOn")),
    )


def parse_cluster_metrics(body: object) -> ClusterMetrics:
    """``{"clusterMetrics": {...}}`` -> ClusterMetrics.

    Missing totals are derived: total = allocated + available (+ reserved is
    already inside allocated in YARN's accounting, so it is not added).
    """
    m = obj(top(body, "clusterMetrics", METRICS), "clusterMetrics", METRICS)
    allocated = res_pair(m, "allocatedMB", "allocatedVirtualCores")
    available = res_pair(m, "availableMB", "availableVirtualCores")
    total = res_pair(m, "totalMB", "totalVirtualCores")
    if "totalMB" not in m and "totalVirtualCores" not in m:
        total = allocated + available
    g = m.get
    return ClusterMetrics(
        apps_submitted=as_int(g("appsSubmitted")),
        apps_completed=as_int(g("appsCompleted")),
        apps_pending=as_int(g("appsPending")),
        apps_running=as_int(g("appsRunning")),
        apps_failed=as_int(g("appsFailed")),
        apps_killed=as_int(g("appsKilled")),
        total=total,
        allocated=allocated,
        available=available,
        reserved=res_pair(m, "reservedMB", "reservedVirtualCores"),
        containers_allocated=as_int(g("containersAllocated")),
        containers_pending=as_int(g("containersPending")),
        containers_reserved=as_int(g("containersReserved")),
        active_nodes=as_int(g("activeNodes")),
        total_nodes=as_int(g("totalNodes")),
        unhealthy_nodes=as_int(g("unhealthyNodes")),
        lost_nodes=as_int(g("lostNodes")),
        decommissioning_nodes=as_int(g("decommissioningNodes")),
    )


# --------------------------------------------------------------------------- scheduler


def parse_scheduler(body: object) -> tuple[str, tuple[Queue, ...]]:
    """``{"scheduler": {"schedulerInfo": {...}}}`` -> (scheduler type, queues).

    Queues are flattened parent-first with root included. Capacity, Fair and
    FIFO schedulers are understood; see :func:`_fair_queues` for how Fair
    shares map onto the percentage fields.
    """
    sched = obj(top(body, "scheduler", SCHEDULER), "scheduler", SCHEDULER)
    info = sched.get("schedulerInfo")
    if not isinstance(info, dict) or not info:
        raise ParseError(f"{SCHEDULER}: scheduler without a schedulerInfo object")
    kind = as_str(info.get("type")) or _guess_scheduler(info)
    if kind == "capacityScheduler":
        return kind, tuple(_capacity_queues(info, "", None))
    if kind == "fairScheduler":
        root = info.get("rootQueue")
        if not isinstance(root, dict) or not root:
            raise ParseError(f"{SCHEDULER}: fairScheduler without a rootQueue object")
        return kind, tuple(_fair_queues(root, "", 0))
    if kind == "fifoScheduler":
        return kind, (_fifo_queue(info),)
    raise ParseError(f"{SCHEDULER}: unknown scheduler type {kind!r}")


def _guess_scheduler(info: JSON) -> str:
    if "rootQueue" in info:
        return "fairScheduler"
    if "qstate" in info or "totalNodeCapacity" in info:
        return "fifoScheduler"
    if "queues" in info or "queueName" in info:
        return "capacityScheduler"
    return ""


def _children(q: JSON, key: str) -> list[JSON]:
    """Child queues: ``{key: {"queue": [...]}}``, a bare list (Fair, 2.x), or none."""
    return wrapped_list(q.get(key), "queue", key, SCHEDULER)


def _is_leaf(q: JSON, kids: list[JSON]) -> bool:
    kind = q.get("type")
    if isinstance(kind, str) and kind.endswith("LeafQueueInfo"):
        return True
    queue_type = q.get("queueType")
    if queue_type in ("leaf", "parent"):
        return bool(queue_type == "leaf")
    return not kids


def _count(q: JSON, key: str, kids: list[Queue], attr: str) -> int:
    """``q[key]`` or, when the scheduler omits it (CS root), the children's sum."""
    if key in q:
        return as_int(q[key])
    return sum(int(getattr(k, attr)) for k in kids)


def _capacity_queues(q: JSON, parent: str, parent_abs: tuple[float, float] | None) -> list[Queue]:
    """One CapacityScheduler queue and its subtree. Absolute capacities the
    RM omits (root; 2.x parents) are derived from the parent's."""
    g = q.get
    name = as_str(g("queueName")) or "root"
    path = as_str(g("queuePath")) or (f"{parent}.{name}" if parent else name)
    cap = as_float(g("capacity"), 100.0 if parent_abs is None else 0.0)
    max_cap = as_float(g("maxCapacity"), 100.0)
    used_cap = as_float(g("usedCapacity"))
    base_cap, base_max = (100.0, 100.0) if parent_abs is None else parent_abs
    abs_cap = as_float(g("absoluteCapacity"), base_cap * cap / 100.0)
    abs_max = as_float(g("absoluteMaxCapacity"), base_max * max_cap / 100.0)
    raw_kids = _children(q, "queues")
    subtree: list[Queue] = []
    kids: list[Queue] = []
    for raw in raw_kids:
        sub = _capacity_queues(raw, path, (abs_cap, abs_max))
        kids.append(sub[0])
        subtree.extend(sub)
    used = as_resources(g("resourcesUsed")) if "resourcesUsed" in q else _sum_used(kids)
    containers = "numContainers" if "numContainers" in q else "allocatedContainers"
    queue = Queue(
        path=path,
        name=name,
        parent=parent,
        is_leaf=_is_leaf(q, raw_kids),
        capacity=cap,
        max_capacity=max_cap,
        used_capacity=used_cap,
        absolute_capacity=abs_cap,
        absolute_max_capacity=abs_max,
        absolute_used_capacity=as_float(g("absoluteUsedCapacity"), abs_cap * used_cap / 100.0),
        used=used,
        num_applications=_count(q, "numApplications", kids, "num_applications"),
        num_active_applications=_count(q, "numActiveApplications", kids, "num_active_applications"),
        num_pending_applications=_count(
            q, "numPendingApplications", kids, "num_pending_applications"
        ),
        num_containers=_count(q, containers, kids, "num_containers"),
        pending_containers=_count(q, "pendingContainers", kids, "pending_containers"),
        state=as_str(g("state")) or "RUNNING",
        node_labels=as_str_tuple(g("nodeLabels")),
        children=tuple(k.path for k in kids),
        default_priority=as_int(g("defaultPriority")),
        ordering_policy=as_str(g("orderingPolicyInfo")),
        scheduler_type="capacityScheduler",
    )
    return [queue, *subtree]


def _fair_queues(q: JSON, parent: str, parent_share_mb: int) -> list[Queue]:
    """One FairScheduler queue and its subtree.

    Fair has no configured percentages, so they are derived from memory:
    capacity = steady fair share as % of the parent's (root 100), absolute
    capacity = steady fair share as % of the cluster, max = maxResources as %
    of the cluster (capped at 100, the same for relative and absolute),
    used = usage as % of the steady fair share (relative) or of the cluster.
    """
    g = q.get
    path = as_str(g("queueName")) or "root"
    cluster_mb = as_resources(g("clusterResources")).memory_mb
    fair = as_resources(g("fairResources"))
    steady = as_resources(g("steadyFairResources")) if "steadyFairResources" in q else fair
    max_share = as_resources(g("maxResources"))
    used = as_resources(g("usedResources"))
    raw_kids = _children(q, "childQueues")
    subtree: list[Queue] = []
    kids: list[Queue] = []
    for raw in raw_kids:
        sub = _fair_queues(raw, path, steady.memory_mb)
        kids.append(sub[0])
        subtree.extend(sub)
    active = _count(q, "numActiveApps", kids, "num_active_applications")
    pending = _count(q, "numPendingApps", kids, "num_pending_applications")
    abs_max = min(100.0, _pct(max_share.memory_mb, cluster_mb))
    queue = Queue(
        path=path,
        name=path.rsplit(".", 1)[-1],
        parent=parent,
        is_leaf=_is_leaf(q, raw_kids),
        capacity=_pct(steady.memory_mb, parent_share_mb) if parent else 100.0,
        max_capacity=abs_max,
        used_capacity=_pct(used.memory_mb, steady.memory_mb),
        absolute_capacity=_pct(steady.memory_mb, cluster_mb),
        absolute_max_capacity=abs_max,
        absolute_used_capacity=_pct(used.memory_mb, cluster_mb),
        used=used,
        num_applications=active + pending,
        num_active_applications=active,
        num_pending_applications=pending,
        num_containers=_count(q, "allocatedContainers", kids, "num_containers"),
        pending_containers=_count(q, "pendingContainers", kids, "pending_containers"),
        state="RUNNING",
        node_labels=(),
        children=tuple(k.path for k in kids),
        ordering_policy=as_str(g("schedulingPolicy")),
        scheduler_type="fairScheduler",
        fair_share=fair,
        min_share=as_resources(g("minResources")),
        max_share=max_share,
    )
    return [queue, *subtree]


def _fifo_queue(info: JSON) -> Queue:
    """FIFO's single queue; its capacities are fractions (1.0 = 100 %)."""
    cap = 100.0 * as_float(info.get("capacity"), 1.0)
    used_cap = 100.0 * as_float(info.get("usedCapacity"))
    return Queue(
        path="root",
        name="root",
        parent="",
        is_leaf=True,
        capacity=cap,
        max_capacity=100.0,
        used_capacity=used_cap,
        absolute_capacity=cap,
        absolute_max_capacity=100.0,
        absolute_used_capacity=used_cap,
        used=resources(nonneg(info.get("usedNodeCapacity")), 0),
        num_applications=0,
        num_active_applications=0,
        num_pending_applications=0,
        num_containers=nonneg(info.get("numContainers")),
        pending_containers=0,
        state=as_str(info.get("qstate")) or "RUNNING",
        node_labels=(),
        children=(),
        scheduler_type="fifoScheduler",
    )


def _sum_used(kids: list[Queue]) -> Resources:
    total = ZERO
    for k in kids:
        total = total + k.used
    return resources(total.memory_mb, total.vcores)


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


# --------------------------------------------------------------------------- nodes


# the keys _node reads (tests/unit/test_lean_json.py checks the list is whole)
NODE_KEYS = (
    "id", "nodeHostName", "rack", "state", "nodeHTTPAddress", "nodeLabels",
    "usedResource", "usedMemoryMB", "usedVirtualCores",
    "availableResource", "availMemoryMB", "availableVirtualCores",
    "totalResource", "numContainers", "resourceUtilization", "lastHealthUpdate", "version",
)
# a ResourceInfo as as_resources reads it; resourceInformations only when the rest is missing
_RESOURCE_INFO = lean_object("resource_info", ("memory", "memorySize", "vCores", "virtualCores"),
                             {"resourceInformations": RAW}) | None
LEAN_NODES = LeanDecoder("nodes", "node", NODE_KEYS, dict.fromkeys(
    ("usedResource", "availableResource", "totalResource"), _RESOURCE_INFO))


def parse_nodes(body: object) -> tuple[Node, ...]:
    """``{"nodes": {"node": [...]}}`` or ``{"node": {...}}`` -> Nodes.

    ``usedResource``/``availableResource``/``totalResource`` are preferred over
    the flat MB/vcore fields; without ``totalResource`` (before 3.x) the total
    is used + available. ``body`` is decoded JSON, or a RawJSON decoded here.
    """
    items = _items(body, LEAN_NODES, NODES)
    with paused_gc():
        return tuple([_node(n) for n in items])


def _node(n: JSON) -> Node:
    g = n.get
    used = as_resources(g("usedResource"))
    if used is ZERO:
        used = res_pair(n, "usedMemoryMB", "usedVirtualCores")
    avail = as_resources(g("availableResource"))
    if avail is ZERO:
        avail = res_pair(n, "availMemoryMB", "availableVirtualCores")
    total = as_resources(g("totalResource"))
    if total is ZERO:
        total = used + avail
    util = g("resourceUtilization")
    return Node(
        id=require_str(n, "id", "node", NODES),
        host=as_str(g("nodeHostName")),
        rack=as_str(g("rack")),
        state=as_str(g("state")),
        http_address=as_str(g("nodeHTTPAddress")),
        labels=as_str_tuple(g("nodeLabels")),
        total=total,
        used=used,
        available=avail,
        num_containers=nonneg(g("numContainers")),
        utilization=_utilization(util) if isinstance(util, dict) and util else None,
        last_health_update=as_int(g("lastHealthUpdate")),
        version=as_str(g("version")),
    )


def _utilization(u: JSON) -> NodeUtilization:
    g = u.get
    return NodeUtilization(
        node_pmem_mb=as_int(g("nodePhysicalMemoryMB")),
        node_vmem_mb=as_int(g("nodeVirtualMemoryMB")),
        node_cpu=as_float(g("nodeCPUUsage")),
        containers_pmem_mb=as_int(g("aggregatedContainersPhysicalMemoryMB")),
        containers_vmem_mb=as_int(g("aggregatedContainersVirtualMemoryMB")),
        containers_cpu=as_float(g("containersCPUUsage")),
    )


# --------------------------------------------------------------------------- apps


# the keys _app reads (tests/unit/test_lean_json.py checks the list is whole)
APP_KEYS = (
    "id", "name", "user", "queue", "applicationType", "applicationTags", "state",
    "finalStatus", "priority", "progress", "startedTime", "finishedTime", "elapsedTime",
    "allocatedMB", "allocatedVCores", "reservedMB", "reservedVCores", "runningContainers",
    "amHostHttpAddress", "trackingUrl", "resourceRequests", "resourceInfo",
    "memorySeconds", "vcoreSeconds", "clusterUsagePercentage", "queueUsagePercentage",
    "appNodeLabelExpression", "amContainerLogs", "masterNodeId", "numAMContainerPreempted",
    "numNonAMContainerPreempted",
)
LEAN_APPS = LeanDecoder("apps", "app", APP_KEYS)


def parse_apps(body: object) -> tuple[App, ...]:
    """``{"apps": {"app": [...]}}`` (``{"apps": null}`` when empty) or
    ``{"app": {...}}`` -> Apps. ``-1`` allocations of finished apps become 0.
    ``body`` is decoded JSON, or a RawJSON decoded here."""
    items = _items(body, LEAN_APPS, APPS)
    with paused_gc():
        return tuple([_app(a) for a in items])


def _app(a: JSON) -> App:
    g = a.get
    requests = tuple(_request(r) for r in as_list(g("resourceRequests"), "resourceRequests", APPS))
    return App(
        id=require_str(a, "id", "app", APPS),
        name=as_str(g("name")),
        user=as_str(g("user")),
        queue=as_str(g("queue")),
        type=as_str(g("applicationType")),
        tags=split_csv(g("applicationTags")),
        state=as_str(g("state")),
        final_status=as_str(g("finalStatus")),
        priority=_priority(g("priority")),
        progress=as_float(g("progress")),
        started_time=nonneg(g("startedTime")),
        finished_time=nonneg(g("finishedTime")),
        elapsed_time=nonneg(g("elapsedTime")),
        allocated=res_pair(a, "allocatedMB", "allocatedVCores"),
        reserved=res_pair(a, "reservedMB", "reservedVCores"),
        running_containers=nonneg(g("runningContainers")),
        am_host_http_address=as_str(g("amHostHttpAddress")),
        tracking_url=as_str(g("trackingUrl")),
        resource_requests=requests,
        am_resource=_am_resource(g("resourceInfo"), requests),
        memory_seconds=nonneg(g("memorySeconds")),
        vcore_seconds=nonneg(g("vcoreSeconds")),
        cluster_usage_percentage=as_float(g("clusterUsagePercentage")),
        queue_usage_percentage=as_float(g("queueUsagePercentage")),
        node_label_expression=as_str(g("appNodeLabelExpression")),
        am_attempt=_am_attempt(as_str(g("amContainerLogs"))),
        am_node_id=as_str(g("masterNodeId")),
        preempted_containers=nonneg(g("numAMContainerPreempted"))
        + nonneg(g("numNonAMContainerPreempted")),
    )


def _am_attempt(logs_url: str) -> int:
    """``http://nm:8042/node/containerlogs/container_<ts>_<seq>_<attempt>_<n>/user`` ->
    the attempt number (the AM container's id names it; 0 when there is none)."""
    for part in logs_url.split("/"):
        if part.startswith("container_"):
            fields = part.split("_")
            return max(0, as_int(fields[-2], 0)) if len(fields) >= 5 else 0
    return 0


def _priority(value: object) -> int:
    """``5``, ``"5"`` or ``{"priority": 5}`` (the 3.0 docs) -> 5."""
    if isinstance(value, dict):
        value = value.get("priority")
    return small_int(value)


def _request(r: JSON) -> ResourceRequest:
    g = r.get
    exec_req = g("executionTypeRequest")
    if isinstance(exec_req, dict):
        exec_type = as_str(exec_req.get("executionType"), "GUARANTEED")
    else:
        exec_type = as_str(exec_req, "GUARANTEED")
    return ResourceRequest(
        priority=_priority(g("priority")),
        resource_name=as_str(g("resourceName")),
        capability=as_resources(g("capability")),
        num_containers=as_int(g("numContainers")),
        relax_locality=as_bool(g("relaxLocality"), True),
        node_label_expression=as_str(g("nodeLabelExpression")),
        execution_type=exec_type or "GUARANTEED",
        allocation_request_id=as_int(g("allocationRequestId"), -1),
    )


def _am_resource(info: object, requests: tuple[ResourceRequest, ...]) -> Resources:
    """The AM's resources: CapacityScheduler ``resourceInfo`` amUsed summed over
    partitions; else the capability of the off-switch ask at priority 0, the
    priority the RM gives every AM request (MR, Spark and Tez ask for their
    tasks at other priorities; an app asking at 0 itself makes this a guess);
    else ZERO."""
    if isinstance(info, dict):
        total = ZERO
        parts = info.get("resourceUsagesByPartition")
        for part in as_list(parts, "resourceUsagesByPartition", APPS):
            total = total + as_resources(part.get("amUsed"))
        if total != ZERO:
            return resources(total.memory_mb, total.vcores)
    for rr in requests:
        if rr.priority == 0 and rr.resource_name == "*":
            return rr.capability
    return ZERO


# --------------------------------------------------------------------------- attempts


def parse_app_attempts(body: object, app_id: str = "") -> tuple[AppAttempt, ...]:
    """``{"appAttempts": {"appAttempt": [...]}}`` -> AppAttempts.

    The attempt id is ``appAttemptId`` when present (2.8+); older RMs give
    only the attempt number in ``id``, so the full id is rebuilt from the AM
    container id or from ``app_id``.
    """
    items = items_or_single(body, "appAttempts", "appAttempt", ATTEMPTS)
    return tuple(_attempt(a, app_id) for a in items)


def _attempt(a: JSON, app_id: str) -> AppAttempt:
    g = a.get
    container_id = as_str(g("containerId")) or as_str(g("amContainerId"))
    attempt_id = _attempt_id(a, container_id, app_id)
    return AppAttempt(
        id=attempt_id,
        app_id=app_id_of_attempt(attempt_id) or app_id,
        start_time=nonneg(g("startTime")),
        finished_time=nonneg(g("finishedTime")),
        container_id=container_id,
        node_id=as_str(g("nodeId")),
        state=as_str(g("appAttemptState")),
    )


def _attempt_id(a: JSON, container_id: str, app_id: str) -> str:
    full = a.get("appAttemptId")
    if isinstance(full, str) and full.startswith("appattempt_"):
        return full
    raw = a.get("id")
    if isinstance(raw, str) and raw.startswith("appattempt_"):
        return raw
    number = as_int(raw, -1)
    head = container_id.rpartition("_")[0]
    from_container = _app_of_attempt_part(head)
    if from_container:
        app_id = from_container
        if number <= 0:
            number = as_int(head.rpartition("_")[2], -1)
    if app_id.startswith("application_") and number > 0:
        return f"appattempt_{app_id[12:]}_{number:06d}"
    raise ParseError(f"{ATTEMPTS}: appAttempt without a usable id ({raw!r})")


def app_id_of_attempt(attempt_id: str) -> str:
    """``appattempt_<ts>_<seq>_<n>`` -> ``application_<ts>_<seq>`` ('' if malformed)."""
    parts = attempt_id.split("_")
    if len(parts) == 4 and parts[0] == "appattempt":
        return f"application_{parts[1]}_{parts[2]}"
    return ""


# --------------------------------------------------------------------------- containers


# the keys _container reads (tests/unit/test_lean_json.py checks the list is whole)
CONTAINER_KEYS = (
    "containerId", "allocatedMB", "allocatedVCores", "allocatedResources",
    "assignedNodeId", "nodeId", "priority", "startedTime", "containerState", "executionType",
)
# allocatedResources only when allocatedMB/VCores say nothing
LEAN_CONTAINERS = LeanDecoder("containers", "container", CONTAINER_KEYS,
                              {"allocatedResources": RAW})


def parse_containers(body: object) -> tuple[Container, ...]:
    """``{"containers": {"container": [...]}}`` or ``{"container": {...}}`` -> Containers.

    Numbers may be strings (the RM DAO renders them so). The app id comes from
    the container id; the AM is container number 1. ``body`` is decoded JSON,
    or a RawJSON decoded here.
    """
    items = _items(body, LEAN_CONTAINERS, CONTAINERS)
    with paused_gc():
        return tuple([_container(c) for c in items])


def _container(c: JSON) -> Container:
    """One container. A string value is taken as it is, without the converters'
    calls: at 10k nodes this runs 100k times a cycle, and the RM sends strings."""
    g = c.get
    cid = g("containerId")
    if type(cid) is not str or not cid:
        cid = require_str(c, "containerId", "container", CONTAINERS)
    head, _, number = cid.rpartition("_")
    app_id = _app_of_attempt_part(head)
    if not app_id or not number.isdigit():
        raise ParseError(f"{CONTAINERS}: malformed containerId {cid!r}")
    alloc = res_pair(c, "allocatedMB", "allocatedVCores")
    if alloc is ZERO and "allocatedResources" in c:
        alloc = _allocated_resources(g("allocatedResources"))
    node = g("assignedNodeId")
    if type(node) is not str or not node:
        node = as_str(node) or as_str(g("nodeId"))
    state = g("containerState")
    execution = g("executionType")
    return _new_container(
        cid, app_id, node, alloc, _priority(g("priority")), nonneg(g("startedTime")),
        state if type(state) is str else as_str(state),
        execution if type(execution) is str and execution else as_str(execution) or "GUARANTEED",
        number.lstrip("0") == "1",
    )


# Container's fields in order; _new_container sets them straight into the slots.
_CONTAINER_FIELDS = ("id", "app_id", "node_id", "allocated", "priority", "started_time",
                     "state", "execution_type", "is_am", "usage")
if tuple(f.name for f in fields(Container)) != _CONTAINER_FIELDS:  # pragma: no cover
    raise ImportError("parse_rm._new_container is out of step with Container's fields")
(_s_id, _s_app, _s_node, _s_alloc, _s_prio, _s_started, _s_state, _s_exec, _s_am,
 _s_usage) = (getattr(Container, name).__set__ for name in _CONTAINER_FIELDS)
_new_object = object.__new__


def _new_container(cid: str, app_id: str, node_id: str, allocated: Resources, priority: int,
                   started_time: int, state: str, execution_type: str, is_am: bool) -> Container:
    """``Container(...)`` with no usage, at half the cost: the frozen dataclass's
    ``__init__`` calls ``object.__setattr__`` per field, and that was 0.11 s of
    the 0.25 s that parsing 100k containers takes (tests/unit/test_parse_rm.py
    checks it equals the constructor's)."""
    c = _new_object(Container)
    _s_id(c, cid)
    _s_app(c, app_id)
    _s_node(c, node_id)
    _s_alloc(c, allocated)
    _s_prio(c, priority)
    _s_started(c, started_time)
    _s_state(c, state)
    _s_exec(c, execution_type)
    _s_am(c, is_am)
    _s_usage(c, None)
    return c


@lru_cache(maxsize=16384)
def _app_of_attempt_part(head: str) -> str:
    """``container_[e<epoch>_]<ts>_<seq>_<attempt>`` -> ``application_<ts>_<seq>``
    ('' if malformed). Cached: all containers of an attempt share it, and so
    share one app-id string."""
    parts = head.split("_")
    if len(parts) == 5 and parts[1][:1] == "e":
        del parts[1]
    if len(parts) != 4 or parts[0] != "container" or not parts[1].isdigit():
        return ""
    return f"application_{parts[1]}_{parts[2]}"


def app_id_of_container(container_id: str) -> str:
    """``container_[e<epoch>_]<ts>_<seq>_<attempt>_<n>`` -> ``application_<ts>_<seq>``."""
    return _app_of_attempt_part(container_id.rpartition("_")[0])


def _allocated_resources(value: object) -> Resources:
    """``[{"key": "memory-mb", "value": "1536"}, ...]`` -> Resources."""
    mem = cpu = 0
    for entry in as_list(materialized(value), "allocatedResources", CONTAINERS):
        key = entry.get("key")
        if key == "memory-mb":
            mem = as_int(entry.get("value"))
        elif key == "vcores":
            cpu = as_int(entry.get("value"))
    return resources(mem, cpu)


# --------------------------------------------------------------------------- configuration


def parse_scheduler_conf(body: object) -> dict[str, str]:
    """``GET /scheduler-conf``: ``{"property": [{"name", "value"}, ...]}`` -> {name: value}."""
    if not isinstance(body, dict) or "property" not in body:
        raise ParseError(f"/scheduler-conf: expected {{'property': [...]}}, got {_shape(body)}")
    out: dict[str, str] = {}
    for item in as_list(body.get("property"), "property", "/scheduler-conf"):
        name = item.get("name")
        if isinstance(name, str):
            out[name] = as_str(item.get("value"))
    return out


def parse_conf_property(body: object) -> tuple[str, str] | None:
    """``GET /conf?name=K`` as JSON: ``{"property": {"key", "value", ...}}`` -> (key, value);
    None when the RM does not know the key."""
    prop = body.get("property") if isinstance(body, dict) else None
    if isinstance(prop, list):
        prop = prop[0] if prop else None
    if prop is None:
        return None
    if not isinstance(prop, dict) or not isinstance(prop.get("key"), str):
        raise ParseError(f"/conf: unexpected property {prop!r:.100}")
    return prop["key"], as_str(prop.get("value"))


def _items(body: object, lean: LeanDecoder, endpoint: str) -> list[JSON]:
    """The items of a collection body: a RawJSON decoded leanly where its shape
    allows, else in full; decoded JSON as it is."""
    if isinstance(body, RawJSON):
        items = lean.items(body.data)
        if items is not None:
            return items
        body = decode_json(body.data, body.url)
    return items_or_single(body, lean.plural, lean.singular, endpoint)


def _shape(body: object) -> str:
    return f"keys {sorted(body)[:5]}" if isinstance(body, dict) else type(body).__name__
