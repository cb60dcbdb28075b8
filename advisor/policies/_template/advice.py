"""The template's recommendations: advice for starving apps, each with its explanation."""

from __future__ import annotations

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Advice
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import NO_READS, PolicyResult, Reads
from yarn_advisor.advisor.policies._template.core import starving
from yarn_advisor.advisor.policies._template.inputs import waiting_ms
from yarn_advisor.advisor.policies._template.params import NAME, Params
from yarn_advisor.advisor.policies._template.state import State


def advise(snapshot: Snapshot, state: State, params: Params,
           reads: Reads = NO_READS) -> PolicyResult[State]:
    """Pure: the same snapshot, state and params always give the same result."""
    recs = []
    waited = waiting_ms(snapshot)
    for app_id, ms in sorted(waited.items()):
        if app_id in state.advised or not starving(ms, params.max_wait_s * 1000):
            continue
        why = Explanation("template.starving", f"{app_id} waited {ms / 1000:.0f} s",
                          inputs={"waited_ms": ms}, thresholds={"max_wait_s": params.max_wait_s})
        recs.append(Recommendation(Kind.ADVISE_APP_CONFIG, app_id, Advice.of({"priority": "raise"}),
                                   NAME, why))
    advised = (state.advised & waited.keys()) | {r.target for r in recs}
    return PolicyResult(tuple(recs), State(frozenset(advised)))
