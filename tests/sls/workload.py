"""The simulated cluster and its workload for SLS: a nodes file and a Rumen trace.

Nodes: ``n`` simulated NodeManagers on ``racks`` racks, of mixed sizes drawn
(in fixed proportions, shuffled with a seed) from :data:`NODE_CLASSES`.

Trace: a Rumen job trace (what SLS's ``-tracetype RUMEN`` replays) built from
real Rumen job histories: the Gridmix system-test traces, recorded on a real
Hadoop cluster in 2011, and SLS's own sample. The benches' standard trace uses
all 22 Gridmix traces of the shared data set (:data:`SOURCE_FILES` under
:data:`SHARED_DATA`); the tests' trace uses the seven of them vendored in
``tests/fixtures`` and the SLS sample (:data:`TEST_SOURCE_FILES`, see
:data:`TEST_TRACE`): the same kinds of jobs, fewer distinct ones. Each job
keeps its real task counts and each task its real duration (launch of its first
attempt to its finish); each map asks for the simulated node its real host maps
to by a stable hash (copies of a job ask for the same nodes, like jobs reading
the same data). Those traces are small (the 23 standard sources: about 190
jobs, 55,000 task-seconds in all), so whole traces are laid into
the arrival window again and again, each copy at a seeded random offset with
its real inter-arrival times, until the offered load reaches ``load`` (task
and AM vcore-seconds over the cluster's vcores x the window). Queues are
drawn per job with fixed weights: the Rumen jobs all ran in one queue.

Why not SLS's own JSON trace format: hadoop-sls 3.4.2 cannot read it
(AMRunner.startAMFromSLSTrace maps each job to ``Map<String, String>``, and
jackson-databind 2.12 rejects the ``job.tasks`` array: "Cannot deserialize
value of type java.lang.String from Array value"), so every job is dropped.
Why not SWIM (swim/ in the shared data): it records bytes per job, not tasks or
durations, so every task count and duration would be invented, and its hour
holds only ~300 maps. Why not SLS's synthetic generator: every number in it
would be invented too. Here only the load (copies, offsets) and the queue mix
are chosen; every job shape and task duration is recorded.
"""

from __future__ import annotations

import json
import os
import random
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from yarn_advisor.classifiers.readers.rumen import RumenJob, RumenTask, read_trace

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
# the data set that feeds the benches (it is too large to vendor whole)
SHARED_DATA = Path(os.environ.get("YARN_ADVISOR_SHARED", ROOT.parent / "shared")) / "data"
SOURCE_FILES = (
    *(f"hadoop-gridmix-system-traces/{n}.json.gz" for n in (
        "trace_1m", "trace_3m", "trace_5m", "trace_7m", "trace_10m", "trace_12m",
        "2m_stream_trace", "3m_stream_trace", "5m_stream_trace",
        *(f"compression_case{i}_trace" for i in range(1, 5)),
        *(f"distcache_case{i}_trace" for i in range(1, 10)))),
    "hadoop-sls/2jobs2min-rumen-jh.json",
)
# the sources vendored in tests/fixtures (its PROVENANCE.md): what the tests' trace uses
TEST_SOURCE_FILES = (
    *(f"hadoop-gridmix-system-traces/{n}.json.gz" for n in (
        "trace_1m", "trace_3m", "trace_7m", "5m_stream_trace",
        "distcache_case1_trace", "distcache_case4_trace", "distcache_case5_trace")),
    "hadoop-sls/2jobs2min-rumen-jh.json",
)
QUEUE_WEIGHTS = {"default": 0.4, "etl": 0.4, "adhoc": 0.2}
DEFAULT_TASK_MB = 1024  # when a trace records no memory ask (SLS's own default)
AM_MB, AM_VCORES = 1024, 1
# job ids: job_<this>_<n>, n in submission order (Hadoop JobID form, %04d)
JOB_ID_EPOCH = 1700000000000
NO_LOCALITY = "/no-rack/no-host"


