"""Speed of the simulator on a day of Facebook jobs (run: python bench/bench_simulator.py).

The workload is a SWIM day (default FB-2009: 24 one-hour samples, 5,894 jobs,
about 206,000 maps and 22,500 reduces) on its 600 nodes, read by
``readers.swim`` (tasks and times as that module documents), under the
baseline CapacityScheduler, in each of ``--modes`` (``baseline``: the
scheduler alone; ``sidecar``: the advisor's daemon beside it every cycle).
Prints, per mode, the median of ``--runs`` runs: wall time, events and tasks
processed, events per second and tasks per second (tasks: maps and reduces of
the jobs run; a task run again after a kill counts once), and the CPU time of
the run (``cpu_s``, ``tasks_per_cpu_s``: on a machine shared with other jobs
the wall time measures the load as much as the simulator).

``--before REF`` measures the same runs on git revision REF (a detached
``git worktree`` in a scratch directory, imported in place of this tree) and
on this tree, alternating run by run so both see the same load, and prints
the speed-up (after / before tasks per second). ``--scale 1000,10000,...``
adds the scaling table: the first jobs of the trace up to that many tasks,
per mode. ``--max-jobs`` cuts the trace. With ``--snapshot-every S`` a
baseline run also builds the advisor's Snapshot every S simulated seconds and
reports how long those took. ``--json`` prints one object.

``--days N`` makes the trace N days long: FB-2009's two public days
(``..._0.tsv``, ``..._1.tsv``) taken in turn, each 24 h after the one before
(job ids made unique), so ``--days 7`` is the week; each run is then one fresh
process per mode (``--runs`` is ignored) and also reports its peak resident
memory (``peak_rss_mb``). The scaling table reads its first tasks from that
trace, so ``--days 7 --scale 1000,10000,100000,1000000`` reaches 1 M tasks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.swim import read_swim
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.snapshot import snapshot
from yarn_advisor.simulator.spec import Job, Workload

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "swim"
if not DATA.is_dir():  # a worktree beside the main one
    DATA = Path("/work/shared/data/swim")
TRACE = DATA / "FB-2009_samples_24_times_1hr_0.tsv"
DAY_MS = 24 * 3600 * 1000
MODES = ("baseline", "sidecar")


def _tasks(wl: Workload) -> int:
    return sum((j.maps.tasks if j.maps else 0) + (j.reduces.tasks if j.reduces else 0)
               for j in wl.jobs)


def _first_tasks(wl: Workload, n: int) -> Workload:
    """The first jobs of ``wl`` (in submission order) up to ``n`` tasks."""
    jobs, total = [], 0
    for j in sorted(wl.jobs, key=lambda j: j.submit_ms):
        if total >= n:
            break
        jobs.append(j)
        total += (j.maps.tasks if j.maps else 0) + (j.reduces.tasks if j.reduces else 0)
    return dataclasses.replace(wl, jobs=tuple(jobs))


def one_run(wl: Workload, mode: str, scheduler: str, snapshot_every: float = 0.0
            ) -> dict[str, Any]:
    """One run of ``wl`` in ``mode``: its wall time, speed and result."""
    snap_s: list[float] = []
    cpu0 = time.process_time()
    started = time.perf_counter()
    if mode == "sidecar":
        report, tally, _ = run_sidecar(wl, scheduler)
        cycles = tally.cycles
    else:
        sim = Simulation(wl, scheduler=scheduler)
        if snapshot_every:
            def hook(s: Simulation) -> None:
                t = time.perf_counter()
                snapshot(s)
                snap_s.append(time.perf_counter() - t)
            sim.every(int(snapshot_every * 1000), hook)
        report = sim.run()
        cycles = 0
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    tasks = _tasks(wl)
    out: dict[str, Any] = {
        "mode": mode, "wall_s": round(wall, 3), "events": report.events,
        "events_per_s": round(report.events / wall) if wall else 0,
        "tasks": tasks, "tasks_per_s": round(tasks / wall) if wall else 0,
        "cpu_s": round(cpu, 3), "tasks_per_cpu_s": round(tasks / cpu) if cpu else 0,
        "sim_s": report.makespan_s, "sim_s_per_wall_s": round(report.makespan_s / wall, 1),
        "jobs": report.jobs, "jobs_finished": report.jobs_finished,
        "makespan_s": report.makespan_s, "mean_jct_s": report.mean_jct_s,
        "kills": report.kills, "cycles": cycles,
    }
    if snap_s:
        out |= {"snapshots": len(snap_s), "snapshot_s_total": round(sum(snap_s), 3),
                "snapshot_ms_mean": round(1000 * statistics.mean(snap_s), 2)}
    return out


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each speed figure; the result of the first run, and whether
    every run gave it."""
    first = runs[0]
    out = {k: first[k] for k in ("mode", "events", "tasks", "jobs", "jobs_finished", "sim_s",
                                 "makespan_s", "mean_jct_s", "kills", "cycles")}
    for k in ("wall_s", "events_per_s", "tasks_per_s", "sim_s_per_wall_s", "cpu_s",
              "tasks_per_cpu_s"):
        if all(k in r for r in runs):  # a revision before cpu_s has only the wall
            out[k] = statistics.median(r[k] for r in runs)
    out["wall_s_runs"] = [r["wall_s"] for r in runs]
    out["same_result_every_run"] = len(
        {(r["makespan_s"], r["mean_jct_s"], r["events"]) for r in runs}) == 1
    return out


