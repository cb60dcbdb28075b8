"""The simulated CapacityScheduler's per-node-heartbeat assignment limits
(``CapacityScheduler.canAllocateMore``, hadoop 3.4.2): how many containers one node
heartbeat may assign, as ``bench/anacrac_mapping_ceiling.py`` sets them."""

from __future__ import annotations

import itertools

import pytest
from _simbuild import job, maps, workload

from yarn_advisor.simulator.simulation import Simulation

P = "yarn.scheduler.capacity.per-node-heartbeat."


def _starts(conf: dict[str, str]) -> list[int]:
    """When each of four maps started on one node with room for all of them (the maps
    have no locality, so each is off-switch: that limit is lifted here)."""
    sim = Simulation(workload([job("a", maps([30] * 4))], mem=8192, vc=8), scheduler="capacity")
    sim.scheduler.update_conf({P + "maximum-offswitch-assignments": "10"} | conf)  # type: ignore[attr-defined]
    sim.run()
    return sorted(t.first_start_ms for t in sim.app_of_job["a"].maps)


def test_one_heartbeat_assigns_every_map_by_default() -> None:
    assert len(set(_starts({}))) == 1


@pytest.mark.parametrize("conf", [
    {P + "maximum-container-assignments": "1"},
    {P + "multiple-assignments-enabled": "false"},
])
def test_one_container_per_heartbeat(conf: dict[str, str]) -> None:
    starts = _starts(conf)
    assert len(set(starts)) == 4  # one more map on each heartbeat (1 s apart)
    assert all(b - a >= 1000 for a, b in itertools.pairwise(starts))


def test_two_per_heartbeat_then_two() -> None:
    starts = _starts({P + "maximum-container-assignments": "2"})
    assert starts[0] == starts[1] < starts[2] == starts[3]


def test_a_bad_boolean_is_a_clear_error() -> None:
    sim = Simulation(workload([job("a", maps([1]))]), scheduler="capacity")
    with pytest.raises(ValueError, match="multiple-assignments-enabled: 'yes' is not true"):
        sim.scheduler.update_conf({P + "multiple-assignments-enabled": "yes"})  # type: ignore[attr-defined]