@dataclass(frozen=True)
class NodeClass:
    memory_mb: int
    vcores: int
    weight: float


# Small nodes keep the simulated containers (all 1 vcore) at ~1,500 for 500
# nodes: enough to queue, few enough for SLS to keep up on two cores.
NODE_CLASSES = (
    NodeClass(2048, 2, 0.3),
    NodeClass(4096, 2, 0.2),
    NodeClass(4096, 4, 0.3),
    NodeClass(8192, 4, 0.2),
)


@dataclass(frozen=True)
class SimNode:
    """One simulated NodeManager. Its host name is a loopback address of its own
    (127.2.x.y): the RM resolves every registering host name
    (NodesListManager.isValidNode), and a name would go to DNS, 2 s per node
    here; an address literal needs no lookup, and anything that tries the
    node's HTTP port (80) is refused on loopback at once."""

    rack: str
    host: str
    memory_mb: int
    vcores: int

    @property
    def path(self) -> str:
        """The network path SLS uses in a trace's ``container.host``."""
        return f"/{self.rack}/{self.host}"


def make_nodes(n: int, racks: int, seed: int = 7,
               classes: Sequence[NodeClass] = NODE_CLASSES) -> list[SimNode]:
    """``n`` nodes, ``racks`` racks (round-robin), sizes in the classes' proportions."""
    if n < 1 or racks < 1:
        raise ValueError("need at least one node and one rack")
    total = sum(c.weight for c in classes)
    sizes: list[NodeClass] = []
    for c in classes:
        sizes += [c] * round(n * c.weight / total)
    sizes = (sizes + [classes[-1]] * n)[:n]
    random.Random(seed).shuffle(sizes)
    if n > 250 * 256:
        raise ValueError("at most 64,000 simulated nodes (one loopback address each)")
    return [SimNode(f"rack{i % racks:02d}", f"127.2.{i // 250}.{i % 250 + 1}", c.memory_mb,
                    c.vcores) for i, c in enumerate(sizes)]


def write_nodes(nodes: Iterable[SimNode], path: Path) -> Path:
    """SLS's nodes file: one ``{"rack": ..., "nodes": [...]}`` object per rack."""
    by_rack: dict[str, list[dict[str, object]]] = {}
    for node in nodes:
        by_rack.setdefault(node.rack, []).append(
            {"node": node.host, "memory-mb": node.memory_mb, "vcores": node.vcores})
    path.write_text("".join(json.dumps({"rack": r, "nodes": ns}, indent=None) + "\n"
                            for r, ns in sorted(by_rack.items())))
    return path


@dataclass(frozen=True)
class SourceTask:
    kind: str  # "map" or "reduce"
    duration_ms: int
    memory_mb: int
    host: str  # the real host it ran on ("" if unknown)


@dataclass(frozen=True)
class SourceJob:
    source: str  # "<file>:<job id>"
    name: str
    user: str
    submit_offset_ms: int  # since its trace's first submission
    span_ms: int  # submit to finish, as recorded
    tasks: tuple[SourceTask, ...]

    def vcore_ms(self) -> int:
        """Work in vcore-milliseconds: every task (1 vcore) plus the AM for the job's span."""
        return sum(t.duration_ms for t in self.tasks) + AM_VCORES * self.span_ms


def _task(job: RumenJob, task: RumenTask, kind: str) -> SourceTask | None:
    if task.status and task.status != "SUCCESS":
        return None
    duration = task.duration_ms
    if duration is None or duration <= 0:
        return None
    done = [a for a in task.attempts if a.result == "SUCCESS"] or list(task.attempts)
    mb = job.memory_mb(kind.upper())
    return SourceTask(kind, duration, mb if mb > 0 else DEFAULT_TASK_MB,
                      done[-1].host if done else "")


