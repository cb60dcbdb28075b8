"""The RM plug-in's cost and placement in SLS's real RM (500+ simulated nodes), with and without.

Each run starts a fresh SLS (tests/sls: the real 3.4.2 RM and CapacityScheduler, 500
nodes on 20 racks by default) on the same trace (the tests' one: the vendored Gridmix
sources, maps asking for the node their real host maps to), in one of these modes,
alternating (the order rotates every round):

- ``stock``: SLS as shipped, no jar;
- ``idle``: the jar on the RM's classpath (its allocator for every application) with no
  table (YARN's default for every call): the plug-in's own cost on YARN's placements;
- ``admit``: the jar and a served table whose rule on every leaf queue allows every
  node (ANACRAC's host rule, all hosts): every attempt is decided and let through, so
  YARN places as in ``stock`` and the difference is the deciding's cost;
- ``local_only``: the jar and Matchmaking's ``local_only`` on every leaf queue, as the
  advisor's Matchmaking publishes it (advisor/policies/matchmaking/decisions.py: a skip
  budget of one heartbeat round, ``rounds`` x RUNNING nodes): placements change, so its
  pass time is that of other placements, not the plug-in's cost.

Measuring starts ``--settle`` s after SLS is ready and, with a table, once the plug-in
applies it (its MBean says ``ok``; it starts with the first application).

Time per allocation pass: the CapacityScheduler's own metrics
(``Hadoop:service=ResourceManager,name=CapacitySchedulerMetrics``: ``NodeUpdate`` is one
NODE_UPDATE event, the pass that places containers on that node; ``Allocate`` is one
``allocateContainersToNode`` that placed something; both timed with ``System.nanoTime``
by the RM), read every ``--sample`` s for ``--measure`` s after the trace starts. The RM
serves each rate's mean since its previous metrics snapshot beside the cumulative count,
so a run's figure is the count-weighted mean of the snapshots seen (microseconds).

Placement SLS can judge: node-local / rack-local / off-switch containers allocated (the
root queue's aggregate counters, JMX QueueMetrics) over the same span.

    python bench/bench_plugin_sls.py [--runs 3] [--modes stock,idle,admit,local_only]
        [--nodes 500] [--measure 90] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "sls"))
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from _rounds import rotated  # noqa: E402
from rmplugin import MBEAN, TableServer, build, rm_conf  # noqa: E402
from slsrun import SlsCluster  # noqa: E402
from workload import FIXTURES, TEST_SOURCE_FILES, TraceSpec  # noqa: E402

from yarn_advisor.advisor.model.decision_table import (  # noqa: E402
    Allow,
    Decisions,
    DecisionTable,
    LocalOnly,
    Match,
    Reason,
    RequestDecision,
    Rule,
)

CS_METRICS = "Hadoop:service=ResourceManager,name=CapacitySchedulerMetrics"
ROOT_QUEUE = "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root"
QUEUES = ("default", "etl", "adhoc")
MODES = ("stock", "idle", "admit", "local_only")
RATES = ("NodeUpdate", "Allocate")
LOCALITY = ("AggregateNodeLocalContainersAllocated", "AggregateRackLocalContainersAllocated",
            "AggregateOffSwitchContainersAllocated")


def table(rules: tuple[Rule, ...]) -> DecisionTable:
    return DecisionTable(seq=1, generated_at_ms=int(time.time() * 1000), ttl_ms=3_600_000,
                         leader="bench", decisions=Decisions(rules=rules))


def local_only(nodes: int, rounds: int = 1) -> DecisionTable:
    """Matchmaking's table part for every leaf queue (its ``plan``, no markers)."""
    decision = (RequestDecision(None, local_only=LocalOnly(
        Reason.MATCHMAKING_NONLOCAL, frozenset(), max(1, rounds * nodes))),)
    return table(tuple(Rule(Match(queue=q), decision) for q in QUEUES))


