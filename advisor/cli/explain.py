"""``yarn-advisor explain TARGET``: why the advisor recommends what it does.

TARGET is an application, node, queue or container id (or ``scheduler``).
The recommendations come from, in order of preference: a running advisor
(``--advisor URL``, its ``/recommendations``, read with the configured TLS
and auth), a recording (``--replay DIR``: the latest cycle that had any for
TARGET), or one live dry-run cycle against the configured RM (``--config``). It also lists the
last actions journaled on TARGET, read from every advisor's journal in
``state_dir`` (with ``ha`` each advisor has its own; :mod:`yarn_advisor.advisor.ha.journals`).
With ``--activities`` (off by default: the RM records the app's allocation
attempts for that window) and an application TARGET, it also asks the RM's
Activities API why the scheduler skipped the app's requests
(:mod:`yarn_advisor.connectors.rm.activities`): the reason a raised priority or a
written label changed nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.act.journal import iso
from yarn_advisor.advisor.engine.settings import load_config, with_overrides
from yarn_advisor.advisor.ha.journals import every_journal
from yarn_advisor.advisor.loop.replaying import remove_with, replay_advisor, replay_cycles
from yarn_advisor.advisor.loop.startup import check
from yarn_advisor.advisor.loop.text import value_text
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor, http_client
from yarn_advisor.advisor.model.activities import AppActivities
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.replay import open_recording
from yarn_advisor.connectors.rm.activities import fetch_app_activities, parse_app_activities
from yarn_advisor.connectors.rm.client import RMClient


def register(sub: Any) -> None:
    """Add ``explain`` to the main parser's subcommands."""
    p = sub.add_parser("explain", help="explain the latest recommendations for one target")
    p.add_argument("target", help="app, node, queue or container id, or 'scheduler'")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--advisor", metavar="URL", help="a running advisor, e.g. http://host:9135")
    src.add_argument("--replay", type=Path, metavar="DIR", help="a recording")
    p.add_argument("--config", type=Path, help="configuration (live RM, TLS and auth, policy "
                   "parameters)")
    p.add_argument("--json", action="store_true", help="print the recommendations as JSON")
    p.add_argument("--activities", type=float, nargs="?", const=5.0, default=None,
                   metavar="SECONDS", help="an application TARGET: record its allocation "
                   "attempts in the RM for SECONDS (default 5) and say why they were skipped")
    p.set_defaults(handler=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    check(cfg, writes_state=False)
    try:
        cycle, recs = _latest(args, cfg)
    except (ConnectorError, ValueError) as exc:
        print(f"yarn-advisor explain: {exc}")
        return 1
    mine = [r for r in recs if r.target == args.target]
    acted = journaled(cfg, args.target)
    seen = activities(cfg, args.target, args.activities)
    if args.json:
        out = {"target": args.target, "cycle": cycle,
               "recommendations": [r.to_dict() for r in mine], "actions": acted}
        if seen is not None:
            out["activities"] = seen if isinstance(seen, str) else {
                "app_id": seen.app_id, "diagnostic": seen.diagnostic,
                "skips": [{"diagnostic": d, "count": n, "nodes": list(h)}
                          for d, n, h in seen.skips()],
                "attempts": len(seen.attempts), "allocated": seen.allocated()}
        print(json.dumps(out, indent=2, sort_keys=True, default=str))
        return 0
    if not mine:
        print(f"no recommendation for {args.target} (cycle {cycle}); "
              f"{len(recs)} recommendation(s) for other targets")
    for rec in mine:
        print(render(rec, cycle))
    if acted:
        print(f"journaled actions on {args.target} (the last {len(acted)}, every advisor):")
        for a in acted:
            print(f"  {a['time']} {a['kind']} {value_text(a['previous'])} -> "
                  f"{value_text(a['value'])}: {a['outcome']}   [{a['policy']}, {a['journal']}]")
    if seen is not None:
        text = seen if isinstance(seen, str) else seen.summary()
        print(f"the RM's scheduler activities for {args.target} ({args.activities:g} s):")
        print("\n".join(f"  {line}" for line in text.splitlines()))
    return 0


def activities(cfg: AdvisorConfig, target: str, seconds: float | None
               ) -> AppActivities | str | None:
    """The RM's recorded attempts for application ``target`` (``--activities``), or a
    sentence saying why there are none; None when not asked."""
    if seconds is None:
        return None
    if not target.startswith("application_"):
        return "--activities needs an application id"
    if not 0 < seconds <= 60:
        return "--activities: SECONDS must be in (0, 60]"
    try:
        rm = RMClient(http_client(cfg), list(cfg.rm.urls))
        return parse_app_activities(fetch_app_activities(rm, target, seconds))
    except ConnectorError as exc:
        return f"not read: {exc}"


def journaled(cfg: AdvisorConfig, target: str, last: int = 5) -> list[dict[str, Any]]:
    """The last actions on ``target`` in every advisor's journal, oldest first."""
    journals = every_journal(cfg)
    actions = [a for a in journals.actions() if a.target == target][-last:]
    return [{"id": a.id, "time": iso(a.ts), "kind": a.kind.value, "policy": a.policy,
             "previous": a.previous, "value": a.value, "outcome": a.outcome or "unknown",
             "rollback_of": a.rollback_of, "journal": journals.source.get(a.id, journals.path).name}
            for a in actions]


def _latest(args: argparse.Namespace, cfg: AdvisorConfig
            ) -> tuple[int | None, list[Recommendation]]:
    if args.advisor:
        url = args.advisor.rstrip("/") + "/recommendations"
        body = http_client(cfg).get_json(url)
        if not isinstance(body, dict):
            raise ValueError(f"{url}: expected a JSON object")
        raw = body.get("recommendations") or []
        cycle = body.get("cycle")
        return (cycle if isinstance(cycle, int) else None,
                [Recommendation.from_dict(r) for r in raw])
    if args.replay:
        recording = open_recording(args.replay)
        found: tuple[int | None, list[Recommendation]] = (None, [])
        for report in replay_cycles(replay_advisor(recording, cfg), recording):
            if any(r.target == args.target for r in report.recommendations):
                found = (report.number, list(report.recommendations))
        return found
    state_dir = tempfile.mkdtemp(prefix="yarn-advisor-explain-")
    scratch = with_overrides(cfg, {"dry_run": True, "actuator": {"journal_path": None},
                                   "state_dir": state_dir})
    advisor = remove_with(build_advisor(scratch, build_sensor(scratch), persist=False), state_dir)
    report = advisor.run_once()
    if report.outcome != "ok":
        raise ValueError(f"cycle skipped ({report.reason})")
    return report.number, list(report.recommendations)


def render(rec: Recommendation, cycle: object) -> str:
    """A recommendation and its explanation, for a person."""
    e = rec.explanation
    value = value_text(rec.value.to_json())
    change = (f"{value_text(rec.previous.to_json())} -> {value}"
              if rec.previous is not None else value)
    lines = [
        f"{rec.target}: {rec.kind.value} {change}   [{rec.policy}, cycle {cycle}]",
        f"  why: {e.summary}",
        f"  rule: {e.rule}",
    ]
    for title, part in (("inputs", e.inputs), ("scores", e.scores),
                        ("thresholds", e.thresholds)):
        if part:
            lines.append(f"  {title}:")
            lines += [f"    {k}: {value_text(v)}" for k, v in sorted(part.items())]
    for c in e.conflicts:
        lines.append(f"  overrode: {c.policy} wanted {value_text(c.value.to_json())} "
                     f"({c.summary})")
    return "\n".join(lines)
