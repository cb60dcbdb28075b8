"""The real gain: a production-like batch on the mini cluster, advisor off, on, and the
ceiling of its lever.

Starts the real mini cluster (tests/minicluster/yarnmini.py: two NodeManagers,
6144 MiB/6 vcores and 3072 MiB/3), then runs the same batch in three modes, in
rounds (off, on, ceiling), ``--runs`` rounds, so drift hits every mode alike:

* ``off``: the CapacityScheduler alone;
* ``on``: the advisor's daemon in enforce mode beside it (every registered policy
  with its defaults, a cycle every ``--interval`` s), rolled back after the batch;
* ``ceiling``: no advisor, every node statically overcommitted to 1.5 x its
  capacity (memory and vcores; OPERA's ``max_overcommit``) for the whole batch, then
  restored: the best the node-resource lever can do when one knows in advance that
  the tasks use far less than they ask.

The batch mirrors examples/workloads/production_batch.yaml at a third of its size
(the simulator's case): MapReduce sleep jobs whose containers ask 1-3 GiB and use
about 200 MiB (a JVM sleeping), tasks of 30-40 s, three queues, and an iteration
chain of three jobs (tagged ``iteration:i/3``) each submitted when the previous one
ends. AMs ask 512 MiB.

The classifier's checkpoint is kept across the bench's "on" runs, as a production
advisor keeps it across days of recurring jobs: the first "on" run starts cold, the
later ones warm. Both are printed; the medians use every "on" run.

Figures, from the RM and the JobHistory server: makespan = last finish - first
submission; mean JCT = mean of finish - submission; allocated utilization = mean of
1 s samples of allocated memory over the cluster's original total; kills and wasted
container-seconds = failed or killed task attempts and their run time. After each
"on" run the last applied node resource of every node is read back from the RM
(journal and RM must agree), then everything is rolled back.

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

from yarn_advisor.advisor.recommendation import Kind  # noqa: E402
from yarn_advisor.advisor.rollback import rollback, select  # noqa: E402
from yarn_advisor.advisor.settings import load_config  # noqa: E402
from yarn_advisor.advisor.wiring import build_live_advisor, build_sensor  # noqa: E402
from yarn_advisor.config.schema import AdvisorConfig  # noqa: E402
from yarn_advisor.connectors.rm_write import RMWriter  # noqa: E402

OVERCOMMIT = 1.5
AM = {"yarn.app.mapreduce.am.resource.mb": 512,
      "yarn.app.mapreduce.am.command-opts": "-Xmx400m"}
MAP_OPTS = {"mapreduce.map.java.opts": "-Xmx200m", "mapreduce.reduce.java.opts": "-Xmx200m"}
BATCH: list[dict[str, Any]] = [
    dict(queue="etl", maps=6, reduces=1, map_ms=40000, reduce_ms=30000, map_mb=2048,
         reduce_mb=1536),
    dict(queue="default", maps=6, reduces=1, map_ms=35000, reduce_ms=30000, map_mb=1536,
         reduce_mb=1024),
    dict(queue="adhoc", maps=3, reduces=1, map_ms=40000, reduce_ms=30000, map_mb=3072,
         reduce_mb=2048, map_vcores=2),
    dict(queue="default", maps=4, reduces=0, map_ms=40000, map_mb=1024),
]
CHAIN: dict[str, Any] = dict(queue="etl", maps=6, reduces=1, map_ms=30000, reduce_ms=30000,
                             map_mb=1536, reduce_mb=1024)
CHAIN_LEN = 3


def get_json(url: str) -> Any:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def advisor_config(cluster: MiniCluster, state: Path, checkpoint: Path,
                   interval: float) -> AdvisorConfig:
    return load_config(None, {
        "rm": {"urls": [cluster.rm_url], "history_url": cluster.jhs_url},
        "dry_run": False, "state_dir": str(state), "server": {"enabled": False},
        "sense": {"interval_s": interval},
        "classifier": {"checkpoint": str(checkpoint)},
    })


class Sampler(threading.Thread):
    """Samples the RM's allocated memory and vcores every second."""

    def __init__(self, rm_url: str) -> None:
        super().__init__(daemon=True)
        self.url = f"{rm_url}/ws/v1/cluster/metrics"
        self.samples: list[tuple[float, int, int]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                m = get_json(self.url)["clusterMetrics"]
                self.samples.append((time.time() * 1000, int(m["allocatedMB"]),
                                     int(m["allocatedVirtualCores"])))
            except (OSError, ValueError, KeyError):
                pass
            self.done.wait(1.0)


def submit(cluster: MiniCluster, spec: dict[str, Any], tags: str) -> SubmittedApp:
    return cluster.sleep_job(**spec, tags=tags, conf={**AM, **MAP_OPTS})


def run_chain(cluster: MiniCluster, apps: list[SubmittedApp]) -> None:
    for i in range(1, CHAIN_LEN + 1):
        job = submit(cluster, CHAIN, f"bench:gain,iteration:{i}/{CHAIN_LEN}")
        apps.append(job)
        job.wait(timeout=3600)


def run_batch(cluster: MiniCluster) -> list[SubmittedApp]:
    apps: list[SubmittedApp] = []
    chain = threading.Thread(target=run_chain, args=(cluster, apps))
    chain.start()
    apps += [submit(cluster, spec, "bench:gain") for spec in BATCH]
    for app in list(apps):
        app.wait(timeout=3600)
    chain.join()
    return apps


def node_totals(rm_url: str) -> dict[str, tuple[int, int]]:
    nodes = get_json(f"{rm_url}/ws/v1/cluster/nodes")["nodes"]["node"]
    return {n["id"]: (int(n["totalResource"]["memory"]), int(n["totalResource"]["vCores"]))
            for n in nodes}


def set_nodes(writer: RMWriter, totals: dict[str, tuple[int, int]]) -> None:
    for node, (mem, vc) in totals.items():
        out = writer.apply(Kind.UPDATE_NODE_RESOURCE, node, {"memory_mb": mem, "vcores": vc})
        if out.status not in ("applied", "noop"):
            raise RuntimeError(f"node resource of {node}: {out.status} {out.error}")


def wasted(jhs_url: str, job_id: str) -> tuple[int, float]:
    """(failed or killed attempts, their run time in s) of one finished job."""
    base = f"{jhs_url}/ws/v1/history/mapreduce/jobs/{job_id}"
    job = get_json(base)["job"]
    lost = sum(int(job.get(k, 0)) for k in ("failedMapAttempts", "killedMapAttempts",
                                            "failedReduceAttempts", "killedReduceAttempts"))
    if not lost:
        return 0, 0.0
    seconds = 0.0
    for task in get_json(f"{base}/tasks")["tasks"]["task"]:
        for a in get_json(f"{base}/tasks/{task['id']}/attempts")["taskAttempts"]["taskAttempt"]:
            if a["state"] in ("FAILED", "KILLED"):
                seconds += max(0, int(a["elapsedTime"])) / 1000
    return lost, seconds


def figures(cluster: MiniCluster, apps: list[SubmittedApp], sampler: Sampler,
            totals: dict[str, tuple[int, int]]) -> dict[str, Any]:
    info = [get_json(f"{cluster.rm_url}/ws/v1/cluster/apps/{a.app_id}")["app"] for a in apps]
    first = min(int(i["startedTime"]) for i in info)
    last = max(int(i["finishedTime"]) for i in info)
    inside = [s for s in sampler.samples if first <= s[0] <= last] or sampler.samples
    mem = sum(t[0] for t in totals.values())
    vcores = sum(t[1] for t in totals.values())
    kills, lost_s = 0, 0.0
    for a in apps:
        k, s = wasted(cluster.jhs_url, a.app_id.replace("application_", "job_"))
        kills, lost_s = kills + k, lost_s + s
    return {
        "makespan_s": (last - first) / 1000,
        "mean_jct_s": statistics.fmean(int(i["finishedTime"]) - int(i["startedTime"])
                                       for i in info) / 1000,
        "allocated_utilization": statistics.fmean(s[1] for s in inside) / mem,
        "allocated_vcore_utilization": statistics.fmean(s[2] for s in inside) / vcores,
        "kills": kills, "wasted_container_s": round(lost_s, 1),
        "apps": len(apps), "failed": sum(1 for i in info if i["finalStatus"] != "SUCCEEDED"),
    }


def one_run(cluster: MiniCluster, mode: str, interval: float, work: Path,
            checkpoint: Path, writer: RMWriter) -> dict[str, Any]:
    totals = node_totals(cluster.rm_url)
    advisor = None
    started = time.time()
    if mode == "on":
        state = Path(tempfile.mkdtemp(prefix="advisor-", dir=work))
        advisor = build_live_advisor(advisor_config(cluster, state, checkpoint, interval))
        threading.Thread(target=advisor.run_forever, args=(interval,), daemon=True).start()
    elif mode == "ceiling":
        set_nodes(writer, {n: (int(m * OVERCOMMIT), int(v * OVERCOMMIT))
                           for n, (m, v) in totals.items()})
    sampler = Sampler(cluster.rm_url)
    sampler.start()
    try:
        apps = run_batch(cluster)
    finally:
        sampler.done.set()
        if mode == "ceiling":
            set_nodes(writer, totals)
    out = {"mode": mode, **figures(cluster, apps, sampler, totals)}
    if advisor is not None:
        advisor.stop()
        time.sleep(interval + 1)
        out |= after_advisor(advisor, writer, cluster.rm_url, started)
    if node_totals(cluster.rm_url) != totals:
        raise RuntimeError(f"the {mode} run left node resources changed")
    return out


def after_advisor(advisor: Any, writer: RMWriter, rm_url: str, started: float
                  ) -> dict[str, Any]:
    """What the advisor did, the journal checked against the RM, then rolled back."""
    actuator = advisor.actuator
    actions: dict[str, int] = {}
    for (kind, policy, outcome), n in actuator.totals.items():
        key = f"{policy} {kind.value} {outcome}"
        actions[key] = actions.get(key, 0) + n
    last: dict[str, Any] = {}
    for a in actuator.journal.actions():
        if (a.ts >= started and a.outcome == "applied" and a.kind is Kind.UPDATE_NODE_RESOURCE
                and isinstance(a.value, dict)):
            last[a.target] = a.value
    rm_now = node_totals(rm_url)
    disagree = [n for n, v in last.items()
                if (v["memory_mb"], v["vcores"]) != rm_now.get(n)]
    undo = rollback(actuator.journal, writer, select(actuator.journal.actions(),
                                                     since=started))
    return {"actions": actions, "journal_rm_disagree": disagree,
            "rolled_back": len(undo)}


def medians(runs: list[dict[str, Any]], mode: str) -> dict[str, float]:
    rs = [r for r in runs if r["mode"] == mode]
    keys = ("makespan_s", "mean_jct_s", "allocated_utilization", "allocated_vcore_utilization",
            "kills", "wasted_container_s")
    return {k: statistics.median(r[k] for r in rs) for k in keys}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="rounds of off, on, ceiling")
    ap.add_argument("--interval", type=float, default=5.0, help="advisor cycle (s)")
    ap.add_argument("--modes", default="off,on,ceiling", help="modes run in each round")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if args.runs < 1 or not set(modes) <= {"off", "on", "ceiling"}:
        ap.error("--runs >= 1 and --modes among off,on,ceiling")
    work = Path(tempfile.mkdtemp(prefix="bench-gain-"))
    checkpoint = work / "classifier.json"
    cluster = MiniCluster(work / "cluster")
    t0 = time.monotonic()
    cluster.start()
    print(f"mini cluster up in {time.monotonic() - t0:.0f}s at {cluster.rm_url}", file=sys.stderr)
    writer = RMWriter(build_sensor(advisor_config(cluster, work, checkpoint, 5)).connectors.rm)
    runs: list[dict[str, Any]] = []
    try:
        for i in range(args.runs):
            for mode in modes:
                r = one_run(cluster, mode, args.interval, work, checkpoint, writer)
                r["round"] = i + 1
                runs.append(r)
                print(f"round {i + 1} {mode:>7}: makespan {r['makespan_s']:.1f}s, mean JCT "
                      f"{r['mean_jct_s']:.1f}s, allocated memory "
                      f"{r['allocated_utilization']:.1%}, kills {r['kills']}, failed "
                      f"{r['failed']}, actions {r.get('actions', {})}",
                      file=sys.stderr, flush=True)
    finally:
        cluster.stop()
    out: dict[str, Any] = {m: medians(runs, m) for m in modes}
    out |= {"nodes": 2, "cycle_s": args.interval, "rounds": args.runs, "runs": runs}
    if {"off", "on", "ceiling"} <= set(modes):
        off, on, ceil = (out[m]["makespan_s"] for m in ("off", "on", "ceiling"))
        out["gain"] = {"makespan_on_vs_off": round(1 - on / off, 4),
                       "share_of_ceiling": round((off - on) / (off - ceil), 4)
                       if off > ceil else None}
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        print(f"{'mode':8} {'makespan (s)':>13} {'mean JCT (s)':>13} {'alloc memory':>13} "
              f"{'kills':>6}   medians of {args.runs} round(s)")
        for m in modes:
            f = out[m]
            print(f"{m:8} {f['makespan_s']:13.1f} {f['mean_jct_s']:13.1f} "
                  f"{f['allocated_utilization']:13.1%} {f['kills']:6.0f}")
        if "gain" in out:
            print(f"makespan on vs off: {out['gain']['makespan_on_vs_off']:.1%}; share of the "
                  f"ceiling's gain: {out['gain']['share_of_ceiling']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
