"""The sense step: read the cluster through the connectors, return a Snapshot.

Required sources (RM info, metrics, scheduler, nodes, live apps) must all
answer with well-formed bodies, or :class:`SenseError` is raised and the
cycle is skipped: acting on half a cluster is worse than not acting.
Optional sources (containers, RM JMX, MapReduce, JobHistory, NodeManager
JMX) degrade instead: ``Snapshot.sources[name]`` is False when any of its reads
failed (its part of the Snapshot holds what was read, empty when nothing was),
so a policy (and the actuator) can tell "no containers" from "containers not
(all) read".

Per-app and per-node reads run on a small thread pool and are bounded by the
``sense`` limits of the configuration, so a 10,000-node cluster costs a
bounded number of requests per cycle.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from yarn_advisor.advisor.model.assemble import build_snapshot
from yarn_advisor.advisor.model.gcpause import paused_gc
from yarn_advisor.advisor.model.plugin import PluginStatus
from yarn_advisor.advisor.model.snapshot import (
    App,
    Container,
    ContainerUsage,
    MRJob,
    QueueMetricsBean,
    Snapshot,
    Task,
)
from yarn_advisor.config.schema import Sense
from yarn_advisor.connectors import jmx as jmxp
from yarn_advisor.connectors import mapreduce as mrp
from yarn_advisor.connectors import rm as rmp
from yarn_advisor.connectors.errors import (
    ConnectorError,
    HTTPStatusError,
    ParseError,
    StandbyError,
    TimeoutError_,
    one_line,
    redact_url,
)
from yarn_advisor.connectors.jmx.client import JmxClient
from yarn_advisor.connectors.mapreduce.client import MapReduceClient
from yarn_advisor.connectors.rm.client import RMClient

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")
DONE = frozenset({"SUCCEEDED", "FAILED", "KILLED"})
FIRST_LOOKBACK_MS = 120_000
HISTORY_GIVE_UP_MS = 30 * 60_000
MapReduceParts = tuple[list[MRJob], list[Task], list[Task]]
PAST_DEADLINE = "given up: the cycle's deadline (sense.deadline_s) passed"


# What reading outside data may raise besides the connectors' own errors (a parse
# function meeting a shape no test foresaw): mapped to ParseError at this boundary.
DATA_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError,
               RecursionError)


class SenseError(Exception):
    """A required source failed; the cycle must be skipped."""

    def __init__(self, source: str, cause: ConnectorError) -> None:
        super().__init__(f"{source}: {cause}")
        self.source = source
        self.reason = cause.reason


@dataclass
class SourceStat:
    """How one source fared this cycle (for metrics and the cycle log line)."""

    ok: bool = True
    seconds: float = 0.0
    errors: int = 0
    last_error: str = ""


@dataclass
class SenseMemory:
    """What the sensor carries from one cycle to the next."""

    last_taken_at: int = 0
    seen_finished: OrderedDict[str, None] = field(default_factory=OrderedDict)
    nm_cursor: int = 0
    max_seen: int = 200_000
    # finished MapReduce apps whose tasks the JobHistory server has not served
    # yet (it moves a job there some time after it ends): app id -> first seen
    history_pending: dict[str, int] = field(default_factory=dict)
    # node of each task seen running last cycle, for the finished-task record
    task_nodes: dict[str, str] = field(default_factory=dict)

    def first_time_finished(self, task_id: str) -> bool:
        if task_id in self.seen_finished:
            return False
        self.seen_finished[task_id] = None
        while len(self.seen_finished) > self.max_seen:
            self.seen_finished.popitem(last=False)
        return True


@dataclass
class Connectors:
    """The clients one cycle reads from (live or replayed)."""

    rm: RMClient
    jmx: JmxClient
    mapreduce: MapReduceClient


@dataclass
class LiveSensor:
    connectors: Connectors
    params: Sense
    memory: SenseMemory = field(default_factory=SenseMemory)
    stats: dict[str, SourceStat] = field(default_factory=dict)
    rm_plugin: bool = False  # read the RM plug-in's MBean (sense.rm_plugin, resolved)
    _deadline: float = field(default=float("inf"), repr=False)  # this cycle's, monotonic

    def sense(self, now_ms: int) -> Snapshot:
        """One cycle's reads; raises SenseError when a required source fails.

        The cyclic collector is paused for the whole step, not only per body: a
        collection that runs between two bodies walks every decoded body still
        referenced and every model object made so far (millions at 10,000 nodes);
        after the step the bodies are freed and one collection walks the Snapshot
        (bench/bench_parse.py: 0.16 s of 1.0 s at 10,000 nodes)."""
        with paused_gc():
            return self._sense(now_ms)

    def _sense(self, now_ms: int) -> Snapshot:
        self.stats = {}
        self._deadline = time.monotonic() + self.params.deadline_s
        rm = self.connectors.rm
        info, metrics, (sched_type, queues), nodes, apps = self._required(
            ("info", lambda: rmp.parse_cluster_info(rm.cluster_info())),
            ("metrics", lambda: rmp.parse_cluster_metrics(rm.cluster_metrics())),
            ("scheduler", lambda: rmp.parse_scheduler(rm.scheduler())),
            ("nodes", lambda: rmp.parse_nodes(rm.nodes())),
            ("apps", lambda: rmp.parse_apps(rm.live_apps())),
        )
        self._nodes_agree(metrics.active_nodes, nodes)
        followed = rm.followed  # the RM the required data came from
        running = [a for a in apps if a.state == "RUNNING"]
        pool = ThreadPoolExecutor(self.params.fetch_workers)
        try:
            no_mr: MapReduceParts = ([], [], [])
            no_usage: list[ContainerUsage] = []
            no_containers: list[Container] = []
            no_qm: tuple[QueueMetricsBean, ...] = ()
            # The one-request sources first, the fan-outs after: a slow fan-out (a
            # container read per app) must not use the deadline up before them.
            qm = self._optional("rm_jmx", no_qm, self._queue_metrics, enabled=self.params.rm_jmx)
            plugin = self._optional("rm_plugin", None, self._plugin, enabled=self.rm_plugin)
            no_conf: dict[str, str] = {}
            sched_conf = self._optional(
                "scheduler_conf", no_conf,
                lambda: rmp.parse_scheduler_conf(rm.scheduler_conf()),
                enabled=self.params.scheduler_conf and sched_type == "capacityScheduler")
            rm_conf = self._optional("rm_conf", no_conf, self._rm_conf,
                                     enabled=bool(self.params.rm_conf_keys
                                                  or self.params.rm_conf_values))
            containers = self._optional("containers", no_containers,
                                        lambda: self._containers(pool, running))
            usage = self._optional("nm_jmx", no_usage, lambda: self._usage(pool, nodes),
                                   enabled=self.params.nm_jmx.enabled)
            jobs, tasks, done = self._optional(
                "mapreduce", no_mr, lambda: self._mapreduce(pool, running, now_ms),
                enabled=self.params.mapreduce.enabled)
            done += self._optional(
                "history", [], lambda: self._history(pool, now_ms),
                enabled=self.params.mapreduce.enabled and self.params.mapreduce.history
                and self.connectors.mapreduce.history_url is not None)
        finally:  # reads given up at the deadline end on their own (total_s), unwaited
            pool.shutdown(wait=False, cancel_futures=True)
        self._same_rm(followed)
        self.memory.last_taken_at = now_ms
        done = [replace(t, node_id=self.memory.task_nodes.get(t.id, "")) if not t.node_id else t
                for t in done]
        snapshot = build_snapshot(
            taken_at=now_ms, rm_url=followed or rm.urls[0], cluster=info, metrics=metrics,
            scheduler_type=sched_type, queues=queues, nodes=nodes, apps=apps,
            containers=containers, usage=usage, jobs=jobs, tasks=tasks,
            finished_tasks=done, queue_metrics=qm, scheduler_conf=sched_conf, rm_conf=rm_conf,
            plugin=plugin,
            sources={"rm": True, **{k: s.ok for k, s in self.stats.items() if k in OPTIONAL}},
        )
        self.memory.task_nodes = {t.id: t.node_id for t in snapshot.tasks if t.node_id}
        return snapshot

    def _nodes_agree(self, active: int, nodes: Sequence[Any]) -> None:
        """Skip the cycle (reason ``parse``) when the nodes list holds fewer than half
        the RUNNING nodes the RM's metrics count as active: a nodes body that decoded
        to no nodes beside 2 active ones made Matchmaking write a delay for 0 nodes.
        (The two reads are a moment apart: a node or two may come or go between.)"""
        running = sum(1 for n in nodes if n.state == "RUNNING")
        if active <= 0 or running * 2 >= active:
            return
        cause = ParseError(f"the nodes list has {running} RUNNING nodes, the cluster "
                           f"metrics count {active} active")
        stat = self.stats.setdefault("rm", SourceStat())
        stat.ok, stat.errors, stat.last_error = False, stat.errors + 1, f"nodes: {cause}"
        raise SenseError("nodes", cause)

    def _same_rm(self, followed: str | None) -> None:
        """Skip the cycle (reason ``standby``) when the RM failed over while it read:
        an optional read met a 307 and re-resolved, to another RM or to none. The
        required data came from an RM that is no longer the active one."""
        now = self.connectors.rm.followed
        if now == followed:
            return
        cause = StandbyError(
            f"the ResourceManager failed over during the cycle (read from "
            f"{redact_url(followed or '?')}, now {redact_url(now) if now else 'no active RM'})")
        stat = self.stats.setdefault("rm", SourceStat())
        stat.ok, stat.errors, stat.last_error = False, stat.errors + 1, str(cause)
        raise SenseError("rm", cause)

    # --- bookkeeping -------------------------------------------------------
    def _required(self, *steps: tuple[str, Callable[[], Any]]) -> list[Any]:
        out = []
        started = time.monotonic()
        stat = self.stats.setdefault("rm", SourceStat())
        for name, step in steps:
            try:
                out.append(_mapped(step))
            except ConnectorError as exc:
                stat.ok, stat.errors, stat.last_error = False, 1, f"{name}: {exc}"
                stat.seconds = time.monotonic() - started
                raise SenseError(name, exc) from exc
        stat.seconds = time.monotonic() - started
        return out

    def _optional(self, name: str, empty: T, step: Callable[[], T], enabled: bool = True) -> T:
        if not enabled:
            return empty
        started = time.monotonic()
        stat = self.stats.setdefault(name, SourceStat())
        if started > self._deadline:
            stat.ok, stat.last_error = False, PAST_DEADLINE
            log.warning("source %s not read this cycle: %s", name, PAST_DEADLINE)
            return empty
        try:
            result = _mapped(step)
        except ConnectorError as exc:
            stat.ok, stat.last_error = False, str(exc)
            stat.errors += 1
            log.warning("source %s not read this cycle: %s", name, exc)
            result = empty
        stat.seconds = time.monotonic() - started
        return result

    def _each(self, pool: ThreadPoolExecutor, name: str, fn: Callable[[T], R],
              items: Iterable[T]) -> list[R]:
        """Run fn over items; per-item failures are counted, not fatal, unless every
        item failed (then the source is down). A source with any failed read is not
        whole (``ok`` False, so ``Snapshot.sources[name]`` is False) though it keeps
        what was read: a policy must not take a partial read for the cluster."""
        items = list(items)
        results: list[R] = []
        failures: list[ConnectorError] = []

        def guarded(item: T) -> R | ConnectorError:
            try:
                return _mapped(lambda: fn(item))
            except ConnectorError as exc:
                return exc

        futures = [pool.submit(guarded, item) for item in items]
        _, late = wait(futures, timeout=max(0.0, self._deadline - time.monotonic()))
        for f in futures:  # in the items' order
            res = TimeoutError_(PAST_DEADLINE) if f in late else f.result()
            if isinstance(res, ConnectorError):
                failures.append(res)
            else:
                results.append(res)
        stat = self.stats.setdefault(name, SourceStat())
        stat.errors += len(failures)
        if failures:
            stat.ok = False
            stat.last_error = f"{len(failures)} of {len(items)} reads failed: {failures[-1]}"
            log.info("source %s: %d of %d reads failed (%s)", name, len(failures), len(items),
                     failures[-1])
            if not results:
                raise failures[-1]
        return results

    # --- optional sources ---------------------------------------------------
    def _containers(self, pool: ThreadPoolExecutor, running: Sequence[App]) -> list[Container]:
        rm = self.connectors.rm

        def of_app(app: App) -> tuple[Container, ...]:
            attempts = rmp.parse_app_attempts(rm.app_attempts(app.id))
            if not attempts:
                return ()
            latest = max(attempts, key=lambda a: a.id)
            return rmp.parse_containers(rm.containers(app.id, latest.id))

        chosen = running[: self.params.app_details_limit]
        return [c for cs in self._each(pool, "containers", of_app, chosen) for c in cs]

    def _usage(self, pool: ThreadPoolExecutor, nodes: Sequence[Any]) -> list[ContainerUsage]:
        live = [n for n in nodes if n.state == "RUNNING" and n.http_address]
        limit = self.params.nm_jmx.nodes_limit
        if len(live) > limit:
            start = self.memory.nm_cursor % len(live)
            live = (live[start:] + live[:start])[:limit]
            self.memory.nm_cursor = start + limit
        jmx = self.connectors.jmx

        def of_node(node: Any) -> tuple[ContainerUsage, ...]:
            beans = jmxp.parse_beans(jmx.nm_container_beans(node.http_address))
            return jmxp.container_usage(beans)

        return [u for us in self._each(pool, "nm_jmx", of_node, live) for u in us]

    def _rm_conf(self) -> dict[str, str]:
        given = self.params.rm_conf_values
        found = (rmp.parse_conf_property(self.connectors.rm.conf(k))
                 for k in self.params.rm_conf_keys if k not in given)
        return {**dict(kv for kv in found if kv is not None), **given}

    def _queue_metrics(self) -> tuple[QueueMetricsBean, ...]:
        return jmxp.queue_metrics(jmxp.parse_beans(self.connectors.jmx.rm_queue_beans()))

    def _plugin(self) -> PluginStatus | None:
        return jmxp.plugin_status(jmxp.parse_beans(self.connectors.jmx.rm_plugin_bean()))

    def _mapreduce(self, pool: ThreadPoolExecutor, running: Sequence[App],
                   now_ms: int) -> MapReduceParts:
        mr = self.connectors.mapreduce
        mr_apps = [a for a in running if a.type == "MAPREDUCE"][: self.params.mapreduce.jobs_limit]

        def of_app(app: App) -> tuple[tuple[MRJob, ...], list[Task]]:
            jobs = mrp.parse_jobs(mr.am_jobs(app.id))
            tasks = [t for j in jobs for t in mrp.parse_tasks(mr.am_tasks(app.id, j.id), j.id)]
            return jobs, tasks

        results = self._each(pool, "mapreduce", of_app, mr_apps)
        jobs = [j for js, _ in results for j in js]
        tasks = [t for _, ts in results for t in ts]
        live = [t for t in tasks if t.state == "RUNNING"][: self.params.mapreduce.attempts_limit]

        def with_attempt(task: Task) -> Task:
            attempts = mrp.parse_task_attempts(
                mr.am_task_attempts(task.app_id, task.job_id, task.id), task.id)
            current = [a for a in attempts if a.state in ("RUNNING", "STARTING")] or list(attempts)
            if not current:
                return task
            return mrp.task_with_attempt(task, max(current, key=lambda a: a.id), now_ms)

        detailed = {t.id: t for t in self._each(pool, "mapreduce", with_attempt, live)}
        current = [detailed.get(t.id, t) for t in tasks if t.state not in DONE]
        done = [t for t in tasks if t.state in DONE and self.memory.first_time_finished(t.id)]
        return jobs, current, done

    def _history(self, pool: ThreadPoolExecutor, now_ms: int) -> list[Task]:
        rm, mr, memory = self.connectors.rm, self.connectors.mapreduce, self.memory
        since = memory.last_taken_at or now_ms - FIRST_LOOKBACK_MS
        for app in rmp.parse_apps(rm.finished_apps(since)):
            if app.type == "MAPREDUCE":
                memory.history_pending.setdefault(app.id, now_ms)

        def of_app(app_id: str) -> tuple[str, tuple[Task, ...] | None]:
            job_id = "job_" + app_id.removeprefix("application_")
            try:
                return app_id, mrp.parse_tasks(mr.history_tasks(job_id), job_id)
            except HTTPStatusError as exc:
                if exc.status == 404:  # not moved to the JobHistory server yet
                    return app_id, None
                raise

        tasks: list[Task] = []
        for app_id, found in self._each(pool, "history", of_app, sorted(memory.history_pending)):
            if found is not None:
                tasks.extend(found)
            if found is not None or now_ms - memory.history_pending[app_id] > HISTORY_GIVE_UP_MS:
                del memory.history_pending[app_id]
        return [t for t in tasks if t.state in DONE and memory.first_time_finished(t.id)]


def _mapped(step: Callable[[], T]) -> T:
    """Run one read; an exception outside data caused is a ParseError (one line)."""
    try:
        return step()
    except DATA_ERRORS as exc:
        raise ParseError(f"unreadable data: {type(exc).__name__}: {one_line(exc)}") from exc


OPTIONAL = ("containers", "nm_jmx", "rm_jmx", "scheduler_conf", "rm_conf", "mapreduce",
            "history", "rm_plugin")
