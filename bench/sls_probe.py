"""First figures of the advisor's setting at scale: the standard trace on SLS, advisor off.

Starts SLS (tests/sls/slsrun.py: the real RM and CapacityScheduler, 500
simulated nodes on 20 racks by default) and runs the standard trace (real
Rumen job shapes, ~0.9 offered load, arrivals over 7 minutes) to completion
with no advisor. Printed (definitions in tests/sls/slswatch.py):

* makespan, mean / median / p95 job completion time, from the RM's own
  startedTime and finishedTime of every trace application;
* mean allocated utilization (vcores and memory) over the makespan, and per
  minute, from /ws/v1/cluster/metrics sampled every --sample-s seconds;
* the cost of one advisor sense cycle at this size, measured --cycles times
  spread over the run: wall seconds, bytes and requests fetched (counted by a
  recorder on the project's own HTTP client), and the SLS JVM's CPU during the
  cycle against the 10 s before it (the RM's extra CPU per cycle). The sensor
  reads what SLS serves: NM JMX and MapReduce AMs are off (SLS has neither;
  with them on a cycle spends ~10 s on refused NM connections).

Start-up seconds and peak RSS of the SLS JVM are printed too. One run takes
~12 minutes, each on a fresh SLS; with --runs N the figures are medians over
the runs (makespan and JCT vary with this shared machine's load).

    python bench/sls_probe.py [--runs 1] [--nodes 500] [--load 0.9] [--cycles 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sls"))

from slsrun import SlsCluster  # noqa: E402
from slswatch import Sampler, figures, utilization_profile  # noqa: E402
from workload import TraceSpec, summary_dict  # noqa: E402

from yarn_advisor.advisor.loop.daemon import Sensor  # noqa: E402
from yarn_advisor.advisor.loop.wiring import build_sensor  # noqa: E402
from yarn_advisor.config.schema import load  # noqa: E402

QUIET_S = 10.0  # JVM CPU measured this long before each cycle, as its baseline


class ByteCounter:
    """A connectors.http Recorder that only counts what came back."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.bytes = 0

    def record(self, method: str, url: str, status: int, content_type: str, body: str) -> None:
        with self.lock:
            self.requests += 1
            self.bytes += len(body.encode())

    def take(self) -> tuple[int, int]:
        with self.lock:
            out = (self.requests, self.bytes)
            self.requests = self.bytes = 0
            return out


def sls_sensor(rm_url: str, counter: ByteCounter) -> Sensor:
    cfg = load(None, {"rm": {"urls": [rm_url]},
                      "sense": {"nm_jmx": {"enabled": False}, "mapreduce": {"enabled": False}}})
    return build_sensor(cfg, counter)


def measure_cycle(cluster: SlsCluster, sensor: Sensor, counter: ByteCounter) -> dict[str, Any]:
    cpu0 = cluster.cpu_s()
    time.sleep(QUIET_S)
    cpu1 = cluster.cpu_s()
    counter.take()
    t0 = time.monotonic()
    snap = sensor.sense(int(time.time() * 1000))
    wall = time.monotonic() - t0
    cpu2 = cluster.cpu_s()
    requests, nbytes = counter.take()
    quiet_rate = (cpu1 - cpu0) / QUIET_S
    return {"at_s": round((time.time() * 1000 - cluster.trace_zero_ms) / 1000),
            "seconds": round(wall, 2), "requests": requests, "bytes": nbytes,
            "nodes": len(snap.nodes), "live_apps": len(snap.apps),
            "containers": len(snap.containers),
            "rm_cpu_percent_quiet": round(100 * quiet_rate, 1),
            "rm_cpu_percent_during": round(100 * (cpu2 - cpu1) / wall, 1) if wall else 0.0,
            "rm_extra_cpu_s": round(max(0.0, (cpu2 - cpu1) - quiet_rate * wall), 2)}


def median_of(rows: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 2) if rows else 0.0


