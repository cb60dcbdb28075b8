"""The RM plug-in's gain on the real mini cluster: off vs sidecar vs sidecar + plug-in.

Starts one mini cluster (tests/minicluster/yarnmini.py) whose RM has the plug-in's jar on
its classpath and reads the advisor's table file (docs/plugin.md, *Install*), with the
NodeManagers of the plug-in's tests: 6 GiB / 6 vcores at 127.0.0.2 and 3 GiB / 3 vcores
at ``localhost``, the host a ``file://`` input's splits name. Then runs the same batch
``--rounds`` times in each of three modes, alternating (the order rotates every round so
drift hits all alike):

- off: the RM alone (the jar loaded, no table: YARN's default, as the plug-in's
  fail-open tests show);
- sidecar: the advisor in enforce mode from outside (every registered policy with its
  defaults, one cycle every ``--interval`` s), precision mode off;
- plugin: the same advisor with precision mode on: each cycle it also publishes its
  decision table to the file the plug-in polls (every 200 ms).

After each advisor run its actions are rolled back and its table withdrawn.

The batch is Matchmaking's case: ``--jobs`` wordcounts submitted together, each over
``--files`` one-split files whose only replica is on ``localhost``, so every map asks for
that node; the small node holds few maps at a time and YARN's node-locality-delay is
capped at the node count (2), so the default sends maps rack-local to the big node.

Figures, medians per mode: makespan = last finish - first start of the batch's apps
(RM); mean JCT = mean of finish - start per app; locality_rate = the jobs'
``DATA_LOCAL_MAPS`` / ``TOTAL_LAUNCHED_MAPS`` (their JobHistory counters); failed_jobs =
apps not ``SUCCEEDED``. Each run also keeps the plug-in's JMX counters moved during it.

    python bench/bench_gain_plugin.py [--rounds 3] [--interval 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from _rounds import rotated  # noqa: E402
from rmplugin import MBEAN, build, rm_conf, wait_for  # noqa: E402
from yarnmini import MiniCluster, NodeSpec, SubmittedApp  # noqa: E402

from yarn_advisor.advisor.act.rollback import select  # noqa: E402
from yarn_advisor.advisor.engine.settings import load_config as load  # noqa: E402
from yarn_advisor.advisor.loop.daemon import Advisor  # noqa: E402
from yarn_advisor.advisor.loop.wiring import build_live_advisor  # noqa: E402
from yarn_advisor.config.schema import AdvisorConfig  # noqa: E402

MODES = ("off", "sidecar", "plugin")
FIELDS = ("makespan_s", "mean_jct_s", "locality_rate", "failed_jobs")
JOB_COUNTERS = "org.apache.hadoop.mapreduce.JobCounter"
COUNTERS = ("Admits", "Vetoes", "Vetoes.matchmaking.nonlocal", "Fallbacks",
            "Fallbacks.no_table", "Fallbacks.expired", "Fallbacks.unknown_app")
# one user may fill the cluster from its queue (as the plug-in's tests set it)
SCHEDULER = {f"yarn.scheduler.capacity.root.{q}.user-limit-factor": 10
             for q in ("default", "etl", "adhoc")}


def advisor_config(cluster: MiniCluster, state: Path, interval: float, table: Path,
                   precision: bool, mm_rounds: int | None = None) -> AdvisorConfig:
    policies = {} if mm_rounds is None else {
        "matchmaking": {"params": {"rounds": mm_rounds}}}
    return load(None, {
        "policies": policies,
        "rm": {"urls": [cluster.rm_url], "history_url": cluster.jhs_url},
        "dry_run": False, "state_dir": str(state),
        "sense": {"interval_s": interval},
        "classifier": {"checkpoint": str(state / "classifier.json")},
        "server": {"enabled": False},
        "actuator": {"cooldown_s": 2 * interval, "max_actions_per_cycle": 50,
                     "max_actions_per_target": 1000, "max_snapshot_age_s": 60},
        "precision": {"enabled": precision, "table_file": str(table)},
    })


class AdvisorLoop(threading.Thread):
    """The daemon's loop, one cycle every ``interval`` s; the rules it recommended and the
    tables it published. On stop its table is withdrawn (the file deleted)."""

    def __init__(self, advisor: Advisor, interval: float) -> None:
        super().__init__(daemon=True)
        self.advisor, self.interval = advisor, interval
        self.rules: Counter[str] = Counter()
        self.cycles = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            started = time.monotonic()
            report = self.advisor.run_once()
            self.cycles += 1
            for r in report.recommendations:
                self.rules[f"{r.policy}:{r.explanation.rule}:{r.kind.value}"] += 1
            self.done.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def stop(self) -> None:
        self.done.set()
        self.join()
        if self.advisor.actuator.publisher is not None:
            self.advisor.actuator.publisher.stop()


def plugin_counters(cluster: MiniCluster) -> dict[str, Any]:
    beans = cluster.read(f"{cluster.rm_url}/jmx?qry={MBEAN}")["beans"]
    return dict(beans[0]) if beans else {}


def history(cluster: MiniCluster, path: str) -> Any:
    try:
        return cluster.read(f"{cluster.jhs_url}/ws/v1/history/mapreduce/jobs/{path}")
    except urllib.error.HTTPError:
        return None


def job_counters(cluster: MiniCluster, app_id: str) -> dict[str, int]:
    """The job's JobCounter group from the JobHistoryServer (waits until it is there)."""
    job = app_id.replace("application_", "job_")
    body = wait_for(lambda: history(cluster, f"{job}/counters"), f"{job} in JobHistory")
    group = next((g for g in body["jobCounters"]["counterGroup"]
                  if g["counterGroupName"] == JOB_COUNTERS), {"counter": []})
    return {c["name"]: int(c["totalCounterValue"]) for c in group["counter"]}


