"""SLS JSON traces (hadoop-sls 3.4.2, ``AMDefinitionSLS``), read into a workload.

A trace is a stream of JSON job objects (``job.start.ms``, ``job.end.ms``,
``job.queue.name``, ``job.id``, ``job.user``, ``job.tasks``, ``am.type``,
optional ``job.count``, ``job.label.expression``, ``am.memory-mb``,
``am.vcores``); each task has ``container.host``, ``container.start.ms`` /
``container.end.ms`` (or ``container.duration.ms`` / ``duration.ms``),
``container.priority``, ``container.type`` (map or reduce), optional
``count``, ``container.memory-mb``, ``container.vcores`` and the keys SLS
itself ignores for scheduling (execution type, allocation id, request delay).
Any other key is an error: SLS would silently ignore a typo.

As SLS's ``MRAMSimulator`` does, maps ask for their host (node-local first)
and reduces are asked once every map is done (slow start 1.0); containers
default to <1024 MB, 1 vcore>, the AM too. Nodes are the hosts the trace
names (``SLSUtils.parseNodesFromSLSTrace``) unless ``--nodes`` is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.readers.common import (
    DEFAULT_OPTIONS,
    TraceOptions,
    cluster_from_hosts,
    scheduler_for,
    split_host,
)
from yarn_advisor.simulator.spec import MAP, REDUCE, Job, Phase, Res, Stage, Workload

JOB_KEYS = frozenset({"am.type", "yarn.sls.am.type", "job.start.ms", "job.end.ms",
                      "job.queue.name", "job.id", "job.user", "job.tasks", "job.count",
                      "job.label.expression", "am.memory-mb", "am.vcores", "job.params"})
TASK_KEYS = frozenset({"count", "container.host", "container.duration.ms", "duration.ms",
                       "container.start.ms", "container.end.ms", "container.priority",
                       "container.type", "container.execution.type", "container.allocation.id",
                       "container.request.delay", "container.memory-mb", "container.vcores"})


def iter_json_objects(text: str, path: Path) -> list[tuple[int, Any]]:
    """The objects of a stream of JSON values (or one array), each with its line."""
    dec = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n,\ufeff":
            i += 1
        if i >= n:
            return out
        line = text.count("\n", 0, i) + 1
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            where = text.count("\n", 0, exc.pos) + 1
            rest = text[i:]
            cut = (exc.pos >= n - 1 or exc.msg.startswith("Unterminated string")
                   or rest.count("{") > rest.count("}") or rest.count("[") > rest.count("]"))
            what = "truncated trace" if cut else "not valid JSON"
            raise WorkloadError([f"{path}:{where}: {what} ({exc.msg}) in the object "
                                 f"starting at line {line}"]) from None
        if isinstance(obj, list):
            out.extend((line, x) for x in obj)
        else:
            out.append((line, obj))
        i = end


def read_sls(path: str | Path, opts: TraceOptions = DEFAULT_OPTIONS) -> Workload:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise WorkloadError([f"{p}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError([f"{p}: cannot read: {exc}"]) from None
    errors: list[str] = []
    jobs: list[Job] = []
    hosts: dict[str, list[str]] = {}
    queues: set[str] = set()
    for k, (line, obj) in enumerate(iter_json_objects(text, p)):
        jobs.extend(_job(p, line, k, obj, opts, hosts, queues, errors))
    if not jobs and not errors:
        errors.append(f"{p}: no jobs")
    if errors:
        raise WorkloadError(errors)
    start = min(j.submit_ms for j in jobs)
    jobs = [_shift(j, start) for j in jobs]
    return Workload(name=p.stem, cluster=cluster_from_hosts(hosts, opts),
                    scheduler=scheduler_for(queues, opts), jobs=tuple(jobs), source=str(p))


def _shift(job: Job, start: int) -> Job:
    from dataclasses import replace
    return replace(job, submit_ms=job.submit_ms - start)


def _int(d: dict[str, Any], key: str, default: int | None, where: str,
         errors: list[str]) -> int | None:
    if key not in d:
        return default
    try:
        return int(str(d[key]))
    except ValueError:
        errors.append(f"{where}: {key} must be an integer, got {d[key]!r}")
        return default


def _job(p: Path, line: int, k: int, obj: Any, opts: TraceOptions,
         hosts: dict[str, list[str]], queues: set[str], errors: list[str]) -> list[Job]:
    jid = str(obj.get("job.id", f"job{k + 1}")) if isinstance(obj, dict) else f"job{k + 1}"
    where = f"{p}:{line}: job {jid}"
    if not isinstance(obj, dict):
        errors.append(f"{where}: expected a JSON object")
        return []
    for key in obj:
        if key not in JOB_KEYS:
            errors.append(f"{where}: unknown field {key!r}")
    start = _int(obj, "job.start.ms", None, where, errors)
    if start is None:
        errors.append(f"{where}: job.start.ms is required")
        start = 0
    tasks = obj.get("job.tasks")
    if not isinstance(tasks, list) or not tasks:
        errors.append(f"{where}: job.tasks must be a non-empty list (SLS: 'No task for the "
                      "job!')")
        return []
    durations: dict[str, list[int]] = {MAP: [], REDUCE: []}
    res: dict[str, Res] = {}
    map_hosts: list[str] = []
    for i, t in enumerate(tasks):
        tw = f"{where}: job.tasks[{i}]"
        if not isinstance(t, dict):
            errors.append(f"{tw}: expected an object")
            continue
        for key in t:
            if key not in TASK_KEYS:
                errors.append(f"{tw}: unknown field {key!r}")
        kind = MAP if str(t.get("container.type", "map")).lower() == "map" else REDUCE
        dur = _int(t, "container.duration.ms", None, tw, errors)
        if dur is None:
            dur = _int(t, "duration.ms", None, tw, errors)
        if dur is None:
            s, e = _int(t, "container.start.ms", 0, tw, errors), _int(
                t, "container.end.ms", None, tw, errors)
            if e is None:
                errors.append(f"{tw}: needs container.end.ms or a duration")
                continue
            dur = e - (s or 0)
        if dur < 0:
            errors.append(f"{tw}: negative duration {dur} ms")
            continue
        count = _int(t, "count", 1, tw, errors) or 1
        res[kind] = Res(_int(t, "container.memory-mb", 1024, tw, errors) or 1024,
                        _int(t, "container.vcores", 1, tw, errors) or 1)
        host = str(t.get("container.host", ""))
        if host:
            rack, name = split_host(host)
            if name not in hosts.setdefault(rack, []):
                hosts[rack].append(name)
        durations[kind].extend([dur] * count)
        if kind == MAP:
            map_hosts.extend([split_host(host)[1] if host else ""] * count)
    queue = str(obj.get("job.queue.name", "default"))
    queues.add(queue)
    am = Res(_int(obj, "am.memory-mb", opts.am_mb, where, errors) or opts.am_mb,
             _int(obj, "am.vcores", 1, where, errors) or 1)

    def stage(kind: str) -> Stage | None:
        if not durations[kind]:
            return None
        r = res.get(kind, Res(1024, 1))
        return Stage(kind, r, tuple(durations[kind]), (Phase(kind, 1.0, r.memory_mb,
                                                              float(r.vcores)),),
                     input="hosts" if kind == MAP else "none",
                     hosts=tuple(map_hosts) if kind == MAP else ())

    count = _int(obj, "job.count", 1, where, errors) or 1
    base = Job(id=jid, name=jid, submit_ms=start, maps=stage(MAP), reduces=stage(REDUCE),
               user=str(obj.get("job.user", "default")), queue=queue,
               app_type="MAPREDUCE", am=am, slowstart=1.0,
               node_label=str(obj.get("job.label.expression", "")), line=line)
    if count == 1:
        return [base]
    from dataclasses import replace
    return [replace(base, id=f"{jid}_{n + 1}") for n in range(count)]
