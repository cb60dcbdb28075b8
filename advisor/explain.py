"""``yarn-advisor explain TARGET``: why the advisor recommends what it does.

TARGET is an application, node, queue or container id (or ``scheduler``).
The recommendations come from, in order of preference: a running advisor
(``--advisor URL``, its ``/recommendations``), a recording (``--replay DIR``:
the latest cycle that had any for TARGET), or one live dry-run cycle
against the configured RM (``--config``).
"""

from __future__ import annotations

import argparse
import json
import urllib.request
from pathlib import Path
from typing import Any

from yarn_advisor.config.schema import load


def register(sub: Any) -> None:
    p = sub.add_parser("explain", help="explain the latest recommendations for one target")
    p.add_argument("target", help="app, node, queue or container id, or 'scheduler'")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--advisor", metavar="URL", help="a running advisor, e.g. http://host:9135")
    src.add_argument("--replay", type=Path, metavar="DIR", help="a recording")
    p.add_argument("--config", type=Path, help="configuration (live RM, policy parameters)")
    p.add_argument("--json", action="store_true", help="print the recommendations as JSON")
    p.set_defaults(handler=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    cycle, recs = _latest(args)
    mine = [r for r in recs if r.get("target") == args.target]
    if args.json:
        print(json.dumps({"target": args.target, "cycle": cycle, "recommendations": mine},
                         indent=2, sort_keys=True))
        return 0
    if not mine:
        print(f"no recommendation for {args.target} (cycle {cycle}); "
              f"{len(recs)} recommendation(s) for other targets")
        return 0
    for rec in mine:
        print(render(rec, cycle))
    return 0


def _latest(args: argparse.Namespace) -> tuple[object, list[dict[str, Any]]]:
    if args.advisor:
        url = args.advisor.rstrip("/") + "/recommendations"
        with urllib.request.urlopen(url, timeout=10) as resp:
            body = json.load(resp)
        return body.get("cycle"), list(body.get("recommendations") or [])
    from yarn_advisor.advisor.cli import replay_advisor, replay_cycles
    from yarn_advisor.advisor.wiring import build_advisor, build_sensor
    from yarn_advisor.connectors.replay import open_recording

    cfg = load(args.config)
    if args.replay:
        recording = open_recording(args.replay)
        found: tuple[object, list[dict[str, Any]]] = (None, [])
        for report in replay_cycles(replay_advisor(recording, cfg), recording):
            if any(r.get("target") == args.target for r in report.recommendations):
                found = (report.number, report.recommendations)
        return found
    report = build_advisor(cfg, build_sensor(cfg)).run_once()
    if report.outcome != "ok":
        raise SystemExit(f"yarn-advisor: cycle skipped ({report.reason})")
    return report.number, report.recommendations


def render(rec: dict[str, Any], cycle: object) -> str:
    """A recommendation and its explanation, for a person."""
    e = rec.get("explanation") or {}
    prev = rec.get("previous")
    change = f"{_j(prev)} -> {_j(rec.get('value'))}" if prev is not None else _j(rec.get("value"))
    lines = [
        f"{rec.get('target')}: {rec.get('kind')} {change}   [{rec.get('policy')}, cycle {cycle}]",
        f"  why: {e.get('summary', '')}",
        f"  rule: {e.get('rule', '')}",
    ]
    for part in ("inputs", "scores", "thresholds"):
        if e.get(part):
            lines.append(f"  {part}:")
            lines += [f"    {k}: {_j(v)}" for k, v in sorted(e[part].items())]
    for c in e.get("conflicts") or ():
        lines.append(f"  overrode: {c.get('policy')} wanted {_j(c.get('value'))} "
                     f"({c.get('summary', '')})")
    return "\n".join(lines)


def _j(value: object) -> str:
    return json.dumps(value, sort_keys=True)
