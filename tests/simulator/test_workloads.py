"""The papers' workloads (examples/workloads) load, and run to the end on their
own scheduler: every job finishes, or fails only where the paper's did."""

from __future__ import annotations

from pathlib import Path

import pytest

from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.workload import load_workload

WORKLOADS = sorted((Path(__file__).resolve().parents[2] / "examples" / "workloads")
                   .glob("*.yaml"))


PAPERS = {"haste", "opera", "matchmaking", "anacrac"}


def test_there_is_a_workload_for_every_paper() -> None:
    names = {p.stem.split("_")[0] for p in WORKLOADS}
    assert names >= PAPERS


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.stem)
def test_paper_workload_runs_on_its_scheduler(path: Path) -> None:
    wl = load_workload(path)
    text = path.read_text()
    assert text.startswith("#")
    if path.stem.split("_")[0] in PAPERS:
        assert "seeds/00" in text  # cites its paper
        assert "Not in the paper" in text  # and says what we assumed
    r = Simulation(wl).run()
    assert not r.stalled
    # ANACRAC's ingestion jobs fail off the external nodes under a baseline, as the
    # paper's Fair runs did (Tables 5-7, "F"); nothing else may fail
    expected_failures = {"sftp-download", "sqoop-import"}
    failed = {j for j, t in r.job_times.items() if t["state"] != "FINISHED"}
    assert failed <= (expected_failures if wl.name.startswith("anacrac") else set())
    assert r.jobs_finished + len(failed) == r.jobs
