"""Act-step benchmark: the actuator on one cycle with a recommendation for every app.

A snapshot of N running apps (``--apps``, repeatable; default the growth table 1k,
5k, 10k, 20k, 40k and 44,243 apps, the size of the reliability probe's 50 MB
``/apps`` body) and one ``set_app_priority`` recommendation per app, in dry-run
with the default guardrails (10 actions a cycle): the time of the act step
(median of ``--runs``, process CPU seconds), and the journal it wrote (lines, bytes).
Target: linear in apps, and <= 1 s at 44k apps. ``--json`` prints one object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.journal import Journal
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Priority
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import (
    App,
    ClusterInfo,
    ClusterMetrics,
    Node,
    Resources,
    Snapshot,
)
from yarn_advisor.config.schema import ActuatorSettings

SIZES = (1_000, 5_000, 10_000, 20_000, 40_000, 44_243)
TS = 1_700_000_000_000
Z = Resources()


def snapshot(n_apps: int) -> Snapshot:
    apps = tuple(App(f"application_{TS}_{i:05d}", f"job-{i}", "u", f"q{i % 10}", "MAPREDUCE",
                     (), "RUNNING", "UNDEFINED", 0, 50.0, TS, 0, 1, Z, Z, 1, "", "", ())
                 for i in range(n_apps))
    node = Node("h:1", "h", "/r", "RUNNING", "h:8042", (), Resources(8192, 8), Z,
                Resources(8192, 8), 0, None)
    metrics = ClusterMetrics(0, 0, 0, n_apps, 0, 0, Z, Z, Z, Z, 0, 0, 0, 1, 1, 0, 0, 0)
    info = ClusterInfo(1, "STARTED", "ACTIVE", "3.4.2", "3.4.2", TS)
    return Snapshot(TS, "http://rm:8088", info, metrics, (node,), (), apps, ())


def measure(n_apps: int, runs: int) -> dict[str, Any]:
    snap = snapshot(n_apps)
    why = Explanation("haste.rta.preference_rank", "bench")
    recs = [Recommendation(Kind.SET_APP_PRIORITY, a.id, Priority(5), "haste", why, Priority(0))
            for a in snap.apps]
    cpu: list[float] = []
    lines = size = 0
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp(prefix="bench-act-"))
        journal = Journal(folder / "journal.jsonl")
        actuator = Actuator(ActuatorSettings(), journal, None, True, {},
                            clock=lambda: TS / 1000)
        c0 = time.process_time()
        actuator.act(recs, snap)
        cpu.append(time.process_time() - c0)
        text = journal.path.read_bytes()
        lines, size = text.count(b"\n"), len(text)
    return {"apps": n_apps, "recommendations": len(recs),
            "act_cpu_s": round(statistics.median(cpu), 4),
            "us_per_recommendation": round(statistics.median(cpu) / len(recs) * 1e6, 2),
            "journal_lines": lines, "journal_kb": round(size / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", type=int, action="append")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [measure(n, args.runs) for n in (args.apps or SIZES)]
    if args.json:
        print(json.dumps({"runs": args.runs, "load_average": os.getloadavg()[0], "rows": rows}))
        return
    print(f"act step, dry-run, one priority recommendation per app; median of {args.runs} "
          f"runs, process CPU; load average {os.getloadavg()[0]:.1f}")
    print(f"{'apps':>7}{'act s':>9}{'us/rec':>8}{'journal lines':>15}{'journal KiB':>13}")
    for r in rows:
        print(f"{r['apps']:>7}{r['act_cpu_s']:>9.3f}{r['us_per_recommendation']:>8.1f}"
              f"{r['journal_lines']:>15}{r['journal_kb']:>13.1f}")


if __name__ == "__main__":
    main()
