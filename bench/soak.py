"""Soak: the advisor replaying a recording in a loop, as fast as it can, for a long time.

The recording's cycles are replayed over and over (each pass shifted forward in time
by the recording's span, so the classifier, the cooldowns and the journal see time
go on), in dry-run, with the classifier and every policy on. Every ``--sample``
cycles it samples the process: resident memory, open file descriptors, threads,
Python objects tracked by the garbage collector, and the journal's bytes on disk
(every segment). At the end it prints the curve and, over the second half (after
warm-up), the slope of each per 1,000 cycles: a leak shows as a steady slope.

    python bench/soak.py --minutes 60            # an hour (the default)
    python bench/soak.py --minutes 5 --json      # a short run, one JSON object
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from yarn_advisor.advisor.replaying import replay_advisor
from yarn_advisor.advisor.settings import load_config
from yarn_advisor.connectors.replay import open_recording, replaying

ROOT = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def soak(recording: Path, config: Path | None, minutes: float, sample: int) -> dict[str, Any]:
    rec = open_recording(recording)
    advisor = replay_advisor(rec, load_config(config))
    journal = advisor.actuator.journal
    span = rec.cycles[-1].taken_at - rec.cycles[0].taken_at + 30_000
    deadline = time.monotonic() + minutes * 60
    rows: list[dict[str, float]] = []
    n = skipped = 0
    started = time.monotonic()
    while time.monotonic() < deadline:
        shift = (n // len(rec.cycles)) * span
        cycle = rec.cycles[n % len(rec.cycles)]
        with replaying(cycle):
            report = advisor.run_once(cycle.taken_at + shift)
        skipped += report.outcome != "ok"
        n += 1
        if n % sample == 0:
            rows.append({"cycle": n, "seconds": round(time.monotonic() - started, 1),
                         "rss_mb": round(_rss_mb(), 1), "fds": _fds(),
                         "threads": threading.active_count(), "gc_objects": len(gc.get_objects()),
                         "journal_kb": round(sum(p.stat().st_size for p in journal.segments())
                                             / 1024, 1)})
    half = rows[len(rows) // 2:]
    slopes = {}
    if len(half) >= 2:
        x = np.array([r["cycle"] for r in half], dtype=float)
        for key in ("rss_mb", "fds", "threads", "gc_objects", "journal_kb"):
            y = np.array([r[key] for r in half], dtype=float)
            slopes[key] = round(float(np.polyfit(x, y, 1)[0]) * 1000, 3)
    return {"recording": str(recording), "minutes": minutes, "cycles": n, "skipped": skipped,
            "cycles_per_s": round(n / max(1e-9, time.monotonic() - started), 1),
            "samples": rows, "slope_per_1000_cycles": slopes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recording", type=Path,
                    default=ROOT / "examples" / "recordings" / "short-stream")
    ap.add_argument("--config", type=Path, default=ROOT / "examples" / "anacrac-rules.yaml")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--sample", type=int, default=200, help="cycles between samples")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # one line per cycle would be the soak's own leak
    out = soak(args.recording, args.config, args.minutes, args.sample)
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['cycles']} cycles in {args.minutes:g} min ({out['cycles_per_s']}/s), "
          f"{out['skipped']} skipped")
    print(f"{'cycle':>8}{'s':>8}{'RSS MiB':>9}{'fds':>5}{'threads':>8}{'gc objects':>11}"
          f"{'journal KiB':>12}")
    for r in out["samples"]:
        print(f"{r['cycle']:>8}{r['seconds']:>8.0f}{r['rss_mb']:>9.1f}{r['fds']:>5}"
              f"{r['threads']:>8}{r['gc_objects']:>11}{r['journal_kb']:>12.1f}")
    print("slope per 1,000 cycles over the second half: " + ", ".join(
        f"{k} {v:+g}" for k, v in out["slope_per_1000_cycles"].items()))


if __name__ == "__main__":
    main()
