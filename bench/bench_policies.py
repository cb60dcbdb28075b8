"""Policy benchmark: one ``engine.decide`` step of every registered policy (HaSTE,
Matchmaking, OPERA, ANACRAC, PRISM) on a large Snapshot.

The Snapshot is synthetic and built directly from the model dataclasses:
10,000 nodes (200 racks, 128 GiB / 48 vcores each, 100 of them idle so ITA
runs, each with a heartbeat utilization), 5,000 apps in 10 leaf queues (4,000
running MapReduce jobs with map, reduce, rack and node-local rows and an
MRJob each, 500 running Spark apps tagged ``iteration:K/N``, 500 accepted
apps waiting for their AM) and 100,000 containers (22 or 23 per running app,
the first one the AM, on the non-idle nodes). As the sensor's defaults read
them, 200 NodeManagers' containers carry NM JMX usage and 2,000 MapReduce
containers a running map or reduce task in some phase (``--full``: all of
them). Seeded, so every run sees the same cluster.

Run ``python bench/bench_policies.py [--runs N] [--classifier] [--full]`` to print the
build time, the median (and min/max) of N decide steps, wall and CPU time,
the per-policy medians and how many recommendations of each kind came out.
``--classifier`` adds a hook that predicts ``SHORT_FRACTION`` of the pending
request groups short, so OPERA lends (without it everything is long).
``--policies a,b`` runs only those. Target: <= 1 s per decide step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.advisor.engine import AdvisorState, EngineConfig, decide
from yarn_advisor.advisor.model import (
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
from yarn_advisor.advisor.policies import POLICIES
from yarn_advisor.classifiers.live import GroupPrediction, Predictions
from yarn_advisor.classifiers.naive_bayes import Prediction
from yarn_advisor.config.schema import PolicySection

N_NODES, N_RACKS, N_IDLE = 10_000, 200, 100
N_APPS, N_SPARK, N_ACCEPTED = 5_000, 500, 500
N_CONTAINERS = 100_000  # over the 4,500 running apps: 22 or 23 each
N_QUEUES = 10
TS = 1_700_000_000_000
NODE_TOTAL = Resources(131072, 48)
MAP_SIZES = [(1024, 1), (2048, 1), (3072, 1), (4096, 2), (2048, 2)]
REDUCE_SIZES = [(2048, 1), (4096, 2), (8192, 4), (4096, 1)]
SPARK_SIZES = [(4096, 2), (8192, 4), (6144, 2)]
AM = Resources(1536, 1)
MAP_PHASES = ("MAP", "MAP", "SORT")
REDUCE_PHASES = ("SHUFFLE", "SORT", "REDUCE")
SHORT_FRACTION = 0.3  # of the pending request groups, as predicted by --classifier
# what the sensor reads per cycle by default (config/defaults.yaml): running task
# attempts (sense.mapreduce.attempts_limit) and NMs whose JMX is read (nm_jmx.nodes_limit)
N_ATTEMPTS, N_JMX_NODES = 2000, 200


def _rr(prio: int, name: str, size: tuple[int, int], n: int) -> ResourceRequest:
    return ResourceRequest(prio, name, Resources(*size), n, True, "")


def build(seed: int = 7, full: bool = False) -> Snapshot:
    """The synthetic Snapshot described in the module docstring (``full``: NM JMX
    usage for every container and a task for every MapReduce container)."""
    rng = np.random.default_rng(seed)
    hosts = [f"host{i:05d}" for i in range(N_NODES)]
    apps: list[App] = []
    jobs: list[MRJob] = []
    containers: list[Container] = []
    tasks: list[Task] = []
    node_use = np.zeros((N_NODES, 2), dtype=np.float64)
    busy = rng.permutation(N_NODES)[N_IDLE:]
    jmx_nodes = {int(x) for x in busy[:N_JMX_NODES]}
    used = np.zeros((N_NODES, 2), dtype=np.int64)
    count = np.zeros(N_NODES, dtype=np.int64)
    cid = 0
    n_running, n_seen = N_APPS - N_ACCEPTED, 0
    for i in range(N_APPS):
        aid = f"application_{TS}_{i:05d}"
        kind = "spark" if i < N_SPARK else "accepted" if i < N_SPARK + N_ACCEPTED else "mr"
        queue = f"q{i % N_QUEUES}"
        rows: list[ResourceRequest] = []
        tags: tuple[str, ...] = ()
        alloc = [0, 0]
        per_app = 0
        if kind == "accepted":
            rows.append(_rr(0, "*", (AM.memory_mb, AM.vcores), 1))
        else:
            sizes = SPARK_SIZES if kind == "spark" else MAP_SIZES
            m = sizes[int(rng.integers(len(sizes)))]
            r = REDUCE_SIZES[int(rng.integers(len(REDUCE_SIZES)))]
            n_maps = int(rng.integers(0, 60))
            if n_maps:
                rows.append(_rr(20 if kind == "mr" else 1, "*", m, n_maps))
                rows.append(_rr(20, f"/rack{int(rng.integers(N_RACKS)):03d}", m, n_maps))
                for h in rng.choice(N_NODES, 3, replace=False):
                    rows.append(_rr(20, hosts[int(h)], m, 1))
            if kind == "mr" and rng.random() < 0.4:
                rows.append(_rr(10, "*", r, int(rng.integers(1, 6))))
            if kind == "spark":
                total = int(rng.integers(2, 11))
                tags = (f"iteration:{int(rng.integers(1, total + 1))}/{total}",)
            per_app = N_CONTAINERS // n_running + (n_seen < N_CONTAINERS % n_running)
            n_seen += 1
            for k in range(per_app):
                nd = int(busy[cid % len(busy)])
                size = (AM.memory_mb, AM.vcores) if k == 0 else (m if k < 15 else r)
                c_id = f"container_{TS}_{i:05d}_01_{k + 1:06d}"
                pmem = size[0] * float(rng.uniform(0.2, 0.9))
                cpu = size[1] * 100.0 * float(rng.uniform(0.05, 0.9))
                sampled = full or nd in jmx_nodes
                containers.append(
                    Container(
                        c_id,
                        aid,
                        f"{hosts[nd]}:45454",
                        Resources(*size),
                        0 if k == 0 else (20 if k < 15 else 10),
                        TS - 1000 - int(rng.integers(0, 600_000)),
                        "RUNNING",
                        is_am=k == 0,
                        usage=ContainerUsage(c_id, pmem, pmem, cpu, cpu, float(size[0]),
                                             float(size[1]), int(rng.integers(5, 60)))
                        if sampled else None,
                    )
                )
                if kind == "mr" and k > 0:
                    t_kind = "MAP" if k < 15 else "REDUCE"
                    phase = (MAP_PHASES if k < 15 else REDUCE_PHASES)[int(rng.integers(3))]
                    progress = float(rng.uniform(0, 100))
                if kind == "mr" and k > 0 and (full or len(tasks) < N_ATTEMPTS):
                    tasks.append(
                        Task(
                            f"task_{TS}_{i:05d}_{t_kind[0].lower()}_{k:06d}",
                            f"job_{TS}_{i:05d}",
                            aid,
                            t_kind,
                            "RUNNING",
                            progress,
                            TS - 60_000,
                            0,
                            60_000,
                            phase,
                            f"{hosts[nd]}:45454",
                            c_id,
                        )
                    )
                node_use[nd] += (pmem, cpu / 100.0)
                used[nd] += size
                count[nd] += 1
                alloc[0] += size[0]
                alloc[1] += size[1]
                cid += 1
            if kind == "mr":
                maps_total = n_maps + 14 + int(rng.integers(0, 40))
                jobs.append(
                    MRJob(
                        f"job_{TS}_{i:05d}",
                        aid,
                        aid,
                        "u",
                        queue,
                        "RUNNING",
                        TS - 60_000,
                        0,
                        maps_total,
                        maps_total - n_maps - 14,
                        5,
                        int(rng.integers(0, 2)),
                        maps_running=14,
                        reduces_running=5,
                    )
                )
        apps.append(
            App(
                id=aid,
                name=f"job-{i}",
                user="u",
                queue=queue,
                type="SPARK" if kind == "spark" else "MAPREDUCE",
                tags=tags,
                state="ACCEPTED" if kind == "accepted" else "RUNNING",
                final_status="UNDEFINED",
                priority=int(rng.integers(0, 3)),
                progress=float(rng.uniform(0, 100)),
                started_time=TS - 60_000,
                finished_time=0,
                elapsed_time=60_000,
                allocated=Resources(*alloc),
                reserved=Resources(),
                running_containers=0 if kind == "accepted" else per_app,
                am_host_http_address="",
                tracking_url="",
                resource_requests=tuple(rows),
                am_resource=AM,
            )
        )
    nodes = tuple(
        Node(
            id=f"{hosts[i]}:45454",
            host=hosts[i],
            rack=f"/rack{i % N_RACKS:03d}",
            state="RUNNING",
            http_address=f"{hosts[i]}:8042",
            labels=(),
            total=NODE_TOTAL,
            used=Resources(int(used[i, 0]), int(used[i, 1])),
            available=NODE_TOTAL - Resources(int(used[i, 0]), int(used[i, 1])),
            num_containers=int(count[i]),
            utilization=NodeUtilization(
                int(node_use[i, 0]) + 2048,
                int(node_use[i, 0]) + 2048,
                float(node_use[i, 1]) + 0.5,
                int(node_use[i, 0]),
                int(node_use[i, 0]),
                float(node_use[i, 1]),
            ),
        )
        for i in range(N_NODES)
    )
    z = Resources()
    queues = tuple(
        Queue(
            f"root.q{k}",
            f"q{k}",
            "root",
            True,
            10.0,
            100.0,
            50.0,
            10.0,
            100.0,
            5.0,
            z,
            N_APPS // N_QUEUES,
            0,
            0,
            0,
            0,
            "RUNNING",
            (),
            (),
            ordering_policy="fifo",
        )
        for k in range(N_QUEUES)
    )
    beans = tuple(
        QueueMetricsBean(p, 0, 0, z, 0, z, 0, z, z, 0, nl, rl, off)
        for p, nl, rl, off in [("root", 400_000, 150_000, 450_000)]
        + [(f"root.q{k}", 40_000, 15_000, 45_000) for k in range(N_QUEUES)]
    )
    cluster_total = NODE_TOTAL.scale(N_NODES)
    metrics = ClusterMetrics(
        N_APPS,
        0,
        N_ACCEPTED,
        N_APPS - N_ACCEPTED,
        0,
        0,
        cluster_total,
        z,
        cluster_total,
        z,
        len(containers),
        0,
        0,
        N_NODES,
        N_NODES,
        0,
        0,
        0,
    )
    info = ClusterInfo(1, "STARTED", "ACTIVE", "3.4.1", "3.4.1", TS - 3_600_000)
    return Snapshot(
        TS,
        "http://rm:8088",
        info,
        metrics,
        nodes,
        queues,
        tuple(apps),
        tuple(containers),
        jobs=tuple(jobs),
        tasks=tuple(tasks),
        queue_metrics=beans,
    )


class ShortFraction:
    """A stand-in classifier: a fixed ``SHORT_FRACTION`` of the groups is short."""

    def __init__(self, snap: Snapshot) -> None:
        rng = np.random.default_rng(11)
        self.predictions = Predictions(60.0, {
            (a.id, r.priority): GroupPrediction(a.id, r.priority, "MAP", r.capability.memory_mb,
                                                r.num_containers, Prediction(True, 0.95, "bench"))
            for a in snap.apps for r in a.resource_requests
            if r.resource_name == "*" and rng.random() < SHORT_FRACTION})

    def predict(self, snap: Snapshot) -> Predictions:
        return self.predictions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--classifier", action="store_true", help="predict some groups short")
    ap.add_argument("--policies", default="", help="comma-separated subset to run")
    ap.add_argument("--full", action="store_true",
                    help="usage for every container and a task for every MapReduce one")
    args = ap.parse_args()
    t0 = time.perf_counter()
    snap = build(full=args.full)
    measured = sum(1 for c in snap.containers if c.usage is not None)
    print(
        f"snapshot: {len(snap.nodes)} nodes, {len(snap.apps)} apps, "
        f"{len(snap.containers)} containers ({measured} with NM JMX usage), "
        f"{len(snap.tasks)} running tasks, {snap.pending_requests} pending containers "
        f"(built in {time.perf_counter() - t0:.2f} s)"
    )
    cfg = EngineConfig()
    if args.policies:
        keep = set(args.policies.split(","))
        cfg = EngineConfig({n: PolicySection(enabled=n in keep) for n in POLICIES})
    state = AdvisorState(classifier=ShortFraction(snap) if args.classifier else None)
    totals: list[float] = []
    cpu: list[float] = []
    per: dict[str, list[float]] = {}
    result = None
    for _ in range(args.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        result = decide(snap, state, cfg)
        totals.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        state = AdvisorState(result.states, state.classifier)
        for name, dt in result.policy_seconds.items():
            per.setdefault(name, []).append(dt)
    assert result is not None
    print(
        f"decide: median {statistics.median(totals):.3f} s "
        f"(min {min(totals):.3f}, max {max(totals):.3f}, {args.runs} runs; target <= 1 s); "
        f"CPU median {statistics.median(cpu):.3f} s; load average {os.getloadavg()[0]:.1f}"
    )
    for name, xs in per.items():
        print(f"  {name:<12} median {statistics.median(xs):.3f} s")
    kinds = Counter(f"{r.policy}/{r.kind.value}" for r in result.recommendations)
    print("recommendations: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    if result.errors:
        print("errors:", [e.to_json() for e in result.errors])


if __name__ == "__main__":
    main()
