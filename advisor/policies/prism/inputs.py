"""From a Snapshot to PRISM's inputs: learned profiles, per-node phase-level
utilization and idle headroom, per-job pending pools and running phases.

Jobs are RUNNING MapReduce apps with an MRJob or tasks. Pending maps are the
most of the MRJob's ``maps_pending``, the app's ``'*'`` map rows (priorities
20, 19, 5) and its NEW/SCHEDULED map tasks; node-local maps come from rows
naming a host; reduces likewise (priority 10). Container sizes come from the
rows, else the app's mean container. A running task's expected usage is its
phase profile, else its container's measurement, else its allocation (never
above the allocation); other containers count their measurement or
allocation. Per-container work is done on numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from yarn_advisor.advisor.model.snapshot import (
    App,
    Container,
    MRJob,
    ResourceRequest,
    Snapshot,
    Task,
)
from yarn_advisor.advisor.policies.prism.core import Phase, Vec
from yarn_advisor.advisor.policies.prism.profiles import (
    FloatArray,
    IntArray,
    Key,
    Profiles,
    next_phase,
    phase_of,
)

MAP_PRIORITIES = frozenset({20, 19, 5})
REDUCE_PRIORITY = 10
PENDING = frozenset({"NEW", "SCHEDULED"})


@dataclass
class JobPool:
    """What one job still has to start, and how big its phases are."""

    app: App
    maps_pending: int
    reduces_pending: int
    local: dict[str, int]
    map_size: Vec
    reduce_size: Vec
    map_demand: Vec
    shuffle_demand: Vec
    done: float  # fraction of maps completed
    map_only: bool
    seen_pending: tuple[int, int] = (0, 0)  # (maps, reduces) pending in the Snapshot


@dataclass
class Inputs:
    """PRISM's view of one Snapshot."""

    used: dict[str, Vec] = field(default_factory=dict)  # node -> phase-level usage
    headroom: dict[str, Vec] = field(default_factory=dict)  # node -> idle allocation
    pools: dict[str, JobPool] = field(default_factory=dict)
    urgency: dict[str, float] = field(default_factory=dict)
    shuffling: dict[str, int] = field(default_factory=dict)  # app -> tasks waiting in shuffle
    running: list[tuple[Container, Task, str]] = field(default_factory=list)
    estimate: FloatArray = field(default_factory=lambda: np.zeros((0, 2)))
    plan: dict[str, list[list[Any]]] = field(default_factory=dict)  # node -> picks


def _phase(t: Task, map_only: bool, cache: dict[tuple[str, str, bool], str]) -> str:
    if not t.phase:
        return phase_of(t, map_only)
    ck = (t.type, t.phase, map_only)
    ph = cache.get(ck)
    if ph is None:
        ph = phase_of(t, map_only)
        if t.phase.upper() in ("MAP", "SORT", "MERGE", "SHUFFLE", "COPY", "REDUCE"):
            cache[ck] = ph
    return ph


FIRST = {"MAP": "MAP", "REDUCE": "SHUFFLE"}


