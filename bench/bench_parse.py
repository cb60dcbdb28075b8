"""Sense benchmark: decode + parse + build of a synthetic cluster, at growing sizes.

``synthetic_bodies(n)`` returns serialised bodies for ``n`` nodes, ``n / 2``
running apps (three resourceRequests each) and ``10 n`` containers (the RM
``.../appattempts/{id}/containers`` shape, 20 per app, container 1 the AM),
plus the cluster info / metrics / scheduler examples. Every item is a copy of
a real example item of the Hadoop REST docs with its ids, sizes and times varied.

``python bench/bench_parse.py`` prints the growth table at 1k, 2.5k, 5k, 10k,
20k and 40k nodes (``--nodes N``, repeatable, picks sizes; ``--json`` one
object): the median of ``--runs`` runs of a bare ``json.loads`` of every body,
of the connectors' decode (lean for nodes, apps and containers: only the keys
their parsers read, connectors/lean_json.py), and of decode + parse +
``build_snapshot`` (process
CPU seconds, wall clock beside), their ratio, CPU per node against the
smallest size (1.00 = linear), the peak memory of one decode + parse + build,
and what one cycle of the real sensor fetches at that size with its default
limits (requests, MB; see ``_sensor_fetch``).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from _sensor_fetch import sensor_fetch

from yarn_advisor.advisor.model.assemble import build_snapshot
from yarn_advisor.advisor.model.gcpause import paused_gc
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.connectors.lean_json import LeanDecoder, RawJSON, decode_json
from yarn_advisor.connectors.rm import parse as parse_rm

CONTAINERS_PER_APP = 20  # apps = nodes / 2, so 10 containers per node
RUNS = 5
SIZES = (1_000, 2_500, 5_000, 10_000, 20_000, 40_000)  # nodes, for the growth table
CLUSTER_TS = 1531404209605
QUEUES = ("a", "b", "c")

# the bodies the RM client leaves raw, and the lean decoder their parser uses
LEAN: dict[str, LeanDecoder] = {"nodes": parse_rm.LEAN_NODES, "apps": parse_rm.LEAN_APPS,
                                "containers": parse_rm.LEAN_CONTAINERS}
PARSERS: dict[str, Callable[[Any], object]] = {
    "cluster_info": parse_rm.parse_cluster_info,
    "cluster_metrics": parse_rm.parse_cluster_metrics,
    "scheduler": parse_rm.parse_scheduler,
    "nodes": parse_rm.parse_nodes,
    "apps": parse_rm.parse_apps,
    "containers": parse_rm.parse_containers,
}


def _rest_docs() -> Path:
    env = os.environ.get("YARN_ADVISOR_SHARED")
    if env:
        base = Path(env)
        data = base / "data" if (base / "data").is_dir() else base
    else:
        data = Path(__file__).resolve().parents[2] / "shared" / "data"
    return data / "hadoop-rest-docs"


def _example(prefix: str) -> Any:
    (path,) = _rest_docs().glob(f"{prefix}__*.json")
    return json.loads(path.read_text())


def _resource_info(memory: int, vcores: int, template: dict[str, Any]) -> dict[str, Any]:
    """A 3.x ResourceInfo (memory, vCores and resourceInformations) from the CS example's."""
    info = copy.deepcopy(template)
    info["memory"], info["vCores"] = memory, vcores
    mem_info, cpu_info = info["resourceInformations"]["resourceInformation"]
    mem_info["value"], cpu_info["value"] = memory, vcores
    return info


