"""The real gain: one heterogeneous batch on the mini cluster, advisor off vs on.

Starts the real mini cluster (tests/minicluster/yarnmini.py), then runs the
same batch ``--runs`` times with the advisor off and as many times with it on
(alternating, so drift hits both alike). The batch: four MapReduce sleep jobs
of different container sizes and map/reduce counts in the three queues, all
submitted at once, plus an iterative chain of three small jobs (tagged
``iteration:i/3``) each submitted when the previous one ends.

"On" runs the daemon in enforce mode (every registered policy with its
defaults, the classifier, the actuator with guardrails relaxed for a short
batch, a cycle every ``--interval`` s). After each "on" run every action is
rolled back (``advisor.rollback``), so each run starts from the same RM.

Figures, from the RM itself: makespan = last finish - first start of the
batch's apps (RM times); average allocated utilization = mean over 1 s samples
of ``/cluster/metrics`` allocatedMB (and vcores) during the makespan, divided
by the cluster's original total (9216 MiB, 9 vcores). Medians are printed.

    python bench/bench_gain.py [--runs 3] [--interval 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from yarnmini import MiniCluster, SubmittedApp  # noqa: E402

from yarn_advisor.advisor.rollback import rollback, select  # noqa: E402
from yarn_advisor.advisor.settings import load_config as load  # noqa: E402
from yarn_advisor.advisor.wiring import build_live_advisor  # noqa: E402
from yarn_advisor.config.schema import AdvisorConfig  # noqa: E402

TOTAL_MB, TOTAL_VCORES = 9216, 9
BATCH: list[dict[str, Any]] = [
    dict(queue="etl", maps=6, reduces=1, map_ms=8000, reduce_ms=4000, map_mb=1024,
         reduce_mb=1024, tags="bench:gain"),
    dict(queue="default", maps=10, reduces=2, map_ms=4000, reduce_ms=3000, map_mb=512,
         reduce_mb=768, tags="bench:gain"),
    dict(queue="adhoc", maps=3, reduces=1, map_ms=15000, reduce_ms=5000, map_mb=1536,
         reduce_mb=1024, map_vcores=2, tags="bench:gain"),
    dict(queue="default", maps=4, reduces=0, map_ms=6000, map_mb=768, tags="bench:gain"),
]
CHAIN: dict[str, Any] = dict(queue="etl", maps=4, reduces=1, map_ms=3000, reduce_ms=2000,
                             map_mb=512, reduce_mb=512)
CHAIN_LEN = 3


def rm_json(cluster: MiniCluster, path: str) -> Any:
    url = f"{cluster.rm_url}/ws/v1/cluster{path}"
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def advisor_config(cluster: MiniCluster, state: Path, interval: float) -> AdvisorConfig:
    return load(None, {
        "rm": {"urls": [cluster.rm_url], "history_url": cluster.jhs_url},
        "dry_run": False, "state_dir": str(state),
        "sense": {"interval_s": interval},
        "actuator": {"cooldown_s": 2 * interval, "max_actions_per_cycle": 50,
                     "max_actions_per_target": 1000, "max_snapshot_age_s": 60},
    })


class Sampler(threading.Thread):
    """Samples the RM's allocated memory and vcores every second."""

    def __init__(self, cluster: MiniCluster) -> None:
        super().__init__(daemon=True)
        self.cluster = cluster
        self.samples: list[tuple[float, int, int]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                m = rm_json(self.cluster, "/metrics")["clusterMetrics"]
                self.samples.append((time.time() * 1000, int(m["allocatedMB"]),
                                     int(m["allocatedVirtualCores"])))
            except OSError:
                pass
            self.done.wait(1.0)


def run_chain(cluster: MiniCluster, apps: list[SubmittedApp]) -> None:
    for i in range(1, CHAIN_LEN + 1):
        job = cluster.sleep_job(**CHAIN, tags=f"bench:gain,iteration:{i}/{CHAIN_LEN}")
        apps.append(job)
        job.wait(timeout=1800)


def one_run(cluster: MiniCluster, advisor_on: bool, interval: float, work: Path) -> dict[str, Any]:
    state = Path(tempfile.mkdtemp(prefix="advisor-", dir=work))
    cfg = advisor_config(cluster, state, interval)
    advisor = None
    started = time.time()
    if advisor_on:
        advisor = build_live_advisor(cfg)
        actuator = advisor.actuator
        threading.Thread(target=advisor.run_forever, args=(interval,), daemon=True).start()
    sampler = Sampler(cluster)
    sampler.start()
    apps: list[SubmittedApp] = []
    chain = threading.Thread(target=run_chain, args=(cluster, apps))
    chain.start()
    apps += [cluster.sleep_job(**spec) for spec in BATCH]
    for app in list(apps):
        app.wait(timeout=1800)
    chain.join()
    codes = [a.proc.wait() for a in apps]
    sampler.done.set()
    actions: dict[str, int] = {}
    if advisor is not None:
        advisor.stop()
        time.sleep(interval + 1)
        for (kind, _, outcome), n in actuator.totals.items():
            actions[f"{kind}:{outcome}"] = actions.get(f"{kind}:{outcome}", 0) + n
        assert actuator.writer is not None
        undo = rollback(actuator.journal, actuator.writer,
                        select(actuator.journal.actions(), since=started))
        actions["rolled_back"] = len(undo)
    info = [rm_json(cluster, f"/apps/{a.app_id}")["app"] for a in apps]
    first = min(int(i["startedTime"]) for i in info)
    last = max(int(i["finishedTime"]) for i in info)
    inside = [s for s in sampler.samples if first <= s[0] <= last] or sampler.samples
    return {
        "advisor": "on" if advisor_on else "off",
        "makespan_s": (last - first) / 1000,
        "alloc_mem_util": statistics.fmean(s[1] for s in inside) / TOTAL_MB,
        "alloc_vcore_util": statistics.fmean(s[2] for s in inside) / TOTAL_VCORES,
        "apps": len(apps), "failed": sum(1 for c in codes if c != 0),
        "states": sorted({i["finalStatus"] for i in info}), "actions": actions,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per mode (>= 3 for medians)")
    ap.add_argument("--interval", type=float, default=5.0, help="advisor cycle (s)")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-gain-"))
    cluster = MiniCluster(work / "cluster")
    t0 = time.monotonic()
    cluster.start()
    print(f"mini cluster up in {time.monotonic() - t0:.0f}s at {cluster.rm_url}", file=sys.stderr)
    runs: list[dict[str, Any]] = []
    try:
        for i in range(args.runs):
            for on in (False, True):
                r = one_run(cluster, on, args.interval, work)
                runs.append(r)
                print(f"run {i + 1} advisor {r['advisor']:>3}: makespan {r['makespan_s']:.1f}s, "
                      f"allocated memory {r['alloc_mem_util']:.1%}, vcores "
                      f"{r['alloc_vcore_util']:.1%}, failed {r['failed']}, actions "
                      f"{r['actions']}", file=sys.stderr, flush=True)
    finally:
        cluster.stop()
    summary = {}
    for mode in ("off", "on"):
        rs = [r for r in runs if r["advisor"] == mode]
        summary[mode] = {k: statistics.median(r[k] for r in rs)
                         for k in ("makespan_s", "alloc_mem_util", "alloc_vcore_util")}
    if args.json:
        print(json.dumps({"runs": runs, "median": summary}, sort_keys=True))
    else:
        print(f"{'advisor':8} {'makespan (s)':>13} {'alloc memory':>13} {'alloc vcores':>13}"
              f"   medians of {args.runs} runs")
        for mode, m in summary.items():
            print(f"{mode:8} {m['makespan_s']:13.1f} {m['alloc_mem_util']:13.1%} "
                  f"{m['alloc_vcore_util']:13.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