def make_inputs(work: Path, files: int) -> Path:
    """``files`` small text files: one split (one map) each, all local to ``localhost``."""
    inputs = work / "wordcount-in"
    inputs.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (inputs / f"part-{i:02d}.txt").write_text(f"split {i} of the plug-in's bench\n" * 200)
    return inputs


def one_run(cluster: MiniCluster, mode: str, args: argparse.Namespace, work: Path,
            inputs: Path, table: Path, n: int) -> dict[str, Any]:
    state = Path(tempfile.mkdtemp(prefix=f"{mode}-", dir=work))
    loop: AdvisorLoop | None = None
    started = time.time()
    if mode != "off":
        advisor = build_live_advisor(advisor_config(cluster, state, args.interval, table,
                                                    precision=mode == "plugin",
                                                    mm_rounds=args.mm_rounds))
        loop = AdvisorLoop(advisor, args.interval)
        loop.start()
    applying = False
    if mode == "plugin":  # the batch starts once the plug-in applies a table (or 300 s on)
        deadline = time.monotonic() + 300
        while not applying and time.monotonic() < deadline:
            applying = plugin_counters(cluster).get("TableStatus") == "ok"
            time.sleep(0.5)
    before = plugin_counters(cluster)
    apps: list[SubmittedApp] = [
        cluster.example_job("wordcount", inputs.as_uri(),
                            (work / f"out-{n}-{mode}-{j}").as_uri(), queue="default",
                            conf={"mapreduce.job.reduces": 1})
        for j in range(args.jobs)]
    codes = [a.wait(timeout=1800) for a in apps]
    after = plugin_counters(cluster)
    out: dict[str, Any] = {"mode": mode}
    if mode == "plugin":
        out["table_before_batch"] = applying
    if loop is not None:
        loop.stop()
        acts = loop.advisor.actuator.journal.actions()
        undo = loop.advisor.actuator.rollback(select(acts, since=started))
        out |= {"cycles": loop.cycles, "rules": dict(loop.rules.most_common(8)),
                "actions": dict(Counter(f"{a.kind.value}:{a.outcome}" for a in acts)),
                "rolled_back": len(undo)}
    info = [cluster.read(f"{cluster.rm_url}/ws/v1/cluster/apps/{a.app_id}")["app"]
            for a in apps]
    counters = [job_counters(cluster, a.app_id) for a in apps]
    launched = sum(c.get("TOTAL_LAUNCHED_MAPS", 0) for c in counters)
    local = sum(c.get("DATA_LOCAL_MAPS", 0) for c in counters)
    first = min(int(i["startedTime"]) for i in info)
    last = max(int(i["finishedTime"]) for i in info)
    shutil.rmtree(state, ignore_errors=True)
    return out | {
        "makespan_s": (last - first) / 1000,
        "mean_jct_s": statistics.fmean(
            (int(i["finishedTime"]) - int(i["startedTime"])) / 1000 for i in info),
        "locality_rate": local / launched if launched else None,
        "failed_jobs": sum(1 for i, c in zip(info, codes, strict=True)
                           if i["finalStatus"] != "SUCCEEDED" or c != 0),
        "maps": launched, "data_local_maps": local,
        "rack_local_maps": sum(c.get("RACK_LOCAL_MAPS", 0) for c in counters),
        "plugin": {k: after.get(k, 0) - before.get(k, 0) for k in COUNTERS
                   if isinstance(after.get(k), int)} | {"table_seq": after.get("TableSeq")},
    }