def _nodes(n_nodes: int) -> dict[str, Any]:
    template = _example("rm__13")["node"]
    cs_leaf = _example("rm__03")["scheduler"]["schedulerInfo"]["queues"]["queue"][0]
    res_template = cs_leaf["resourcesUsed"]
    nodes = []
    for i in range(n_nodes):
        host = f"worker{i:05d}.domain.com"
        used_mb, used_cores = (i % 12) * 8192, (i % 12) * 4
        node = dict(template)
        node.update(
            id=f"{host}:45454",
            nodeHostName=host,
            nodeHTTPAddress=f"{host}:8042",
            rack=f"/rack{i // 40:03d}",
            lastHealthUpdate=CLUSTER_TS + 3_000 * i,
            numContainers=i % 12,
            usedMemoryMB=used_mb,
            availMemoryMB=98304 - used_mb,
            usedVirtualCores=used_cores,
            availableVirtualCores=48 - used_cores,
            nodeLabels=["gpu"] if i % 10 == 0 else [],
            usedResource=_resource_info(used_mb, used_cores, res_template),
            availableResource=_resource_info(98304 - used_mb, 48 - used_cores, res_template),
            totalResource=_resource_info(98304, 48, res_template),
        )
        util = dict(template["resourceUtilization"])
        util.update(nodePhysicalMemoryMB=used_mb // 2 + 968, nodeCPUUsage=(i % 100) / 100)
        node["resourceUtilization"] = util
        nodes.append(node)
    return {"nodes": {"node": nodes}}


def _apps(n_apps: int, n_nodes: int) -> dict[str, Any]:
    template = _example("rm__06")["apps"]["app"][0]
    apps = []
    for i in range(n_apps):
        app = dict(template)
        app.update(
            id=f"application_{CLUSTER_TS}_{i + 1:04d}",
            queue=QUEUES[i % 3],
            state="RUNNING",
            finalStatus="UNDEFINED",
            progress=(i % 100) * 1.0,
            applicationTags="etl,nightly" if i % 4 == 0 else "",
            startedTime=CLUSTER_TS + 1_000 * i,
            finishedTime=0,
            elapsedTime=60_000 + i,
            allocatedMB=CONTAINERS_PER_APP * 2048,
            allocatedVCores=CONTAINERS_PER_APP,
            runningContainers=CONTAINERS_PER_APP,
            memorySeconds=1_000 * i,
        )
        requests = copy.deepcopy(template["resourceRequests"])
        requests[0]["numContainers"] = i % 7
        for rr in requests[1:]:
            rr["resourceName"] = f"worker{(i * 7) % n_nodes:05d}.domain.com"
        app["resourceRequests"] = requests
        apps.append(app)
    return {"apps": {"app": apps}}


def _containers(n_apps: int, n_nodes: int) -> dict[str, Any]:
    template = _example("rm__10")["containers"]["container"][0]
    containers = []
    for i in range(n_apps * CONTAINERS_PER_APP):
        app, n = divmod(i, CONTAINERS_PER_APP)
        cid = f"container_e01_{CLUSTER_TS}_{app + 1:04d}_01_{n + 1:06d}"
        node = f"worker{(i * 13) % n_nodes:05d}.domain.com"
        mb = "1536" if n == 0 else "2048"
        c = dict(template)
        c.update(
            containerId=cid,
            allocatedMB=mb,
            assignedNodeId=f"{node}:45454",
            nodeId=f"{node}:45454",
            nodeHttpAddress=f"http://{node}:8042",
            priority="0" if n == 0 else "20",
            startedTime=str(CLUSTER_TS + 10 * i),
            elapsedTime=str(4112 + i % 1000),
            logUrl=f"http://{node}:8042/node/containerlogs/{cid}/systest",
            allocatedResources=[{"key": "memory-mb", "value": mb}, {"key": "vcores", "value": "1"}],
        )
        containers.append(c)
    return {"containers": {"container": containers}}


def synthetic_bodies(n_nodes: int = 10_000) -> dict[str, bytes]:
    """Serialised bodies of a synthetic cluster of ``n_nodes`` nodes (``n_nodes / 2``
    running apps, 20 containers each), keyed like :data:`PARSERS`."""
    n_apps = n_nodes // 2
    bodies: dict[str, Any] = {
        "cluster_info": _example("rm__01"),
        "cluster_metrics": _example("rm__02"),
        "scheduler": _example("rm__03"),
        "nodes": _nodes(n_nodes),
        "apps": _apps(n_apps, n_nodes),
        "containers": _containers(n_apps, n_nodes),
    }
    return {name: json.dumps(body).encode() for name, body in bodies.items()}


def _median(fn: Callable[[], object], runs: int = RUNS) -> tuple[float, float]:
    """Median (wall seconds, process CPU seconds) of ``runs`` calls of ``fn``.
    CPU time is the steadier figure on a shared machine."""
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        kept = fn()
        # the young-generation collection a paused step defers to its first allocation
        # after, over what it made and keeps (the Snapshot): charged to the step
        gc.collect(0)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
        del kept
    return statistics.median(wall), statistics.median(cpu)


def fetched(bodies: dict[str, bytes]) -> dict[str, Any]:
    """The bodies as the RM client hands them over: the big collections raw (their
    parsers decode only what they read), the rest decoded."""
    return {name: RawJSON(name, raw) if name in LEAN else decode_json(raw, name)
            for name, raw in bodies.items()}


def parse_and_build(bodies: dict[str, bytes]) -> Snapshot:
    """One cycle's decode (as the connectors do it) + parse + Snapshot build, with
    the cyclic collector paused for the whole step as ``LiveSensor.sense`` does."""
    with paused_gc():
        return build_from_decoded(fetched(bodies))


def build_from_decoded(decoded: dict[str, Any]) -> Snapshot:
    """Parse fetched bodies (decoded JSON, or RawJSON for the parser to decode)
    and build the Snapshot."""
    parsed = {name: PARSERS[name](body) for name, body in decoded.items()}
    sched_type, queues = parsed["scheduler"]  # type: ignore[misc]
    return build_snapshot(
        taken_at=0, rm_url="http://rm:8088", cluster=parsed["cluster_info"],  # type: ignore[arg-type]
        metrics=parsed["cluster_metrics"], scheduler_type=sched_type,  # type: ignore[arg-type]
        queues=queues, nodes=parsed["nodes"], apps=parsed["apps"],  # type: ignore[arg-type]
        containers=parsed["containers"],  # type: ignore[arg-type]
    )


def as_sensed(bodies: dict[str, bytes], apps_read: int = 500) -> dict[str, bytes]:
    """The bodies with the containers of only the first ``apps_read`` apps: what the
    sensor reads with its default ``sense.app_details_limit``."""
    containers = json.loads(bodies["containers"])["containers"]["container"]
    kept = containers[: apps_read * CONTAINERS_PER_APP]
    return {**bodies, "containers": json.dumps({"containers": {"container": kept}}).encode()}


def measure(n_nodes: int, runs: int = RUNS) -> dict[str, Any]:
    """One size: bare json.loads, the connectors' decode, decode + parse + build, peak
    memory, and what the sensor fetches per cycle at this size."""
    bodies = synthetic_bodies(n_nodes)
    size = sum(map(len, bodies.values()))

    def bare() -> None:
        for raw in bodies.values():
            json.loads(raw)

    def connectors_decode() -> None:
        for name, raw in bodies.items():
            LEAN[name].items(raw) if name in LEAN else decode_json(raw, name)

    loads = _median(bare, runs)
    decode = _median(connectors_decode, runs)
    full = _median(partial(parse_and_build, bodies), runs)
    sensed = _median(partial(parse_and_build, as_sensed(bodies)), runs)
    tracemalloc.start()
    snap = parse_and_build(bodies)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    fetched = sensor_fetch(bodies, n_nodes)
    return {
        "nodes": n_nodes, "apps": len(snap.apps), "containers": len(snap.containers),
        "body_mb": round(size / 1e6, 1),
        "json_loads_cpu_s": round(loads[1], 4), "decode_cpu_s": round(decode[1], 4),
        "decode_parse_build_cpu_s": round(full[1], 4),
        "decode_parse_build_wall_s": round(full[0], 4),
        "ratio_to_json_loads": round(full[1] / loads[1], 2),
        "as_sensed_cpu_s": round(sensed[1], 4),
        "peak_mib": round(peak / 2**20), **fetched,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, action="append",
                    help=f"cluster size (repeatable; default: the growth table {SIZES})")
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args()
    rows = [measure(n, args.runs) for n in (args.nodes or SIZES)]
    base = rows[0]
    for r in rows:
        r["growth_vs_smallest"] = round((r["decode_parse_build_cpu_s"]
                                         / base["decode_parse_build_cpu_s"])
                                        / (r["nodes"] / base["nodes"]), 2)
    if args.json:
        print(json.dumps({"runs": args.runs, "load_average": os.getloadavg()[0], "rows": rows},
                         sort_keys=True))
        return
    print(f"median of {args.runs} runs, process CPU seconds (wall in brackets); "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'nodes':>7}{'apps':>7}{'contain.':>9}{'MB':>6}{'json.loads':>11}{'decode':>8}"
          f"{'decode+parse+build':>25}{'ratio':>7}{'growth':>7}{'peak MiB':>9}"
          f"{'as sensed':>10}{'sensor reqs':>12}{'sensor MB':>10}")
    for r in rows:
        print(f"{r['nodes']:>7}{r['apps']:>7}{r['containers']:>9}{r['body_mb']:>6.0f}"
              f"{r['json_loads_cpu_s']:>11.3f}{r['decode_cpu_s']:>8.3f}"
              f"{r['decode_parse_build_cpu_s']:>16.3f} ({r['decode_parse_build_wall_s']:5.3f})"
              f"{r['ratio_to_json_loads']:>7.2f}{r['growth_vs_smallest']:>7.2f}"
              f"{r['peak_mib']:>9}{r['as_sensed_cpu_s']:>10.3f}{r['sensor_requests']:>12}"
              f"{r['sensor_mb']:>10.1f}")
    print("ratio: decode + parse + build over a bare json.loads of the same bytes; growth: "
          "CPU per node relative to the smallest size (1.00 = linear); as sensed: decode + "
          "parse + build with the containers of the 500 apps the sensor reads by default; "
          "sensor: requests and MB one cycle of the real sensor fetches with the default "
          "limits")


if __name__ == "__main__":
    main()
