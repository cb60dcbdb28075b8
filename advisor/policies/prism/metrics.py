"""PRISM's own metrics: the idle headroom its phase profiles find, over the cluster."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client.core import Metric

from yarn_advisor.advisor.model.families import MIB, single
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.policies.prism.state import State


def metrics(state: State, recs: Sequence[Recommendation], mode: str) -> Iterable[Metric]:
    idle = state.idle_headroom.values()
    yield single("opportunistic_headroom_memory_bytes", "Allocated but idle memory by "
                 "PRISM's phase profiles, summed over nodes (what OPERA may lend)",
                 sum(v[0] for v in idle) * MIB)
    yield single("opportunistic_headroom_vcores", "Allocated but idle vcores by PRISM's "
                 "phase profiles, summed over nodes", sum(v[1] for v in idle))
