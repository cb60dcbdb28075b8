"""What each decision kind of precision mode contributes, per paper workload.

The ``plugin`` mode (the sidecar plus the RM plug-in applying the decision
table at each heartbeat) runs every paper workload on a CapacityScheduler
(a workload on the FairScheduler runs on its ``@capacity`` twin: the plug-in's
hooks exist in the CapacityScheduler only) with:

* ``none``: precision mode on, no decision kind (the table is empty: the sidecar);
* ``only <kind>``: that kind alone;
* ``all``: every kind (the default);
* ``all - <kind>``: every kind but that one (what the kind adds to the others).

For each run it prints the paper's headline metrics (``paper_tables.HEADLINE``)
and their share of the in-RM gain, ``(baseline - run) / (baseline - in_rm)`` in
the metric's better direction; null when the in-RM mode gains less than 1 %
(or, for a failed-jobs count, less than 1 job), or when the run failed more
jobs than the baseline (a failed job ends early: no gain). ``--json``:
``workloads[]`` with ``baseline``, ``in_rm`` and ``runs[]``, each
``{metric: {value, recovered}}`` and ``failed``. ANACRAC's runs carry the rules
the in-RM mode derives from the workload. The simulator is deterministic: each
figure is one run.

    python bench/plugin_ablation.py [--workloads haste_table3,...] [--variants none,all]
        [--interval 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import paper_tables as pt

from yarn_advisor.advisor.engine.settings import with_overrides
from yarn_advisor.config.schema import DECISION_KINDS, AdvisorConfig
from yarn_advisor.simulator.inrm import build_scheduler
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_plugin
from yarn_advisor.simulator.simulation import Simulation

WORKLOADS = ("haste_table2", "haste_table3", "haste_table4", "matchmaking_loadgen",
             "matchmaking_wordcount", "anacrac_table5", "anacrac_table6", "opera_table2_mr",
             "opera_table2_mr_spark")
PAPER_OF = {"haste": "haste", "matchmaking": "matchmaking", "anacrac": "anacrac",
            "opera": "opera"}


def variants() -> list[tuple[str, tuple[str, ...]]]:
    """(label, decision kinds) of every run of one workload."""
    out: list[tuple[str, tuple[str, ...]]] = [("none", ()), ("all", DECISION_KINDS)]
    out += [(f"only {k}", (k,)) for k in DECISION_KINDS]
    out += [(f"all - {k}", tuple(x for x in DECISION_KINDS if x != k)) for k in DECISION_KINDS]
    return out


def metrics(paper: str, r: Report, base: Report, inrm: Report) -> dict[str, Any]:
    out: dict[str, Any] = {"failed": r.jobs_failed}
    for metric, value, better in pt.HEADLINE[paper]:
        share = pt.headline_share(better, value(base), value(r), value(inrm))
        if metric != "jobs_failed":
            share = pt.unless_failed(share, r, base)
        out[metric] = {"value": round(value(r), 4), "recovered": share}
    return out


def one(name: str, interval_s: float | None = None,
        labels: frozenset[str] | None = None) -> dict[str, Any]:
    wl = pt.load(name)
    paper = PAPER_OF[name.split("_")[0]]
    cfg: AdvisorConfig = pt._anacrac_cfg(wl) if paper == "anacrac" else pt.load_config()
    if interval_s is not None:
        cfg = with_overrides(cfg, {"sense": {"interval_s": interval_s}})
    algo = wl.paper or paper
    inrm = pt.run_with(wl, build_scheduler(algo, wl, pt.load_config()))[0]
    if wl.scheduler.type != "capacity":
        wl = pt.capacity_twin(wl)
    base = Simulation(wl).run()
    runs = []
    for label, kinds in variants():
        if labels is not None and label not in labels:
            continue
        r = run_plugin(wl, None, with_overrides(cfg, {"precision": {"decisions": list(kinds)}}))
        runs.append({"variant": label, **metrics(paper, r[0], base, inrm)})
    return {"workload": wl.name, "paper": algo, "interval_s": cfg.sense.interval_s,
            "scheduler": base.scheduler, "baseline": metrics(paper, base, base, inrm),
            "in_rm": metrics(paper, inrm, base, inrm),
            "runs": runs}


def render(result: dict[str, Any]) -> str:
    lines = []
    for w in result["workloads"]:
        heads = [k for k in w["baseline"] if k != "failed"]
        lines.append(f"{w['workload']} ({w['paper']}, {w['scheduler']}, cycle "
                     f"{w['interval_s']:g} s): baseline "
                     + ", ".join(f"{h} {w['baseline'][h]['value']:g}" for h in heads)
                     + "; in-RM " + ", ".join(f"{h} {w['in_rm'][h]['value']:g}" for h in heads))
        for r in w["runs"]:
            cells = "  ".join(f"{r[h]['value']:>10g} ({_pct(r[h]['recovered'])})" for h in heads)
            lines.append(f"  {r['variant']:<32}{cells}  failed {r['failed']}")
    lines.append(f"{result['runs']} runs in {result['wall_s']} s")
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f} %"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="comma-separated subset of the paper workloads")
    ap.add_argument("--variants", default="",
                    help="comma-separated subset of the runs (e.g. 'none,all'; default: all)")
    ap.add_argument("--interval", type=float, metavar="S",
                    help="the advisor's cycle, sense.interval_s (default 30: the table is "
                         "published once per cycle)")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or not names:
        print(f"plugin_ablation: unknown workload(s) {unknown} (of {', '.join(WORKLOADS)})",
              file=sys.stderr)
        return 2
    t0 = time.monotonic()
    labels = frozenset(v.strip() for v in args.variants.split(",") if v.strip()) or None
    out = [one(n, args.interval, labels) for n in names]
    result = {"workloads": out, "runs": sum(len(w["runs"]) + 2 for w in out),
              "wall_s": round(time.monotonic() - t0, 1)}
    print(json.dumps(result, sort_keys=True) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
