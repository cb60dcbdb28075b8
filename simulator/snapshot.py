"""The advisor's view of the simulated RM: a :class:`Snapshot`, as the sensor builds it.

Every part the live sensor reads is filled from simulation state, in the
units the parsers produce (times in epoch ms = ``cluster_ts`` + simulated ms,
progress in percent, node CPU in cores used, container CPU in percent of one
core): RM info (``ha_state`` ACTIVE, or STANDBY when the simulated RM is made
standby), cluster metrics, nodes with measured utilisation, the queue tree,
live apps with their pending asks (``*``, rack and host rows per priority),
running containers with measured usage (``ContainerUsage``: lifetime average
and maximum), MapReduce jobs and tasks of running apps, the tasks that ended
since the previous snapshot, QueueMetrics (with the node-local / rack-local /
off-switch aggregates), the CapacityScheduler's live configuration and
``yarn.cluster.max-application-priority``.

Built every sidecar cycle, so what did not change since the previous snapshot
of the same simulation is reused rather than rebuilt (frozen objects, equal
by value): a node's resources and utilisation while its allocation and use
stay the same, and the whole ``Task`` of a task not started (its fields do
not move with the clock). The result is the same snapshot as one built from
scratch.
"""

from __future__ import annotations

from collections import Counter
from itertools import islice
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from yarn_advisor.advisor.model.assemble import build_snapshot
from yarn_advisor.advisor.model.snapshot import (
    App,
    ClusterInfo,
    ClusterMetrics,
    Container,
    ContainerUsage,
    MRJob,
    Node,
    NodeUtilization,
    Queue,
    QueueMetricsBean,
    ResourceRequest,
    Resources,
    Snapshot,
    Task,
)
from yarn_advisor.simulator.apps import AM, SimApp, SimContainer, SimTask
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.schedulers.base import QueueView

if TYPE_CHECKING:
    from yarn_advisor.simulator.simulation import Simulation

