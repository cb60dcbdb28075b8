"""What the CapacityScheduler's locality lever can reach on Matchmaking's workloads.

The advisor's Matchmaking policy acts from outside the RM through one lever,
``yarn.scheduler.capacity.node-locality-delay`` (missed scheduling
opportunities before a rack-local container). The CapacityScheduler caps it
at the number of cluster nodes (``RegularContainerAllocator
.getActualNodeLocalityDelay``: ``min(numClusterNodes, nodeLocalityDelay)``),
and the simulator does the same. So on a cluster no larger than the delay,
no setting waits longer for a local node than YARN's default (40) already
does. This bench runs each Matchmaking workload on its CapacityScheduler at
a range of delays and prints the locality rate and mean map response beside
the in-RM Matchmaking scheduler's, with the best delay's share of the in-RM
locality gain.

The simulator is deterministic, so each figure is one run.

    python bench/matchmaking_lever_ceiling.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from yarn_advisor.simulator.inrm import run_with
from yarn_advisor.simulator.inrm.matchmaking import MatchmakingScheduler
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.workload import load_workload

WORKLOADS = Path(__file__).resolve().parents[1] / "examples" / "workloads"
NAMES = ("matchmaking_loadgen", "matchmaking_wordcount")
DELAYS = (0, 5, 10, 20, 30, 40, 100, 1000)


def ceiling(name: str) -> dict[str, Any]:
    """One workload: locality and map response per delay, in-RM, and the best share."""
    wl = load_workload(WORKLOADS / f"{name}.yaml")
    rows = []
    for delay in DELAYS:
        r = Simulation(replace(wl, scheduler=replace(wl.scheduler,
                                                     node_locality_delay=delay))).run()
        rows.append({"node_locality_delay": delay, "locality_rate": r.locality_rate,
                     "mean_map_response_s": r.mean_map_response_s})
    ours = run_with(wl, MatchmakingScheduler(wl.scheduler))[0]
    default = next(r for r in rows if r["node_locality_delay"] == wl.scheduler.node_locality_delay)
    best = max(rows, key=lambda r: r["locality_rate"] or 0.0)
    gain = (ours.locality_rate or 0.0) - (default["locality_rate"] or 0.0)
    share = (round(((best["locality_rate"] or 0.0) - (default["locality_rate"] or 0.0)) / gain, 4)
             if gain > 0 else None)
    return {"workload": name, "default_delay": wl.scheduler.node_locality_delay,
            "delays": rows,
            "in_rm": {"locality_rate": ours.locality_rate,
                      "mean_map_response_s": ours.mean_map_response_s},
            "best_delay": best["node_locality_delay"], "best_share_of_in_rm_gain": share}


def render(results: list[dict[str, Any]]) -> str:
    lines = []
    for res in results:
        lines.append(f"{res['workload']} (default delay {res['default_delay']}): "
                     "delay -> locality, map response s")
        for r in res["delays"]:
            lines.append(f"  {r['node_locality_delay']:>5}  {r['locality_rate']:.4f}  "
                         f"{r['mean_map_response_s']:.2f}")
        share = res["best_share_of_in_rm_gain"]
        lines.append(f"  in-RM matchmaking: {res['in_rm']['locality_rate']:.4f}  "
                     f"{res['in_rm']['mean_map_response_s']:.2f}; best delay "
                     f"{res['best_delay']} reaches "
                     f"{'n/a' if share is None else f'{100 * share:.0f} %'} of its locality gain")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args(argv)
    results = [ceiling(name) for name in NAMES]
    print(json.dumps({"workloads": results}, sort_keys=True) if args.json else render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
