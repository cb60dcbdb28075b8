"""The RM plug-in's cost per ``precheckNode`` call (docs/plugin.md).

Runs the jar's plain-Java ``PrecheckBench`` (rm-plugin/: real RM scheduler objects,
Hadoop 3.4.2) a few times, each in a fresh JVM: YARN's stock allocator, the plug-in's
with no table, with a table that admits the attempt and with one that vetoes it, modes
alternating inside every run. Reports ns per call: per mode the median over every timed
run of every JVM, and the plug-in's extra cost over stock.

    python bench/bench_plugin_precheck.py [--jvms 3] [--runs 5] [--calls 1000000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from rmplugin import precheck_bench  # noqa: E402

MODES = ("stock", "no_table", "admit", "veto")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jvms", type=int, default=3, help="fresh JVMs (default 3)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per JVM (default 5)")
    ap.add_argument("--calls", type=int, default=1_000_000, help="calls per run and mode")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    samples: dict[str, list[int]] = {m: [] for m in MODES}
    for _ in range(args.jvms):
        one = precheck_bench(args.runs, args.calls)
        for m in MODES:
            samples[m] += one[m]["runs_ns"]
    med = {m: statistics.median(samples[m]) for m in MODES}
    out = {"jvms": args.jvms, "runs_per_jvm": args.runs, "calls_per_run": args.calls,
           "hadoop": "3.4.2",
           **{m: {"median_ns": med[m], "runs_ns": samples[m]} for m in MODES},
           "extra_over_stock_ns": {m: med[m] - med["stock"] for m in MODES if m != "stock"}}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for m in MODES:
            print(f"{m:9} {med[m]:8.0f} ns/call (median of {len(samples[m])} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
