"""What a simulation is given: the cluster, the scheduler set-up and the jobs.

These are frozen values, built by the workload loader (``workload.py``) or a
trace reader (``readers/``) and never changed by a run. Units: memory in MiB,
CPU in vcores (fractions allowed for measured use), times in milliseconds.

A task's *request* is what its container asks the RM for; its *use* is what it
actually consumes, phase by phase (a reduce shuffles with little CPU, then
reduces with a lot). The simulator schedules on requests and slows tasks down,
or kills the newest container, on use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAP = "MAP"
REDUCE = "REDUCE"
# the papers whose algorithm can run as the RM's scheduler (simulator.inrm)
PAPERS = ("haste", "haste-a", "opera", "matchmaking", "anacrac", "prism")


@dataclass(frozen=True, slots=True)
class Res:
    """A (memory, vcores) request."""

    memory_mb: int
    vcores: int

    def __str__(self) -> str:
        return f"<{self.memory_mb} MB, {self.vcores} vcores>"


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase of a task: its share of the task's duration and its actual use.

    ``share`` values of a stage's phases sum to 1. ``cpu`` is in vcores (a
    task may use more or less CPU than it requested); ``memory_mb`` is the
    resident memory it holds during the phase.
    """

    name: str
    share: float
    memory_mb: int
    cpu: float


@dataclass(frozen=True, slots=True)
class Stage:
    """The map or reduce stage of a job: ``len(durations_ms)`` tasks.

    ``durations_ms[i]`` is task i's run time at full speed on an uncontended
    node. ``input`` says where a map's input lives: ``none`` (no locality, like
    a SleepJob's splits), ``new`` (one fresh HDFS block per map, placed by
    :class:`Hdfs`), ``pool`` (a block drawn uniformly from the cluster's block
    pool) or ``hosts`` (``hosts[i]`` is the host task i prefers, as SLS and
    Rumen traces give it). ``fail_off_tag``: a task placed on a node without
    this tag fails at ``fail_at`` of its run (an ingestion task that cannot
    reach its external source); ``per_node_limit`` > 0: a task that finds that
    many of its job's tasks of this stage already running on its node fails
    the same way (connection overload, ANACRAC Sec. 1). A map that does not
    run where its block is reads it over the network: its time is multiplied
    by ``rack_local_factor`` or ``off_switch_factor``.
    """

    kind: str
    request: Res
    durations_ms: tuple[int, ...]
    phases: tuple[Phase, ...]
    input: str = "none"
    hosts: tuple[str, ...] = ()
    fail_off_tag: str = ""
    per_node_limit: int = 0
    fail_at: float = 0.3
    rack_local_factor: float = 1.0
    off_switch_factor: float = 1.0

    @property
    def tasks(self) -> int:
        return len(self.durations_ms)


@dataclass(frozen=True, slots=True)
class Job:
    """One application: an AM container, then its map and reduce stages.

    ``slowstart`` is ``mapreduce.job.reduce.slowstart.completedmaps``.
    ``after`` names the job whose end submits this one (a sequence; with
    ``after_success`` only if it finished, as an iteration chain); its
    ``submit_ms`` is then a delay after that end. Jobs with
    ``iterations`` > 1 are expanded by the loader into such a chain, tagged
    ``iteration:K/N`` as the advisor reads it.
    """

    id: str
    name: str
    submit_ms: int
    maps: Stage | None
    reduces: Stage | None
    user: str = "user"
    queue: str = "default"
    priority: int = 0
    app_type: str = "MAPREDUCE"
    tags: tuple[str, ...] = ()
    am: Res = Res(1536, 1)
    am_use: Phase = Phase("AM", 1.0, 512, 0.1)
    slowstart: float = 0.05
    after: str = ""
    after_success: bool = False  # iterations: a failed one ends the chain
    node_label: str = ""
    line: int = 0  # where the job was defined in its source (0: unknown)


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """``count`` identical nodes: schedulable size, real size, rack, label, tags.

    ``real_memory_mb`` / ``real_cpu`` are what the hardware gives (defaults:
    the schedulable size). When the containers' measured use passes them,
    tasks slow down (CPU) or the newest container is killed (memory).
    """

    count: int
    memory_mb: int
    vcores: int
    real_memory_mb: int = 0
    real_cpu: float = 0.0
    rack: str = ""
    label: str = ""
    tags: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()  # names (traces name their hosts); default node0001...


