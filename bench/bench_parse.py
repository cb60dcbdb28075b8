"""Parse benchmark: a synthetic large cluster built from the real REST doc examples.

``synthetic_bodies()`` returns serialised bodies for 10,000 nodes, 5,000
running apps (three resourceRequests each) and 100,000 containers (the RM
``.../appattempts/{id}/containers`` shape, 20 per app, container 1 the AM),
plus the cluster info / metrics / scheduler examples. Every item is a copy of
a real example item with its ids, sizes and times varied.

Run ``python bench/bench_parse.py`` to print, per body and in total, the median
of 5 runs of ``json.loads`` alone and of ``json.loads`` + ``parse_*``, the
ratio, and peak memory (tracemalloc of one run, and the process max RSS).
"""

from __future__ import annotations

import copy
import json
import os
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.snapshot import build_snapshot
from yarn_advisor.connectors import parse_rm
from yarn_advisor.connectors.http import decode_json

N_NODES = 10_000
N_APPS = 5_000
CONTAINERS_PER_APP = 20  # 100,000 containers
RUNS = 5
CLUSTER_TS = 1531404209605
QUEUES = ("a", "b", "c")

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


def _nodes() -> dict[str, Any]:
    template = _example("rm__13")["node"]
    cs_leaf = _example("rm__03")["scheduler"]["schedulerInfo"]["queues"]["queue"][0]
    res_template = cs_leaf["resourcesUsed"]
    nodes = []
    for i in range(N_NODES):
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


def _apps() -> dict[str, Any]:
    template = _example("rm__06")["apps"]["app"][0]
    apps = []
    for i in range(N_APPS):
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
            rr["resourceName"] = f"worker{(i * 7) % N_NODES:05d}.domain.com"
        app["resourceRequests"] = requests
        apps.append(app)
    return {"apps": {"app": apps}}


def _containers() -> dict[str, Any]:
    template = _example("rm__10")["containers"]["container"][0]
    containers = []
    for i in range(N_APPS * CONTAINERS_PER_APP):
        app, n = divmod(i, CONTAINERS_PER_APP)
        cid = f"container_e01_{CLUSTER_TS}_{app + 1:04d}_01_{n + 1:06d}"
        node = f"worker{(i * 13) % N_NODES:05d}.domain.com"
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


def synthetic_bodies() -> dict[str, bytes]:
    """Serialised bodies of a synthetic 10k-node cluster, keyed like :data:`PARSERS`."""
    bodies: dict[str, Any] = {
        "cluster_info": _example("rm__01"),
        "cluster_metrics": _example("rm__02"),
        "scheduler": _example("rm__03"),
        "nodes": _nodes(),
        "apps": _apps(),
        "containers": _containers(),
    }
    return {name: json.dumps(body).encode() for name, body in bodies.items()}


def _median(fn: Callable[[], object]) -> tuple[float, float]:
    """Median (wall seconds, process CPU seconds) of RUNS calls of ``fn``.
    CPU time is the steadier figure on a shared machine."""
    wall, cpu = [], []
    for _ in range(RUNS):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _loads_and_parse(raw: bytes, parse: Callable[[Any], object]) -> object:
    return parse(json.loads(raw))


def parse_and_build(bodies: dict[str, bytes]) -> Snapshot:
    """One cycle's decode (as the connectors do it) + parse + Snapshot build."""
    return build_from_decoded({name: decode_json(raw.decode(), name)
                               for name, raw in bodies.items()})


def build_from_decoded(decoded: dict[str, Any]) -> Snapshot:
    """Parse already-decoded bodies and build the Snapshot (what the parse
    functions' contract covers: they take decoded JSON)."""
    parsed = {name: PARSERS[name](body) for name, body in decoded.items()}
    sched_type, queues = parsed["scheduler"]  # type: ignore[misc]
    return build_snapshot(
        taken_at=0, rm_url="http://rm:8088", cluster=parsed["cluster_info"],  # type: ignore[arg-type]
        metrics=parsed["cluster_metrics"], scheduler_type=sched_type,  # type: ignore[arg-type]
        queues=queues, nodes=parsed["nodes"], apps=parsed["apps"],  # type: ignore[arg-type]
        containers=parsed["containers"],  # type: ignore[arg-type]
    )


def main() -> None:
    bodies = synthetic_bodies()
    print(f"median of {RUNS} runs; seconds of process CPU time (wall clock in brackets)")
    print(f"{'body':<16}{'MB':>6}{'loads':>16}{'loads+parse':>18}{'ratio':>7}")
    tot_loads = [0.0, 0.0]
    tot_both = [0.0, 0.0]
    for name, raw in bodies.items():
        parse = PARSERS[name]
        loads = _median(partial(json.loads, raw))
        both = _median(partial(_loads_and_parse, raw, parse))
        for i in (0, 1):
            tot_loads[i] += loads[i]
            tot_both[i] += both[i]
        print(
            f"{name:<16}{len(raw) / 1e6:>6.1f}{loads[1]:>8.3f} ({loads[0]:5.3f})"
            f"{both[1]:>10.3f} ({both[0]:5.3f}){both[1] / loads[1]:>7.2f}"
        )
    size = sum(map(len, bodies.values())) / 1e6
    print(
        f"{'total':<16}{size:>6.1f}{tot_loads[1]:>8.3f} ({tot_loads[0]:5.3f})"
        f"{tot_both[1]:>10.3f} ({tot_both[0]:5.3f}){tot_both[1] / tot_loads[1]:>7.2f}"
    )
    print(f"parse alone (total): {tot_both[1] - tot_loads[1]:.3f} s CPU")
    decoded_all = {name: json.loads(raw) for name, raw in bodies.items()}
    built = _median(partial(build_from_decoded, decoded_all))
    del decoded_all
    full = _median(partial(parse_and_build, bodies))
    print(f"parse + build_snapshot from decoded bodies: {built[1]:.3f} s CPU ({built[0]:.3f} wall)"
          f"; {built[1] / tot_loads[1]:.2f}x a bare json.loads of the same bytes  [target <= 2 s]")
    print(f"decode_json + parse + build_snapshot (one cycle): {full[1]:.3f} s CPU "
          f"({full[0]:.3f} wall); {full[1] / tot_loads[1]:.2f}x a bare json.loads")

    tracemalloc.start()
    decoded = {name: json.loads(raw) for name, raw in bodies.items()}
    results = [PARSERS[name](body) for name, body in decoded.items()]
    results.append(parse_and_build(bodies))
    _, peak = tracemalloc.get_traced_memory()
    del decoded
    kept, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del results
    max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak traced memory, all bodies decoded + parsed + snapshot: {peak / 2**20:.0f} MiB")
    print(f"retained by the parsed model objects alone: {kept / 2**20:.0f} MiB")
    print(f"process max RSS (incl. building the bodies): {max_rss_mb:.0f} MiB")


if __name__ == "__main__":
    main()
