"""Speed of the simulator on a day of Facebook jobs (run: python bench/bench_simulator.py).

The workload is SWIM's FB-2009 day (24 one-hour samples, 5,894 jobs, about
206,000 maps and 22,500 reduces) on its 600 nodes, read by
``readers.swim`` (tasks and times as that module documents), under the
baseline CapacityScheduler. Prints, per run and as the median of ``--runs``
runs: wall time, events processed, events per second and simulated seconds
per wall second. With ``--snapshot-every S`` each run also builds the
advisor's Snapshot every S simulated seconds (what the sidecar mode will do
before its engine runs) and reports how long those took: the simulator's
share of a sidecar run. ``--json`` prints one object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.swim import read_swim
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.snapshot import snapshot

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swim"
TRACE = DATA / "FB-2009_samples_24_times_1hr_0.tsv"


def one_run(args: argparse.Namespace) -> dict[str, Any]:
    wl = read_swim(args.trace, TraceOptions(nodes=args.nodes), max_jobs=args.max_jobs)
    sim = Simulation(wl, scheduler=args.scheduler)
    snap_s: list[float] = []
    sizes: list[int] = []
    if args.snapshot_every:
        def hook(s: Simulation) -> None:
            t = time.perf_counter()
            snap = snapshot(s)
            snap_s.append(time.perf_counter() - t)
            sizes.append(len(snap.tasks))
        sim.every(int(args.snapshot_every * 1000), hook)
    started = time.perf_counter()
    report = sim.run()
    wall = time.perf_counter() - started
    out: dict[str, Any] = {
        "wall_s": round(wall, 3), "events": report.events,
        "events_per_s": round(report.events / wall) if wall else 0,
        "sim_s": report.makespan_s, "sim_s_per_wall_s": round(report.makespan_s / wall, 1),
        "jobs": report.jobs, "jobs_finished": report.jobs_finished,
        "tasks": sum((j.maps.tasks if j.maps else 0) + (j.reduces.tasks if j.reduces else 0)
                     for j in wl.jobs),
        "makespan_s": report.makespan_s, "mean_jct_s": report.mean_jct_s,
        "locality_rate": report.locality_rate,
    }
    if args.snapshot_every:
        out |= {"snapshots": len(snap_s), "snapshot_s_total": round(sum(snap_s), 3),
                "snapshot_ms_mean": round(1000 * statistics.mean(snap_s), 2) if snap_s else 0,
                "snapshot_ms_max": round(1000 * max(snap_s), 2) if snap_s else 0,
                "snapshot_tasks_max": max(sizes, default=0)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", type=Path, default=TRACE)
    ap.add_argument("--nodes", type=int, default=600)
    ap.add_argument("--scheduler", default="capacity", choices=("capacity", "fair", "fifo"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-jobs", type=int, default=0)
    ap.add_argument("--snapshot-every", type=float, default=0.0, metavar="S")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    runs = []
    for i in range(args.runs):
        runs.append(one_run(args))
        if not args.json:
            r = runs[-1]
            extra = (f", {r['snapshots']} snapshots {r['snapshot_s_total']} s "
                     f"(mean {r['snapshot_ms_mean']} ms, max {r['snapshot_ms_max']} ms)"
                     if args.snapshot_every else "")
            print(f"run {i + 1}: {r['wall_s']} s wall, {r['events']} events "
                  f"({r['events_per_s']}/s), {r['sim_s']} s simulated{extra}", flush=True)
    walls = [r["wall_s"] for r in runs]
    summary = {
        "trace": args.trace.name, "nodes": args.nodes, "scheduler": args.scheduler,
        "runs": args.runs, "wall_s_median": statistics.median(walls), "wall_s_runs": walls,
        "events": runs[0]["events"],
        "events_per_s_median": statistics.median(r["events_per_s"] for r in runs),
        "jobs": runs[0]["jobs"], "jobs_finished": runs[0]["jobs_finished"],
        "tasks": runs[0]["tasks"], "sim_s": runs[0]["sim_s"],
        "makespan_s": runs[0]["makespan_s"], "mean_jct_s": runs[0]["mean_jct_s"],
        "locality_rate": runs[0]["locality_rate"],
        "same_result_every_run": len({(r["makespan_s"], r["events"]) for r in runs}) == 1,
    }
    if args.snapshot_every:
        summary |= {k: statistics.median(r[k] for r in runs) for k in (
            "snapshots", "snapshot_s_total", "snapshot_ms_mean", "snapshot_ms_max",
            "snapshot_tasks_max")}
        summary["snapshot_every_s"] = args.snapshot_every
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(f"median of {args.runs}: {summary['wall_s_median']} s wall, "
              f"{summary['events_per_s_median']} events/s; {summary['jobs']} jobs, "
              f"{summary['tasks']} tasks, {summary['sim_s']} s simulated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
