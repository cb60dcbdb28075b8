"""The levers bench/haste_lever_ceiling.py searches: priority orders (every weak
order, class orders, one-job moves), the workload transforms that set each lever
statically, and a job's remaining work for the hindsight oracle."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from sim_ceiling import overcommitted

from yarn_advisor.simulator.apps import SimApp
from yarn_advisor.simulator.spec import QueueSpec, Workload

MAX_PRIORITY = 10  # yarn.cluster.max-application-priority with the lever on
Order = tuple[tuple[str, ...], ...]  # blocks of job roots, highest priority first


# --- orders ---------------------------------------------------------------------------
def root(job_id: str) -> str:
    """The job an iteration belongs to (``kmeans#3`` -> ``kmeans``)."""
    return job_id.split("#", 1)[0]


def roots(wl: Workload) -> list[str]:
    return list(dict.fromkeys(root(j.id) for j in wl.jobs))


def weak_orders(items: Sequence[str]) -> Iterator[Order]:
    """Every ordered partition of ``items`` (priority levels with ties), each once:
    1, 1, 3, 13, 75, 541 of them for 0..5 items."""
    if not items:
        yield ()
        return
    first = items[0]
    for rest in weak_orders(items[1:]):
        for i, block in enumerate(rest):
            yield (*rest[:i], (first, *block), *rest[i + 1:])
        for i in range(len(rest) + 1):
            yield (*rest[:i], (first,), *rest[i:])


def strict(order: Sequence[str]) -> Order:
    return tuple((x,) for x in order)


def class_orders(wl: Workload) -> Iterator[Order]:
    """Every order of the job classes (job names), with every order inside each class."""
    classes: dict[str, list[str]] = {}
    for j in wl.jobs:
        members = classes.setdefault(j.name, [])
        if root(j.id) not in members:
            members.append(root(j.id))
    for names in itertools.permutations(classes):
        for inner in itertools.product(*(itertools.permutations(classes[n]) for n in names)):
            yield strict([x for group in inner for x in group])


def priorities(order: Order) -> dict[str, int]:
    """Block 0 gets the highest priority, the last block 0 (YARN's default)."""
    top = len(order) - 1
    if top > MAX_PRIORITY:
        raise ValueError(f"{len(order)} priority levels > max priority {MAX_PRIORITY} + 1")
    return {x: top - i for i, block in enumerate(order) for x in block}


def moves(order: Sequence[str]) -> Iterator[list[str]]:
    """Every order one job move away (take one job out, put it anywhere else)."""
    for i in range(len(order)):
        rest = [*order[:i], *order[i + 1:]]
        for k in range(len(order)):
            if k != i:
                yield [*rest[:k], order[i], *rest[k:]]


# --- workload transforms ----------------------------------------------------------------
def lever_on(wl: Workload) -> Workload:
    return replace(wl, scheduler=replace(wl.scheduler, max_application_priority=MAX_PRIORITY))


def with_order(wl: Workload, order: Order) -> Workload:
    prio = priorities(order)
    jobs = tuple(replace(j, priority=prio.get(root(j.id), 0)) for j in wl.jobs)
    return replace(lever_on(wl), jobs=jobs)


def work(wl: Workload) -> dict[str, float]:
    """Task-seconds x dominant share of a node, per job root (all iterations)."""
    g = wl.cluster.groups[0]
    out: dict[str, float] = {}
    for j in wl.jobs:
        for st in (j.maps, j.reduces):
            if st is not None:
                share = max(st.request.memory_mb / g.memory_mb, st.request.vcores / g.vcores)
                out[root(j.id)] = out.get(root(j.id), 0.0) + share * sum(st.durations_ms) / 1e3
    return out


def queue_per_job(wl: Workload, proportional: bool) -> Workload:
    names = roots(wl)
    w = work(wl)
    weights = [w.get(n, 0.0) if proportional else 1.0 for n in names]
    caps = [round(100 * x / sum(weights), 2) for x in weights]
    caps[-1] = round(100 - sum(caps[:-1]), 2)
    am = wl.scheduler.maximum_am_resource_percent
    queues = tuple(QueueSpec(n, capacity=c, maximum_capacity=100.0,
                             user_limit_factor=float(len(names)), maximum_am_resource_percent=am)
                   for n, c in zip(names, caps, strict=True))
    jobs = tuple(replace(j, queue=root(j.id)) for j in wl.jobs)
    return replace(wl, jobs=jobs, scheduler=replace(wl.scheduler, queues=queues))


def with_slowstart(wl: Workload, s: float) -> Workload:
    return replace(wl, jobs=tuple(replace(j, slowstart=s) for j in wl.jobs))


Transform = Callable[[Workload], Workload]


def rm_settings(wl: Workload) -> dict[str, dict[str, Transform]]:
    """The static RM settings searched, by family: label -> workload transform."""
    sched = wl.scheduler

    def sched_with(**kw: Any) -> Transform:
        return lambda w: replace(w, scheduler=replace(w.scheduler, **kw))

    def oc(fm: float, fv: float) -> Transform:
        return lambda w: overcommitted(w, fm, fv)

    def qpj(prop: bool) -> Transform:
        return lambda w: queue_per_job(w, prop)

    return {
        "node_resources": {f"mem x{fm:g} vcores x{fv:g}": oc(fm, fv)
                           for fm, fv in ((1, 1.25), (1, 1.5), (1, 2), (1.25, 1), (1.5, 1),
                                          (1.25, 1.25), (1.5, 1.5))},
        "am_percent": {f"maximum-am-resource-percent {p:g}": sched_with(
            maximum_am_resource_percent=p) for p in (0.1, 0.2, 0.3, 1.0)
            if p != sched.maximum_am_resource_percent},
        "locality": {"node-locality-delay 0": sched_with(node_locality_delay=0),
                     "offswitch per heartbeat 100": sched_with(offswitch_per_heartbeat=100)},
        "queues": {"queue per job, equal": qpj(False), "queue per job, by work": qpj(True)},
    }


SLOWSTARTS = (0.5, 0.8, 1.0)


def remaining_work(app: SimApp, now: int, later: float, node: tuple[int, int]) -> float:
    total = later
    for stage, tasks in ((app.job.maps, app.maps), (app.job.reduces, app.reduces)):
        if stage is None:
            continue
        share = max(stage.request.memory_mb / node[0], stage.request.vcores / node[1])
        for t in tasks:
            if t.state == "SUCCEEDED":
                continue
            left = t.duration_ms - (now - t.start_ms) if t.state == "RUNNING" else t.duration_ms
            total += share * max(0, left) / 1e3
    return total
