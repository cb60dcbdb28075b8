"""The sidecar's snapshot reuses what did not change since the previous one (nodes,
tasks not started, the apps that ended): it must be the snapshot built from scratch."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path

import pytest

from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.workload import load_workload

# the package exports the function under the module's name
snapmod = importlib.import_module("yarn_advisor.simulator.snapshot")
ROOT = Path(__file__).resolve().parents[2]


def _snapshots(path: Path, fresh: bool) -> list[Snapshot]:
    sim = Simulation(load_workload(path))
    out: list[Snapshot] = []

    def hook(s: Simulation) -> None:
        if fresh:
            snapmod._REUSE.pop(s, None)
        out.append(snapmod.snapshot(s))

    sim.every(30_000, hook)  # the sidecar's default cycle
    sim.run()
    return out


@pytest.mark.parametrize("name", ["haste_table4.yaml"])
def test_reused_snapshot_is_the_one_built_from_scratch(name: str) -> None:
    path = ROOT / "examples" / "workloads" / name
    reused, scratch = _snapshots(path, False), _snapshots(path, True)
    assert len(reused) == len(scratch) > 10
    ended = [s.metrics.apps_completed for s in reused]
    assert ended[-1] > ended[0]  # apps end along the run: the ledger of ended apps is used
    for a, b in zip(reused, scratch, strict=True):
        assert a.metrics == b.metrics
        assert a.apps == b.apps
        assert a.queue_metrics == b.queue_metrics
        # a reused Node keeps the time it last changed (no policy reads it)
        assert [replace(n, last_health_update=0) for n in a.nodes] == \
            [replace(n, last_health_update=0) for n in b.nodes]
        assert replace(a, nodes=()) == replace(b, nodes=())
