"""Precision mode's publish step: when a table goes out, what is journaled, who hears it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from _snapshots import TS
from test_actuator import FakeRM, make, rec, snap

from yarn_advisor.advisor.act.publish import (
    LatestTable,
    Publisher,
    TableFile,
    TableJournal,
    build_publisher,
    tables_journal_path,
    withdraw_for_rollback,
)
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.model.decision_table import (
    AppDecisions,
    Decisions,
    DecisionTable,
    Hold,
    Reason,
    RequestDecision,
)

HOLD = Decisions(apps={"application_1_0001": AppDecisions(None, (
    RequestDecision(10, hold=Hold(Reason.HASTE_HOLDBACK, (20,))),))})


class Sink:
    """Records what a sink hears."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, object]] = []

    def publish(self, table: DecisionTable) -> None:
        self.heard.append(("publish", table.seq))

    def withdraw(self, reason: str) -> None:
        self.heard.append(("withdraw", reason))


def publisher(tmp_path: Path, clock: float = 1000.0) -> tuple[Publisher, Sink]:
    sink = Sink()
    journal = TableJournal(tmp_path / "journal.tables.jsonl")
    return Publisher("advisor-a", 90_000, journal, [sink], clock=lambda: clock), sink


def records(p: Publisher) -> list[dict[str, Any]]:
    return p.journal.records()


def test_published_tables_are_stamped_journaled_then_heard(tmp_path: Path) -> None:
    p, sink = publisher(tmp_path)
    t1 = p.cycle(HOLD, TS, None, True)
    t2 = p.cycle(HOLD, TS + 30_000, None, True)
    assert t1 is not None and t2 is not None
    assert (t1.seq, t1.generated_at_ms, t1.ttl_ms, t1.leader) == (1, TS, 90_000, "advisor-a")
    assert t2.seq == 2 and t2.decisions == HOLD
    first, second = records(p)
    assert DecisionTable.from_json(first["table"]) == t1  # the whole table, once
    assert second["same_as"] == 1 and "table" not in second  # unchanged content
    assert first["counts"]["hold"] == 1
    assert sink.heard == [("publish", 1), ("publish", 2)]


@pytest.mark.parametrize(("block", "enforcing", "reason"), [
    (None, False, "dry_run"),
    ("kill_switch", True, "kill_switch"),
    ("not_leader", True, "not_leader"),
    ("stale_snapshot", True, "withheld"),
])
def test_withheld_when_it_may_not_act(tmp_path: Path, block: str | None, enforcing: bool,
                                      reason: str) -> None:
    p, sink = publisher(tmp_path)
    assert p.cycle(HOLD, TS, None, True) is not None
    assert p.cycle(HOLD, TS + 1, block, enforcing) is None
    assert p.cycle(HOLD, TS + 2, block, enforcing) is None
    assert sink.heard == [("publish", 1), ("withdraw", reason), ("withdraw", reason)]
    # journaled once, when the withdrawal starts
    assert [r.get("reason") for r in records(p) if r["event"] == "withdrawn"] == [reason]
    assert p.withdrawn == reason


def test_a_leader_that_cannot_confirm_its_lock_does_not_publish(tmp_path: Path) -> None:
    p, sink = publisher(tmp_path)
    assert p.cycle(HOLD, TS, None, True, confirm=lambda: False) is None
    assert sink.heard == [("withdraw", "not_leader")]


def test_seq_continues_after_a_restart(tmp_path: Path) -> None:
    p, _ = publisher(tmp_path)
    for i in range(3):
        p.cycle(HOLD, TS + i, None, True)
    again, _ = publisher(tmp_path)
    t = again.cycle(HOLD, TS + 9, None, True)
    assert t is not None and t.seq == 4


def test_a_rollback_withdraws_the_table_for_the_hold(tmp_path: Path) -> None:
    p, sink = publisher(tmp_path, clock=1000.0)
    p.cycle(HOLD, TS, None, True)
    f = tmp_path / "table.json"
    f.write_text("{}")
    other = TableJournal(p.journal.path)  # the rollback command, another process
    withdraw_for_rollback(other, 60.0, f)
    assert not f.exists()
    p.clock = lambda: 1000.0 + 10  # still in the hold (the record says time.time() + 60)
    assert p.cycle(HOLD, TS + 1, None, True) is None
    assert sink.heard[-1] == ("withdraw", "rollback")
    p.clock = lambda: 4_102_444_800.0  # far past the hold
    assert p.cycle(HOLD, TS + 2, None, True) is not None


