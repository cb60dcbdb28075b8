"""Advisor off vs on through SLS's real ResourceManager (500 simulated nodes), with its ceiling.

Each run starts a fresh SLS (tests/sls: the real RM and CapacityScheduler,
queues default 40 % / etl 40 % / adhoc 20 %, application priorities up to 10,
in-memory mutable scheduler-conf store; 500 nodes on 20 racks) on the same
trace (real Rumen job shapes, load 0.9 over 7 minutes) and runs it to the end:

* ``off``: no advisor;
* ``on``: the real daemon (``wiring.build_advisor`` with the project's
  the writer over ``RMLevers``, enforce mode, config ``examples/sls-gain.yaml``) cycling every
  ``sense.interval_s`` against SLS's RM REST; after the trace every applied
  action in its journal is read back from the RM (``journal_agrees``);
* ``ceiling``: the priority lever used with hindsight: as each app appears the
  bench sets its priority from its job's critical path in the trace (longest
  first, LPT, 10 levels), through the same writer;
* ``ceiling_sjf`` (``--modes``): the same with the least total work first (SJF),
  the hindsight order for mean job completion time.

Also printed: ``bound_makespan_s``, the makespan no ordering or placement can
beat on SLS (each job's arrival + its longest map + its longest reduce, as SLS
runs reduces after the maps), the advisor's cycle cost (sense/decide seconds,
bytes and requests per cycle, SLS JVM CPU while it polls), and what was lost
(apps killed or failed, their vcore-seconds, the advisor's kill-like actions).

Pairs alternate off/on (then ceiling) ``--runs`` times; figures are medians.
``--parallel`` runs the runs of one pair at once (each SLS runs in real time
and uses ~15 % of a core; ~11 minutes instead of ~33 for a full trio).
``--window`` shortens the arrival window for development (the load stays).

    python bench/bench_gain_sls.py [--runs 3] [--modes off,on,ceiling] [--parallel] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sls"))
sys.path.insert(0, str(ROOT / "bench"))

from sls_probe import ByteCounter  # noqa: E402
from slsrun import SlsCluster  # noqa: E402
from slswatch import Sampler, figures  # noqa: E402
from workload import TraceSpec, build_trace, make_nodes, summary_dict  # noqa: E402

from yarn_advisor.advisor.act.actuator import journal_path, open_journal  # noqa: E402
from yarn_advisor.advisor.act.writer import Writer  # noqa: E402
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor  # noqa: E402
from yarn_advisor.advisor.model.payloads import Priority, holds, value_from_json  # noqa: E402
from yarn_advisor.advisor.model.recommendation import Kind  # noqa: E402
from yarn_advisor.advisor.policies import params_models  # noqa: E402
from yarn_advisor.config.schema import AdvisorConfig, load  # noqa: E402
from yarn_advisor.connectors.errors import ConnectorError  # noqa: E402
from yarn_advisor.connectors.rm.write import RMLevers  # noqa: E402

CONFIG = ROOT / "examples" / "sls-gain.yaml"
KILL_LIKE = (Kind.KILL_APP, Kind.SIGNAL_CONTAINER)
MAX_PRIORITY = 10


def critical_paths(spec: TraceSpec, nodes: int, racks: int) -> dict[str, tuple[float, float]]:
    """Per trace job: (arrival s, longest map + longest reduce s), from the trace itself."""
    placed, _ = build_trace(make_nodes(nodes, racks), spec)
    out = {}
    for p in placed:
        longest = {k: max((t.duration_ms for t in p.job.tasks if t.kind == k), default=0)
                   for k in ("map", "reduce")}
        out[p.job_id] = (p.start_ms / 1000, (longest["map"] + longest["reduce"]) / 1000)
    return out


def total_work(spec: TraceSpec, nodes: int, racks: int) -> dict[str, float]:
    """Per trace job: the task-seconds it asks (every task's duration, summed)."""
    placed, _ = build_trace(make_nodes(nodes, racks), spec)
    return {p.job_id: sum(t.duration_ms for t in p.job.tasks) / 1000 for p in placed}


def quantile_levels(value: dict[str, float], top_is_largest: bool) -> dict[str, int]:
    """11 priority levels by quantile of ``value``: the top decile gets 10 (the
    largest values if ``top_is_largest``, else the smallest)."""
    ranked = sorted(value.values(), reverse=not top_is_largest)
    n = len(ranked)
    if not n:
        return {}

    def level(v: float) -> int:
        above = sum(1 for q in range(1, MAX_PRIORITY + 1)
                    if (v >= ranked[n * q // 11] if top_is_largest else v <= ranked[n * q // 11]))
        return min(MAX_PRIORITY, above)

    return {job: level(v) for job, v in value.items()}


def advisor_config(cluster: SlsCluster, state_dir: Path, config: Path) -> AdvisorConfig:
    return load(config, {"rm": {"urls": [cluster.rm_url]}, "state_dir": str(state_dir)},
                params_models())


class AdvisorLoop(threading.Thread):
    """The daemon's cycles, every ``interval_s``, each measured: steps, bytes, JVM CPU."""

    def __init__(self, cluster: SlsCluster, cfg: AdvisorConfig) -> None:
        super().__init__(daemon=True)
        self.cluster, self.cfg = cluster, cfg
        self.counter = ByteCounter()
        sensor = build_sensor(cfg, self.counter)
        self.writer = Writer(RMLevers(sensor.connectors.rm, cfg.actuator.overcommit_timeout_ms))
        self.advisor = build_advisor(cfg, sensor, self.writer, persist=False)
        self.cycles: list[dict[str, Any]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        interval = self.cfg.sense.interval_s
        while not self.stopped.is_set():
            t0, cpu0 = time.monotonic(), self.cluster.cpu_s()
            self.counter.take()
            report = self.advisor.run_once()
            wall = time.monotonic() - t0
            requests, nbytes = self.counter.take()
            snap = report.snapshot
            self.cycles.append({
                "outcome": report.outcome, "seconds": round(wall, 2),
                "sense_s": round(report.step_seconds.get("sense", 0.0), 2),
                "decide_s": round(report.step_seconds.get("decide", 0.0), 3),
                "act_s": round(report.step_seconds.get("act", 0.0), 2),
                "requests": requests, "bytes": nbytes,
                "nodes": len(snap.nodes) if snap else 0, "apps": len(snap.apps) if snap else 0,
                "actions": sum(report.actions.values()),
                "rm_cpu_s": round(self.cluster.cpu_s() - cpu0, 2)})
            self.stopped.wait(max(0.0, interval - wall))

    def journal_check(self) -> dict[str, Any]:
        """Every applied action, last per (kind, target), read back from the RM now."""
        actions = open_journal(self.cfg).actions()
        applied = [a for a in actions if a.outcome == "applied"]
        last = {(a.kind, a.target): a for a in applied}
        disagree = []
        for (kind, target), a in last.items():
            try:
                value = value_from_json(kind, a.value)
                held = self.writer.read(kind, target, value)
                ok = holds(kind, held, value)
                now = None if held is None else held.to_json()
            except (ConnectorError, ValueError) as exc:
                now, ok = repr(exc), False
            if not ok:
                disagree.append({"kind": kind.value, "target": target, "journal": a.value,
                                 "rm": now})
        by_kind: dict[str, int] = {}
        for a in applied:
            by_kind[a.kind.value] = by_kind.get(a.kind.value, 0) + 1
        outcomes: dict[str, int] = {}
        for a in actions:
            outcomes[a.outcome or "none"] = outcomes.get(a.outcome or "none", 0) + 1
        return {"journal": str(journal_path(self.cfg)), "actions": len(actions),
                "outcomes": outcomes, "applied_by_kind": by_kind,
                "targets_read_back": len(last), "disagree": disagree[:20],
                "journal_agrees": not disagree,
                "kill_like_applied": sum(1 for a in applied if a.kind in KILL_LIKE)}


class HindsightPriorities(threading.Thread):
    """A ceiling: each new app gets the priority ``level`` gives its job (from the trace)."""

    def __init__(self, cluster: SlsCluster, level: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.cluster = cluster
        self.level = level
        cfg = load(None, {"rm": {"urls": [cluster.rm_url]}})
        self.writer = Writer(RMLevers(build_sensor(cfg).connectors.rm))
        self.done: set[str] = set()
        self.errors = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(1.0):
            try:
                waiting = self.cluster.get("/ws/v1/cluster/apps?states=NEW,NEW_SAVING,"
                                           "SUBMITTED,ACCEPTED")
            except (OSError, ValueError):
                continue
            jobs = {app: job for job, app in self.cluster.app_ids().items()}
            for app in ((waiting.get("apps") or {}).get("app") or []):
                job = jobs.get(app["id"])
                if job is None or app["id"] in self.done:
                    continue
                self.done.add(app["id"])
                try:
                    self.writer.apply(Kind.SET_APP_PRIORITY, app["id"],
                                      Priority(self.level[job]))
                except (ConnectorError, ValueError):
                    self.errors += 1


def lost(cluster: SlsCluster) -> dict[str, Any]:
    """Apps that did not finish, and the vcore-seconds they held (wasted)."""
    apps = (cluster.get("/ws/v1/cluster/apps").get("apps") or {}).get("app") or []
    gone = [a for a in apps if a.get("state") in ("KILLED", "FAILED")]
    return {"apps_killed": sum(1 for a in gone if a["state"] == "KILLED"),
            "apps_failed": sum(1 for a in gone if a["state"] == "FAILED"),
            "wasted_vcore_s": sum(int(a.get("vcoreSeconds") or 0) for a in gone)}


def hindsight_levels(mode: str, args: argparse.Namespace) -> dict[str, int]:
    """``ceiling``: longest critical path first (LPT, for makespan); ``ceiling_sjf``:
    least total work first (SJF, for mean JCT)."""
    spec = TraceSpec(window_s=args.window, load=args.load, seed=args.seed)
    if mode == "ceiling_sjf":
        return quantile_levels(total_work(spec, args.nodes, args.racks), top_is_largest=False)
    paths = critical_paths(spec, args.nodes, args.racks)
    return quantile_levels({j: cp for j, (_, cp) in paths.items()}, top_is_largest=True)


def run_one(mode: str, args: argparse.Namespace, paths: dict[str, tuple[float, float]]
            ) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"yarn-sls-gain-{mode}-"))
    spec = TraceSpec(window_s=args.window, load=args.load, seed=args.seed)
    cluster = SlsCluster(workdir, nodes=args.nodes, racks=args.racks, trace=spec)
    cluster.start()
    loop: AdvisorLoop | None = None
    oracle: HindsightPriorities | None = None
    out: dict[str, Any] = {"mode": mode, "workdir": str(workdir)}
    try:
        if mode == "on":
            loop = AdvisorLoop(cluster, advisor_config(cluster, workdir / "advisor", args.config))
        with Sampler(cluster, every_s=5.0) as sampler:
            if loop:
                loop.start()
            if mode.startswith("ceiling"):
                oracle = HindsightPriorities(cluster, hindsight_levels(mode, args))
                oracle.start()
            deadline = time.monotonic() + args.timeout
            while not cluster.finished() and time.monotonic() < deadline:
                time.sleep(3)
            for t in (loop, oracle):
                if t is not None:
                    t.stopped.set()
                    t.join(timeout=120)
        fig = figures(cluster, sampler.samples)
        out |= fig.as_dict() | {"allocated_utilization": fig.mean_alloc_vcores,
                                "timed_out": not cluster.finished()} | lost(cluster)
        if loop:
            out["journal"] = loop.journal_check()
            out["cycles"] = loop.cycles
        if oracle:
            out["hindsight"] = {"apps_set": len(oracle.done), "errors": oracle.errors}
    finally:
        cluster.stop()
    if args.log:
        with open(args.log, "a") as f:
            f.write(json.dumps(out, sort_keys=True) + "\n")
    print(f"{mode}: makespan {out.get('makespan_s')}s, mean JCT {out.get('mean_jct_s')}s, "
          f"allocated {out.get('allocated_utilization')}", file=sys.stderr, flush=True)
    return out


KEYS = ("makespan_s", "mean_jct_s", "median_jct_s", "p95_jct_s", "allocated_utilization",
        "mean_pending_vcores", "rm_cpu_percent", "not_finished", "apps_killed", "apps_failed",
        "wasted_vcore_s")


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {k: round(statistics.median(r[k] for r in rows), 3) for k in KEYS} | {
        "runs": len(rows)}


def cycle_cost(rows: list[dict[str, Any]]) -> dict[str, Any]:
    cycles = [c for r in rows for c in r.get("cycles", []) if c["outcome"] == "ok"]
    if not cycles:
        return {}

    def med(key: str) -> float:
        return round(statistics.median(c[key] for c in cycles), 3)

    return {"cycles": len(cycles), "cycle_s": med("seconds"), "sense_s": med("sense_s"),
            "decide_s": med("decide_s"), "act_s": med("act_s"), "requests": med("requests"),
            "bytes": med("bytes"), "rm_cpu_s_per_cycle": med("rm_cpu_s"),
            "nodes_sensed_min": min(c["nodes"] for c in cycles),
            "max_apps": max(c["apps"] for c in cycles)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    modes = args.modes.split(",")
    paths = critical_paths(TraceSpec(window_s=args.window, load=args.load, seed=args.seed),
                           args.nodes, args.racks)
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for _ in range(args.runs):
        if args.parallel:
            with ThreadPoolExecutor(len(modes)) as pool:
                for m, r in zip(modes, pool.map(lambda m: run_one(m, args, paths), modes),
                                strict=True):
                    rows[m].append(r)
        else:
            for m in modes:
                rows[m].append(run_one(m, args, paths))
    spec = TraceSpec(window_s=args.window, load=args.load, seed=args.seed)
    _, summary = build_trace(make_nodes(args.nodes, args.racks), spec)
    out: dict[str, Any] = {m: median_row(rs) for m, rs in rows.items()}
    cost = cycle_cost(rows.get("on", []))
    checks = [r["journal"] for r in rows.get("on", []) if "journal" in r]
    out |= {
        "nodes": args.nodes, "cycle_s": cost.get("cycle_s"), "cycle_cost": cost,
        "trace": summary_dict(summary),
        "bound_makespan_s": round(max(a + cp for a, cp in paths.values())
                                  - min(a for a, _ in paths.values()), 1),
        "journal_agrees": all(c["journal_agrees"] for c in checks) if checks else None,
        "journal": checks,
        "advisor_kill_like_actions": sum(c["kill_like_applied"] for c in checks),
        "config": str(args.config), "parallel": args.parallel,
        "raw": {m: [{k: r.get(k) for k in (*KEYS, "workdir")} for r in rs]
                for m, rs in rows.items()},
    }
    off = out.get("off", {}).get("makespan_s")
    for m in ("on", "ceiling", "ceiling_sjf"):
        if off and m in out:
            out[m]["makespan_gain"] = round(1 - out[m]["makespan_s"] / off, 4)
            out[m]["mean_jct_gain"] = round(1 - out[m]["mean_jct_s"] / out["off"]["mean_jct_s"], 4)
    return out


def report(r: dict[str, Any]) -> None:
    print(f"SLS {r['nodes']} nodes; trace {r['trace']['jobs']} jobs, load "
          f"{r['trace']['offered_load']}; makespan bound (arrival + critical path) "
          f"{r['bound_makespan_s']}s; parallel runs: {r['parallel']}")
    for m in ("off", "on", "ceiling", "ceiling_sjf"):
        if m in r:
            x = r[m]
            gain = (f"  makespan {x['makespan_gain']:+.1%}, JCT {x['mean_jct_gain']:+.1%}"
                    if "makespan_gain" in x else "")
            print(f"{m:>8} (median of {x['runs']}): makespan {x['makespan_s']}s, mean JCT "
                  f"{x['mean_jct_s']}s (p95 {x['p95_jct_s']}s), allocated "
                  f"{x['allocated_utilization']:.1%}, killed {x['apps_killed']}, failed "
                  f"{x['apps_failed']}, wasted {x['wasted_vcore_s']} vcore-s{gain}")
    c = r["cycle_cost"]
    if c:
        print(f"advisor cycle (median of {c['cycles']}): {c['cycle_s']}s (sense {c['sense_s']}s, "
              f"decide {c['decide_s']}s, act {c['act_s']}s), {c['requests']:.0f} requests, "
              f"{c['bytes'] / 1e6:.2f} MB; SLS JVM {c['rm_cpu_s_per_cycle']} CPU-s per cycle; "
              f"nodes sensed >= {c['nodes_sensed_min']}")
        print(f"journal and RM agree: {r['journal_agrees']}; advisor kill-like actions "
              f"{r['advisor_kill_like_actions']}; "
              + "; ".join(f"applied {j['applied_by_kind']}" for j in r["journal"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--modes", default="off,on,ceiling")
    ap.add_argument("--parallel", action="store_true")
    ap.add_argument("--config", type=Path, default=CONFIG)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--racks", type=int, default=20)
    ap.add_argument("--load", type=float, default=TraceSpec.load)
    ap.add_argument("--window", type=int, default=TraceSpec.window_s,
                    help="arrival window s (shorter for development)")
    ap.add_argument("--seed", type=int, default=TraceSpec.seed)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--log", type=Path, help="append each run's figures here (JSON lines)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