def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="yarn-sls-probe-"))
    spec = TraceSpec(window_s=args.window, load=args.load, seed=args.seed)
    cluster = SlsCluster(workdir, nodes=args.nodes, racks=args.racks, trace=spec,
                         heap_mb=args.heap_mb)
    cluster.start()
    counter = ByteCounter()
    sensor = sls_sensor(cluster.rm_url, counter)
    cycles: list[dict[str, Any]] = []
    rss = [cluster.rss_mb()]
    # cycles spread over the arrival window, where the RM is busiest
    due = [spec.window_s * (i + 0.5) / args.cycles for i in range(args.cycles)]
    try:
        with Sampler(cluster, every_s=args.sample_s) as sampler:
            deadline = time.monotonic() + args.timeout
            while not cluster.finished():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"trace not finished after {args.timeout}s")
                since_zero = time.time() - cluster.trace_zero_ms / 1000
                if due and since_zero >= due[0] - QUIET_S:
                    due.pop(0)
                    cycles.append(measure_cycle(cluster, sensor, counter))
                    print(f"sense cycle: {cycles[-1]}", file=sys.stderr, flush=True)
                else:
                    time.sleep(2)
                rss.append(cluster.rss_mb())
        fig = figures(cluster, sampler.samples)
        profile = utilization_profile(sampler.samples, cluster.trace_zero_ms)
    finally:
        cluster.stop()
    return {
        "setup": {"nodes": args.nodes, "racks": args.racks, "heap_mb": args.heap_mb,
                  "sample_s": args.sample_s, "workdir": str(workdir)},
        "trace": summary_dict(cluster.summary) if cluster.summary else {},
        "startup_s": round(cluster.start_s, 1),
        "rss_mb_max": max(rss),
        "figures": fig.as_dict(),
        "per_minute": profile,
        "sense": {"cycles": cycles,
                  "median_seconds": median_of(cycles, "seconds"),
                  "median_bytes": median_of(cycles, "bytes"),
                  "median_requests": median_of(cycles, "requests"),
                  "median_rm_extra_cpu_s": median_of(cycles, "rm_extra_cpu_s"),
                  "median_rm_cpu_percent_quiet": median_of(cycles, "rm_cpu_percent_quiet"),
                  "median_rm_cpu_percent_during": median_of(cycles, "rm_cpu_percent_during")},
    }


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run's shape with every number of figures/sense the median over runs."""
    out = dict(runs[0])
    out["runs"] = runs
    out["startup_s"] = statistics.median(r["startup_s"] for r in runs)
    out["rss_mb_max"] = max(r["rss_mb_max"] for r in runs)
    for part in ("figures", "sense"):
        out[part] = {k: (statistics.median(r[part][k] for r in runs)
                         if isinstance(v, int | float) else v)
                     for k, v in runs[0][part].items()}
    out["sense"]["cycles"] = [c for r in runs for c in r["sense"]["cycles"]]
    return out


def report(r: dict[str, Any]) -> None:
    f, s, t = r["figures"], r["sense"], r["trace"]
    if "runs" in r:
        print(f"medians of {len(r['runs'])} runs (per-minute profile: first run)")
    print(f"SLS: {r['setup']['nodes']} nodes, up in {r['startup_s']}s, "
          f"peak RSS {r['rss_mb_max']} MiB (-Xmx{r['setup']['heap_mb']}m)")
    print(f"trace: {t['jobs']} jobs, {t['tasks']} tasks, offered load {t['offered_load']}, "
          f"last arrival {t['last_arrival_s']}s")
    print(f"makespan {f['makespan_s']}s (last finish {f['end_after_trace_zero_s']}s after "
          f"trace start); {f['finished']} finished, {f['not_finished']} not")
    print(f"JCT mean {f['mean_jct_s']}s, median {f['median_jct_s']}s, p95 {f['p95_jct_s']}s")
    print(f"allocated utilization over the makespan: vcores {f['mean_alloc_vcores']:.1%}, "
          f"memory {f['mean_alloc_mb']:.1%}; mean pending vcores {f['mean_pending_vcores']}; "
          f"SLS JVM CPU {f['rm_cpu_percent']}% of one core")
    for b in r["per_minute"]:
        print(f"  {b['from_s']:>4}s+  vcores {b['alloc_vcores']:.1%}  pending "
              f"{b['pending_vcores']:>6}  running apps {b['apps_running']}")
    print(f"one sense cycle ({len(s['cycles'])} measured, median): {s['median_seconds']}s, "
          f"{s['median_requests']:.0f} requests, {s['median_bytes'] / 1e6:.2f} MB; RM JVM "
          f"{s['median_rm_cpu_percent_quiet']}% CPU quiet -> {s['median_rm_cpu_percent_during']}%"
          f" during the cycle, +{s['median_rm_extra_cpu_s']} CPU-s per cycle")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--racks", type=int, default=20)
    ap.add_argument("--load", type=float, default=TraceSpec.load)
    ap.add_argument("--window", type=int, default=TraceSpec.window_s)
    ap.add_argument("--seed", type=int, default=TraceSpec.seed)
    ap.add_argument("--heap-mb", type=int, default=1024)
    ap.add_argument("--cycles", type=int, default=5, help="sense cycles measured during the run")
    ap.add_argument("--sample-s", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    runs = [run(args) for _ in range(args.runs)]
    result = runs[0] if len(runs) == 1 else medians(runs)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
