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

``--nodes N`` scales it (apps N/2 and containers 10 N in proportion); without it
the growth table runs at 1k, 2.5k, 5k, 10k, 20k and 40k nodes: the median of
``--runs`` decide steps (process CPU time, the steadier figure on a shared
machine; wall clock beside it), CPU per node and its growth against the
smallest size (1.00 = linear), the peak memory one decide step allocates, the
per-policy medians and the recommendations of each kind at 10k. Beside them, in the
same run, the sense side at that size (``--decide-only`` skips it): a bare
``json.loads`` of ``bench_parse``'s synthetic RM bodies, their decode + parse +
build as the sensor does it, sense + decide (the target: <= 1 s at 10k nodes), its
ratio to the bare ``json.loads``, and what one real sensor cycle fetches
(``_sensor_fetch``). ``--json`` prints one object.
``--classifier`` adds a hook that predicts ``SHORT_FRACTION`` of the pending
request groups short, so OPERA lends (without it everything is long).
``--policies a,b`` runs only those.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sensor_fetch import sensor_fetch
from bench_parse import parse_and_build, synthetic_bodies

from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, decide
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
from yarn_advisor.advisor.policies import POLICIES
from yarn_advisor.classifiers.model.live import GroupPrediction, Predictions
from yarn_advisor.classifiers.model.naive_bayes import Prediction
from yarn_advisor.config.schema import PolicySection

N_QUEUES = 10
SIZES = (1_000, 2_500, 5_000, 10_000, 20_000, 40_000)  # nodes, for the growth table
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