def test_the_file_sink_replaces_atomically_and_deletes_on_withdrawal(tmp_path: Path) -> None:
    f = TableFile(tmp_path / "sub" / "table.json")
    t = DecisionTable(7, TS, 90_000, "a", HOLD)
    f.publish(t)
    assert DecisionTable.loads(f.path.read_text()) == t
    assert [x.name for x in f.path.parent.iterdir()] == ["table.json"]  # no temp file left
    f.withdraw("dry_run")
    assert not f.path.exists()
    f.withdraw("dry_run")  # nothing to delete: fine


def test_the_endpoint_sink_serves_nothing_past_the_ttl() -> None:
    s = LatestTable()
    assert s.current(TS) == (None, "none")
    t = DecisionTable(1, TS, 1000, "a", HOLD)
    s.publish(t)
    assert s.current(TS + 1000) == (t, "")
    assert s.current(TS + 1001) == (None, "expired")
    s.withdraw("kill_switch")
    assert s.current(TS) == (None, "kill_switch")


def test_the_actuator_publishes_under_its_cycle_guardrails(tmp_path: Path) -> None:
    rm = FakeRM()
    a = make(tmp_path, rm)
    p, sink = publisher(tmp_path)
    a.publisher = p
    a.act([rec()], snap(), HOLD)
    assert sink.heard == [("publish", 1)]
    a.halted = True  # the run-time kill switch
    a.act([rec()], snap(), HOLD)
    assert sink.heard[-1] == ("withdraw", "kill_switch")
    dry = make(tmp_path / "dry", FakeRM(), dry_run=True)
    dry.publisher, dsink = publisher(tmp_path / "dry")
    dry.act([rec()], snap(), HOLD)
    assert dsink.heard == [("withdraw", "dry_run")]
    assert a.act([rec()], snap()) is not None  # no table this cycle: nothing heard
    assert len(sink.heard) == 2


def test_build_publisher_follows_the_configuration(tmp_path: Path) -> None:
    off = load_config(overrides={"state_dir": str(tmp_path)})
    assert build_publisher(off, tmp_path / "journal.jsonl") is None
    on = load_config(overrides={"state_dir": str(tmp_path), "sense": {"interval_s": 10},
                                "precision": {"enabled": True,
                                              "table_file": str(tmp_path / "t.json")}})
    p = build_publisher(on, tmp_path / "journal.jsonl")
    assert p is not None
    assert p.ttl_ms == 30_000  # three cycles
    assert p.journal.path == tables_journal_path(tmp_path / "journal.jsonl")
    assert [type(s) for s in p.sinks] == [LatestTable, TableFile]


def test_the_endpoint_answers_200_with_an_etag_304_and_404_with_the_reason(
        tmp_path: Path) -> None:
    from yarn_advisor.advisor.loop.daemon import Advisor
    from yarn_advisor.advisor.observe.server import AdvisorServer

    a = make(tmp_path, FakeRM())
    a.publisher, _ = publisher(tmp_path)
    a.publisher.sinks.insert(0, LatestTable())
    advisor = Advisor(sensor=None, engine=None, actuator=a)  # type: ignore[arg-type]
    server = AdvisorServer(advisor, "127.0.0.1", 0, 30.0)
    try:
        status, body, headers = server.decision_table(None)
        assert (status, json.loads(body)["reason"], headers) == (404, "none", {})
        a.publisher.cycle(HOLD, int(time.time() * 1000), None, True)
        status, body, headers = server.decision_table(None)
        assert (status, headers) == (200, {"ETag": '"advisor-a-1"'})
        assert DecisionTable.loads(body).decisions == HOLD
        assert server.decision_table('"advisor-a-1"')[0] == 304
        assert server.decision_table('"advisor-b-1"')[0] == 200  # another leader's seq 1
        a.publisher.cycle(HOLD, TS, "kill_switch", True)
        status, body, _ = server.decision_table('"advisor-a-1"')
        assert (status, json.loads(body)["reason"]) == (404, "kill_switch")
        a.publisher = None
        assert json.loads(server.decision_table(None)[1])["reason"] == "disabled"
    finally:
        server.httpd.server_close()


def test_stopping_withdraws_once_and_deletes_the_file(tmp_path: Path) -> None:
    p, sink = publisher(tmp_path)
    f = TableFile(tmp_path / "table.json")
    p.sinks.append(f)
    p.cycle(HOLD, TS, None, True)
    assert f.path.exists()
    p.stop()
    p.stop()
    assert not f.path.exists()
    assert sink.heard[-1] == ("withdraw", "stopped")
    assert [r["reason"] for r in records(p) if r["event"] == "withdrawn"] == ["stopped"]
