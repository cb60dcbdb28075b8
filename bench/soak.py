"""Soak: the advisor replaying a recording in a loop, as fast as it can, for a long time.

The recording's cycles are replayed over and over (each pass shifted forward in time
by the recording's span, so the classifier, the cooldowns and the journal see time
go on), in dry-run, with the classifier and every policy on. Every ``--sample``
cycles it samples the process: resident memory, open file descriptors, threads,
Python objects tracked by the garbage collector, and the journal's bytes on disk
(every segment). At the end it prints the curve and, over the second half (after
warm-up), the least-squares slope of each per hour and per 1,000 cycles: a leak
shows as a steady slope.

The journal is bounded two ways (the actuator's choice, stated here because the
soak checks it): a cycle journals at most 50 blocked recommendations one line
each and sums up the rest in one line per (reason, kind, policy); the same block
of the same target is journaled once per 10 minutes; and the file rotates at
``actuator.journal_max_mb`` keeping ``journal_keep`` segments. So over a soak the
journal's bytes grow at most linearly with cycles until the first rotation, then
stay flat.

    python bench/soak.py --minutes 60            # an hour (the default)
    python bench/soak.py --minutes 5 --json      # a short run, one JSON object
    python bench/soak.py --enforce --minutes 30  # enforce mode with fault bursts

``--enforce`` runs the daemon in enforce mode: its writes go through the real
actuator and read-before-write Writer to an in-memory stand-in of the RM's levers
(the recording has no write traffic to replay), which keeps every value written.
Every ``--burst-every`` cycles, ``--burst-cycles`` cycles in a row are a fault
burst: the recorded RM is not served (its address refuses connections: every
read fails, the cycle must be skipped) and the levers refuse with the RM
unavailable. Log records that carry a traceback are counted (``tracebacks``);
any is a bug.
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

from yarn_advisor.advisor.act.actuator import BLOCKED_LINES_PER_CYCLE
from yarn_advisor.advisor.act.journal import Journal
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.settings import load_config, with_overrides
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.replaying import remove_with, replay_advisor, replay_config
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor
from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Payload
from yarn_advisor.connectors.errors import UnavailableError
from yarn_advisor.connectors.replay import Recording, open_recording, replaying

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("rss_mb", "fds", "threads", "gc_objects", "journal_kb")


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class MemoryLevers:
    """An in-memory stand-in of the RM's levers: each value written is kept and read
    back; while ``down`` every call fails as an unreachable RM would."""

    def __init__(self) -> None:
        self.values: dict[tuple[Kind, str], Payload] = {}
        self.down = False
        self.sent = 0

    def ensure_active(self) -> None:
        if self.down:
            raise UnavailableError("the RM is down (a fault burst)")

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        self.ensure_active()
        return self.values.get((kind, target))

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        self.ensure_active()
        self.values[(kind, target)] = value
        self.sent += 1
        return {"status": 200}


class Tracebacks(logging.Handler):
    """Counts log records that carry a traceback (the soak logs nothing else)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.count += 1


def enforce_advisor(rec: Recording, cfg: Any, levers: MemoryLevers) -> Advisor:
    """The replay advisor, in enforce mode, writing to ``levers``."""
    import tempfile

    scratch = tempfile.mkdtemp(prefix="yarn-advisor-soak-")
    cfg = with_overrides(replay_config(rec, cfg, scratch), {"dry_run": False})
    advisor = build_advisor(cfg, build_sensor(cfg), Writer(levers), persist=False,
                            snapshot_clock=True)
    return remove_with(advisor, scratch)


