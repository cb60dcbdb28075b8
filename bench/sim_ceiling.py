"""The advisor against the best static setting of its lever, in the simulator.

OPERA's lever is a node's schedulable capacity. Its static counterpart is a fixed
overcommit: every node advertises ``f`` x its memory and vcores while the
hardware stays the same (``real_memory_mb`` / ``real_cpu``), as an operator sets
``yarn.nodemanager.resource.memory-mb`` above the RAM. This bench sweeps ``f``
over the baseline scheduler, takes the best makespan as the ceiling, and runs the
advisor's sidecar (cold, and warm: ``--warm`` earlier runs taught the classifier)
beside it. ``reached`` is the share of the ceiling's gain the advisor gets:
(off - on) / (off - ceiling). The ceiling is the best makespan among the
factors that fail no more jobs; kills and wasted container-seconds are printed
with every figure, since a static overcommit may win by killing.

    python bench/sim_ceiling.py [--workload FILE ...] [--factors 1.25,1.5,2] [--json]

The simulation is deterministic (seeded), so one run of each is its figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = (ROOT / "examples" / "workloads" / "production_batch.yaml",
             ROOT / "examples" / "workloads" / "opera_table2_mr.yaml")


def overcommitted(wl: Workload, f: float, f_vcores: float | None = None) -> Workload:
    """``wl`` with every node advertising ``f`` x its memory and ``f_vcores``
    (default ``f``) x its vcores, on the same hardware."""
    f_vc = f if f_vcores is None else f_vcores
    groups = tuple(replace(g, memory_mb=int(g.memory_mb * f), vcores=int(g.vcores * f_vc),
                           real_memory_mb=g.real_memory_mb or g.memory_mb,
                           real_cpu=g.real_cpu or float(g.vcores))
                   for g in wl.cluster.groups)
    return replace(wl, cluster=replace(wl.cluster, groups=groups))


def figures(r: Report) -> dict[str, Any]:
    return {"makespan_s": r.makespan_s, "mean_jct_s": r.mean_jct_s, "kills": r.kills,
            "kills_by_reason": dict(r.kills_by_reason),
            "wasted_container_s": r.wasted_container_s, "jobs_failed": r.jobs_failed}


def one_workload(path: Path, factors: list[float], warm: int,
                 cfg: AdvisorConfig | None = None) -> dict[str, Any]:
    wl = load_workload(path)
    off = figures(Simulation(wl).run())
    static = {f"{f:g}": figures(Simulation(overcommitted(wl, f)).run()) for f in factors}
    best = min(static, key=lambda k: (static[k]["jobs_failed"], static[k]["makespan_s"]))
    on = {"cold": figures(run_sidecar(wl, cfg=cfg)[0])}
    if warm:
        on[f"warm{warm}"] = figures(run_sidecar(wl, cfg=cfg, warm=warm)[0])
    gain = off["makespan_s"] - static[best]["makespan_s"]
    reached = {k: (round((off["makespan_s"] - v["makespan_s"]) / gain, 3) if gain > 0 else None)
               for k, v in on.items()}
    return {"workload": path.stem, "off": off, "static_overcommit": static,
            "ceiling": {"factor": float(best), **static[best]}, "on": on, "reached": reached}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", type=Path, action="append",
                   help="workload file (default: production_batch and OPERA Table II)")
    p.add_argument("--factors", default="1.25,1.5,1.75,2",
                   help="static overcommit factors to sweep (default 1.25,1.5,1.75,2)")
    p.add_argument("--warm", type=int, default=1, help="warm sidecar runs (0: cold only)")
    p.add_argument("--config", type=Path, metavar="ADVISOR_YAML",
                   help="the advisor's configuration (default: its defaults), e.g. "
                        "examples/lend-memory.yaml")
    p.add_argument("--json", action="store_true", help="one JSON object")
    args = p.parse_args(argv)
    cfg = load_config(args.config) if args.config else None
    try:
        factors = [float(x) for x in args.factors.split(",")]
    except ValueError:
        p.error(f"--factors: numbers separated by commas, got {args.factors!r}")
    rows = [one_workload(w, factors, args.warm, cfg) for w in (args.workload or WORKLOADS)]
    if args.json:
        print(json.dumps({"workloads": rows}, indent=1))
        return 0
    for r in rows:
        print(f"{r['workload']}: makespan s / mean JCT s / kills")
        line = "  {:<24} {:>9.1f} {:>9.1f} {:>6}"
        print(line.format("off", r["off"]["makespan_s"], r["off"]["mean_jct_s"],
                          r["off"]["kills"]))
        for f, v in r["static_overcommit"].items():
            print(line.format(f"static {f}x", v["makespan_s"], v["mean_jct_s"], v["kills"]))
        for k, v in r["on"].items():
            print(line.format(f"advisor {k}", v["makespan_s"], v["mean_jct_s"], v["kills"])
                  + f"   reached {r['reached'][k]}")
        print(f"  ceiling: static {r['ceiling']['factor']:g}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