# --- the revision "before": a worktree imported in place of this tree ----------------
def _shim(tree: Path, into: Path) -> Path:
    """A folder that imports ``yarn_advisor`` from ``tree``: one link per package folder
    of ``tree``'s pyproject (the layout the editable install maps)."""
    dirs = tomllib.loads((tree / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    pkg = into / "yarn_advisor"
    pkg.mkdir(parents=True)
    for name in (tree / dirs["yarn_advisor"]).iterdir():
        (pkg / name.name).symlink_to(name)
    for mod, folder in dirs.items():
        if mod != "yarn_advisor":
            (pkg / mod.split(".", 1)[1]).symlink_to(tree / folder)
    return into


def _child(path: Path | None, argv: list[str]) -> dict[str, Any]:
    """One measurement in a fresh process; ``path``: import the tree linked there."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", *argv]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_simulator: a run failed ({' '.join(cmd)}):\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _before_after(args: argparse.Namespace, cases: list[tuple[str, int]]) -> dict[str, Any]:
    """Every (mode, tasks) case on ``args.before`` and on this tree, run by run
    alternated, in fresh processes."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-simulator-"))
    tree = scratch / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree),
                    args.before], check=True)
    try:
        link = _shim(tree, scratch / "path")
        rows = []
        for mode, n in cases:
            argv = ["--trace", str(args.trace), "--nodes", str(args.nodes), "--scheduler",
                    args.scheduler, "--max-jobs", str(args.max_jobs), "--mode", mode,
                    "--tasks", str(n)]
            before, after = [], []
            for _ in range(args.runs):
                before.append(_child(link, argv))
                after.append(_child(None, argv))
            b, a = _median(before), _median(after)
            rows.append({"mode": mode, "tasks_asked": n, "before": b, "after": a,
                         "speedup": round(a["tasks_per_s"] / b["tasks_per_s"], 2)
                         if b["tasks_per_s"] else None,
                         "speedup_cpu": round(a["tasks_per_cpu_s"] / b["tasks_per_cpu_s"], 2)
                         if b.get("tasks_per_cpu_s") and a.get("tasks_per_cpu_s") else None,
                         "same_result": (b["makespan_s"], b["mean_jct_s"], b["events"])
                         == (a["makespan_s"], a["mean_jct_s"], a["events"])})
            if not args.json:
                r = rows[-1]
                print(f"{mode:8} {b['tasks']:>8} tasks: before {b['wall_s']} s "
                      f"({b['tasks_per_s']} tasks/s, {b['events_per_s']} events/s), after "
                      f"{a['wall_s']} s ({a['tasks_per_s']} tasks/s, {a['events_per_s']} "
                      f"events/s): x{r['speedup']} (CPU x{r['speedup_cpu']}), same result: "
                      f"{r['same_result']}",
                      flush=True)
        return {"before": args.before, "rows": rows}
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       check=False)


def _days(args: argparse.Namespace) -> list[Path]:
    """The trace of each day: ``--trace``, else the two FB-2009 days in turn."""
    if args.days <= 1:
        return [args.trace]
    two = [args.trace, args.trace.with_name(args.trace.name.replace("_0.tsv", "_1.tsv"))]
    return [two[d % 2] for d in range(args.days)]


def _load(args: argparse.Namespace) -> Workload:
    opts = TraceOptions(nodes=args.nodes)
    first = read_swim(args.trace, opts, max_jobs=args.max_jobs)
    if args.days <= 1:
        return first
    jobs: list[Job] = []
    for d, path in enumerate(_days(args)):
        day = read_swim(path, opts, max_jobs=args.max_jobs)
        jobs += [dataclasses.replace(j, id=f"d{d + 1}-{j.id}", submit_ms=j.submit_ms + d * DAY_MS)
                 for j in day.jobs]
    return dataclasses.replace(first, name=f"{first.name} x{args.days} days", jobs=tuple(jobs))


