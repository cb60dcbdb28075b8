"""``yarn-advisor rollback``: put back the values the journal says were changed.

``--action ID`` undoes that one action (a rollback too: that re-applies);
``--since TIME`` undoes every action sent since then, newest first, so a
target changed twice ends at its oldest previous value. Rollbacks and
actions already rolled back are left out of ``--since``. Each restore is an
ordinary journaled write (``policy: rollback``, ``rollback_of: ID``) through
the actuator, under rollback's own rules (``Actuator.rollback``): it reads
the target first and sends nothing if it already has the old value. A
container signal or an app kill cannot be undone: reported ``irreversible``.

Rollback is an operator's command: it runs whatever ``dry_run`` and the kill
switch say, and says so when the kill switch is engaged (``--dry-run`` only
shows and journals what it would do). The daemon leaves a rolled-back target
alone for ``actuator.rollback_hold_s``.
Exit status: 0 when everything was restored or already was, 1 otherwise.

It reads every journal of ``state_dir`` merged in time order (with ``ha`` each
advisor has its own, ``journal.<advisor id>.jsonl``: after a failover the
actions of both are undone from either host) and journals its own steps in
this advisor's journal (:mod:`yarn_advisor.advisor.ha.journals`).

Precision mode: unless ``--dry-run``, it also withdraws the decision table
(every advisor's table journal gets a ``rollback`` record, the table file is
deleted): the running advisor stops publishing for ``actuator.rollback_hold_s``
and the RM plug-in falls back to YARN's default at its next poll.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.act.actuator import Actuator, journal_path
from yarn_advisor.advisor.act.outcomes import Outcome
from yarn_advisor.advisor.act.publish import (
    TableJournal,
    tables_journal_path,
    withdraw_for_rollback,
)
from yarn_advisor.advisor.act.rollback import DONE, select
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.ha.journals import every_journal
from yarn_advisor.advisor.loop.startup import check
from yarn_advisor.advisor.loop.wiring import http_client
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_time(text: str, now: float) -> float:
    """Epoch seconds from ``1700000000``, ``2026-11-22T08:00:00Z`` or ``30m``/``2h``/``1d`` ago."""
    text = text.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", text)
    if m:
        return now - float(m.group(1)) * _UNITS[m.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r} (epoch seconds, ISO 8601, or 30m / 2h / 1d ago)") from None
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError(f"give a time zone: {text!r} (e.g. a trailing Z)")
    return parsed.timestamp()


def register(subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    """Add ``rollback`` to the main parser's subcommands."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "rollback", help="restore the values the actuator changed (itself journaled)",
        description=__doc__.split("\n\n")[1] if __doc__ else None)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--since", metavar="TIME",
                       help="every action since TIME: epoch seconds, ISO 8601 with zone, "
                            "or an age such as 30m, 2h, 1d")
    which.add_argument("--action", metavar="ID", help="one action, by its journal id")
    p.add_argument("--config", metavar="FILE", help="YAML configuration file")
    p.add_argument("--dry-run", action="store_true", help="show what would be restored")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_rollback)
    return p


def cmd_rollback(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    check(cfg)
    try:
        since = None if args.since is None else parse_time(args.since, time.time())
    except argparse.ArgumentTypeError as exc:
        print(f"rollback: {exc}", file=sys.stderr)
        return 2
    journal = every_journal(cfg)  # every advisor's journal in state_dir (ha: one each)
    actions = select(journal.actions(), since, args.action)
    if args.action is not None and not actions:
        print(f"rollback: no action {args.action!r} in {journal.where()}", file=sys.stderr)
        return 2
    if journal.unreadable:
        print(f"rollback: {journal.unreadable} line(s) of {journal.where()} could not be read; "
              "an action they recorded cannot be restored from here", file=sys.stderr)
    if _kill_switch(cfg):
        print("rollback: the kill switch is engaged; rollback runs anyway (it is the "
              "operator's command, and it only restores what the advisor changed)",
              file=sys.stderr)
    levers = RMLevers(RMClient(http_client(cfg), cfg.rm.urls), cfg.actuator.overcommit_timeout_ms)
    actuator = Actuator(cfg.actuator, journal, Writer(levers), global_dry_run=False)
    steps = actuator.rollback(actions, dry_run=args.dry_run)
    withdrawn = [] if args.dry_run else withdraw_tables(cfg)
    ok = not journal.unreadable and all(
        s.outcome in (*DONE, Outcome.DRY_RUN, Outcome.IRREVERSIBLE) for s in steps)
    if args.json:
        print(json.dumps({"journal": str(journal.path), "read": [str(p) for p in journal.paths],
                          "ok": ok, "tables_withdrawn": [str(p) for p in withdrawn],
                          "steps": [s.to_json() for s in steps]}, sort_keys=True, default=str))
    else:
        for s in steps:
            print(f"{s.outcome:>12}  {s.kind} {s.target} -> {_j(s.value)} "
                  f"(was {_j(s.previous)}; rollback of {s.rollback_of})"
                  + (f": {s.error}" if s.error else ""))
        print(f"{len(actions)} action(s), {len(steps)} step(s); "
              + ("all restored" if ok else "NOT all restored"))
        if withdrawn:
            print(f"decision table withdrawn for {cfg.actuator.rollback_hold_s:g} s "
                  f"({len(withdrawn)} table journal(s))")
    return 0 if ok else 1


def _kill_switch(cfg: AdvisorConfig) -> bool:
    a = cfg.actuator
    return a.kill_switch or bool(a.kill_switch_file and os.path.exists(a.kill_switch_file))


def withdraw_tables(cfg: AdvisorConfig) -> list[Path]:
    """Withdraw precision mode's table: a ``rollback`` record in every advisor's table
    journal beside the action journal, and the table file deleted. Returns the journals."""
    base = tables_journal_path(journal_path(cfg))
    found = sorted({base, *base.parent.glob("*.tables.jsonl")} if base.parent.is_dir()
                   else {base})
    found = [p for p in found if p.exists()] or ([base] if cfg.precision.enabled else [])
    table_file = Path(cfg.precision.table_file) if cfg.precision.table_file else None
    for path in found:
        withdraw_for_rollback(TableJournal(path), cfg.actuator.rollback_hold_s, table_file)
    return found


def _j(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)
