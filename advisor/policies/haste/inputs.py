"""From a Snapshot to HaSTE's candidate requests with their urgency and alignment.

A *request* is one pending ``'*'`` row (app, scheduler priority, capability,
count) of a RUNNING or ACCEPTED app; an ACCEPTED app with no row but a known
AM resource gets a synthetic AM request (priority 0, count 1).

Roles, from the MapReduce AM's fixed request priorities (MRv2
``RMContainerAllocator``): 20 map, 19 opportunistic map, 5 fast-fail map,
10 reduce. Every request of an ACCEPTED app is its AM request. Anything else
(or a non-MapReduce app) is a generic ``task``.

Eq 2-3 counts come from the app's :class:`~yarn_advisor.advisor.model.snapshot.MRJob` (``A_m`` =
maps completed + running, ``A_r`` likewise, ``O_m``/``O_r`` running,
``A_am`` = 1), else from its :class:`~yarn_advisor.advisor.model.snapshot.Task` list, else the
documented fallback urgency of ``haste_core``. Task sizes ``R_m``/``R_r``
come from the request rows of those priorities, else from a running
container of that priority, else the app's mean container; ``R_am`` is the
app's AM resource, else its AM container (priority 0), else the mean
container. ``App.progress`` is read in percent (0-100), as the RM reports it.

Iterations/stages (HaSTE-A) come from the tags ``iteration:K/N`` or
``stage:K/N`` (this app is step K of N), else from the first configured
rule whose ``name_pattern`` matches the app name (its optional named group
``current`` gives K), else the app is non-iterative (I = 1, I_done = 0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from yarn_advisor.advisor.model.snapshot import App, MRJob, Resources, Snapshot, Task
from yarn_advisor.advisor.policies.haste import core as hc
from yarn_advisor.advisor.policies.haste.nodes import BoolArray, FloatArray, IntArray
from yarn_advisor.advisor.policies.haste.params import IterationRule

ACTIVE_STATES = frozenset({"RUNNING", "ACCEPTED"})
MAP_PRIORITIES = (20, 19, 5)
REDUCE_PRIORITY = 10
_ASSIGNED = frozenset({"RUNNING", "SUCCEEDED", "COMMIT_PENDING"})


def iteration_of(app: App, rules: Sequence[IterationRule]) -> hc.Iteration | None:
    """Tags first, then the first matching rule, else None (non-iterative)."""
    found = hc.iteration_from_tags(app.tags)
    if found is not None:
        return found
    for rule in rules:
        m = re.search(rule.name_pattern, app.name)
        if m:
            cur = m.groupdict().get("current")
            done = int(cur) - 1 if cur and cur.isdigit() else 0
            done = max(0, min(rule.total - 1, done))
            return hc.Iteration(rule.total, done, f"rule:{rule.name_pattern}")
    return None


class Request(NamedTuple):
    """One candidate request with what HaSTE knows about it."""

    app: App
    priority: int
    resource: hc.Vec
    containers: int
    partition: str
    role: str  # am | map | reduce | task
    urgency: float
    alignment: float
    iteration: hc.Iteration | None
    job: hc.JobCounts | None


@dataclass(frozen=True)
class Inputs:
    """All candidate requests, plus numpy columns for the vectorised RTA."""

    requests: tuple[Request, ...]
    res: IntArray
    urgency: FloatArray
    alignment: FloatArray
    is_am: BoolArray
    sum_iterations: int

    @cached_property
    def rounded(self) -> list[tuple[float, float]]:
        """Per request, ``(urgency, alignment)`` rounded to 6 decimals for reports."""
        u = np.round(self.urgency, 6).tolist()
        a = np.round(self.alignment, 6).tolist()
        return list(zip(u, a, strict=True))


def build_inputs(
    snap: Snapshot, w: hc.Weights, rules: Sequence[IterationRule], reduce_ratio_cap: float
) -> Inputs:
    """Candidate requests of all active apps, in canonical (app id, priority) order."""
    apps = sorted((a for a in snap.apps if a.state in ACTIVE_STATES), key=lambda a: a.id)
    iters = {a.id: iteration_of(a, rules) for a in apps}
    sum_i = sum(it.total if it else 1 for it in iters.values())
    jobs = {j.app_id: j for j in snap.jobs}
    tasks: dict[str, list[Task]] = {}
    for t in snap.tasks:
        tasks.setdefault(t.app_id, []).append(t)
    rows = {a.id: _rows(a) for a in apps}
    need = {a.id for a in apps if a.state == "RUNNING" and (a.id in jobs or a.id in tasks)}
    # the first running container of each (app, priority); the AM's has priority 0
    sizes = {(c.app_id, c.priority): c.allocated for c in reversed(snap.containers)} if need else {}

    out: list[Request] = []
    for app in apps:
        it = iters[app.id]
        align = hc.alignment(it.total if it else 1, it.finished if it else 0, sum_i)
        job = None
        if app.id in need:
            job = _counts(app, jobs.get(app.id), tasks.get(app.id, []), rows[app.id], sizes, w)
        held = w.size(_vec(app.allocated))
        fallback = hc.fallback_urgency(app.progress / 100.0, held)
        for prio, (res, count, label) in sorted(rows[app.id].items()):
            role = _role(app, prio)
            if role == "am":
                urg = 0.0
            elif job is not None and role == "map":
                urg = hc.map_urgency(job)
            elif job is not None and role == "reduce":
                urg = hc.reduce_urgency(job, reduce_ratio_cap)
            else:
                urg = fallback
            part = label or app.node_label_expression
            out.append(Request(app, prio, res, count, part, role, urg, align, it, job))
    n = len(out)
    return Inputs(
        requests=tuple(out),
        res=np.array([r.resource for r in out], dtype=np.int64).reshape(n, 2),
        urgency=np.array([r.urgency for r in out], dtype=np.float64),
        alignment=np.array([r.alignment for r in out], dtype=np.float64),
        is_am=np.array([r.role == "am" for r in out], dtype=bool),
        sum_iterations=sum_i,
    )


def _vec(r: Resources) -> hc.Vec:
    return (r.memory_mb, r.vcores)


def _rows(app: App) -> dict[int, tuple[hc.Vec, int, str]]:
    rows: dict[int, tuple[hc.Vec, int, str]] = {}
    for rr in app.resource_requests:
        if rr.resource_name == "*" and rr.num_containers > 0 and rr.priority not in rows:
            rows[rr.priority] = (_vec(rr.capability), rr.num_containers, rr.node_label_expression)
    if not rows and app.state == "ACCEPTED" and app.am_resource.memory_mb > 0:
        rows[0] = (_vec(app.am_resource), 1, app.node_label_expression)
    return rows


def _role(app: App, prio: int) -> str:
    if app.state == "ACCEPTED":
        return "am"
    if app.type.upper() == "MAPREDUCE":
        if prio in MAP_PRIORITIES:
            return "map"
        if prio == REDUCE_PRIORITY:
            return "reduce"
    return "task"


def _counts(
    app: App,
    job: MRJob | None,
    tasks: Sequence[Task],
    rows: Mapping[int, tuple[hc.Vec, int, str]],
    sizes: Mapping[tuple[str, int], Resources],
    w: hc.Weights,
) -> hc.JobCounts:
    mean = app.allocated
    if app.running_containers > 0:
        mean = Resources(
            app.allocated.memory_mb // app.running_containers,
            app.allocated.vcores // app.running_containers,
        )

    def size(prios: Sequence[int]) -> float:
        for p in prios:
            if p in rows:
                return w.size(rows[p][0])
        for p in prios:
            if (app.id, p) in sizes:
                return w.size(_vec(sizes[(app.id, p)]))
        return w.size(_vec(mean))

    am = app.am_resource if app.am_resource.memory_mb > 0 else sizes.get((app.id, 0), mean)
    if job is not None:
        tm, am_ = job.maps_total, job.maps_completed + job.maps_running
        ar = job.reduces_completed + job.reduces_running
        om, or_ = job.maps_running, job.reduces_running
    else:
        maps = [t for t in tasks if t.type == "MAP"]
        reds = [t for t in tasks if t.type == "REDUCE"]
        tm = len(maps)
        am_ = sum(t.state in _ASSIGNED for t in maps)
        ar = sum(t.state in _ASSIGNED for t in reds)
        om = sum(t.state == "RUNNING" for t in maps)
        or_ = sum(t.state == "RUNNING" for t in reds)
    return hc.JobCounts(
        maps_total=tm,
        maps_assigned=am_,
        reduces_assigned=ar,
        am_assigned=1,
        maps_running=om,
        reduces_running=or_,
        map_size=size(MAP_PRIORITIES),
        reduce_size=size((REDUCE_PRIORITY,)),
        am_size=w.size(_vec(am)),
    )
