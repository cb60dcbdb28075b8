"""ANACRAC's sidecar where its levers exist: a CapacityScheduler with node labels.

ANACRAC's paper workloads run on the FairScheduler, which has no node labels,
so the sidecar (the advisor at its defaults, with no ANACRAC rules) changes
nothing there. This bench gives the sidecar what an operator would: the same
CapacityScheduler cluster with a label ``ext`` that an ``ingest`` queue may
use (100 % of it, by default), and the ANACRAC rules the in-RM mode derives
from the workload (the hosts that reach the external sources, at most two
containers per node), each with ``label: ext`` and ``target_queue: ingest``.
It prints the FairScheduler baseline, the CapacityScheduler baseline and the
CapacityScheduler with the sidecar, per job, with what the advisor did.

The simulator models labels as exclusive partitions (a labelled node serves
only apps that ask for its label); the advisor's documentation asks for
non-exclusive labels, which the simulator does not model. The simulator is
deterministic, so each figure is one run.

    python bench/anacrac_sidecar_labels.py [--workload anacrac_table6] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.simulator.inrm.anacrac import derive_rules
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import QueueSpec, Workload
from yarn_advisor.simulator.workload import load_workload

WORKLOADS = Path(__file__).resolve().parents[1] / "examples" / "workloads"
LABEL, QUEUE = "ext", "ingest"


def labelled(wl: Workload) -> Workload:
    """``wl`` on a CapacityScheduler whose ``ingest`` queue owns the label ``ext``."""
    queues = (QueueSpec("default", 90.0, accessible_node_labels=(LABEL,),
                        label_capacities=((LABEL, 0.0),)),
              QueueSpec(QUEUE, 10.0, accessible_node_labels=(LABEL,),
                        label_capacities=((LABEL, 100.0),), default_node_label=LABEL))
    return replace(wl, scheduler=replace(wl.scheduler, type="capacity", queues=queues),
                   cluster=replace(wl.cluster, labels=(LABEL,)))


def _jobs(r: Report) -> dict[str, Any]:
    return {j: {"state": t["state"], "jct_s": round(t["finish_s"] - t["submit_s"], 1)}
            for j, t in r.job_times.items() if t.get("finish_s") is not None}


def run(name: str) -> dict[str, Any]:
    wl = load_workload(WORKLOADS / f"{name}.yaml")
    rules = [{"name": r.name, "app_type": r.app_type, "hosts": list(r.hosts),
              "tasks_maximum": r.tasks_maximum, "label": LABEL, "target_queue": QUEUE}
             for r in derive_rules(wl)]
    cfg = load_config(overrides={"policies": {"anacrac": {"params": {"rules": rules}}}})
    cs = labelled(wl)
    side, tally, _ = run_sidecar(cs, None, cfg)
    out: dict[str, Any] = {"workload": name, "rules": rules}
    for mode, r in (("fair", Simulation(wl).run()), ("capacity", Simulation(cs).run()),
                    ("capacity_sidecar", side)):
        out[mode] = {"makespan_s": r.makespan_s, "jobs_failed": r.jobs_failed,
                     "kills": r.kills, "jobs": _jobs(r)}
    out["advisor"] = {k: v for k, v in tally.to_json()["actions"].items()  # type: ignore[union-attr]
                      if k.startswith("anacrac")}
    out["anacrac_writes"] = [{"at_s": t / 1000, "kind": str(k), "target": tgt, "value": v.to_json()}
                             for t, k, tgt, v in tally.sent if str(k).startswith(("replace",
                                                                                  "move"))]
    return out


def render(res: dict[str, Any]) -> str:
    lines = [f"{res['workload']}:"]
    for mode in ("fair", "capacity", "capacity_sidecar"):
        m = res[mode]
        jobs = ", ".join(f"{j} {v['jct_s']:g} s{' FAILED' if v['state'] == 'FAILED' else ''}"
                         for j, v in m["jobs"].items())
        lines.append(f"  {mode:<17} makespan {m['makespan_s']:.1f} s, failed jobs "
                     f"{m['jobs_failed']}: {jobs}")
    lines.append(f"  advisor (ANACRAC): {res['advisor']}")
    for w in res["anacrac_writes"]:
        lines.append(f"    at {w['at_s']:g} s {w['kind']} {w['target']} -> {w['value']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--workload", default="anacrac_table6")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args(argv)
    res = run(args.workload)
    print(json.dumps(res, sort_keys=True, default=str) if args.json else render(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
