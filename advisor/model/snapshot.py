"""The data model every policy sees: a frozen, timestamped Snapshot of the cluster.

Everything here is an immutable value. Parse functions in ``connectors/``
build these objects from decoded JSON; ``advisor.snapshot.build_snapshot``
assembles them into one :class:`Snapshot`. Policies read a Snapshot and never
mutate it; ``Snapshot.taken_at`` (epoch milliseconds) is the only clock they
see.

Units: memory in MiB, CPU in vcores, times in epoch milliseconds, durations in
milliseconds, CPU utilisation as a fraction of the node's cores (0.0-1.0 per
core, as the RM reports it) unless a field name says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from yarn_advisor.advisor.model.plugin import PluginStatus

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1  # a Java int: what the RM parses a setting as


def conf_int(value: str | None, low: int = INT_MIN, high: int = INT_MAX) -> int | None:
    """An integer RM setting as the RM reads it (``Configuration.getInt``: decimal, a
    Java int), or None (unknown: YARN's default applies) when it is absent, not a
    number or outside ``[low, high]``. Checked by length before ``int()``: a
    4,301-digit value made ``int()`` raise and failed HaSTE and ANACRAC every cycle."""
    if value is None:
        return None
    text = value.strip()
    digits = text[1:] if text[:1] in ("-", "+") else text
    if not digits.isascii() or not digits.isdigit() or len(digits) > 10:
        return None
    number = int(text)
    return number if low <= number <= high else None


@dataclass(frozen=True, slots=True)
class Resources:
    """A (memory, vcores) vector; extra resource types are kept by name."""

    memory_mb: int = 0
    vcores: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.memory_mb + other.memory_mb, self.vcores + other.vcores)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.memory_mb - other.memory_mb, self.vcores - other.vcores)

    def scale(self, factor: int) -> Resources:
        return Resources(self.memory_mb * factor, self.vcores * factor)

    def fits_in(self, other: Resources) -> bool:
        return self.memory_mb <= other.memory_mb and self.vcores <= other.vcores


ZERO = Resources()


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """``/ws/v1/cluster/info``: identity, version and HA state of one RM."""

    cluster_id: int
    state: str
    ha_state: str
    hadoop_version: str
    rm_version: str
    started_on: int


@dataclass(frozen=True, slots=True)
class ClusterMetrics:
    """``/ws/v1/cluster/metrics``: cluster-wide totals."""

    apps_submitted: int
    apps_completed: int
    apps_pending: int
    apps_running: int
    apps_failed: int
    apps_killed: int
    total: Resources
    allocated: Resources
    available: Resources
    reserved: Resources
    containers_allocated: int
    containers_pending: int
    containers_reserved: int
    active_nodes: int
    total_nodes: int
    unhealthy_nodes: int
    lost_nodes: int
    decommissioning_nodes: int


@dataclass(frozen=True, slots=True)
class NodeUtilization:
    """Measured usage the NM reports in heartbeats (``resourceUtilization``).

    CPU values are fractions of the node's cores as the RM reports them.
    """

    node_pmem_mb: int = 0
    node_vmem_mb: int = 0
    node_cpu: float = 0.0
    containers_pmem_mb: int = 0
    containers_vmem_mb: int = 0
    containers_cpu: float = 0.0


@dataclass(frozen=True, slots=True)
class Node:
    """One NodeManager as the RM sees it (``/ws/v1/cluster/nodes``)."""

    id: str
    host: str
    rack: str
    state: str
    http_address: str
    labels: tuple[str, ...]
    total: Resources
    used: Resources
    available: Resources
    num_containers: int
    utilization: NodeUtilization | None
    last_health_update: int = 0
    version: str = ""


@dataclass(frozen=True, slots=True)
class Queue:
    """One scheduler queue, flattened from the queue tree.

    Capacities are percentages as the scheduler reports them (0-100).
    ``parent`` is the parent's path ('' for root); ``children`` are paths.
    """

    path: str
    name: str
    parent: str
    is_leaf: bool
    capacity: float
    max_capacity: float
    used_capacity: float
    absolute_capacity: float
    absolute_max_capacity: float
    absolute_used_capacity: float
    used: Resources
    num_applications: int
    num_active_applications: int
    num_pending_applications: int
    num_containers: int
    pending_containers: int
    state: str
    node_labels: tuple[str, ...]
    children: tuple[str, ...]
    default_priority: int = 0
    ordering_policy: str = ""
    scheduler_type: str = "capacityScheduler"
    # FairScheduler shares (zero for other schedulers)
    fair_share: Resources = ZERO
    min_share: Resources = ZERO
    max_share: Resources = ZERO


@dataclass(frozen=True, slots=True)
class ResourceRequest:
    """A pending ask of an application (an item of ``resourceRequests``)."""

    priority: int
    resource_name: str
    capability: Resources
    num_containers: int
    relax_locality: bool
    node_label_expression: str
    execution_type: str = "GUARANTEED"
    allocation_request_id: int = -1


@dataclass(frozen=True, slots=True)
class App:
    """One YARN application (``/ws/v1/cluster/apps``)."""

    id: str
    name: str
    user: str
    queue: str
    type: str
    tags: tuple[str, ...]
    state: str
    final_status: str
    priority: int
    progress: float
    started_time: int
    finished_time: int
    elapsed_time: int
    allocated: Resources
    reserved: Resources
    running_containers: int
    am_host_http_address: str
    tracking_url: str
    resource_requests: tuple[ResourceRequest, ...]
    am_resource: Resources = ZERO
    memory_seconds: int = 0
    vcore_seconds: int = 0
    cluster_usage_percentage: float = 0.0
    queue_usage_percentage: float = 0.0
    node_label_expression: str = ""
    # the harm watchdog's: the running AM attempt's number (from its container id; 0
    # before an AM runs), the node it runs on, and the containers the RM preempted
    am_attempt: int = 0
    am_node_id: str = ""
    preempted_containers: int = 0

    @property
    def pending(self) -> Resources:
        """Total resources this app still asks for (off-switch '*' rows only,
        which carry the total count for each priority)."""
        total = ZERO
        for rr in self.resource_requests:
            if rr.resource_name == "*" and rr.num_containers > 0:
                total = total + rr.capability.scale(rr.num_containers)
        return total


@dataclass(frozen=True, slots=True)
class AppAttempt:
    """One attempt of an application (``.../appattempts``)."""

    id: str
    app_id: str
    start_time: int
    finished_time: int
    container_id: str
    node_id: str
    state: str


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    """Measured usage of one container from NM JMX ``ContainerResource_*``.

    ``cpu_percent`` is percent of one core (200 = two cores busy).
    """

    container_id: str
    pmem_avg_mb: float
    pmem_max_mb: float
    cpu_avg_percent: float
    cpu_max_percent: float
    pmem_limit_mb: float
    vcore_limit: float
    samples: int


@dataclass(frozen=True, slots=True)
class Container:
    """A container of a running attempt (``.../appattempts/{id}/containers``)."""

    id: str
    app_id: str
    node_id: str
    allocated: Resources
    priority: int
    started_time: int
    state: str
    execution_type: str = "GUARANTEED"
    is_am: bool = False
    usage: ContainerUsage | None = None


@dataclass(frozen=True, slots=True)
class MRJob:
    """A MapReduce job from the AM (running) or the JobHistory server (finished)."""

    id: str
    app_id: str
    name: str
    user: str
    queue: str
    state: str
    start_time: int
    finish_time: int
    maps_total: int
    maps_completed: int
    reduces_total: int
    reduces_completed: int
    maps_running: int = 0
    reduces_running: int = 0
    maps_pending: int = 0
    reduces_pending: int = 0
    map_progress: float = 0.0
    reduce_progress: float = 0.0
    avg_map_time: int = 0
    avg_reduce_time: int = 0
    uberized: bool = False


@dataclass(frozen=True, slots=True)
class Task:
    """A MapReduce task. ``phase`` is known for reduces (SHUFFLE, MERGE, REDUCE)
    and maps (MAP, SORT) when the attempt was read; '' otherwise."""

    id: str
    job_id: str
    app_id: str
    type: str  # MAP | REDUCE
    state: str
    progress: float
    start_time: int
    finish_time: int
    elapsed_time: int
    phase: str = ""
    node_id: str = ""
    container_id: str = ""
    attempt_id: str = ""


@dataclass(frozen=True, slots=True)
class QueueMetricsBean:
    """RM JMX ``QueueMetrics`` for one queue (the pending / aggregate counters
    the REST API does not show)."""

    queue_path: str
    apps_pending: int
    apps_running: int
    pending: Resources
    pending_containers: int
    allocated: Resources
    allocated_containers: int
    available: Resources
    reserved: Resources
    aggregate_containers_allocated: int = 0
    aggregate_node_local: int = 0
    aggregate_rack_local: int = 0
    aggregate_off_switch: int = 0


@dataclass(frozen=True)
class Snapshot:
    """The cluster at one instant, as far as the advisor could see it.

    ``sources`` maps a source name (``rm``, ``jmx``, ``mapreduce``,
    ``nm_jmx``) to whether it was read this cycle; optional sources that
    failed leave their parts empty rather than failing the snapshot.
    """

    taken_at: int
    rm_url: str
    cluster: ClusterInfo
    metrics: ClusterMetrics
    nodes: tuple[Node, ...]
    queues: tuple[Queue, ...]
    apps: tuple[App, ...]
    containers: tuple[Container, ...]
    jobs: tuple[MRJob, ...] = ()
    tasks: tuple[Task, ...] = ()
    finished_tasks: tuple[Task, ...] = ()
    queue_metrics: tuple[QueueMetricsBean, ...] = ()
    sources: Mapping[str, bool] = field(default_factory=dict)
    scheduler_type: str = "capacityScheduler"
    # the CapacityScheduler's live configuration (GET /scheduler-conf; needs a
    # mutable store and admin rights) and selected RM settings (GET /conf)
    scheduler_conf: Mapping[str, str] = field(default_factory=dict)
    rm_conf: Mapping[str, str] = field(default_factory=dict)
    # the RM plug-in's own counters (its JMX MBean), None when not read or not there
    plugin: PluginStatus | None = None

    @cached_property
    def app_by_id(self) -> Mapping[str, App]:
        """The apps by id (built once per snapshot, on first use)."""
        return {a.id: a for a in self.apps}

    @cached_property
    def node_by_id(self) -> Mapping[str, Node]:
        """The nodes by id (built once per snapshot, on first use)."""
        return {n.id: n for n in self.nodes}

    @cached_property
    def container_by_id(self) -> Mapping[str, Container]:
        """The containers by id (built once per snapshot, on first use)."""
        return {c.id: c for c in self.containers}

    @property
    def max_app_priority(self) -> int | None:
        """``yarn.cluster.max-application-priority`` when the RM told us."""
        return conf_int(self.rm_conf.get("yarn.cluster.max-application-priority"))

    @property
    def pending_requests(self) -> int:
        """Number of pending container asks (sum of '*' rows of live apps)."""
        return sum(
            rr.num_containers
            for app in self.apps
            for rr in app.resource_requests
            if rr.resource_name == "*" and rr.num_containers > 0
        )