@dataclass(frozen=True, slots=True)
class Hdfs:
    """Block placement: ``replication`` replicas per block, HDFS's default
    policy (first replica on a random node, second on another rack, third on
    the second's rack); or a fixed pool of ``pool_blocks`` blocks placed evenly
    (no two replicas on one node) that maps draw from uniformly."""

    replication: int = 3
    pool_blocks: int = 0
    placement: str = "default"  # default | even


@dataclass(frozen=True, slots=True)
class Timing:
    """Latencies of the YARN protocol (ms).

    ``nm_heartbeat`` yarn.resourcemanager.nodemanagers.heartbeat-interval-ms;
    ``am_heartbeat`` yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms;
    ``container_launch``: from the AM pulling a container to its task
    running; ``am_launch``: from the AM container's allocation to the AM
    registered and asking; ``am_finish``: from the last task to the app
    finished (commit, history).
    """

    nm_heartbeat: int = 1000
    am_heartbeat: int = 1000
    container_launch: int = 1000
    am_launch: int = 2000
    am_finish: int = 1000


@dataclass(frozen=True, slots=True)
class Cluster:
    """The nodes (in groups), racks, HDFS and protocol timing."""

    groups: tuple[NodeGroup, ...]
    nodes_per_rack: int = 0  # 0: all nodes without an explicit rack on /default-rack
    hdfs: Hdfs = Hdfs()
    timing: Timing = Timing()
    minimum_allocation: Res = Res(1024, 1)
    maximum_allocation: Res = Res(8192, 4)
    labels: tuple[str, ...] = ()

    @property
    def node_count(self) -> int:
        return sum(g.count for g in self.groups)


@dataclass(frozen=True, slots=True)
class QueueSpec:
    """A leaf queue under root (CapacityScheduler or FairScheduler)."""

    name: str
    capacity: float = 100.0
    maximum_capacity: float = 100.0
    user_limit_factor: float = 1.0
    minimum_user_limit_percent: float = 100.0
    maximum_am_resource_percent: float | None = None
    accessible_node_labels: tuple[str, ...] = ()
    label_capacities: tuple[tuple[str, float], ...] = ()
    default_node_label: str = ""
    weight: float = 1.0
    policy: str = ""  # FairScheduler: fair | drf | fifo (default: the scheduler's)
    max_am_share: float = 0.5


@dataclass(frozen=True, slots=True)
class SchedulerSpec:
    """The RM's scheduler and its configuration."""

    type: str = "capacity"  # capacity | fair | fifo
    resource_calculator: str = "default"  # default (memory) | dominant
    queues: tuple[QueueSpec, ...] = (QueueSpec("default"),)
    node_locality_delay: int = 40
    rack_locality_additional_delay: int = -1
    offswitch_per_heartbeat: int = 1
    maximum_am_resource_percent: float = 0.1
    max_application_priority: int = 0
    fair_policy: str = "fair"  # FairScheduler default policy: fair | drf | fifo
    assign_multiple: bool = False  # FairScheduler yarn.scheduler.fair.assignmultiple
    locality_threshold_node: float = -1.0  # FairScheduler delay scheduling, -1 off
    locality_threshold_rack: float = -1.0


@dataclass(frozen=True)
class Workload:
    """Everything one run needs."""

    name: str
    cluster: Cluster
    scheduler: SchedulerSpec
    jobs: tuple[Job, ...]
    source: str = ""
    seed: int = 1
    notes: tuple[str, ...] = field(default=())
    paper: str = ""  # the paper whose algorithm the in-rm mode runs by default