def _peak_rss_mb() -> float:
    """This process's peak resident memory (Linux: ``ru_maxrss`` is in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _long_runs(args: argparse.Namespace, cases: list[tuple[str, int]]) -> dict[str, Any]:
    """Each (mode, tasks) case once, each in a fresh process (its own peak memory)."""
    rows = []
    for mode, n in cases:
        argv = ["--trace", str(args.trace), "--nodes", str(args.nodes), "--scheduler",
                args.scheduler, "--max-jobs", str(args.max_jobs), "--mode", mode,
                "--tasks", str(n), "--days", str(args.days)]
        started = time.perf_counter()
        row = _child(None, argv) | {"tasks_asked": n,
                                    "process_wall_s": round(time.perf_counter() - started, 1)}
        rows.append(row)
        if not args.json:
            print(f"{mode:8} {row['tasks']:>8} tasks {row['jobs']:>6} jobs: {row['wall_s']} s "
                  f"wall ({row['process_wall_s']} s with reading), {row['events']} events "
                  f"({row['events_per_s']}/s), {row['tasks_per_s']} tasks/s, {row['cpu_s']} s "
                  f"CPU, {row['sim_s']} s simulated, peak {row['peak_rss_mb']} MB", flush=True)
    return {"trace": args.trace.name, "days": args.days, "nodes": args.nodes, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", type=Path, default=TRACE)
    ap.add_argument("--nodes", type=int, default=600)
    ap.add_argument("--scheduler", default="capacity", choices=("capacity", "fair", "fifo"))
    ap.add_argument("--modes", default="baseline,sidecar")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-jobs", type=int, default=0)
    ap.add_argument("--scale", default="", metavar="N,N,...",
                    help="the scaling table: the first jobs up to N tasks, per mode")
    ap.add_argument("--before", default="", metavar="REF",
                    help="also measure git revision REF (e.g. main) and print the speed-up")
    ap.add_argument("--snapshot-every", type=float, default=0.0, metavar="S")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="baseline", help=argparse.SUPPRESS)
    ap.add_argument("--tasks", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--days", type=int, default=1,
                    help="the trace repeated to N days (FB-2009's two days in turn)")
    args = ap.parse_args(argv)
    if not args.trace.is_file():
        print(f"bench_simulator: {args.trace}: no such file", file=sys.stderr)
        return 2
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        print(f"bench_simulator: --modes takes {', '.join(MODES)}", file=sys.stderr)
        return 2
    try:
        scale = [int(x) for x in args.scale.split(",") if x]
    except ValueError:
        print("bench_simulator: --scale takes task counts, e.g. 1000,10000", file=sys.stderr)
        return 2
    missing = [p for p in _days(args) if not p.is_file()]
    if args.days < 1 or missing:
        print(f"bench_simulator: --days {args.days}: "
              + (f"{missing[0]}: no such file" if missing else "takes 1 or more"),
              file=sys.stderr)
        return 2
    if args.one:  # one measurement (a child of --before or of --days)
        wl = _load(args)
        if args.tasks:
            wl = _first_tasks(wl, args.tasks)
        print(json.dumps(one_run(wl, args.mode, args.scheduler) | {"peak_rss_mb": _peak_rss_mb()}))
        return 0
    cases = [(m, 0) for m in modes] + [(m, n) for n in scale for m in modes]
    if args.days > 1:
        if args.before:
            print("bench_simulator: --days runs this tree only (no --before)", file=sys.stderr)
            return 2
        long = _long_runs(args, cases)
        if args.json:
            print(json.dumps(long, sort_keys=True))
        return 0
    if args.before:
        out = _before_after(args, cases) | {"trace": args.trace.name, "nodes": args.nodes,
                                            "runs": args.runs}
        if args.json:
            print(json.dumps(out, sort_keys=True))
        return 0
    full = _load(args)
    summary: dict[str, Any] = {"trace": args.trace.name, "nodes": args.nodes,
                               "scheduler": args.scheduler, "runs": args.runs,
                               "modes": {}, "scale": []}
    for mode, n in cases:
        wl = _first_tasks(full, n) if n else full
        runs = [one_run(wl, mode, args.scheduler, args.snapshot_every if mode == "baseline"
                        else 0.0) for _ in range(args.runs)]
        med = _median(runs)
        if n:
            summary["scale"].append(med | {"tasks_asked": n})
        else:
            summary["modes"][mode] = med
        if not args.json:
            print(f"{mode:8} {med['tasks']:>8} tasks {med['jobs']:>6} jobs: median of "
                  f"{args.runs} {med['wall_s']} s wall, {med['events']} events "
                  f"({med['events_per_s']}/s), {med['tasks_per_s']} tasks/s, "
                  f"{med['cpu_s']} s CPU, "
                  f"{med['sim_s']} s simulated", flush=True)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
