"""SWIM job traces (``.tsv``, Chen et al., SWIMProjectUCB/SWIM, BSD-3-Clause).

Each line is one job: name, submit time (s), gap since the previous
submission (s), map input bytes, shuffle bytes, reduce output bytes
(``workloadSuite/GenerateReplayScript.java``: fields 2-5), and in the
``withInputPaths`` files a seventh field, the anonymized input path (read
and ignored). 24 one-hour samples make a day. The SWIM repository's days
come from two clusters (its wiki, "Workloads repository"): FB-2009 from a
600-machine Facebook cluster, FB-2010 from the same cluster grown to 3000
machines. The trace's own cluster size is what its bytes are scaled from:
``--swim-cluster-nodes``, else 3000 for a file whose name says FB-2010, else
600.

SWIM replays a job as a ``WorkGen`` MapReduce job; we derive its tasks the
same way, and its durations (SWIM has none: the replay *runs* the jobs) from
byte rates:

- sizes scale with the cluster: x ``nodes / 600`` (``clusterSizeWorkload /
  clusterSizeRaw``); input at least 64 MB, shuffle and output at least 1 KB;
- maps: one per ``block_mb`` of input (one input partition each), reading a
  fresh HDFS block (locality as on the real cluster);
- reduces: round((shuffle + output) / ``data_per_reduce``), at least 1, and
  ``nodes / 5`` when that would exceed the node count (SWIM's rule);
- map time = ``task_startup_s`` + input per map / ``map_mb_s``;
  reduce time = ``task_startup_s`` + shuffle per reduce / ``shuffle_mb_s``
  (the SHUFFLE phase, little CPU) + output per reduce / ``write_mb_s``.

The rates are our assumptions (2009-era disks and 1 Gb/s links), stated in
:class:`SwimModel` and overridable; a job's shape (map and reduce counts,
their ratio of bytes) is SWIM's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.readers.common import (
    DEFAULT_OPTIONS,
    TraceOptions,
    cluster_from_hosts,
    scheduler_for,
)
from yarn_advisor.simulator.spec import MAP, REDUCE, Job, Phase, Res, Stage, Workload

MB = 1 << 20
FB2009_NODES = 600
FB2010_NODES = 3000
FIELDS = (6, 7)  # the seventh: the anonymized input path (FB-2010 withInputPaths)


def raw_cluster_nodes(path: str | Path) -> int:
    """The cluster size a SWIM day was sampled on, from its file name (see above)."""
    return FB2010_NODES if "FB-2010" in Path(path).name else FB2009_NODES


@dataclass(frozen=True)
class SwimModel:
    """Byte rates and sizes that turn SWIM's bytes into tasks and times."""

    raw_cluster_nodes: int = 0  # 0: from the file name (raw_cluster_nodes())
    block_mb: int = 128
    data_per_reduce_mb: int = 1024
    map_mb_s: float = 10.0
    shuffle_mb_s: float = 10.0
    write_mb_s: float = 10.0
    task_startup_s: float = 2.0


def read_swim(path: str | Path, opts: TraceOptions = DEFAULT_OPTIONS,
              model: SwimModel | None = None, max_jobs: int = 0) -> Workload:
    """Read a SWIM ``.tsv``; raises :class:`WorkloadError` naming file, line and job."""
    p = Path(path)
    model = model or SwimModel()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkloadError([f"{p}: no such file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError([f"{p}: cannot read: {exc}"]) from None
    raw = model.raw_cluster_nodes or raw_cluster_nodes(p)
    nodes = opts.nodes or raw
    scale = nodes / raw
    errors: list[str] = []
    jobs: list[Job] = []
    lines = text.splitlines()
    if text and not text.endswith("\n"):
        errors.extend(_check_last(p, lines))
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        job = _job(p, n, line, scale, nodes, opts, model, errors)
        if job is not None:
            jobs.append(job)
        if max_jobs and len(jobs) >= max_jobs:
            break
    if not jobs and not errors:
        errors.append(f"{p}: no jobs")
    if errors:
        raise WorkloadError(errors[:20] + ([f"... and {len(errors) - 20} more"]
                                           if len(errors) > 20 else []))
    opts_n = TraceOptions(nodes=nodes, node_memory_mb=opts.node_memory_mb,
                          node_vcores=opts.node_vcores, nodes_per_rack=opts.nodes_per_rack,
                          scheduler=opts.scheduler)
    return Workload(name=p.stem, cluster=cluster_from_hosts({}, opts_n),
                    scheduler=scheduler_for({"default"}, opts), jobs=tuple(jobs),
                    source=str(p),
                    notes=(f"SWIM trace of a {raw}-node cluster scaled x{scale:g} to {nodes} "
                           "nodes",))


def _check_last(p: Path, lines: list[str]) -> list[str]:
    """A file cut mid-line: its last line is incomplete."""
    last = lines[-1] if lines else ""
    if len(_fields(last)) not in FIELDS:
        return [f"{p}:{len(lines)}: truncated trace: the last line has "
                f"{len(_fields(last))} of 6 fields"]
    return []


def _fields(line: str) -> list[str]:
    """A line's tab-separated fields, without the empty ones that trail the input path
    in the ``withInputPaths`` files (``inputPath1<TAB><TAB>``)."""
    return line.rstrip("\r\n").rstrip("\t").split("\t")


def _job(p: Path, n: int, line: str, scale: float, nodes: int, opts: TraceOptions,
         model: SwimModel, errors: list[str]) -> Job | None:
    cols = _fields(line)
    name = cols[0] if cols else "?"
    where = f"{p}:{n}: job {name}"
    if len(cols) not in FIELDS:
        errors.append(f"{where}: expected 6 tab-separated fields (name, submit s, gap s, "
                      f"input, shuffle, output bytes; a 7th, the input path, may follow), "
                      f"got {len(cols)}")
        return None
    try:
        submit_s, _gap, inp, shuffle, out = (int(x) for x in cols[1:6])
    except ValueError:
        errors.append(f"{where}: fields 2-6 must be integers, got {cols[1:6]}")
        return None
    if min(submit_s, inp, shuffle, out) < 0:
        errors.append(f"{where}: negative value in {cols[1:6]}")
        return None
    inp = max(int(inp * scale), 64 * MB)
    shuffle = max(int(shuffle * scale), 1024)
    out = max(int(out * scale), 1024)
    n_maps = max(1, math.ceil(inp / (model.block_mb * MB)))
    n_red = max(1, round((shuffle + out) / (model.data_per_reduce_mb * MB)))
    if n_red > nodes:
        n_red = max(1, nodes // 5)
    map_s = model.task_startup_s + inp / n_maps / MB / model.map_mb_s
    shuffle_s = shuffle / n_red / MB / model.shuffle_mb_s
    write_s = model.task_startup_s + out / n_red / MB / model.write_mb_s
    red_s = shuffle_s + write_s
    mreq, rreq = Res(opts.map_mb, 1), Res(opts.reduce_mb, 1)
    maps = Stage(MAP, mreq, (int(map_s * 1000),) * n_maps,
                 (Phase(MAP, 1.0, mreq.memory_mb, 1.0),), input="new")
    share = shuffle_s / red_s if red_s > 0 else 0.0
    reduces = Stage(REDUCE, rreq, (int(red_s * 1000),) * n_red,
                    (Phase("SHUFFLE", share, rreq.memory_mb, 0.1),
                     Phase("REDUCE", 1.0 - share, rreq.memory_mb, 1.0)))
    return Job(id=name, name=name, submit_ms=submit_s * 1000, maps=maps, reduces=reduces,
               am=Res(opts.am_mb, 1), line=n)