def start_cluster(work: Path, table: Path, tries: int = 3) -> MiniCluster:
    """The mini cluster with the plug-in; a start that lost a free port to another
    process on this machine (BindException) is tried again in a fresh directory."""
    for attempt in range(1, tries + 1):
        cluster = MiniCluster(work / f"cluster-{attempt}",
                              nodes=(NodeSpec(6144, 6), NodeSpec(3072, 3)),
                              node_hosts=("127.0.0.2", "localhost"),
                              rm_classpath=(str(build()),), scheduler_conf=SCHEDULER,
                              extra_conf=rm_conf(file=table))
        try:
            cluster.start()
            return cluster
        except RuntimeError as exc:
            cluster.stop()
            if attempt == tries:
                raise
            print(f"mini cluster start {attempt} failed ({exc}); again", file=sys.stderr)
    raise AssertionError("unreachable")


def medians(rs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(rs)}
    for k in FIELDS:
        vals = [r[k] for r in rs if r[k] is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


def summarize(runs: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {m: medians([r for r in runs if r["mode"] == m]) for m in MODES}
    out |= {"rounds": args.rounds, "interval_s": args.interval, "jobs": args.jobs,
            "mm_rounds": args.mm_rounds,
            "maps_per_job": args.files, "nodes": 2, "runs": runs}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="runs per mode (>= 3 for medians)")
    ap.add_argument("--interval", type=float, default=5.0, help="advisor cycle (s)")
    ap.add_argument("--jobs", type=int, default=2, help="wordcounts per batch")
    ap.add_argument("--files", type=int, default=16, help="input files (maps) per wordcount")
    ap.add_argument("--mm-rounds", type=int, default=None,
                    help="Matchmaking's rounds (its local_only skip budget is rounds x "
                    "RUNNING nodes); default: the policy's own (1)")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    if args.mm_rounds is not None and args.mm_rounds < 1:
        ap.error("--mm-rounds must be >= 1")
    if args.rounds < 1 or args.jobs < 1 or args.files < 1 or args.interval <= 0:
        ap.error("--rounds, --jobs and --files must be >= 1 and --interval > 0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the cluster on TERM too
    work = Path(tempfile.mkdtemp(prefix="bench-gain-plugin-"))
    table = work / "decision-table.json"
    t0 = time.monotonic()
    cluster = start_cluster(work, table)
    print(f"mini cluster up in {time.monotonic() - t0:.0f}s at {cluster.rm_url}", file=sys.stderr)
    runs: list[dict[str, Any]] = []
    try:
        # the plug-in starts with the RM's first request (docs/plugin.md): load it first
        cluster.distributed_shell(queue="adhoc", containers=1, command="true").wait(300)
        wait_for(lambda: plugin_counters(cluster).get("TableStatus") == "file_missing",
                 "the plug-in's first poll")
        inputs = make_inputs(work, args.files)
        for i in range(args.rounds):
            for mode in rotated(MODES, i):
                r = one_run(cluster, mode, args, work, inputs, table, i + 1) | {"round": i + 1}
                runs.append(r)
                extra = {k: r[k] for k in ("cycles", "actions", "rules") if k in r}
                print(f"round {i + 1} {mode:>7}: makespan {r['makespan_s']:.1f}s, mean JCT "
                      f"{r['mean_jct_s']:.1f}s, node-local {r['data_local_maps']}/{r['maps']}"
                      f" maps, failed {r['failed_jobs']}; plug-in {r['plugin']} {extra}",
                      file=sys.stderr, flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    summary = summarize(runs, args)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
        return 0
    print(f"{'mode':8} {'makespan (s)':>13} {'mean JCT (s)':>13} {'node-local':>11} "
          f"{'failed':>7}   medians of {args.rounds} rounds")
    for mode in MODES:
        m = summary[mode]
        rate = "n/a" if m["locality_rate"] is None else f"{m['locality_rate']:.1%}"
        print(f"{mode:8} {m['makespan_s']:13.1f} {m['mean_jct_s']:13.1f} {rate:>11} "
              f"{m['failed_jobs']:7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
