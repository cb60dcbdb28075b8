"""The decision table's type and wire format (docs/decision-table.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yarn_advisor.advisor.model.decision_table import (
    FORMAT,
    Allow,
    AppDecisions,
    Borrower,
    Cap,
    Decisions,
    DecisionTable,
    Fit,
    Hold,
    Lending,
    LocalOnly,
    Match,
    Reason,
    RequestDecision,
    Rule,
    TableError,
    Unranked,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "decision-table.md"


def full_table() -> DecisionTable:
    """One of every decision kind."""
    app = "application_1700000000000_0007"
    return DecisionTable(
        seq=42, generated_at_ms=1_700_000_030_000, ttl_ms=90_000, leader="advisor-a",
        decisions=Decisions(
            apps={app: AppDecisions(rank=0, requests=(
                RequestDecision(10, hold=Hold(Reason.HASTE_HOLDBACK, (20, 5))),
                RequestDecision(20, local_only=LocalOnly(Reason.MATCHMAKING_NONLOCAL,
                                                         frozenset({"h3:8041"}), 30)),
                RequestDecision(5, fit=Fit(0.9, Reason.HASTE_FITNESS, 8)),
                RequestDecision(None, veto={"h1:8041": Reason.HASTE_FITNESS}),
            ))},
            rules=(Rule(Match(application_type="SQOOP"), (RequestDecision(
                None, allow=Allow(frozenset({"h1:8041", "h2:8041"}), Reason.ANACRAC_HOST),
                cap=Cap(2, Reason.ANACRAC_CAP)),)),),
            nodes={"h4:8041": Lending(0, 4, frozenset({Borrower(app, 20)}))},
            unranked=Unranked.FIRST))


def test_round_trip_is_identity() -> None:
    t = full_table()
    assert DecisionTable.loads(t.dumps()) == t
    assert DecisionTable.from_json(json.loads(json.dumps(t.to_json()))) == t


def test_doc_example_is_a_valid_table() -> None:
    """The example in the doc is what the Java side is written from: it must parse,
    and carry every decision kind."""
    text = DOC.read_text()
    start = text.index("```json\n") + len("```json\n")
    example = json.loads(text[start:text.index("```", start)])
    t = DecisionTable.from_json(example)
    assert t.to_json()["format"] == FORMAT
    kinds = {k for a in example["apps"].values() for r in a["requests"] for k in r}
    kinds |= {k for r in example["rules"] for q in r["requests"] for k in q}
    assert {"hold", "allow", "veto", "cap", "local_only", "fit"} <= kinds
    assert t.decisions.nodes and t.decisions.rules


def test_every_reason_is_documented() -> None:
    text = DOC.read_text()
    for reason in Reason:
        assert f"`{reason.value}`" in text, reason


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda d: d.update(version=2), "$.version"),
    (lambda d: d.update(format="other"), "$.format"),
    (lambda d: d.update(extra=1), "unknown key 'extra'"),
    (lambda d: d.pop("leader"), "missing key 'leader'"),
    (lambda d: d.update(ttl_ms=0), "$.ttl_ms"),
    (lambda d: d.update(seq="42"), "$.seq"),
    (lambda d: d["apps"]["application_1700000000000_0007"]["requests"][0].update(
        hold={"reason": "haste.nope"}), "requests[0].hold.reason"),
    (lambda d: d["apps"]["application_1700000000000_0007"]["requests"][3].update(
        surprise=True), "unknown key 'surprise'"),
    (lambda d: d["apps"]["application_1700000000000_0007"]["requests"][2]["fit"].update(
        min_alignment=1.5), "fit.min_alignment"),
    (lambda d: d["apps"]["application_1700000000000_0007"]["requests"][1]["local_only"].update(
        max_skips=-1), "local_only.max_skips"),
    (lambda d: d["rules"][0].update(match={}), "names no attribute"),
    (lambda d: d["nodes"]["h4:8041"].update(vcores=-1), "lent room"),
    (lambda d: d.update(unranked="middle"), "$.unranked"),
])
def test_strict_reader_refuses_with_the_path(mutate, where) -> None:  # type: ignore[no-untyped-def]
    data = full_table().to_json()
    mutate(data)
    with pytest.raises(TableError, match=r".*" + where.replace("[", r"\[").replace("$", r"\$")):
        DecisionTable.from_json(data)


def test_not_json_is_a_table_error() -> None:
    with pytest.raises(TableError, match="not JSON"):
        DecisionTable.loads("{")


def test_expiry_is_strictly_after_the_ttl() -> None:
    t = full_table()
    assert not t.expired(t.generated_at_ms + t.ttl_ms)
    assert t.expired(t.generated_at_ms + t.ttl_ms + 1)


def test_merge_accumulates_decisions_and_keeps_the_first_rank() -> None:
    a = Decisions(apps={"x": AppDecisions(1, (RequestDecision(10, hold=Hold(
        Reason.HASTE_HOLDBACK)),))}, unranked=Unranked.FIRST)
    b = Decisions(apps={"x": AppDecisions(5, (RequestDecision(20, veto={
        "n": Reason.HASTE_FITNESS}),)), "y": AppDecisions(None, ())},
        nodes={"n": Lending(0, 2)})
    m = Decisions.merge([a, b])
    assert m.apps["x"].rank == 1
    assert [q.priority for q in m.apps["x"].requests] == [10, 20]
    assert m.apps["y"].rank is None
    assert m.nodes == {"n": Lending(0, 2)}
    assert m.unranked is Unranked.FIRST  # from the part that ranks
    assert Decisions.merge([]).empty
