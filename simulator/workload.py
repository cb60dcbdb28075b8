"""The workload file: a cluster, a scheduler set-up and jobs (YAML or JSON).

Format (every field optional unless marked; unknown fields are errors)::

    name: haste-table2
    seed: 1
    cluster:
      nodes: 8                        # identical nodes ...
      memory_mb: 8192
      vcores: 8
      real_memory_mb: 8192            # hardware, if not the schedulable size
      real_cpu: 8
      groups:                         # ... or groups of nodes
        - {count: 6, memory_mb: 4096, vcores: 4, rack: r1, label: x, tags: [external]}
      nodes_per_rack: 20              # 0: one rack (/default-rack)
      labels: [x]                     # cluster node labels
      hdfs: {replication: 3, pool_blocks: 0, placement: default}
      timing: {nm_heartbeat_ms: 1000, am_heartbeat_ms: 1000, container_launch_ms: 1000,
               am_launch_ms: 2000, am_finish_ms: 1000}
      minimum_allocation: {memory_mb: 1024, vcores: 1}
      maximum_allocation: {memory_mb: 8192, vcores: 8}
    scheduler:
      type: capacity                  # capacity | fair | fifo
      resource_calculator: default    # default (memory only) | dominant
      node_locality_delay: 40
      rack_locality_additional_delay: -1
      offswitch_per_heartbeat: 1
      maximum_am_resource_percent: 0.1
      max_application_priority: 0
      fair_policy: fair               # fair | drf | fifo
      assign_multiple: false
      locality_threshold_node: -1
      locality_threshold_rack: -1
      queues:
        - {name: default, capacity: 100, maximum_capacity: 100, user_limit_factor: 1,
           minimum_user_limit_percent: 100, maximum_am_resource_percent: 0.1,
           accessible_node_labels: [], label_capacities: {x: 100},
           default_node_label: "", weight: 1, policy: fair, max_am_share: 0.5}
    defaults: {...}                   # any job fields, applied to every job
    jobs:
      - id: wc1                       # required, unique
        name: wordcount
        submit_s: 0                   # after `after` finishes, if given
        after: ""                     # the job whose end (finished or not) submits this one
        iterations: 1                 # >1: a chain of N apps, tasks split evenly
        user: user
        queue: default
        priority: 0
        type: MAPREDUCE
        tags: []
        label: ""                     # node label expression
        am: {memory_mb: 1536, vcores: 1}
        am_use: {memory_mb: 512, cpu: 0.1}
        slowstart: 0.05
        maps:                         # and `reduces:`, same fields
          count: 52                   # required
          request: {memory_mb: 1024, vcores: 1}
          duration_s: 30              # or durations_s: [..] (one per task)
          jitter: 0.0                 # uniform +-jitter x duration, seeded
          input: none                 # none | new | pool (maps)
          phases: [{name: MAP, share: 1.0, memory_mb: 1024, cpu: 1}]
          fail_off_tag: ""
          per_node_limit: 0
          fail_at: 0.3
          rack_local_factor: 1.0      # a map away from its block runs this much longer
          off_switch_factor: 1.0
    generate:                         # jobs drawn from classes (e.g. Facebook bins)
      arrival: {process: exponential, mean_s: 14}   # or uniform {min_s, max_s}, fixed {every_s}
      start_s: 0
      classes: [{count: 38, prefix: bin1, job: {...job fields...}}]

Reduces default to two phases (SHUFFLE 1/3 with a tenth of the CPU, then
REDUCE 2/3); maps and the AM to one phase using what they request. A request
larger than every node (or than ``maximum_allocation``) is an error.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from yarn_advisor.simulator.fields import Fields, WorkloadError
from yarn_advisor.simulator.located import LDict, LList, LocatedError, line_of, load_located
from yarn_advisor.simulator.spec import (
    MAP,
    REDUCE,
    Cluster,
    Job,
    Phase,
    Res,
    SchedulerSpec,
    Stage,
    Workload,
)
from yarn_advisor.simulator.workload_cluster import read_cluster, read_scheduler

JOB_KEYS = ("id", "name", "submit_s", "after", "iterations", "user", "queue", "priority", "type",
            "tags", "label", "am", "am_use", "slowstart", "maps", "reduces", "iteration_gap_s")
STAGE_KEYS = ("count", "request", "duration_s", "durations_s", "jitter", "input", "phases",
              "fail_off_tag", "per_node_limit", "fail_at", "rack_local_factor",
              "off_switch_factor")
TOP_KEYS = ("name", "seed", "cluster", "scheduler", "defaults", "jobs", "generate", "notes")


def load_workload(path: str | Path) -> Workload:
    """Read and validate a workload file; raises :class:`WorkloadError` listing
    every problem, each with the file and line."""
    p = Path(path)
    name = str(p)
    try:
        data = load_located(p)
    except FileNotFoundError:
        raise WorkloadError([f"{name}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError([f"{name}: cannot read: {exc}"]) from None
    except LocatedError as exc:
        raise WorkloadError([f"{name}:{exc.line}: not valid YAML/JSON: {exc}"]) from None
    return parse_workload(data, name)


def parse_workload(data: Any, file: str) -> Workload:
    errors: list[str] = []
    top = Fields(data, file, "", errors, TOP_KEYS, line=1)
    seed = top.integer("seed", 1)
    cluster = read_cluster(top.raw("cluster", LDict()), file, top.at("cluster"), errors)
    scheduler = read_scheduler(top.raw("scheduler", LDict()), file, top.at("scheduler"), errors)
    defaults = top.raw("defaults", LDict())
    if not isinstance(defaults, dict):
        top.error("defaults", "must be a mapping")
        defaults = LDict()
    rng = random.Random(seed)
    jobs: list[Job] = []
    raw_jobs = top.raw("jobs", LList())
    if not isinstance(raw_jobs, list):
        top.error("jobs", "must be a list")
        raw_jobs = LList()
    for i, raw in enumerate(raw_jobs):
        line = line_of(raw_jobs, i)
        jobs.extend(_read_job(_merge(defaults, raw), file, f"jobs[{i}]", line, errors, rng))
    if top.has("generate"):
        jobs.extend(_generate(top.sub("generate", ("arrival", "start_s", "classes")), defaults,
                              errors, rng))
    if not jobs and not errors:
        top.error("", "no jobs")
    _check(jobs, cluster, scheduler, file, errors)
    if errors:
        raise WorkloadError(errors)
    notes = top.raw("notes", [])
    return Workload(name=top.string("name", Path(file).stem), cluster=cluster,
                    scheduler=scheduler, jobs=tuple(jobs), source=file, seed=seed,
                    notes=tuple(str(n) for n in notes) if isinstance(notes, list) else ())


def _merge(defaults: dict[str, Any], job: Any) -> Any:
    if not isinstance(job, dict) or not defaults:
        return job
    out = LDict({**defaults, **job})
    out.line = getattr(job, "line", 0)
    out.key_lines = {**getattr(defaults, "key_lines", {}), **getattr(job, "key_lines", {})}
    for key in ("maps", "reduces", "am", "am_use"):
        if isinstance(defaults.get(key), dict) and isinstance(job.get(key), dict):
            merged = LDict({**defaults[key], **job[key]})
            merged.line = getattr(job[key], "line", 0)
            merged.key_lines = {**getattr(defaults[key], "key_lines", {}),
                                **getattr(job[key], "key_lines", {})}
            out[key] = merged
    return out


def _res(f: Fields, key: str, default: Res) -> Res:
    if not f.has(key):
        return default
    r = f.sub(key, ("memory_mb", "vcores"))
    return Res(r.integer("memory_mb", default.memory_mb, minimum=0),
               r.integer("vcores", default.vcores, minimum=0))


def _read_job(raw: Any, file: str, where: str, line: int, errors: list[str],
              rng: random.Random) -> list[Job]:
    jid = raw.get("id") if isinstance(raw, dict) else None
    label = f"{where} (id {jid})" if jid is not None else where
    f = Fields(raw, file, f"{label}: ", errors, JOB_KEYS, line=line)
    if not isinstance(jid, str | int) or isinstance(jid, bool) or str(jid) == "":
        f.error("id", "required (a unique name)")
        jid = where
    am = _res(f, "am", Res(1536, 1))
    au = f.sub("am_use", ("memory_mb", "cpu"))
    am_use = Phase("AM", 1.0, au.integer("memory_mb", min(512, am.memory_mb), minimum=0),
                   au.number("cpu", 0.1, minimum=0))
    maps = _read_stage(f, "maps", MAP, rng) if f.has("maps") else None
    reduces = _read_stage(f, "reduces", REDUCE, rng) if f.has("reduces") else None
    job = Job(
        id=str(jid), name=f.string("name", str(jid)),
        submit_ms=int(f.number("submit_s", 0.0, minimum=0) * 1000),
        maps=maps, reduces=reduces, user=f.string("user", "user"),
        queue=f.string("queue", "default"), priority=f.integer("priority", 0),
        app_type=f.string("type", "MAPREDUCE"), tags=f.strings("tags"), am=am, am_use=am_use,
        slowstart=f.number("slowstart", 0.05, minimum=0, maximum=1),
        after=str(f.raw("after", "") or ""), node_label=f.string("label", ""), line=f.line)
    iterations = f.integer("iterations", 1, minimum=1)
    gap_ms = int(f.number("iteration_gap_s", 0.0, minimum=0) * 1000)
    return _iterate(job, iterations, gap_ms) if iterations > 1 else [job]


def _read_stage(f: Fields, key: str, kind: str, rng: random.Random) -> Stage | None:
    s = f.sub(key, STAGE_KEYS)
    count = s.integer("count", 0, minimum=0)
    if not s.has("count"):
        s.error("count", "required")
    request = _res(s, "request", Res(1024, 1))
    jitter = s.number("jitter", 0.0, minimum=0, maximum=1)
    if s.has("durations_s"):
        durs = s.numbers("durations_s")
        if durs and len(durs) != count:
            s.error("durations_s", f"has {len(durs)} values for {count} tasks")
        base = list(durs) or [0.0] * count
    else:
        d = s.number("duration_s", 0.0, minimum=0)
        if not s.has("duration_s"):
            s.error("duration_s", "required (or durations_s)")
        base = [d] * count
    durations = tuple(
        max(0, round(x * (1 + jitter * (2 * rng.random() - 1)) * 1000)) for x in base)
    phases = _phases(s, kind, request)
    inp = s.string("input", "none", ("none", "new", "pool"))
    if inp != "none" and kind != MAP:
        s.error("input", "only maps read HDFS input")
    if count == 0:
        return None
    return Stage(kind=kind, request=request, durations_ms=durations, phases=phases, input=inp,
                 fail_off_tag=s.string("fail_off_tag", ""),
                 per_node_limit=s.integer("per_node_limit", 0, minimum=0),
                 fail_at=s.number("fail_at", 0.3, minimum=0, maximum=1),
                 rack_local_factor=s.number("rack_local_factor", 1.0, minimum=0),
                 off_switch_factor=s.number("off_switch_factor", 1.0, minimum=0))


def default_phases(kind: str, request: Res) -> tuple[Phase, ...]:
    if kind == REDUCE:
        return (Phase("SHUFFLE", 1 / 3, request.memory_mb, 0.1 * request.vcores),
                Phase("REDUCE", 2 / 3, request.memory_mb, float(request.vcores)))
    return (Phase(kind, 1.0, request.memory_mb, float(request.vcores)),)


def _phases(s: Fields, kind: str, request: Res) -> tuple[Phase, ...]:
    raw = s.raw("phases")
    if raw is None:
        return default_phases(kind, request)
    if not isinstance(raw, list) or not raw:
        s.error("phases", "must be a non-empty list")
        return default_phases(kind, request)
    out = []
    for i, item in enumerate(raw):
        p = Fields(item, s.file, f"{s.where}phases[{i}].", s.errors,
                   ("name", "share", "memory_mb", "cpu"), line=line_of(raw, i))
        out.append(Phase(p.string("name", kind if len(raw) == 1 else f"PHASE{i}"),
                         p.number("share", 1.0 if len(raw) == 1 else 0.0, minimum=0),
                         p.integer("memory_mb", request.memory_mb, minimum=0),
                         p.number("cpu", float(request.vcores), minimum=0)))
    total = sum(p.share for p in out)
    if abs(total - 1.0) > 1e-6:
        s.error("phases", f"shares sum to {total:g}, not 1")
    return tuple(out)


def _split(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if k < n % parts else 0) for k in range(parts)]


def _iterate(job: Job, n: int, gap_ms: int) -> list[Job]:
    """An iterative job as a chain of ``n`` apps (HaSTE-A): tasks split evenly
    (the paper's counts are sums over iterations), tagged ``iteration:K/N``."""
    out: list[Job] = []
    maps = _split(job.maps.tasks, n) if job.maps else [0] * n
    reds = _split(job.reduces.tasks, n) if job.reduces else [0] * n
    mstart = rstart = 0
    for k in range(n):
        m = r = None
        if job.maps and maps[k]:
            m = _slice(job.maps, mstart, maps[k])
        if job.reduces and reds[k]:
            r = _slice(job.reduces, rstart, reds[k])
        mstart += maps[k]
        rstart += reds[k]
        out.append(Job(
            id=f"{job.id}#{k + 1}", name=job.name, submit_ms=job.submit_ms if k == 0 else gap_ms,
            maps=m, reduces=r, user=job.user, queue=job.queue, priority=job.priority,
            app_type=job.app_type, tags=(*job.tags, f"iteration:{k + 1}/{n}"), am=job.am,
            am_use=job.am_use, slowstart=job.slowstart,
            after=job.after if k == 0 else f"{job.id}#{k}", node_label=job.node_label,
            after_success=k > 0 or job.after_success, line=job.line))
    return out


def _slice(stage: Stage, start: int, n: int) -> Stage:
    return Stage(kind=stage.kind, request=stage.request,
                 durations_ms=stage.durations_ms[start:start + n], phases=stage.phases,
                 input=stage.input, fail_off_tag=stage.fail_off_tag,
                 per_node_limit=stage.per_node_limit, fail_at=stage.fail_at,
                 rack_local_factor=stage.rack_local_factor,
                 off_switch_factor=stage.off_switch_factor)


def _generate(g: Fields, defaults: dict[str, Any], errors: list[str],
              rng: random.Random) -> list[Job]:
    """Jobs drawn from classes, in random order, with random inter-arrival gaps."""
    arr = g.sub("arrival", ("process", "mean_s", "min_s", "max_s", "every_s"))
    process = arr.string("process", "exponential", ("exponential", "uniform", "fixed"))
    mean = arr.number("mean_s", 14.0, minimum=0)
    lo, hi = arr.number("min_s", 0.0, minimum=0), arr.number("max_s", 60.0, minimum=0)
    every = arr.number("every_s", 10.0, minimum=0)
    raw_classes = g.raw("classes", [])
    if not isinstance(raw_classes, list) or not raw_classes:
        g.error("classes", "must be a non-empty list")
        return []
    templates: list[tuple[str, Any, int]] = []
    for i, raw in enumerate(raw_classes):
        c = Fields(raw, g.file, f"{g.where}classes[{i}].", errors, ("count", "prefix", "job"),
                   line=line_of(raw_classes, i))
        count = c.integer("count", 0, minimum=0)
        prefix = c.string("prefix", f"class{i + 1}")
        templates.extend((prefix, c.raw("job", LDict()), line_of(raw_classes, i))
                         for _ in range(count))
    rng.shuffle(templates)
    jobs: list[Job] = []
    t = g.number("start_s", 0.0, minimum=0)
    counters: dict[str, int] = {}
    for n, (prefix, raw, line) in enumerate(templates):
        if n:
            t += (rng.expovariate(1 / mean) if process == "exponential" and mean > 0 else
                  rng.uniform(lo, hi) if process == "uniform" else
                  every if process == "fixed" else 0.0)
        counters[prefix] = counters.get(prefix, 0) + 1
        body = LDict({**(raw if isinstance(raw, dict) else {}),
                      "id": f"{prefix}-{counters[prefix]:03d}", "submit_s": round(t, 3)})
        body.line = line
        body.key_lines = dict(getattr(raw, "key_lines", {}))
        jobs.extend(_read_job(_merge(defaults, body), g.file, f"{g.where}classes job {n}", line,
                              errors, rng))
    return jobs


def _check(jobs: list[Job], cluster: Cluster, sched: SchedulerSpec, file: str,
           errors: list[str]) -> None:
    """Cross-checks: unique ids, known predecessors and queues, and every
    container fitting some node and the maximum allocation."""
    seen: set[str] = set()
    queues = {q.name for q in sched.queues}
    big_mem = max((g.memory_mb for g in cluster.groups), default=0)
    big_vc = max((g.vcores for g in cluster.groups), default=0)
    mx = cluster.maximum_allocation
    ids = {j.id for j in jobs}
    for job in jobs:
        where = f"{file}:{job.line}: job {job.id}" if job.line else f"{file}: job {job.id}"
        if job.id in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(job.id)
        if job.after and job.after not in ids:
            errors.append(f"{where}: after {job.after!r}: no such job")
        if sched.type != "fifo" and job.queue.removeprefix("root.") not in queues:
            errors.append(f"{where}: queue {job.queue!r} is not configured "
                          f"(queues: {', '.join(sorted(queues))})")
        for what, res in (("am", job.am),
                          ("maps.request", job.maps.request if job.maps else None),
                          ("reduces.request", job.reduces.request if job.reduces else None)):
            if res is None:
                continue
            if not any(res.memory_mb <= g.memory_mb and res.vcores <= g.vcores
                       for g in cluster.groups):
                errors.append(f"{where}: {what} {res} does not fit any node (largest "
                              f"<{big_mem} MB, {big_vc} vcores>)")
            elif res.memory_mb > mx.memory_mb or res.vcores > mx.vcores:
                errors.append(f"{where}: {what} {res} is over the maximum allocation {mx}")
