"""What the advisor gains at its shipped defaults, beside each opt-in, in the simulator
(run: python bench/defaults_gain.py [--json] [--seeds N] [--swim-jobs N]).

For every workload of ``examples/workloads/`` (and, with ``--swim-jobs N``, the
first N jobs of SWIM's FB-2009 day 1 on its 600 nodes; 0 = the whole day):
the baseline (the scheduler alone), the advisor at its defaults, and the
advisor with each opt-in configuration of ``examples/`` (OPERA's memory
lending; ANACRAC's example rules), each over ``--seeds`` seeds, through the
what-if report (``simulator/whatif.py``, enforce mode). Prints per workload
and variant: makespan and mean JCT (and their change against the baseline),
kills, failed jobs and wasted container-seconds. ``--json`` prints one object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.swim import read_swim
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.whatif import Variant, VariantSummary, what_if
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "examples" / "workloads"
OPT_INS = {"lend-memory": ROOT / "examples" / "lend-memory.yaml",
           "anacrac-rules": ROOT / "examples" / "anacrac-rules.yaml"}
DATA = ROOT.parent / "shared" / "data" / "swim"
if not DATA.is_dir():  # a worktree beside the main one
    DATA = Path("/work/shared/data/swim")
SWIM = DATA / "FB-2009_samples_24_times_1hr_0.tsv"


def _row(v: VariantSummary, base: VariantSummary | None) -> dict[str, Any]:
    f = {k: s.mean for k, s in v.figures.items()}
    out: dict[str, Any] = {k: round(x, 3) for k, x in f.items()}
    out["ci95"] = {k: (None if s.ci95 is None else round(s.ci95, 3))
                   for k, s in v.figures.items()}
    if base is not None:
        for k in ("makespan_s", "mean_jct_s"):
            b = base.figures[k].mean
            out[f"{k.removesuffix('_s')}_change"] = round((f[k] - b) / b, 4) if b else None
    out["actions"] = {k: {o: round(n, 1) for o, n in by.items()} for k, by in v.actions.items()}
    return out


def one_workload(wl: Workload, seeds: int, workers: int) -> dict[str, Any]:
    started = time.perf_counter()
    first = what_if(wl, None, seeds=seeds, workers=workers,
                    only=[Variant("baseline", None), Variant("defaults", ())])
    base, defaults = first.variants
    rows = {"baseline": _row(base, None), "defaults": _row(defaults, base)}
    for name, path in OPT_INS.items():
        opt = what_if(wl, path, seeds=seeds, workers=workers, only=[Variant(name, ())])
        rows[name] = _row(opt.variants[0], base)
    return {"workload": wl.name, "variants": rows,
            "wall_s": round(time.perf_counter() - started, 1)}


def _pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:+6.1f}%"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--workers", type=int, default=0, help="processes (0: one per core)")
    p.add_argument("--only", nargs="*", default=None, metavar="NAME",
                   help="workload file stems to run (default: all)")
    p.add_argument("--swim-jobs", type=int, default=None, metavar="N",
                   help="also the first N jobs of the FB-2009 day (0: all of it)")
    p.add_argument("--swim", type=Path, default=SWIM, metavar="TSV",
                   help="the SWIM day to read (default: FB-2009 day 1 under shared/data)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.swim_jobs is not None and not args.swim.is_file():
        p.error(f"{args.swim}: no such SWIM trace (--swim TSV)")
    loads = [load_workload(f) for f in sorted(WORKLOADS.glob("*.yaml"))
             if args.only is None or f.stem in args.only]
    if args.swim_jobs is not None:
        loads.append(read_swim(args.swim, TraceOptions(nodes=600), max_jobs=args.swim_jobs))
    results = []
    for wl in loads:
        res = one_workload(wl, args.seeds, args.workers)
        results.append(res)
        if not args.json:
            print(f"{res['workload']} ({res['wall_s']} s)", flush=True)
            for name, r in res["variants"].items():
                print(f"  {name:<14} makespan {r['makespan_s']:9.1f} s "
                      f"{_pct(r.get('makespan_change'))}  mean JCT {r['mean_jct_s']:8.1f} s "
                      f"{_pct(r.get('mean_jct_change'))}  kills {r['kills']:6.0f}  failed "
                      f"{r['jobs_failed']:3.0f}  wasted {r['wasted_container_s']:8.0f} c-s",
                      flush=True)
    if args.json:
        print(json.dumps({"seeds": args.seeds, "workloads": results}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
