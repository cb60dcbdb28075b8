"""OPERA's own metrics: what it lends this cycle, over the cluster."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client.core import Metric

from yarn_advisor.advisor.model.families import MIB, single
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.policies.opera.state import State


def metrics(state: State, recs: Sequence[Recommendation], mode: str) -> Iterable[Metric]:
    lent = state.lent.values()
    yield single("borrowed_memory_bytes", "Memory OPERA lends to short tasks beyond the "
                 "nodes' capacity this cycle, summed over nodes", sum(v[0] for v in lent) * MIB)
    yield single("borrowed_vcores", "Vcores OPERA lends to short tasks this cycle, summed "
                 "over nodes", sum(v[1] for v in lent))
    yield single("lending_nodes", "Nodes on which OPERA lends this cycle", len(state.lent))
