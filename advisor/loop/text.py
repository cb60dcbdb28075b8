"""Text for people: one line per cycle, recommendations and values as ``key=value``.

Never a Python repr: mappings print as ``key=value`` pairs, lists joined by
commas, nested values as compact JSON.
"""

from __future__ import annotations

import json
from collections import Counter

from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.model.jsonvalue import JsonValue, thaw
from yarn_advisor.advisor.model.recommendation import Recommendation


def value_text(value: JsonValue) -> str:
    """A value for a person: ``memory_mb=4096 vcores=4``, ``a,b``, ``7``, ``none``."""
    value = thaw(value)
    if value is None:
        return "none"
    if isinstance(value, dict):
        return " ".join(f"{k}={_atom(v)}" for k, v in value.items()) or "{}"
    if isinstance(value, list):
        return ",".join(_atom(v) for v in value) or "[]"
    return _atom(value)


def _atom(value: JsonValue) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def recommendation_line(rec: Recommendation) -> str:
    """``[policy] kind target -> value: summary``."""
    return (f"[{rec.policy}] {rec.kind.value} {rec.target} -> {value_text(rec.value.to_json())}: "
            f"{rec.explanation.summary}")


def cycle_line(report: CycleReport) -> str:
    """One readable line per cycle."""
    took = report.seconds
    if report.outcome != "ok" or report.snapshot is None:
        return f"cycle {report.number}: skipped ({report.reason}) after {took:.2f}s; no action"
    s = report.snapshot
    down = [name for name, st in report.sources.items() if not st.ok]
    by_policy = Counter(r.policy for r in report.recommendations)
    recs = ", ".join(f"{p} {n}" for p, n in sorted(by_policy.items())) or "none"
    failed = [e.policy for e in report.policy_errors]
    applied = sum(n for (_, _, outcome), n in report.actions.items() if outcome == "applied")
    return (
        f"cycle {report.number}: {len(s.nodes)} nodes, {len(s.apps)} apps, "
        f"{len(s.containers)} containers, {s.pending_requests} pending asks, "
        f"{len(s.tasks)} tasks (+{len(s.finished_tasks)} finished); "
        f"recommendations: {recs}; applied {applied}"
        + (f"; sources down: {', '.join(sorted(down))}" if down else "")
        + (f"; policies failed: {', '.join(failed)}" if failed else "")
        + f"; {took:.2f}s"
    )