RM_URL = "http://simulated-rm:8088"
LIVE = ("NEW", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHING")
_TASK_STATE = {"NEW": "SCHEDULED", "PENDING": "SCHEDULED", "ASSIGNED": "SCHEDULED",
               "RUNNING": "RUNNING", "SUCCEEDED": "SUCCEEDED", "KILLED": "KILLED"}

# a node's state and use -> its Node's parts that follow from them
_NodeKey = tuple[str, int, int, int, float, int, int, int, str]
# a task -> its id, and (for a task not started, or one that succeeded) what its Task
# follows from, and that Task
_TaskEntry = tuple[str, tuple[str, int, SimContainer | None] |
                   tuple[str, int, SimContainer | None, int] | None, Task | None]


class _Reuse:
    """What the previous snapshot of one simulation built that may still hold."""

    __slots__ = ("done", "live", "nodes", "seen", "tasks")

    def __init__(self) -> None:
        self.nodes: dict[SimNode, tuple[_NodeKey, Node]] = {}
        self.tasks: dict[SimTask, _TaskEntry] = {}
        self.seen = 0  # apps of the simulation looked at so far (in submission order)
        self.live: list[SimApp] = []  # those still live at the previous snapshot
        self.done: Counter[str] = Counter()  # the others, by final state

    def live_apps(self, sim: Simulation) -> list[SimApp]:
        """The live apps in submission order, as ``[a for a in sim.apps.values() if
        a.state in LIVE]``, without looking again at apps that ended (an app that
        leaves the live states never returns to them; a day of jobs is thousands of
        ended apps looked at every cycle)."""
        apps = sim.apps
        fresh = list(islice(apps.values(), self.seen, None)) if len(apps) > self.seen else []
        self.seen = len(apps)
        live = []
        for a in (*self.live, *fresh):
            if a.state in LIVE:
                live.append(a)
            else:
                self.done[a.state] += 1
        self.live = live
        return live


_REUSE: WeakKeyDictionary[Simulation, _Reuse] = WeakKeyDictionary()


def snapshot(sim: Simulation, max_tasks_per_job: int = 100_000) -> Snapshot:
    """The RM as the advisor's sensor would read it now."""
    now = sim.events.now
    ts = sim.cluster_ts
    rm = sim.rm
    for node_running in sim.nms.running.values():
        for c in node_running:
            sim.nms.settle(c)
    reuse = _REUSE.get(sim)
    if reuse is None:
        reuse = _REUSE[sim] = _Reuse()
    live = reuse.live_apps(sim)
    running = [a for a in live if a.state in ("RUNNING", "FINISHING")]
    nodes = [_node(n, ts, now, reuse.nodes) for n in rm.nodes]
    containers = [_container(c, ts, now) for a in running for c in a.containers.values()]
    sums = {a: _sums(a) for a in running}
    jobs = [_job(a, ts, now, sums[a]) for a in running if a.job.app_type == "MAPREDUCE"]
    before, reuse.tasks = reuse.tasks, {}  # keep only the tasks listed now
    tasks: list[Task] = []
    for a in running:
        if a.job.app_type == "MAPREDUCE":
            _live_tasks(a, ts, now, before, reuse.tasks, max_tasks_per_job, tasks)
    finished = [_task(t.app, t, ts, now, finish, _known_id(t, before))
                for t, finish in sim.take_finished_tasks()]
    total_mem = total_vc = 0
    for n in rm.nodes:
        if n.state == "RUNNING":
            total_mem += n.total_mem
            total_vc += n.total_vc
    queues = [_queue(v) for v in sim.scheduler.queues()]
    return build_snapshot(
        taken_at=ts + now, rm_url=RM_URL,
        cluster=ClusterInfo(ts, "STARTED", "STANDBY" if rm.standby else "ACTIVE", "3.4.2",
                            "3.4.2", ts),
        metrics=_metrics(sim, live, reuse.done, total_mem, total_vc),
        scheduler_type=sim.scheduler.type_name, queues=queues, nodes=nodes,
        apps=[_app(a, ts, now, total_mem, sums.get(a)) for a in live], containers=containers,
        jobs=jobs, tasks=tasks, finished_tasks=finished,
        queue_metrics=_queue_metrics(sim, live, queues),
        sources={"rm": True, "containers": True, "nm_jmx": True, "rm_jmx": True,
                 "scheduler_conf": sim.scheduler.type_name == "capacityScheduler",
                 "rm_conf": True, "mapreduce": True, "history": True},
        scheduler_conf=sim.scheduler.conf(),
        rm_conf={"yarn.cluster.max-application-priority": str(rm.max_priority)},
    )


def _node(n: SimNode, ts: int, now: int, reuse: dict[SimNode, tuple[_NodeKey, Node]]) -> Node:
    """The node as ``/nodes`` lists it; the previous snapshot's object while nothing
    the advisor reads of it changed (its ``last_health_update`` is then when it last
    changed: no policy reads it, and 600 nodes x every cycle was a tenth of a run)."""
    used_cpu = min(n.use_cpu, n.real_cpu)
    key = (n.state, n.alloc_mem, n.alloc_vc, n.use_mem, used_cpu, len(n.containers),
           n.total_mem, n.total_vc, n.label)
    known = reuse.get(n)
    if known is not None and known[0] == key:
        return known[1]
    utilization = NodeUtilization(node_pmem_mb=n.use_mem, node_vmem_mb=n.use_mem,
                                  node_cpu=used_cpu, containers_pmem_mb=n.use_mem,
                                  containers_vmem_mb=n.use_mem, containers_cpu=used_cpu)
    node = Node(n.id, n.host, n.rack, n.state, n.http_address, (n.label,) if n.label else (),
                Resources(n.total_mem, n.total_vc), Resources(n.alloc_mem, n.alloc_vc),
                Resources(n.total_mem - n.alloc_mem, n.total_vc - n.alloc_vc),
                len(n.containers), utilization, ts + now, "3.4.2")
    reuse[n] = (key, node)
    return node


def _metrics(sim: Simulation, live: list[SimApp], done: Counter[str], total_mem: int,
             total_vc: int) -> ClusterMetrics:
    rm = sim.rm
    alloc_mem = alloc_vc = containers = active = 0
    reserved = []
    for n in rm.nodes:  # one pass over the nodes for all their sums
        alloc_mem += n.alloc_mem
        alloc_vc += n.alloc_vc
        containers += len(n.containers)
        active += n.state == "RUNNING"
        if n.reserved is not None:
            reserved.append(n.reserved)
    return ClusterMetrics(
        apps_submitted=len(sim.apps), apps_completed=done["FINISHED"],
        apps_pending=sum(a.state in ("NEW", "SUBMITTED", "ACCEPTED") for a in live),
        apps_running=sum(a.state in ("RUNNING", "FINISHING") for a in live),
        apps_failed=done["FAILED"], apps_killed=done["KILLED"],
        total=Resources(total_mem, total_vc), allocated=Resources(alloc_mem, alloc_vc),
        available=Resources(total_mem - alloc_mem, total_vc - alloc_vc),
        reserved=Resources(sum(r.mem for r in reserved), sum(r.vc for r in reserved)),
        containers_allocated=containers,
        containers_pending=rm.pending_total, containers_reserved=len(reserved),
        active_nodes=active, total_nodes=len(rm.nodes),
        unhealthy_nodes=0, lost_nodes=0, decommissioning_nodes=0)


def _requests(app: SimApp) -> tuple[ResourceRequest, ...]:
    out = []
    for prio in sorted(app.asks):
        ask = app.asks[prio]
        if not ask.any:
            continue
        cap = Resources(ask.mem, ask.vc)
        label = app.label
        out.append(ResourceRequest(prio, "*", cap, ask.count, True, label))
        for rack, tasks in sorted(ask.by_rack.items()):
            out.append(ResourceRequest(prio, rack, cap, len(tasks), True, label))
        for host, tasks in sorted(ask.by_host.items()):
            out.append(ResourceRequest(prio, host, cap, len(tasks), True, label))
    return tuple(out)


# one stage's tasks in one pass: (progress summed onto a start, as sum() adds in order;
# progress summed from 0; succeeded; their run time; running; not started)
_StageSums = tuple[float, float, int, int, int, int]
_NOT_STARTED = ("NEW", "PENDING", "ASSIGNED")


def _stage(tasks: list[SimTask], acc: float) -> _StageSums:
    own: float = 0
    done = dtime = running = pending = 0
    for t in tasks:
        st = t.state
        if st == "SUCCEEDED":
            p = 1.0
            done += 1
            dtime += t.finish_ms - t.start_ms
        elif st == "RUNNING":
            p = t.progress
            running += 1
        else:
            p = 0.0
            if st in _NOT_STARTED:
                pending += 1
        acc += p
        own += p
    return acc, own, done, dtime, running, pending


def _sums(app: SimApp) -> tuple[_StageSums, _StageSums]:
    """The maps' and the reduces' sums of a running app (what its App and MRJob show)."""
    m = _stage(app.maps, 0)
    return m, _stage(app.reduces, m[0])


def _progress(app: SimApp, sums: tuple[_StageSums, _StageSums] | None) -> float:
    n = len(app.maps) + len(app.reduces)
    if not n or sums is None:
        return 0.0
    return 100.0 * sums[1][0] / n


def _app(app: SimApp, ts: int, now: int, total_mem: int,
         sums: tuple[_StageSums, _StageSums] | None) -> App:
    am = app.am_task.container
    held_mem = sum(c.mem * (now - c.allocated_ms) for c in app.containers.values())
    held_vc = sum(c.vc * (now - c.allocated_ms) for c in app.containers.values())
    return App(
        id=app.id, name=app.name, user=app.user, queue=f"root.{app.queue}",
        type=app.job.app_type, tags=app.tags, state=app.state if app.state != "FINISHING"
        else "RUNNING", final_status="UNDEFINED", priority=app.priority,
        progress=round(_progress(app, sums), 3), started_time=ts + app.submit_ms, finished_time=0,
        elapsed_time=now - app.submit_ms, allocated=Resources(app.alloc_mem, app.alloc_vc),
        reserved=Resources(0, 0), running_containers=len(app.containers),
        am_host_http_address=am.node.http_address if am is not None else "",
        tracking_url=f"{RM_URL}/proxy/{app.id}/" if app.state in ("RUNNING", "FINISHING")
        else "",
        resource_requests=_requests(app), am_resource=Resources(app.am_mem, app.am_vc),
        memory_seconds=(app.memory_ms + held_mem) // 1000,
        vcore_seconds=(app.vcore_ms + held_vc) // 1000,
        cluster_usage_percentage=100.0 * app.alloc_mem / total_mem if total_mem else 0.0,
        node_label_expression=app.label)


def _container(c: SimContainer, ts: int, now: int) -> Container:
    return Container(
        id=c.id, app_id=c.app.id, node_id=c.node.id, allocated=Resources(c.mem, c.vc),
        priority=c.priority, started_time=ts + (c.started_ms or c.allocated_ms),
        state="RUNNING" if c.state == "RUNNING" else "ALLOCATED", is_am=c.is_am,
        usage=_usage(c, now))


def _usage(c: SimContainer, now: int) -> ContainerUsage | None:
    """Lifetime average and maximum of the container's use (NM ContainerMetrics)."""
    if c.state != "RUNNING":
        return None
    t = c.task
    phases = t.phases[:t.phase_idx + 1]
    if t.kind == AM or t.run_ms <= 0:
        weights = [1.0]
        phases = t.phases[:1]
    else:
        weights = [p.share for p in phases[:-1]]
        done_now = max(0.0, phases[-1].share * t.run_ms - max(t.work_left, 0.0))
        weights.append(done_now / t.run_ms if t.run_ms else 0.0)
    wsum = sum(weights) or 1.0
    rate = t.rate if t.phase.cpu > 0 else 1.0
    mem_avg = sum(w * p.memory_mb for w, p in zip(weights, phases, strict=True)) / wsum
    cpu_avg = sum(w * p.cpu for w, p in zip(weights, phases, strict=True)) / wsum * rate
    return ContainerUsage(
        container_id=c.id, pmem_avg_mb=mem_avg, pmem_max_mb=float(max(p.memory_mb
                                                                     for p in phases)),
        cpu_avg_percent=100.0 * cpu_avg, cpu_max_percent=100.0 * max(p.cpu for p in phases),
        pmem_limit_mb=float(c.mem), vcore_limit=float(c.vc),
        samples=max(1, (now - c.started_ms) // 1000))


def _job(app: SimApp, ts: int, now: int, sums: tuple[_StageSums, _StageSums]) -> MRJob:
    (_, own_m, done_m, time_m, run_m, pend_m), (_, own_r, done_r, time_r, run_r, pend_r) = sums
    n_m, n_r = len(app.maps), len(app.reduces)
    return MRJob(
        id=app.job_id, app_id=app.id, name=app.name, user=app.user, queue=f"root.{app.queue}",
        state="RUNNING", start_time=ts + app.registered_ms, finish_time=0,
        maps_total=n_m, maps_completed=done_m, reduces_total=n_r, reduces_completed=done_r,
        maps_running=run_m, reduces_running=run_r, maps_pending=pend_m,
        reduces_pending=pend_r,
        map_progress=round(100.0 * own_m / n_m if n_m else 100.0, 3),
        reduce_progress=round(100.0 * own_r / n_r if n_r else 100.0, 3),
        avg_map_time=time_m // done_m if done_m else 0,
        avg_reduce_time=time_r // done_r if done_r else 0)


def _known_id(t: SimTask, known: dict[SimTask, _TaskEntry]) -> str:
    entry = known.get(t)
    return entry[0] if entry is not None else t.app.task_id(t)


def _live_tasks(app: SimApp, ts: int, now: int, before: dict[SimTask, _TaskEntry],
                now_listed: dict[SimTask, _TaskEntry], limit: int, out: list[Task]) -> None:
    """:func:`_task` of each task of a running app (its maps, then its reduces, at most
    ``limit``), onto ``out``. A task not started keeps its Task as long as its state,
    attempt and container do (nothing else of it shows); one that succeeded, all of
    its Task but the elapsed time. One loop per app: a day of jobs lists millions
    of tasks over its cycles."""
    get = before.get
    for t in [*app.maps, *app.reduces][:limit]:
        entry = get(t)
        tid = entry[0] if entry is not None else app.task_id(t)
        state = t.state
        if state == "SUCCEEDED":  # only its elapsed time moves (a live app's task has no end)
            done_key = ("SUCCEEDED", t.attempt, t.container, t.start_ms)
            if entry is not None and entry[1] == done_key and entry[2] is not None:
                o = entry[2]
                task = Task(o.id, o.job_id, o.app_id, o.type, o.state, o.progress, o.start_time,
                            o.finish_time, now - t.start_ms if t.start_ms else 0, o.phase,
                            o.node_id, o.container_id, o.attempt_id)
            else:
                task = _task(app, t, ts, now, None, tid)
            now_listed[t] = (tid, done_key, task)
        elif state == "RUNNING":
            now_listed[t] = (tid, None, None)
            task = _task(app, t, ts, now, None, tid)
        else:
            key = (state, t.attempt, t.container)
            if entry is not None and entry[1] == key and entry[2] is not None:
                task = entry[2]
            else:
                task = _task(app, t, ts, now, None, tid)
            now_listed[t] = (tid, key, task)
        out.append(task)


def _task(app: SimApp, t: SimTask, ts: int, now: int, finish: int | None = None,
          tid: str | None = None) -> Task:
    killed = finish is not None and finish < 0
    end = -finish if killed and finish is not None else finish
    state = "KILLED" if killed else ("SUCCEEDED" if finish is not None else
                                     _TASK_STATE.get(t.state, "SCHEDULED"))
    started = t.start_ms if t.state in ("RUNNING", "SUCCEEDED") or finish is not None else 0
    c = t.container
    tid = tid if tid is not None else app.task_id(t)
    return Task(
        id=tid, job_id=app.job_id, app_id=app.id, type=t.kind, state=state,
        progress=100.0 if state == "SUCCEEDED" else round(100.0 * t.progress, 3),
        start_time=ts + started if started else 0,
        finish_time=ts + end if end is not None else 0,
        elapsed_time=((end if end is not None else now) - started) if started else 0,
        phase=t.phase.name if state == "RUNNING" else "",
        node_id=c.node.id if c is not None else "",
        container_id=c.id if c is not None else "",
        attempt_id=f"attempt_{tid[5:]}_{t.attempt}")


def _queue(v: QueueView) -> Queue:
    return Queue(
        path=v.path, name=v.name, parent=v.parent, is_leaf=v.is_leaf, capacity=v.capacity,
        max_capacity=v.max_capacity, used_capacity=v.used_capacity,
        absolute_capacity=v.absolute_capacity, absolute_max_capacity=v.absolute_max_capacity,
        absolute_used_capacity=v.absolute_used_capacity, used=Resources(v.used_mem, v.used_vc),
        num_applications=v.num_apps, num_active_applications=v.num_active,
        num_pending_applications=v.num_pending, num_containers=v.num_containers,
        pending_containers=v.pending_containers, state="RUNNING", node_labels=v.node_labels,
        children=v.children, default_priority=v.default_priority,
        ordering_policy=v.ordering_policy,
        fair_share=Resources(*v.fair_share), max_share=Resources(*v.max_share))


def _queue_metrics(sim: Simulation, live: list[SimApp], queues: list[Queue]
                   ) -> list[QueueMetricsBean]:
    out = []
    rm = sim.rm
    by_queue: dict[str, list[SimApp]] = {}
    for a in live:
        by_queue.setdefault(f"root.{a.queue}", []).append(a)
    root_agg = [0, 0, 0, 0]
    for q in queues:
        if not q.is_leaf:
            continue
        apps = by_queue.get(q.path, [])
        agg = rm.aggregates.get(q.path, [0, 0, 0, 0])
        root_agg = [x + y for x, y in zip(root_agg, agg, strict=True)]
        pend = [sum(ask.mem * ask.count for a in apps for ask in a.asks.values()),
                sum(ask.vc * ask.count for a in apps for ask in a.asks.values())]
        out.append(QueueMetricsBean(
            queue_path=q.path, apps_pending=sum(a.state != "RUNNING" for a in apps),
            apps_running=sum(a.state == "RUNNING" for a in apps),
            pending=Resources(*pend), pending_containers=sum(a.pending_total for a in apps),
            allocated=q.used, allocated_containers=q.num_containers,
            available=Resources(0, 0), reserved=Resources(0, 0),
            aggregate_containers_allocated=agg[0], aggregate_node_local=agg[1],
            aggregate_rack_local=agg[2], aggregate_off_switch=agg[3]))
    out.append(QueueMetricsBean(
        queue_path="root", apps_pending=sum(b.apps_pending for b in out),
        apps_running=sum(b.apps_running for b in out),
        pending=Resources(sum(b.pending.memory_mb for b in out),
                          sum(b.pending.vcores for b in out)),
        pending_containers=sum(b.pending_containers for b in out),
        allocated=Resources(sum(b.allocated.memory_mb for b in out),
                            sum(b.allocated.vcores for b in out)),
        allocated_containers=sum(b.allocated_containers for b in out),
        available=Resources(0, 0), reserved=Resources(0, 0),
        aggregate_containers_allocated=root_agg[0], aggregate_node_local=root_agg[1],
        aggregate_rack_local=root_agg[2], aggregate_off_switch=root_agg[3]))
    return out