def read_source(path: Path) -> list[SourceJob]:
    """The jobs of one Rumen trace with at least one task of known duration."""
    jobs, problem = read_trace(path)
    if problem:
        raise ValueError(f"cannot use {path}: {problem}")
    first = min((j.submit_ms for j in jobs if j.submit_ms > 0), default=0)
    out = []
    for job in jobs:
        tasks = [t for t in (*(_task(job, m, "map") for m in job.maps),
                             *(_task(job, r, "reduce") for r in job.reduces)) if t]
        if not tasks or job.submit_ms <= 0 or job.finish_ms < job.submit_ms:
            continue
        out.append(SourceJob(f"{path.name}:{job.job_id}", job.name, job.user or "sls",
                             job.submit_ms - first, job.finish_ms - job.submit_ms,
                             tuple(tasks)))
    return out


@dataclass(frozen=True)
class TraceSpec:
    """What the trace generator chooses; everything else comes from the sources."""

    window_s: int = 420  # arrivals fall in [0, window)
    load: float = 0.9  # offered vcore-seconds / (cluster vcores x window)
    seed: int = 1
    locality: bool = True  # maps ask for the node their real host maps to
    sources: tuple[str, ...] = SOURCE_FILES  # under ``data``
    data: Path = SHARED_DATA


@dataclass(frozen=True)
class TraceSummary:
    jobs: int
    tasks: int
    copies: int  # source traces laid into the window (with repeats)
    offered_load: float
    vcore_s: int
    last_arrival_s: float
    task_mb: int  # the memory ask of (nearly) every source task; SLS's Rumen
    # reader gives all tasks one size (yarn.sls.container.memory.mb)


@dataclass(frozen=True)
class Placed:
    """One source job at its place in the generated trace."""

    job_id: str
    start_ms: int
    queue: str
    job: SourceJob


def build_trace(nodes: Sequence[SimNode], spec: TraceSpec) -> tuple[list[Placed], TraceSummary]:
    """The placed jobs (in submission order, ids numbered so) and a summary."""
    paths = [spec.data / f for f in spec.sources]
    window_ms = spec.window_s * 1000
    traces = [jobs for p in paths if (jobs := read_source(p))
              and max(j.submit_offset_ms for j in jobs) < window_ms]
    if not traces:
        raise ValueError("no source trace fits the arrival window")
    capacity = sum(n.vcores for n in nodes) * window_ms
    rng = random.Random(spec.seed)
    queues, weights = list(QUEUE_WEIGHTS), list(QUEUE_WEIGHTS.values())
    placed: list[tuple[int, str, SourceJob]] = []
    work = copies = 0
    while work < spec.load * capacity:
        jobs = traces[copies % len(traces)]
        copies += 1
        offset = rng.randrange(0, window_ms - max(j.submit_offset_ms for j in jobs))
        for job in jobs:
            placed.append((offset + job.submit_offset_ms, rng.choices(queues, weights)[0], job))
            work += job.vcore_ms()
    placed.sort(key=lambda p: (p[0], p[2].source))
    out = [Placed(f"job_{JOB_ID_EPOCH}_{i + 1:04d}", start, queue, job)
           for i, (start, queue, job) in enumerate(placed)]
    sizes = Counter(t.memory_mb for p in out for t in p.job.tasks)
    return out, TraceSummary(
        jobs=len(out), tasks=sum(sizes.values()), copies=copies,
        offered_load=round(work / capacity, 3), vcore_s=work // 1000,
        last_arrival_s=out[-1].start_ms / 1000, task_mb=sizes.most_common(1)[0][0])