def build(snap: Snapshot, prof: Profiles) -> Inputs:
    """Learn from this Snapshot into ``prof`` (a copy the caller owns), then derive
    the per-node and per-job inputs."""
    inp = Inputs()
    names = {a.id: a.name for a in snap.apps}
    jobs = {j.app_id: j for j in snap.jobs}
    map_only = {aid: j.reduces_total == 0 for aid, j in jobs.items()}
    maps_open = {aid for aid, j in jobs.items() if j.maps_completed < j.maps_total}
    # only the containers of running tasks, and the measured ones, are read below
    wanted = {t.container_id for t in snap.tasks if t.state == "RUNNING"}
    cont = {c.id: c for c in snap.containers if c.id in wanted}
    measured = [c for c in snap.containers if (u := c.usage) is not None and u.samples > 0]
    keys: list[Key] = []
    kidx: dict[Key, int] = {}
    nidx: dict[str, int] = {}
    rows: list[tuple[float, ...]] = []  # samples, mem, cpu, alloc mem, vcores, key, first, node
    ids: list[str] = []
    cache: dict[tuple[str, str, bool], str] = {}
    pend: dict[str, list[int]] = {}  # app -> [maps, reduces, map tasks, maps done, reduces]
    waiting: dict[str, float] = {}
    seen: dict[tuple[str, str, str], tuple[int, str, bool]] = {}  # raw phase -> key
    for t in snap.tasks:
        if t.state == "RUNNING" and (c := cont.get(t.container_id)) is not None:
            raw = (t.app_id, t.type, t.phase)
            ent = seen.get(raw) if t.phase else None
            if ent is None:
                ph = _phase(t, map_only.get(t.app_id, False), cache)
                key = (t.app_id, t.type, ph)
                k = kidx.get(key)
                if k is None:
                    k = kidx[key] = len(keys)
                    keys.append(key)
                ent = (k, ph, ph == FIRST.get(t.type))
                if (t.type, t.phase, map_only.get(t.app_id, False)) in cache:
                    seen[raw] = ent  # the phase did not depend on the progress
            k, ph, first = ent
            ni = nidx.get(c.node_id)
            if ni is None:
                ni = nidx[c.node_id] = len(nidx)
            u, al = c.usage, c.allocated
            if u is not None and u.samples > 0:
                rows.append((u.samples, u.pmem_avg_mb, u.cpu_avg_percent * 0.01,
                             al.memory_mb, al.vcores, k, first, ni))
            else:
                rows.append((0.0, 0.0, 0.0, al.memory_mb, al.vcores, k, first, ni))
            ids.append(c.id)
            inp.running.append((c, t, ph))
            if ph == "SHUFFLE" and t.app_id in maps_open:
                waiting[t.app_id] = waiting.get(t.app_id, 0.0) + al.memory_mb
                inp.shuffling[t.app_id] = inp.shuffling.get(t.app_id, 0) + 1
        if t.state in PENDING or t.app_id not in jobs:
            p = pend.setdefault(t.app_id, [0, 0, 0, 0, 0])
            is_map = t.type == "MAP"
            if t.state in PENDING:
                p[0 if is_map else 1] += 1
            p[2] += is_map
            p[3] += is_map and t.state == "SUCCEEDED"
            p[4] += not is_map
    arr = np.array(rows, dtype=np.float64).reshape(len(rows), 8)
    usage, alloc = arr[:, 0:3], arr[:, 3:5]
    ko = arr[:, 5].astype(np.int64)
    prof.learn(keys, names, ko, ids, usage, arr[:, 6] > 0)
    prof.keep_samples(ids, usage)
    prof_v, has = prof.expected_rows(keys, names)
    est = np.where((usage[:, 0] > 0)[:, None], np.minimum(usage[:, 1:], alloc), alloc)
    est = np.where(has[ko][:, None], np.minimum(prof_v[ko], alloc), est) if len(rows) else est
    inp.estimate = est
    _node_sums(snap, measured, inp, set(ids), nidx, arr[:, 7].astype(np.int64), alloc, est)
    total = {a.id: a.allocated.memory_mb for a in snap.apps}
    inp.urgency = {aid: round(min(1.0, w / total[aid]), 4) for aid, w in sorted(waiting.items())
                   if total.get(aid, 0) > 0}
    for a in snap.apps:
        if a.state == "RUNNING" and a.type.upper() == "MAPREDUCE":
            pool = _pool(a, jobs.get(a.id), pend.get(a.id), prof)
            if pool is not None:
                inp.pools[a.id] = pool
    return inp


def _node_sums(snap: Snapshot, measured: list[Container], inp: Inputs, task_ids: set[str],
               nidx: dict[str, int], idx: IntArray, alloc: FloatArray, est: FloatArray) -> None:
    """Per node: allocated-but-idle resources and the phase-level usage (the
    node's allocation less them); containers without a task or a measurement
    (``measured``: the snapshot's containers with samples, in its order) are
    expected to use their whole allocation."""
    rows = []
    for c in measured:
        u = c.usage
        if u is not None and c.id not in task_ids:
            ni = nidx.get(c.node_id)
            if ni is None:
                ni = nidx[c.node_id] = len(nidx)
            al = c.allocated
            rows.append((ni, max(0.0, al.memory_mb - u.pmem_avg_mb),
                         max(0.0, al.vcores - u.cpu_avg_percent * 0.01)))
    o = np.array(rows, dtype=np.float64).reshape(len(rows), 3)
    i = np.concatenate([idx, o[:, 0].astype(np.int64)])
    idle = np.concatenate([np.maximum(alloc - est, 0.0), o[:, 1:3]])
    size = len(nidx)
    im = np.bincount(i, idle[:, 0], minlength=size).tolist()
    iv = np.bincount(i, idle[:, 1], minlength=size).tolist()
    nodes = sorted(nidx, key=nidx.__getitem__)
    inp.headroom = {n: (im[k], iv[k]) for k, n in enumerate(nodes) if im[k] > 0 or iv[k] > 0}
    for n in snap.nodes:
        h = inp.headroom.get(n.id, (0.0, 0.0))
        inp.used[n.id] = (max(0.0, n.used.memory_mb - h[0]), max(0.0, n.used.vcores - h[1]))