def admit_all(node_ids: frozenset[str]) -> DecisionTable:
    """A host rule on every leaf queue that allows every node: decides, never vetoes."""
    decision = (RequestDecision(None, allow=Allow(node_ids, Reason.ANACRAC_HOST)),)
    return table(tuple(Rule(Match(queue=q), decision) for q in QUEUES))


def bean(cluster: SlsCluster, name: str) -> dict[str, Any]:
    beans = cluster.get(f"/jmx?qry={name}")["beans"]
    return dict(beans[0]) if beans else {}


def weighted_us(samples: list[dict[str, Any]], rate: str) -> float | None:
    """Count-weighted mean of the rate's per-snapshot means over the samples (us)."""
    num, avg = f"{rate}NumOps", f"{rate}AvgTime"
    total, weight = 0.0, 0
    for prev, cur in itertools.pairwise(samples):
        ops = int(cur.get(num, 0)) - int(prev.get(num, 0))
        if ops > 0:
            total += float(cur.get(avg, 0.0)) * ops
            weight += ops
    return total / weight / 1000 if weight else None


def start_sls(cluster: SlsCluster, tries: int = 3) -> None:
    """Start SLS; a start that lost a free port to another process on this machine
    (BindException: SLS exits during start-up) is tried again on new ports."""
    for attempt in range(1, tries + 1):
        try:
            cluster.start()
            return
        except RuntimeError as exc:
            if attempt == tries or "BindException" not in str(exc):
                raise
            print(f"SLS start {attempt} lost a port; again", file=sys.stderr)
            cluster.ports.clear()


def one_run(mode: str, args: argparse.Namespace, work: Path,
            server: TableServer) -> dict[str, Any]:
    conf: dict[str, object] = {}
    classpath: tuple[str, ...] = ()
    if mode != "stock":
        classpath = (str(build()),)
        # a table of 500 node ids; a loaded machine serves it slowly
        conf = rm_conf(url=server.url, timeout_ms=3000)
    server.serve(local_only(args.nodes) if mode == "local_only" else None)
    workdir = Path(tempfile.mkdtemp(prefix=f"sls-{mode}-", dir=work))
    cluster = SlsCluster(workdir, nodes=args.nodes, racks=args.racks,
                         trace=TraceSpec(window_s=args.window, sources=TEST_SOURCE_FILES,
                                         data=FIXTURES),
                         rm_classpath=classpath, extra_conf=conf)
    start_sls(cluster)
    try:
        ready = time.monotonic()
        if mode == "admit":
            nodes = cluster.get("/ws/v1/cluster/nodes")["nodes"]["node"]
            server.serve(admit_all(frozenset(n["id"] for n in nodes)))
        applying = mode in ("stock", "idle")
        while time.monotonic() < ready + args.settle or not applying:
            if not applying:
                applying = bean(cluster, MBEAN).get("TableStatus") == "ok"
                if time.monotonic() > ready + 300:
                    raise RuntimeError(f"{mode}: the plug-in did not take the table in 300 s")
            time.sleep(0.5)
        samples: list[dict[str, Any]] = []
        start = bean(cluster, ROOT_QUEUE)
        deadline = time.monotonic() + args.measure
        while time.monotonic() < deadline:
            samples.append(bean(cluster, CS_METRICS))
            time.sleep(args.sample)
        samples.append(bean(cluster, CS_METRICS))
        end = bean(cluster, ROOT_QUEUE)
        plugin = bean(cluster, MBEAN) if mode != "stock" else {}
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    placed = {k: int(end.get(k, 0)) - int(start.get(k, 0)) for k in LOCALITY}
    containers = sum(placed.values())
    out: dict[str, Any] = {"mode": mode, "start_s": round(cluster.start_s, 1),
                           "load_1m": os.getloadavg()[0]}
    for rate in RATES:
        out[f"{rate.lower()}_us"] = weighted_us(samples, rate)
        out[f"{rate.lower()}_ops"] = (int(samples[-1].get(f"{rate}NumOps", 0))
                                      - int(samples[0].get(f"{rate}NumOps", 0)))
    out |= {"containers": containers,
            "node_local_rate": placed[LOCALITY[0]] / containers if containers else None,
            "rack_local": placed[LOCALITY[1]], "off_switch": placed[LOCALITY[2]],
            "node_local": placed[LOCALITY[0]]}
    if plugin:
        out["plugin"] = {k: plugin.get(k) for k in (
            "TableStatus", "Admits", "Vetoes", "Fallbacks", "PollsOk", "PollsFailed")}
    return out