def soak(recording: Path, config: Path | None, minutes: float, sample: int,
         journal_max_mb: float | None = None, enforce: bool = False, burst_every: int = 0,
         burst_cycles: int = 0) -> dict[str, Any]:
    rec = open_recording(recording)
    cfg = load_config(config)
    if journal_max_mb is not None:  # a small rotation size shows the bound within the run
        cfg = with_overrides(cfg, {"actuator": {"journal_max_mb": journal_max_mb}})
    levers = MemoryLevers()
    advisor = enforce_advisor(rec, cfg, levers) if enforce else replay_advisor(rec, cfg)
    journal = advisor.actuator.journal
    errors = Tracebacks()
    logging.getLogger().addHandler(errors)
    bursts = 0
    span = rec.cycles[-1].taken_at - rec.cycles[0].taken_at + 30_000
    deadline = time.monotonic() + minutes * 60
    rows: list[dict[str, float]] = []
    n = skipped = 0
    started = time.monotonic()
    while time.monotonic() < deadline:
        shift = (n // len(rec.cycles)) * span
        cycle = rec.cycles[n % len(rec.cycles)]
        burst = burst_every > 0 and n % burst_every < burst_cycles
        levers.down = burst
        bursts += burst
        if burst:  # nothing serves the recorded RM's address: every read fails
            report = advisor.run_once(cycle.taken_at + shift)
        else:
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
    per_cycles: dict[str, float] = {}
    per_hour: dict[str, float] = {}
    if len(half) >= 2:
        cycles = np.array([r["cycle"] for r in half], dtype=float)
        hours = np.array([r["seconds"] for r in half], dtype=float) / 3600
        for key in KEYS:
            y = np.array([r[key] for r in half], dtype=float)
            per_cycles[key] = round(float(np.polyfit(cycles, y, 1)[0]) * 1000, 3)
            if np.ptp(hours) > 0:
                per_hour[key] = round(float(np.polyfit(hours, y, 1)[0]), 3)
    logging.getLogger().removeHandler(errors)
    return {"recording": str(recording), "minutes": minutes, "cycles": n, "skipped": skipped,
            "mode": "enforce" if enforce else "dry_run", "burst_cycles_run": bursts,
            "writes_sent": levers.sent, "tracebacks": errors.count,
            "cycles_per_s": round(n / max(1e-9, time.monotonic() - started), 1),
            "journal_lines_per_cycle_bound": BLOCKED_LINES_PER_CYCLE,
            "journal_max_mb": advisor_journal_max_mb(journal),
            "samples": rows, "slope_per_hour": per_hour, "slope_per_1000_cycles": per_cycles}


def advisor_journal_max_mb(journal: Journal) -> float:
    return round(journal.max_bytes / 2**20, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recording", type=Path,
                    default=ROOT / "examples" / "recordings" / "short-stream")
    ap.add_argument("--config", type=Path, default=ROOT / "examples" / "anacrac-rules.yaml")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--sample", type=int, default=200, help="cycles between samples")
    ap.add_argument("--journal-max-mb", type=float, default=2.0,
                    help="rotate the journal at this size (default 2; the config's own "
                         "size with 0)")
    ap.add_argument("--enforce", action="store_true",
                    help="enforce mode, writing to an in-memory stand-in of the levers")
    ap.add_argument("--burst-every", type=int, default=0, metavar="N",
                    help="a fault burst every N cycles (0: none; with --enforce: 100)")
    ap.add_argument("--burst-cycles", type=int, default=5, metavar="B")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    # one line per cycle would be the soak's own leak: only tracebacks are kept (counted)
    logging.getLogger().handlers.clear()
    logging.getLogger("yarn_advisor").setLevel(logging.WARNING)
    logging.getLogger("yarn_advisor").propagate = True
    every = args.burst_every or (100 if args.enforce else 0)
    out = soak(args.recording, args.config, args.minutes, args.sample,
               args.journal_max_mb or None, args.enforce, every, args.burst_cycles)
    if args.json:
        print(json.dumps(out))
        return
    print(f"{out['cycles']} cycles in {args.minutes:g} min ({out['cycles_per_s']}/s), "
          f"{out['skipped']} skipped, {out['mode']}; {out['burst_cycles_run']} cycles in fault "
          f"bursts, {out['writes_sent']} writes sent, {out['tracebacks']} tracebacks")
    print(f"{'cycle':>8}{'s':>8}{'RSS MiB':>9}{'fds':>5}{'threads':>8}{'gc objects':>11}"
          f"{'journal KiB':>12}")
    for r in out["samples"]:
        print(f"{r['cycle']:>8}{r['seconds']:>8.0f}{r['rss_mb']:>9.1f}{r['fds']:>5}"
              f"{r['threads']:>8}{r['gc_objects']:>11}{r['journal_kb']:>12.1f}")
    print("least-squares slope over the second half, per hour: " + ", ".join(
        f"{k} {v:+g}" for k, v in out["slope_per_hour"].items()))
    print("                                per 1,000 cycles: " + ", ".join(
        f"{k} {v:+g}" for k, v in out["slope_per_1000_cycles"].items()))
    print(f"journal bound: {out['journal_lines_per_cycle_bound']} blocked lines a cycle, the "
          f"rest summed up per (reason, kind, policy); rotation at {out['journal_max_mb']} MiB")


if __name__ == "__main__":
    main()
