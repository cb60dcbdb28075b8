"""OPERA's relief through the RM: the overcommit timeout swept on OPERA's workloads.

When OPERA lowers a node it lent (relief), the node may hold more than its new
size. What happens then is the RM's: with ``actuator.overcommit_timeout_ms``
-1 (no timeout) it only stops placing containers there until enough finish;
with a timeout T >= 0 it kills the overcommitted node's containers (non-AM,
then the newest first) at the node's first heartbeat T or more after the write
(T = 0: at the write), as Hadoop 3.4.2's ``signalContainersIfOvercommitted``
does; the simulator's RM models exactly that (``Simulation.resize_node``).

For each workload (``opera_table2_mr``, ``opera_table2_mr_spark``, the paper
tables' OPERA rows) and each relief policy, the baseline (the workload's own
scheduler) and the sidecar at every timeout: mean JCT (all jobs, and the
MapReduce jobs' as Table II's MR + Spark rows state it) as % vs the baseline,
makespan, kills (overcommit kills apart), wasted container-seconds and failed
jobs. Deterministic (simulated time): one run per configuration.

    python bench/opera_overcommit.py [--json] [--timeouts -1,0,10000,...]
        [--policies PRESERVE,NEUTRAL,AGGRESSIVE] [--workload NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.workload import load_workload

WORKLOADS = ("opera_table2_mr", "opera_table2_mr_spark")
ROOT = Path(__file__).resolve().parents[1] / "examples" / "workloads"
TIMEOUTS_MS = (-1, 0, 10_000, 30_000, 60_000, 120_000)
POLICIES = ("PRESERVE", "NEUTRAL", "AGGRESSIVE")


def mr_jct(r: Report) -> float:
    """Mean completion time of the MapReduce jobs (the Spark pathSim ones left out)."""
    times = [t["finish_s"] - t["submit_s"] for j, t in r.job_times.items()
             if not j.startswith("pathsim") and t.get("finish_s") is not None]
    return sum(times) / len(times) if times else 0.0


def pct(value: float, base: float) -> float | None:
    return None if not base else round(100.0 * (value - base) / base, 1)


def figures(r: Report, base: Report | None) -> dict[str, Any]:
    """One run's figures; the gains against ``base`` when given."""
    out: dict[str, Any] = {
        "mean_jct_s": round(r.mean_jct_s, 1), "mr_mean_jct_s": round(mr_jct(r), 1),
        "makespan_s": round(r.makespan_s, 1), "kills": r.kills,
        "overcommit_kills": r.kills_by_reason.get("OVERCOMMIT", 0),
        "wasted_container_s": round(r.wasted_container_s, 1),
        "jobs_failed": r.jobs_failed, "jobs_finished": r.jobs_finished,
        "stalled": r.stalled}
    if base is not None:
        out["jct_pct"] = pct(r.mean_jct_s, base.mean_jct_s)
        out["mr_jct_pct"] = pct(mr_jct(r), mr_jct(base))
        out["makespan_pct"] = pct(r.makespan_s, base.makespan_s)
        out["failed_beyond_baseline"] = max(0, r.jobs_failed - base.jobs_failed)
    return out


def sweep(name: str, policies: tuple[str, ...], timeouts: tuple[int, ...]) -> dict[str, Any]:
    """The baseline and the sidecar at each (relief policy, timeout) on one workload."""
    wl = load_workload(ROOT / f"{name}.yaml")
    base = Simulation(wl).run()
    runs = []
    for policy in policies:
        for timeout in timeouts:
            cfg = load_config(overrides={
                "actuator": {"overcommit_timeout_ms": timeout},
                "policies": {"opera": {"params": {"relief_policy": policy}}}})
            started = time.perf_counter()
            report, tally, _ = run_sidecar(wl, None, cfg)
            runs.append({"relief_policy": policy, "overcommit_timeout_ms": timeout,
                         **figures(report, base),
                         "node_writes": sum(n for k, n in tally.actions.items()
                                            if "update_node_resource applied" in k),
                         "wall_s": round(time.perf_counter() - started, 1)})
    return {"workload": name, "baseline": figures(base, None), "runs": runs}


def _table(result: dict[str, Any]) -> str:
    lines = [f"{result['workload']}: baseline mean JCT {result['baseline']['mean_jct_s']} s, "
             f"MR {result['baseline']['mr_mean_jct_s']} s, "
             f"{result['baseline']['jobs_failed']} failed",
             "  policy      timeout_ms  JCT%   MR JCT%  makespan%  kills (overcommit)  "
             "wasted_s  failed"]
    for r in result["runs"]:
        lines.append(f"  {r['relief_policy']:<11} {r['overcommit_timeout_ms']:>10}  "
                     f"{r['jct_pct']!s:>5}  {r['mr_jct_pct']!s:>7}  {r['makespan_pct']!s:>9}  "
                     f"{r['kills']:>5} ({r['overcommit_kills']})        "
                     f"{r['wasted_container_s']:>8}  {r['jobs_failed']:>6}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", action="append", choices=WORKLOADS,
                   help="workload (default: both)")
    p.add_argument("--timeouts", default=",".join(map(str, TIMEOUTS_MS)),
                   help="overcommit timeouts in ms, comma-separated (-1: none)")
    p.add_argument("--policies", default=",".join(POLICIES), help="relief policies")
    p.add_argument("--json", action="store_true", help="one JSON object")
    args = p.parse_args(argv)
    try:
        timeouts = tuple(int(t) for t in args.timeouts.split(","))
    except ValueError:
        p.error(f"--timeouts: integers in ms, got {args.timeouts!r}")
    policies = tuple(x.strip().upper() for x in args.policies.split(","))
    bad = [x for x in policies if x not in POLICIES]
    if bad or any(t < -1 for t in timeouts):
        p.error(f"unknown relief policy {bad} or a timeout below -1")
    out = [sweep(name, policies, timeouts) for name in args.workload or WORKLOADS]
    if args.json:
        json.dump({"workloads": out}, sys.stdout, indent=1)
        print()
    else:
        print("\n\n".join(_table(r) for r in out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
