"""OPERA, ANACRAC and PRISM on a real recording of a busy mini cluster.

``short-stream`` (examples/record_mini.py --workload short-stream) is a stream
of short MapReduce sleep jobs on nodes kept busy by long distributed-shell
containers: the classifier learns the maps are short, so OPERA has short
pending work to lend idle reserved resources to; ``examples/anacrac-rules.yaml``
gives ANACRAC its application rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.replaying import replay_advisor
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.connectors.replay import open_recording, replaying

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def replayed() -> list[CycleReport]:
    recording = open_recording(ROOT / "examples" / "recordings" / "short-stream")
    advisor = replay_advisor(recording, load(ROOT / "examples" / "anacrac-rules.yaml", {
        "policies": {"opera": {"params": {"lend_memory": True}}}}))
    out = []
    for cycle in recording.cycles:
        with replaying(cycle):
            out.append(advisor.run_once(cycle.taken_at))
    assert all(r.outcome == "ok" for r in out)
    return out


def _recs(replayed: list[CycleReport], policy: str, kind: Kind
          ) -> list[tuple[CycleReport, Recommendation, Any]]:
    """(report, recommendation, its JSON form) of one policy and kind."""
    return [(r, x, x.to_dict()) for r in replayed for x in r.recommendations
            if x.policy == policy and x.kind is kind]


def test_opera_lends_idle_reserved_resources_to_tasks_predicted_short(
        replayed: list[CycleReport]) -> None:
    raises = _recs(replayed, "opera", Kind.UPDATE_NODE_RESOURCE)
    assert raises, "OPERA raised no node on the busy recording"
    for report, _, rec in raises:
        value, previous = rec["value"], rec["previous"]
        assert isinstance(value, dict) and isinstance(previous, dict)
        node = next(n for n in report.snapshot.nodes if n.id == rec["target"])  # type: ignore[union-attr]
        assert previous["memory_mb"] == node.total.memory_mb
        expl = rec["explanation"]
        assert isinstance(expl, dict) and expl["rule"].startswith("opera.")
        if value["memory_mb"] > previous["memory_mb"]:
            # lending happens only to groups the classifier called short this cycle
            assert report.predictions is not None
            assert any(g.prediction.short for g in report.predictions.groups.values())
            # what is lent this cycle, and the node's step (ramped, never past it)
            assert " short pending task(s)" in expl["summary"]
            assert (f"({previous['memory_mb']} MiB/{previous['vcores']} vcores -> "
                    f"{value['memory_mb']} MiB/{value['vcores']} vcores)") in expl["summary"]
    assert any(x["value"]["memory_mb"] > x["previous"]["memory_mb"] for _, _, x in raises)


def test_anacrac_applies_the_rules(replayed: list[CycleReport]) -> None:
    labels = _recs(replayed, "anacrac", Kind.REPLACE_NODE_LABELS)
    assert labels and {tuple(x["value"]) for _, _, x in labels} == {("big",)}
    assert all(str(x["target"]).startswith("127.0.0.2:") for _, _, x in labels)
    breaks = _recs(replayed, "anacrac", Kind.ADVISE_APP_CONFIG)
    assert breaks
    for report, _, x in breaks:
        app = next(a for a in report.snapshot.apps if a.id == x["target"])  # type: ignore[union-attr]
        assert app.type == "YARN" and x["value"]["rule"] == "shells-on-big-node"  # type: ignore[index]
        for v in x["value"]["violations"]:  # type: ignore[index]
            # a violation names a container placed off the rule's hosts, or too many per node
            assert v["type"] in ("hosts", "tasks_maximum")
            if v["type"] == "hosts":
                assert not str(v["node"]).startswith("127.0.0.2:")


def test_prism_advises_reduce_slowstart(replayed: list[CycleReport]) -> None:
    advice = _recs(replayed, "prism", Kind.ADVISE_APP_CONFIG)
    assert advice
    for report, _, x in advice:
        value = x["value"]
        assert isinstance(value, dict)
        slowstart = value["mapreduce.job.reduce.slowstart.completedmaps"]
        assert 0.0 <= slowstart <= 1.0
        app = next(a for a in report.snapshot.apps if a.id == x["target"])  # type: ignore[union-attr]
        assert app.type == "MAPREDUCE"