def rumen_job(p: Placed, nodes: Sequence[SimNode], locality: bool) -> dict[str, object]:
    """One placed job in Rumen's LoggedJob form, times relative to the trace start.

    SLS's Rumen reader (AMDefinitionRumen.getTaskContainers) takes each task's
    last attempt: its duration (finish - start) and its host, which becomes a
    node-local ask. Reducers (which a real MapReduce AM places anywhere) and
    maps without locality name a host on no simulated rack
    (:data:`NO_LOCALITY`), so the scheduler places them off-switch.
    """
    ids = p.job_id[len("job_"):]
    counters = {"map": 0, "reduce": 0}
    tasks: dict[str, list[dict[str, object]]] = {"map": [], "reduce": []}
    for t in p.job.tasks:
        n = counters[t.kind]
        counters[t.kind] += 1
        letter = t.kind[0]
        host = NO_LOCALITY
        if locality and t.kind == "map" and t.host:
            host = nodes[zlib.crc32(t.host.encode()) % len(nodes)].path
        end = p.start_ms + t.duration_ms
        tasks[t.kind].append({
            "taskID": f"task_{ids}_{letter}_{n:06d}", "taskType": t.kind.upper(),
            "taskStatus": "SUCCESS", "startTime": p.start_ms, "finishTime": end,
            "attempts": [{"attemptID": f"attempt_{ids}_{letter}_{n:06d}_0", "hostName": host,
                          "startTime": p.start_ms, "finishTime": end, "result": "SUCCESS"}]})
    return {
        "jobID": p.job_id, "user": p.job.user, "jobName": p.job.name, "queue": p.queue,
        "priority": "NORMAL", "outcome": "SUCCESS", "jobtype": "JAVA",
        "submitTime": p.start_ms, "launchTime": p.start_ms,
        "finishTime": p.start_ms + p.job.span_ms,
        "totalMaps": len(tasks["map"]), "totalReduces": len(tasks["reduce"]),
        "mapTasks": tasks["map"], "reduceTasks": tasks["reduce"], "otherTasks": [],
    }


def write_trace(placed: Sequence[Placed], nodes: Sequence[SimNode], locality: bool,
                path: Path) -> Path:
    """The Rumen trace SLS replays, and beside it ``<name>.jobs.tsv``: each job's
    id, submission (ms after trace start), queue, source job, task count and
    recorded span (submission to finish, ms)."""
    path.write_text("".join(json.dumps(rumen_job(p, nodes, locality), separators=(",", ":"))
                            + "\n" for p in placed))
    manifest_path(path).write_text("".join(
        f"{p.job_id}\t{p.start_ms}\t{p.queue}\t{p.job.source}\t{len(p.job.tasks)}"
        f"\t{p.job.span_ms}\n"
        for p in placed))
    return path


def manifest_path(trace: Path) -> Path:
    return trace.with_name(trace.stem + ".jobs.tsv")


@dataclass(frozen=True)
class TraceJob:
    job_id: str
    start_ms: int
    queue: str
    source: str
    tasks: int
    span_ms: int


def read_manifest(trace: Path) -> list[TraceJob]:
    """The jobs of a trace written by :func:`write_trace`, in submission order."""
    out = []
    for line in manifest_path(trace).read_text().splitlines():
        job_id, start, queue, source, tasks, span = line.split("\t")
        out.append(TraceJob(job_id, int(start), queue, source, int(tasks), int(span)))
    return out


def summary_dict(s: TraceSummary) -> dict[str, object]:
    return {"jobs": s.jobs, "tasks": s.tasks, "copies_of_source_traces": s.copies,
            "offered_load": s.offered_load, "vcore_seconds": s.vcore_s,
            "last_arrival_s": s.last_arrival_s, "task_mb": s.task_mb}


def cluster_vcores(nodes: Sequence[SimNode]) -> int:
    return sum(n.vcores for n in nodes)


def cluster_memory_mb(nodes: Sequence[SimNode]) -> int:
    return sum(n.memory_mb for n in nodes)


# The trace of the tests (tests/sls): the standard spec on the vendored sources only.
TEST_TRACE = TraceSpec(sources=TEST_SOURCE_FILES, data=FIXTURES)