def build(nodes: int = 10_000, seed: int = 7, full: bool = False) -> Snapshot:
    """The synthetic Snapshot described in the module docstring, scaled to ``nodes``
    (apps and containers in proportion: nodes / 2 apps, 10 containers per node;
    ``full``: NM JMX usage for every container and a task for every MapReduce one)."""
    n_nodes, n_racks, n_idle = nodes, max(1, nodes // 50), max(1, nodes // 100)
    n_apps = nodes // 2
    n_spark = n_accepted = n_apps // 10
    n_containers = nodes * 10
    rng = np.random.default_rng(seed)
    hosts = [f"host{i:05d}" for i in range(n_nodes)]
    apps: list[App] = []
    jobs: list[MRJob] = []
    containers: list[Container] = []
    tasks: list[Task] = []
    node_use = np.zeros((n_nodes, 2), dtype=np.float64)
    busy = rng.permutation(n_nodes)[n_idle:]
    jmx_nodes = {int(x) for x in busy[:N_JMX_NODES]}
    used = np.zeros((n_nodes, 2), dtype=np.int64)
    count = np.zeros(n_nodes, dtype=np.int64)
    cid = 0
    n_running, n_seen = n_apps - n_accepted, 0
    for i in range(n_apps):
        aid = f"application_{TS}_{i:05d}"
        kind = "spark" if i < n_spark else "accepted" if i < n_spark + n_accepted else "mr"
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
                rows.append(_rr(20, f"/rack{int(rng.integers(n_racks)):03d}", m, n_maps))
                for h in rng.choice(n_nodes, 3, replace=False):
                    rows.append(_rr(20, hosts[int(h)], m, 1))
            if kind == "mr" and rng.random() < 0.4:
                rows.append(_rr(10, "*", r, int(rng.integers(1, 6))))
            if kind == "spark":
                total = int(rng.integers(2, 11))
                tags = (f"iteration:{int(rng.integers(1, total + 1))}/{total}",)
            per_app = n_containers // n_running + (n_seen < n_containers % n_running)
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
            rack=f"/rack{i % n_racks:03d}",
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
        for i in range(nodes)
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
            n_apps // N_QUEUES,
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
    cluster_total = NODE_TOTAL.scale(n_nodes)
    metrics = ClusterMetrics(
        n_apps,
        0,
        n_accepted,
        n_apps - n_accepted,
        0,
        0,
        cluster_total,
        z,
        cluster_total,
        z,
        len(containers),
        0,
        0,
        n_nodes,
        n_nodes,
        0,
        0,
        0,
    )
    info = ClusterInfo(1, "STARTED", "ACTIVE", "3.4.1", "3.4.1", TS - 3_600_000)
    # assembled as the sensor and the simulator assemble theirs (joined, sorted by id)
    return build_snapshot(taken_at=TS, rm_url="http://rm:8088", cluster=info, metrics=metrics,
                          scheduler_type="capacityScheduler", queues=queues, nodes=nodes,
                          apps=apps, containers=containers, jobs=jobs, tasks=tasks,
                          queue_metrics=beans)


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


def _sense(nodes: int, runs: int) -> dict[str, Any]:
    """The sense side at this size, in this run: a bare ``json.loads`` of the RM bodies
    of ``bench_parse``'s synthetic cluster of ``nodes`` nodes, their decode + parse +
    build as the sensor does it, and what one real sensor cycle fetches."""
    bodies = synthetic_bodies(nodes)
    loads: list[float] = []
    sense: list[float] = []
    for _ in range(runs):
        c0 = time.process_time()
        for raw in bodies.values():
            json.loads(raw)
        loads.append(time.process_time() - c0)
        c0 = time.process_time()
        kept = parse_and_build(bodies)
        gc.collect(0)  # the young collection the paused step defers, over the Snapshot
        sense.append(time.process_time() - c0)
        del kept
    fetched = sensor_fetch(bodies, nodes)
    return {"json_loads_cpu_s": round(statistics.median(loads), 4),
            "sense_cpu_s": round(statistics.median(sense), 4),
            "sensor_requests": fetched["sensor_requests"], "sensor_mb": fetched["sensor_mb"]}


def measure(nodes: int, runs: int, classifier: bool, policies: str, full: bool,
            with_sense: bool = True) -> dict[str, Any]:
    """Build the snapshot of ``nodes`` nodes and time ``runs`` decide steps on it
    (``with_sense``: and the sense side at the same size, see :func:`_sense`)."""
    t0 = time.perf_counter()
    snap = build(nodes, full=full)
    built_s = time.perf_counter() - t0
    cfg = EngineConfig()
    if policies:
        keep = set(policies.split(","))
        cfg = EngineConfig({n: PolicySection(enabled=n in keep) for n in POLICIES})
    state = AdvisorState(classifier=ShortFraction(snap) if classifier else None)
    wall: list[float] = []
    cpu: list[float] = []
    per: dict[str, list[float]] = {}
    result = None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        result = decide(snap, state, cfg)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        state = AdvisorState(result.states, state.classifier)
        for name, dt in result.policy_seconds.items():
            per.setdefault(name, []).append(dt)
    assert result is not None
    tracemalloc.start()
    decide(snap, state, cfg)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    kinds = Counter(f"{r.policy}/{r.kind.value}" for r in result.recommendations)
    sense = _sense(nodes, runs) if with_sense else {}
    if sense:
        sense["sense_decide_cpu_s"] = round(sense["sense_cpu_s"] + statistics.median(cpu), 4)
        sense["ratio_to_json_loads"] = round(sense["sense_decide_cpu_s"]
                                             / sense["json_loads_cpu_s"], 2)
    return {**sense,
        "nodes": len(snap.nodes), "apps": len(snap.apps), "containers": len(snap.containers),
        "tasks": len(snap.tasks), "pending_containers": snap.pending_requests,
        "build_s": round(built_s, 3), "decide_cpu_s": round(statistics.median(cpu), 4),
        "decide_wall_s": round(statistics.median(wall), 4),
        "decide_peak_mib": round(peak / 2**20, 1),
        "per_policy_s": {n: round(statistics.median(xs), 4) for n, xs in per.items()},
        "recommendations": dict(sorted(kinds.items())),
        "errors": [e.to_json() for e in result.errors],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, action="append",
                    help=f"cluster size (repeatable; default: the growth table {SIZES})")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--classifier", action="store_true", help="predict some groups short")
    ap.add_argument("--policies", default="", help="comma-separated subset to run")
    ap.add_argument("--full", action="store_true",
                    help="usage for every container and a task for every MapReduce one")
    ap.add_argument("--decide-only", action="store_true",
                    help="skip the sense columns (json.loads, sense, sensor fetch)")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args()
    rows = [measure(n, args.runs, args.classifier, args.policies, args.full,
                    not args.decide_only)
            for n in (args.nodes or SIZES)]
    base = rows[0]
    for r in rows:
        r["per_node_us"] = round(r["decide_cpu_s"] / r["nodes"] * 1e6, 2)
        r["growth_vs_smallest"] = round(
            (r["decide_cpu_s"] / base["decide_cpu_s"]) / (r["nodes"] / base["nodes"]), 2)
    if args.json:
        print(json.dumps({"runs": args.runs, "load_average": os.getloadavg()[0], "rows": rows},
                         sort_keys=True))
        return
    print(f"decide step, median of {args.runs} runs (process CPU seconds; wall in brackets); "
          f"load average {os.getloadavg()[0]:.1f}")
    sensed = not args.decide_only
    print(f"{'nodes':>7}{'apps':>7}{'containers':>11}{'decide':>16}{'us/node':>9}"
          f"{'growth':>8}{'peak MiB':>10}"
          + (f"{'json.loads':>11}{'sense':>7}{'sense+decide':>13}{'ratio':>7}"
             f"{'sensor reqs':>12}{'sensor MB':>10}" if sensed else ""))
    for r in rows:
        print(f"{r['nodes']:>7}{r['apps']:>7}{r['containers']:>11}"
              f"{r['decide_cpu_s']:>8.3f} ({r['decide_wall_s']:5.3f}){r['per_node_us']:>9.1f}"
              f"{r['growth_vs_smallest']:>8.2f}{r['decide_peak_mib']:>10.0f}"
              + (f"{r['json_loads_cpu_s']:>11.3f}{r['sense_cpu_s']:>7.3f}"
                 f"{r['sense_decide_cpu_s']:>13.3f}{r['ratio_to_json_loads']:>7.2f}"
                 f"{r['sensor_requests']:>12}{r['sensor_mb']:>10.1f}" if sensed else ""))
    print("growth: CPU time per node relative to the smallest size (1.00 = linear)")
    if sensed:
        print("sense: decode + parse + build of bench_parse's RM bodies at that size (GC "
              "paused as the sensor does; its deferred young collection included); "
              "sense+decide: the two medians added; ratio: sense+decide over a bare "
              "json.loads of the same bodies, this run; sensor: requests and MB one real "
              "sensor cycle fetches with the default limits")
    for r in rows:
        if r["nodes"] == 10_000:
            print("at 10k nodes, per policy: " + ", ".join(
                f"{n} {s:.3f} s" for n, s in r["per_policy_s"].items()))
            print("recommendations: " + ", ".join(f"{k} {v}" for k, v in
                                                  r["recommendations"].items()))
        if r["errors"]:
            print(f"errors at {r['nodes']} nodes:", r["errors"])


if __name__ == "__main__":
    main()
