"""OPERA puts off the lending scans of a partition with no eligible group left and runs
them only before an explanation needs them. These tests check that this gives exactly
what scanning every node at once gives (recommendations, explanations and the next
state, cycle after cycle), on the policy benchmark's synthetic cluster: with and without
short predictions, with raised nodes (which explain themselves after deferred scans) and
with lend times (a node skipped for an empty queue drops its own)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import bench_policies
import pytest

from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import opera
from yarn_advisor.advisor.policies._base import Reads
from yarn_advisor.advisor.policies.opera import advice

BENCH = bench_policies
SNAP: Snapshot = BENCH.build(300)


def _eager(self: Any, n: Any, relief: Any, slot: Any, branches: list[str], order: Any,
           min_demand: Any) -> None:
    """``_Deferred.add`` that scans at once: every node scanned in its turn."""
    if slot is None:
        slot = advice._slot(n, relief, opera.Params(), False)
    branches.append(advice.node_update_lend(slot, *order, min_demand))


def _cycles(state: opera.State, short: bool) -> list[Any]:
    reads = Reads(BENCH.ShortFraction(SNAP).predictions) if short else Reads()
    out: list[Any] = []
    for k in range(3):
        snap = replace(SNAP, taken_at=SNAP.taken_at + 10_000 * k)
        res = opera.advise(snap, state, opera.Params(), reads)
        out.append(([r.to_dict() for r in res.recommendations], res.next_state.to_json()))
        state = res.next_state
    return out


def _raised() -> opera.State:
    """Every 7th node raised by 8 GiB/4 vcores, every 5th lent a moment ago."""
    nodes = sorted(SNAP.nodes, key=lambda n: n.id)
    bases = {n.id: (float(n.total.memory_mb - 8192), float(n.total.vcores - 4))
             for n in nodes[::7]}
    lent_at = {n.id: SNAP.taken_at - 1000 for n in nodes[::5]}
    return opera.State(bases=bases, lent_at=lent_at)


@pytest.mark.parametrize("short", [False, True])
@pytest.mark.parametrize("state", [opera.State(), _raised()], ids=["new", "raised"])
def test_deferred_scans_give_what_scanning_every_node_gives(
        state: opera.State, short: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    got = _cycles(state, short)
    monkeypatch.setattr(advice._Deferred, "add", _eager)
    want = _cycles(state, short)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    if state.bases:  # the deferred scans did run before some explanations
        assert any(r["policy"] == "opera" for recs, _ in got for r in recs)


def test_without_short_tasks_the_scans_of_silent_nodes_never_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = advice.node_update_lend
    monkeypatch.setattr(advice, "node_update_lend",
                        lambda *a: calls.append(1) or real(*a))  # type: ignore[func-returns-value]
    res = opera.advise(SNAP, opera.State(), opera.Params())
    assert res.recommendations == () and calls == []
