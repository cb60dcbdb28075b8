"""HaSTE's own metrics: the scores behind its top-ranked priority recommendations."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client.core import Metric

from yarn_advisor.advisor.model.families import TOP_N, gauge
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.policies.haste.state import State

SCORES = ("preference", "fitness", "urgency", "alignment")


def metrics(state: State, recs: Sequence[Recommendation], mode: str) -> Iterable[Metric]:
    """``haste_score{app, score, mode}`` of its top-N priority recommendations (best
    rank first, then highest preference), from their explanations."""
    scored = [(_num(r.explanation.scores.get("rank")) or 0.0, -pref, r.target, r)
              for r in recs if r.kind is Kind.SET_APP_PRIORITY
              and (pref := _num(r.explanation.scores.get("preference"))) is not None]
    scored.sort(key=lambda row: row[:3])
    rows = [((r.target, s, mode), v) for *_, r in scored[:TOP_N]
            for s in SCORES if (v := _num(r.explanation.scores.get(s))) is not None]
    yield gauge("haste_score", f"HaSTE scores (preference, fitness, urgency, alignment) of "
                f"the top {TOP_N} apps it ranked in the latest cycle", ["app", "score", "mode"],
                rows)


def _num(x: object) -> float | None:
    """``x`` as a float when it is a JSON number, else None."""
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None
