"""The real gain: a production-like batch on the mini cluster, advisor off vs on vs ceiling.

Starts the real mini cluster (tests/minicluster/yarnmini.py: NodeManagers of
6144 MiB/6 and 3072 MiB/3), then runs the same batch ``--runs`` times in each
mode, one pair (every mode once) after another, each pair's order rotated by
one so drift and load hit every mode in every position:

- off: the RM alone;
- one advisor mode per ``--config``: the advisor in enforce mode (every
  registered policy, the classifier, the actuator), one cycle every
  ``--interval`` s. ``--config default`` runs the shipped defaults (nothing opted
  in); ``--config FILE`` an opt-in file such as ``examples/lend-memory.yaml``
  (the mode is named after the file's stem; that file is the default). Each
  mode's classifier checkpoint is kept across its runs (as on a cluster where
  jobs recur): its first run is cold, the later ones warm. After each advised
  run the bench checks that the journal and the RM agree on every target the
  advisor changed, rolls every action back and checks the RM is restored;
- ceiling (unless ``--no-ceiling``): a static 1.5x node-resource overcommit set
  through the RM REST before the batch (restored after), plus hindsight
  priorities (the iteration chain, the batch's critical path, submitted at
  priority 10).

The batch (``examples/workloads/production_batch_mini.yaml`` says the same, and
where it differs from ``production_batch.yaml``): MapReduce sleep jobs whose
containers ask for far more memory than they use (1-3 GiB asked, about
100-300 MiB used), tasks of 30-50 s, three queues, and an iteration chain of
three map-only jobs (tagged ``iteration:i/3``), each submitted when the
previous one ends.

Figures, from the RM and the JobHistoryServer: makespan = last finish - first
start of the batch's apps; mean JCT = mean of finish - start per app;
allocated utilization = mean over 1 s samples of ``/cluster/metrics``
allocatedMB during the makespan over the cluster's original 9216 MiB (above 1
with overcommit); kills = killed or failed task attempts (the NM's memory
kills included) plus extra AM attempts; wasted container-seconds = their
runtime; failed = jobs whose client exited non-zero. Medians per mode.

    python bench/bench_gain.py [--runs 3] [--interval 5] [--json]
    python bench/bench_gain.py --config default --config examples/lend-memory.yaml
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from _rounds import rotated  # noqa: E402
from yarnmini import MiniCluster, SubmittedApp  # noqa: E402

from yarn_advisor.advisor.act.rollback import DONE, select  # noqa: E402
from yarn_advisor.advisor.act.writer import Writer  # noqa: E402
from yarn_advisor.advisor.engine.settings import load_config as load  # noqa: E402
from yarn_advisor.advisor.loop.daemon import Advisor  # noqa: E402
from yarn_advisor.advisor.loop.wiring import build_live_advisor  # noqa: E402
from yarn_advisor.advisor.model.payloads import (  # noqa: E402
    ConfUpdate,
    NodeResource,
    holds,
    value_from_json,
)
from yarn_advisor.advisor.model.recommendation import Kind  # noqa: E402
from yarn_advisor.config.schema import AdvisorConfig  # noqa: E402
from yarn_advisor.connectors.rm.write import RMLevers, node_total  # noqa: E402

TOTAL_MB = 9216
OVERCOMMIT = 1.5
# Containers ask for 1-3 GiB; a sleep task's JVM uses about 100-300 MiB.
BATCH: list[dict[str, Any]] = [
    dict(queue="etl", maps=4, reduces=1, map_ms=40000, reduce_ms=30000, map_mb=2048,
         reduce_mb=1536),
    dict(queue="default", maps=6, reduces=1, map_ms=35000, reduce_ms=30000, map_mb=1536,
         reduce_mb=1024),
    dict(queue="adhoc", maps=2, reduces=1, map_ms=50000, reduce_ms=30000, map_mb=3072,
         reduce_mb=2048, map_vcores=2),
    dict(queue="default", maps=4, reduces=0, map_ms=45000, map_mb=1024),
]
CHAIN: dict[str, Any] = dict(queue="etl", maps=4, reduces=0, map_ms=30000, map_mb=1536)
CHAIN_LEN = 3
# Elastic queues, as production clusters set them: one user may grow a queue up to
# its maximum capacity (100 %), not only its guaranteed share (user-limit-factor 1).
USER_LIMIT_FACTOR = {"root.default": "2.5", "root.etl": "2.5", "root.adhoc": "5"}


def get_json(url: str, tries: int = 4) -> Any:
    """One JSON GET, tried again on a timeout or a dropped connection (on a loaded box
    the JobHistoryServer can take longer than a minute to answer)."""
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.load(resp)
        except urllib.error.HTTPError:
            raise
        except (TimeoutError, urllib.error.URLError, ConnectionError):
            if attempt == tries - 1:
                raise
            time.sleep(5)
    raise AssertionError("unreachable")


def advisor_config(cluster: MiniCluster, state: Path, checkpoint: Path,
                   interval: float, config: Path | None = None) -> AdvisorConfig:
    """The advisor for one run: the shipped defaults (``config`` None) or an opt-in
    file such as ``examples/lend-memory.yaml``, plus what only the bench sets (the
    mini cluster's URLs, enforce mode, a private state dir, a short cycle)."""
    return load(config, {
        "rm": {"urls": [cluster.rm_url], "history_url": cluster.jhs_url},
        "dry_run": False, "state_dir": str(state),
        "sense": {"interval_s": interval},
        "classifier": {"checkpoint": str(checkpoint)},
        "server": {"enabled": False},
        "actuator": {"cooldown_s": 2 * interval, "max_actions_per_cycle": 50,
                     "max_actions_per_target": 1000, "max_snapshot_age_s": 60},
    })


def config_label(config: Path | None) -> str:
    """A run's mode name: ``default`` or the opt-in file's stem (``lend-memory``)."""
    return "default" if config is None else config.stem


def parse_config(text: str) -> Path | None:
    """``--config``: ``default`` (nothing opted in) or an existing YAML file."""
    if text == "default":
        return None
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such config file (or 'default')")
    return path


class Sampler(threading.Thread):
    """Samples the RM's allocated memory every second."""

    def __init__(self, cluster: MiniCluster) -> None:
        super().__init__(daemon=True)
        self.url = f"{cluster.rm_url}/ws/v1/cluster/metrics"
        self.samples: list[tuple[float, int]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                m = get_json(self.url)["clusterMetrics"]
                self.samples.append((time.time() * 1000, int(m["allocatedMB"])))
            except (OSError, ValueError, KeyError):
                pass
            self.done.wait(1.0)


class AdvisorLoop(threading.Thread):
    """The daemon's loop (one cycle every ``interval`` s), keeping each cycle's cost
    and the rules behind its recommendations."""

    def __init__(self, advisor: Advisor, interval: float) -> None:
        super().__init__(daemon=True)
        self.advisor, self.interval = advisor, interval
        self.cycle_s: list[float] = []
        self.rules: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            started = time.monotonic()
            report = self.advisor.run_once()
            self.cycle_s.append(sum(report.step_seconds.values()))
            if report.outcome != "ok":
                self.skipped[report.reason[:80]] += 1
            for r in report.recommendations:
                self.rules[f"{r.policy}:{r.explanation.rule}:{r.kind.value}"] += 1
            self.done.wait(max(0.0, self.interval - (time.monotonic() - started)))


def submit(cluster: MiniCluster, spec: dict[str, Any], tags: str, priority: int | None
           ) -> SubmittedApp:
    return cluster.sleep_job(**spec, tags=tags, priority=priority)


def run_chain(cluster: MiniCluster, apps: list[SubmittedApp], priority: int | None) -> None:
    for i in range(1, CHAIN_LEN + 1):
        job = submit(cluster, CHAIN, f"bench:gain,iteration:{i}/{CHAIN_LEN}", priority)
        apps.append(job)
        job.wait(timeout=1800)


def overcommit(writer: Writer, originals: dict[str, NodeResource], factor: float) -> None:
    for node, total in originals.items():
        value = NodeResource(int((total.memory_mb or 0) * factor),
                             int((total.vcores or 0) * factor))
        writer.apply(Kind.UPDATE_NODE_RESOURCE, node, value)


def losses(cluster: MiniCluster, app_ids: list[str]) -> tuple[int, float]:
    """Killed or failed task attempts and extra AM attempts, and their runtime (s)."""
    kills, wasted = 0, 0.0
    hs = f"{cluster.jhs_url}/ws/v1/history/mapreduce/jobs"
    for app in app_ids:
        attempts = get_json(f"{cluster.rm_url}/ws/v1/cluster/apps/{app}/appattempts")
        am = attempts["appAttempts"]["appAttempt"]
        kills += len(am) - 1
        job_id = app.replace("application_", "job_")
        job: dict[str, Any] = {}
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                job = get_json(f"{hs}/{job_id}")["job"]
                break
            except (urllib.error.HTTPError, KeyError):
                time.sleep(2)
        bad = sum(int(job.get(k, 0)) for k in (
            "failedMapAttempts", "killedMapAttempts", "failedReduceAttempts",
            "killedReduceAttempts"))
        if not bad:
            continue
        kills += bad
        for task in get_json(f"{hs}/{job_id}/tasks")["tasks"]["task"]:
            body = get_json(f"{hs}/{job_id}/tasks/{task['id']}/attempts")
            for a in body["taskAttempts"]["taskAttempt"]:
                if a["state"] in ("KILLED", "FAILED"):
                    wasted += int(a.get("elapsedTime", 0)) / 1000
    return kills, wasted


def agreement(writer: Writer, actions: list[Any]) -> tuple[int, list[str]]:
    """Targets the advisor changed, and those where the RM disagrees with the journal's
    last applied value."""
    last: dict[tuple[Kind, str], Any] = {}
    for a in sorted(actions, key=lambda a: a.ts):
        if a.sent and a.outcome in DONE:
            last[(a.kind, a.target)] = a.value
    wrong = []
    for (kind, target), raw in last.items():
        value = value_from_json(kind, raw)
        try:
            seen = writer.read(kind, target, value)
        except Exception as exc:  # a failed read is a disagreement to report
            wrong.append(f"{kind.value} {target}: journal {value}, RM unreadable ({exc})")
            continue
        if not holds(kind, seen, value):
            wrong.append(f"{kind.value} {target}: journal {value}, RM {seen}")
    return len(last), wrong


def elastic_queues(cluster: MiniCluster, work: Path) -> None:
    """The queues' user-limit-factor (through the scheduler-conf API) before any run."""
    cfg = advisor_config(cluster, work / "setup", work / "setup" / "classifier.json", 5)
    writer = build_live_advisor(cfg).actuator.writer
    assert writer is not None
    for queue, factor in USER_LIMIT_FACTOR.items():
        writer.apply(Kind.UPDATE_SCHEDULER_CONF, queue,
                     ConfUpdate.of({"user-limit-factor": factor}))


def node_totals(writer: Writer) -> dict[str, NodeResource]:
    assert isinstance(writer.levers, RMLevers)
    nodes = writer.levers.get("/nodes")["nodes"]["node"]
    return {n["id"]: node_total(writer.levers, n["id"]) for n in nodes}


def one_run(cluster: MiniCluster, mode: str, interval: float, work: Path,
            checkpoint: Path, config: Path | None = None) -> dict[str, Any]:
    """One batch in ``mode``: ``off``, ``ceiling``, or an advisor run (``default`` or an
    opt-in's name, its file in ``config``)."""
    state = Path(tempfile.mkdtemp(prefix=f"{mode}-", dir=work))
    cfg = advisor_config(cluster, state, checkpoint, interval, config)
    advisor = build_live_advisor(cfg)  # its writer also serves the ceiling and the checks
    assert advisor.actuator.writer is not None
    writer = advisor.actuator.writer
    originals = node_totals(writer)
    cold = not checkpoint.exists()
    loop = AdvisorLoop(advisor, interval)
    started = time.time()
    advised = mode not in ("off", "ceiling")
    if advised:
        loop.start()
    if mode == "ceiling":
        overcommit(writer, originals, OVERCOMMIT)
    priority = 10 if mode == "ceiling" else None
    sampler = Sampler(cluster)
    sampler.start()
    apps: list[SubmittedApp] = []
    chain = threading.Thread(target=run_chain, args=(cluster, apps, priority))
    chain.start()
    apps += [submit(cluster, spec, "bench:gain", None) for spec in BATCH]
    for app in list(apps):
        app.wait(timeout=1800)
    chain.join()
    codes = [a.proc.wait() for a in apps]
    sampler.done.set()
    out: dict[str, Any] = {"mode": mode}
    if advised:
        loop.done.set()
        loop.join()
        acts = advisor.actuator.journal.actions()
        changed, wrong = agreement(writer, acts)
        undo = advisor.actuator.rollback(select(acts, since=started))
        out |= {"cold": cold, "cycles": len(loop.cycle_s),
                "cycle_s": statistics.median(loop.cycle_s) if loop.cycle_s else None,
                "actions": dict(Counter(f"{a.kind.value}:{a.outcome}" for a in acts)),
                "rules": dict(loop.rules.most_common(12)), "skipped": dict(loop.skipped),
                "targets_changed": changed, "journal_rm_disagree": wrong,
                "rolled_back": sum(1 for e in undo if e.outcome in DONE)}
    if mode == "ceiling":
        overcommit(writer, originals, 1.0)
    restored = node_totals(writer) == originals
    info = [get_json(f"{cluster.rm_url}/ws/v1/cluster/apps/{a.app_id}")["app"] for a in apps]
    first = min(int(i["startedTime"]) for i in info)
    last = max(int(i["finishedTime"]) for i in info)
    inside = [s for s in sampler.samples if first <= s[0] <= last] or sampler.samples
    kills, wasted = losses(cluster, [a.app_id for a in apps])
    return out | {
        "makespan_s": (last - first) / 1000,
        "mean_jct_s": statistics.fmean(
            (int(i["finishedTime"]) - int(i["startedTime"])) / 1000 for i in info),
        "allocated_utilization": statistics.fmean(s[1] for s in inside) / TOTAL_MB,
        "apps": len(apps), "failed": sum(1 for c in codes if c != 0),
        "states": sorted({i["finalStatus"] for i in info}),
        "kills": kills, "wasted_container_s": wasted, "rm_restored": restored,
    }


FIELDS = ("makespan_s", "mean_jct_s", "allocated_utilization", "kills", "wasted_container_s",
          "failed")


def medians(rs: list[dict[str, Any]]) -> dict[str, Any]:
    if not rs:
        return {}
    return {k: statistics.median(r[k] for r in rs) for k in FIELDS} | {"runs": len(rs)}


def summarize(runs: list[dict[str, Any]], interval: float, modes: list[str]
              ) -> dict[str, Any]:
    """Medians per mode; per advised mode its cold and warm runs and its gain over
    ``off`` (makespan and mean JCT), and its share of the ceiling's gain."""
    by = {m: [r for r in runs if r["mode"] == m] for m in modes}
    out: dict[str, Any] = {m: medians(rs) for m, rs in by.items()}
    off = out.get("off", {})
    ceil = out.get("ceiling", {}).get("makespan_s")
    gains: dict[str, Any] = {}
    for m in modes:
        if m in ("off", "ceiling") or not out[m] or not off:
            continue
        out[f"{m}_cold"] = medians([r for r in by[m] if r.get("cold")])
        out[f"{m}_warm"] = medians([r for r in by[m] if not r.get("cold")])
        on = out[m]["makespan_s"]
        g: dict[str, Any] = {
            "makespan_gain": 1 - on / off["makespan_s"],
            "mean_jct_gain": 1 - out[m]["mean_jct_s"] / off["mean_jct_s"]}
        if ceil:
            g["share_of_ceiling"] = ((off["makespan_s"] - on) / (off["makespan_s"] - ceil)
                                     if off["makespan_s"] > ceil else None)
        cycles = [r["cycle_s"] for r in by[m] if r.get("cycle_s") is not None]
        g["cycle_s"] = statistics.median(cycles) if cycles else None
        gains[m] = g
    if ceil and off:
        out["ceiling_gain"] = 1 - ceil / off["makespan_s"]
    out["gains"] = gains
    out["modes"] = modes
    out["interval_s"] = interval
    out["nodes"] = 2
    out["runs"] = runs
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per mode (>= 3 for medians)")
    ap.add_argument("--interval", type=float, default=5.0, help="advisor cycle (s)")
    ap.add_argument("--config", type=parse_config, action="append", default=None,
                    help="an advisor run: 'default' (the shipped defaults, nothing opted "
                         "in) or an opt-in YAML file; repeat for several (default: "
                         "examples/lend-memory.yaml)")
    ap.add_argument("--no-ceiling", action="store_true", help="skip the ceiling mode")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    ap.add_argument("--log", type=Path, default=None, help="append each run as a JSON line")
    args = ap.parse_args(argv)
    configs: list[Path | None] = (args.config if args.config is not None
                                  else [ROOT / "examples" / "lend-memory.yaml"])
    by_mode = {config_label(c): c for c in configs}
    if len(by_mode) != len(configs):
        ap.error("two --config give the same mode name")
    modes = ["off", *by_mode] + ([] if args.no_ceiling else ["ceiling"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the cluster on TERM too
    work = Path(tempfile.mkdtemp(prefix="bench-gain-"))
    cluster = MiniCluster(work / "cluster")
    t0 = time.monotonic()
    cluster.start()
    print(f"mini cluster up in {time.monotonic() - t0:.0f}s at {cluster.rm_url}", file=sys.stderr)
    runs: list[dict[str, Any]] = []
    try:
        elastic_queues(cluster, work)
        for i in range(args.runs):
            for mode in rotated(modes, i):
                # one classifier checkpoint per advised mode: its first run cold
                checkpoint = work / f"classifier-{mode}.json"
                r = one_run(cluster, mode, args.interval, work, checkpoint,
                            by_mode.get(mode)) | {"pair": i + 1}
                runs.append(r)
                if args.log:
                    with args.log.open("a") as fh:
                        fh.write(json.dumps(r, sort_keys=True) + "\n")
                extra = {k: r[k] for k in ("cold", "cycles", "actions", "rules",
                                           "journal_rm_disagree", "rolled_back") if k in r}
                print(f"run {i + 1} {mode:>11}: makespan {r['makespan_s']:.1f}s, mean JCT "
                      f"{r['mean_jct_s']:.1f}s, allocated {r['allocated_utilization']:.1%}, "
                      f"kills {r['kills']} ({r['wasted_container_s']:.0f} s), failed "
                      f"{r['failed']}, RM restored {r['rm_restored']} {extra}",
                      file=sys.stderr, flush=True)
    finally:
        cluster.stop()
    summary = summarize(runs, args.interval, modes)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
        return 0
    print(f"{'mode':16} {'makespan (s)':>13} {'mean JCT (s)':>13} {'allocated':>10} "
          f"{'kills':>6} {'wasted (s)':>11} {'failed':>7}   medians of {args.runs} runs")
    for mode in [m for base in modes for m in (base, f"{base}_cold", f"{base}_warm")]:
        m = summary.get(mode)
        if m:
            print(f"{mode:16} {m['makespan_s']:13.1f} {m['mean_jct_s']:13.1f} "
                  f"{m['allocated_utilization']:10.1%} {m['kills']:6.0f} "
                  f"{m['wasted_container_s']:11.0f} {m['failed']:7.0f}")
    for mode, g in summary["gains"].items():
        share = g.get("share_of_ceiling")
        print(f"{mode}: makespan gain {g['makespan_gain']:.1%}, mean JCT gain "
              f"{g['mean_jct_gain']:.1%}"
              + ("" if "share_of_ceiling" not in g else
                 f", share of the ceiling {'n/a' if share is None else f'{share:.0%}'}")
              + ("" if g["cycle_s"] is None else
                 f"; cycle {g['cycle_s']:.2f}s every {args.interval:.0f}s"))
    if "ceiling_gain" in summary:
        print(f"ceiling gain {summary['ceiling_gain']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