FIELDS = ("nodeupdate_us", "allocate_us", "nodeupdate_ops", "allocate_ops", "containers",
          "node_local_rate")


def medians(rs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(rs)}
    for k in FIELDS:
        vals = [r[k] for r in rs if r.get(k) is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per mode (>= 3 for medians)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated of {MODES}")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--racks", type=int, default=20)
    ap.add_argument("--window", type=int, default=60, help="the trace's arrival window (s)")
    ap.add_argument("--measure", type=float, default=90, help="seconds measured per run")
    ap.add_argument("--settle", type=float, default=20,
                    help="seconds after SLS is ready before measuring")
    ap.add_argument("--sample", type=float, default=2.0, help="seconds between JMX reads")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if not modes or any(m not in MODES for m in modes):
        ap.error(f"--modes: choose from {', '.join(MODES)}")
    if args.runs < 1 or args.nodes < 1 or args.measure <= 0 or args.sample <= 0:
        ap.error("--runs and --nodes must be >= 1, --measure and --sample > 0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop SLS on TERM too
    work = Path(tempfile.mkdtemp(prefix="bench-plugin-sls-"))
    server = TableServer()
    runs: list[dict[str, Any]] = []
    try:
        for i in range(args.runs):
            for mode in rotated(modes, i):
                r = one_run(mode, args, work, server) | {"round": i + 1}
                runs.append(r)
                print(f"round {i + 1} {mode:>6}: node update {r['nodeupdate_us']} us "
                      f"({r['nodeupdate_ops']} passes), allocate {r['allocate_us']} us "
                      f"({r['allocate_ops']}), {r['containers']} containers, node-local "
                      f"{r['node_local']} rack-local {r['rack_local']} off-switch "
                      f"{r['off_switch']}; load {r['load_1m']:.0f}; {r.get('plugin', '')}",
                      file=sys.stderr, flush=True)
    finally:
        server.kill()
        shutil.rmtree(work, ignore_errors=True)
    summary: dict[str, Any] = {m: medians([r for r in runs if r["mode"] == m]) for m in modes}
    base = summary.get("stock", {}).get("nodeupdate_us")
    for m in modes:
        us = summary[m].get("nodeupdate_us")
        summary[m]["nodeupdate_vs_stock"] = us / base - 1 if base and us is not None else None
    summary |= {"nodes": args.nodes, "measure_s": args.measure, "window_s": args.window,
                "runs": runs}
    if args.json:
        print(json.dumps(summary, sort_keys=True))
        return 0
    print(f"{'mode':7} {'node update (us)':>17} {'vs stock':>9} {'allocate (us)':>14} "
          f"{'containers':>11} {'node-local':>11}   medians of {args.runs} runs")
    for m in modes:
        s = summary[m]
        vs, rate = s["nodeupdate_vs_stock"], s["node_local_rate"]
        print(f"{m:7} {s['nodeupdate_us'] or float('nan'):17.1f} "
              f"{'n/a' if vs is None else f'{vs:+.1%}':>9} "
              f"{s['allocate_us'] or float('nan'):14.1f} {s['containers'] or 0:11.0f} "
              f"{'n/a' if rate is None else f'{rate:.1%}':>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