def transitions(inp: Inputs, prof: Profiles, names: dict[str, str], maps_done: dict[str, bool],
                map_only: dict[str, bool], chosen: set[str]) -> dict[str, list[Phase]]:
    """Lines 6-10 for the chosen nodes: the next phase of each task running there
    (a shuffle cannot end before its job's maps), demand = the increase."""
    out: dict[str, list[Phase]] = {}
    for i, (c, t, ph) in enumerate(inp.running):
        if c.node_id not in chosen or (ph == "SHUFFLE" and not maps_done.get(t.app_id, True)):
            continue
        nxt = next_phase(t.type, ph, map_only.get(t.app_id, False))
        if nxt is None:
            continue
        alloc = (float(c.allocated.memory_mb), float(c.allocated.vcores))
        got = prof.expected(t.app_id, names.get(t.app_id, ""), t.type, nxt)
        need = (min(got[0][0], alloc[0]), min(got[0][1], alloc[1])) if got else alloc
        cur = inp.estimate[i]
        demand = (max(0.0, need[0] - float(cur[0])), max(0.0, need[1] - float(cur[1])))
        out.setdefault(c.node_id, []).append(Phase(t.app_id, t.id, t.type, nxt, demand,
                                                   (0.0, 0.0)))
    return out


def _pool(app: App, job: MRJob | None, pend: list[int] | None, prof: Profiles) -> JobPool | None:
    if job is None and pend is None:
        return None
    p = pend or [0, 0, 0, 0, 0]
    star: list[ResourceRequest] = []
    hosts: list[ResourceRequest] = []  # map rows naming a host
    map_rows = red_rows = 0
    for r in app.resource_requests:  # one pass: this runs for every job each cycle
        if r.num_containers <= 0:
            continue
        if r.resource_name == "*":
            star.append(r)
            if r.priority in MAP_PRIORITIES:
                map_rows += r.num_containers
            elif r.priority == REDUCE_PRIORITY:
                red_rows += r.num_containers
        elif r.priority in MAP_PRIORITIES and not r.resource_name.startswith("/"):
            hosts.append(r)
    maps_pending = max(job.maps_pending if job else 0, map_rows, p[0])
    reduces_pending = max(job.reduces_pending if job else 0, red_rows, p[1])
    if job is not None and job.maps_total > 0:
        done, map_only = job.maps_completed / job.maps_total, job.reduces_total == 0
    else:
        done, map_only = (p[3] / p[2] if p[2] else 1.0), p[4] == 0
    if maps_pending == 0 and reduces_pending == 0:  # nothing to start: sizes do not matter
        z = (0.0, 0.0)
        return JobPool(app, 0, 0, {}, z, z, z, z, done, map_only, (0, 0))
    local: dict[str, int] = {}
    for r in hosts:
        local[r.resource_name] = min(maps_pending, local.get(r.resource_name, 0)
                                     + r.num_containers)
    n = max(1, app.running_containers)
    mean = (app.allocated.memory_mb / n, app.allocated.vcores / n)
    map_size = _size(star, MAP_PRIORITIES, mean)
    reduce_size = _size(star, frozenset({REDUCE_PRIORITY}), map_size)
    md = prof.expected(app.id, app.name, "MAP", "MAP")
    sd = prof.expected(app.id, app.name, "REDUCE", "SHUFFLE")
    map_demand = (min(md[0][0], map_size[0]), min(md[0][1], map_size[1])) if md else map_size
    shuffle_demand = (min(sd[0][0], reduce_size[0]), min(sd[0][1], reduce_size[1])) if sd \
        else reduce_size
    return JobPool(app, maps_pending, reduces_pending, local, map_size, reduce_size,
                   map_demand, shuffle_demand, done, map_only, (maps_pending, reduces_pending))


def _size(rows: list[ResourceRequest], prios: frozenset[int], default: Vec) -> Vec:
    for r in rows:
        if r.priority in prios:
            return (float(r.capability.memory_mb), float(r.capability.vcores))
    return (float(default[0]), float(default[1]))


def first_phases(pool: JobPool, host: str) -> list[Phase]:
    """Lines 12-16 for one job: its local map, else its non-local map and reduce."""
    aid = pool.app.id
    if pool.maps_pending > 0 and pool.local.get(host, 0) > 0:
        return [Phase(aid, f"{aid}:map", "MAP", "MAP", pool.map_demand, pool.map_size,
                      1.0, True)]
    out: list[Phase] = []
    if pool.maps_pending > 0:
        out.append(Phase(aid, f"{aid}:map", "MAP", "MAP", pool.map_demand, pool.map_size))
    if pool.reduces_pending > 0:
        out.append(Phase(aid, f"{aid}:reduce", "REDUCE", "SHUFFLE", pool.shuffle_demand,
                         pool.reduce_size, pool.done))
    return out
