"""Every advisor's journal in one read (advisor/ha/journals.py), without ZooKeeper or RM.

Two advisors' journals are written by the Journal class itself, their lines
interleaved in time as a failover leaves them; rollback's selection must see
both, in time order, and append only to this host's own journal.
"""

from __future__ import annotations

import time
from pathlib import Path

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase, new_id
from yarn_advisor.advisor.act.rollback import select
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.ha.journals import every_journal
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.config.schema import AdvisorConfig


def config(state: Path, name: str | None) -> AdvisorConfig:
    ha = {"ha": {"zookeeper": {"hosts": "127.0.0.1:1"}, "advisor_id": name}} if name else {}
    return load_config(None, {"state_dir": str(state), **ha})


def write(journal: Journal, ts: float, value: int, rollback_of: str | None = None) -> str:
    """An applied priority change: intent, then result, as journaled_write leaves them."""
    aid = new_id()
    base = Entry(id=aid, phase=Phase.INTENT, kind=Kind.SET_APP_PRIORITY, target="app_1",
                 policy="rollback" if rollback_of else "haste", value=value, previous=value - 1,
                 rollback_of=rollback_of, ts=ts)
    journal.append(base)
    journal.append(Entry(**{**base.__dict__, "phase": Phase.RESULT, "outcome": "applied",
                            "sent": True, "ts": ts + 0.1}))
    return aid


def test_both_advisors_actions_are_read_in_time_order(tmp_path: Path) -> None:
    a, b = Journal(tmp_path / "journal.a.jsonl"), Journal(tmp_path / "journal.b.jsonl")
    t = time.time() - 100
    first = write(a, t, 5)
    second = write(b, t + 10, 6)  # b took over
    third = write(a, t + 20, 7)  # a leads again
    merged = every_journal(config(tmp_path, "b"))
    assert merged.path == tmp_path / "journal.b.jsonl"  # this advisor's own
    assert [x.id for x in merged.actions()] == [first, second, third]
    assert {merged.source[i].name for i in (first, third)} == {"journal.a.jsonl"}
    assert merged.source[second].name == "journal.b.jsonl"
    assert [x.id for x in select(merged.actions(), since=t - 1)] == [third, second, first]
    assert merged.where().endswith("/{journal.b.jsonl, journal.a.jsonl}")  # its own first


def test_a_rollback_in_one_journal_covers_the_action_in_the_other(tmp_path: Path) -> None:
    a = Journal(tmp_path / "journal.a.jsonl")
    t = time.time() - 100
    done = write(a, t, 5)
    merged = every_journal(config(tmp_path, "b"))
    write(merged, t + 5, 4, rollback_of=done)  # b's host undid a's action
    assert (tmp_path / "journal.b.jsonl").exists()
    assert len(a.entries()) == 2  # nothing appended to a's journal
    assert select(every_journal(config(tmp_path, "a")).actions(), since=t - 1) == []


def test_without_ha_the_plain_journal_and_any_other_are_read(tmp_path: Path) -> None:
    old = write(Journal(tmp_path / "journal.a.jsonl"), time.time() - 50, 3)
    mine = write(Journal(tmp_path / "journal.jsonl"), time.time() - 40, 4)
    merged = every_journal(config(tmp_path, None))
    assert merged.path == tmp_path / "journal.jsonl"
    assert [x.id for x in merged.actions()] == [old, mine]


def test_an_unreadable_line_of_another_journal_is_counted(tmp_path: Path) -> None:
    write(Journal(tmp_path / "journal.a.jsonl"), time.time() - 50, 3)
    with open(tmp_path / "journal.a.jsonl", "ab") as fh:
        fh.write(b"{not json\n")
    merged = every_journal(config(tmp_path, "b"))
    assert len(merged.actions()) == 1
    assert merged.unreadable == 1
