"""Rollback's choice of actions and of restoring writes (on the journal alone).

Restores on the real RM: tests/cluster/test_write_levers.py and
tests/cluster/test_rollback_cli.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.journal import Action, Entry, Journal, Phase
from yarn_advisor.advisor.act.rollback import inverse, select
from yarn_advisor.advisor.cli.rollback import parse_time, register
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.config.schema import ActuatorSettings


def act(aid: str, ts: float, kind: str = "set_app_priority", target: str = "app_1",
        value: Any = 5, previous: Any = 0, outcome: str = "applied", sent: bool = True,
        policy: str = "haste", rollback_of: str | None = None, answer: Any = None) -> Action:
    return Action(aid, ts, Kind(kind), target, policy, value, previous, sent, outcome, answer,
                  rollback_of)


def test_select_since_newest_first_skipping_what_needs_no_undo() -> None:
    actions = [
        act("old", 10), act("a", 100), act("b", 200, value=9, previous=5),
        act("noop", 150, sent=False, outcome="noop"),
        act("refused", 160, outcome="refused"),
        act("crashed", 170, outcome=""),          # intent journaled, no result: undo it
        act("done", 180), act("r", 190, policy="rollback", rollback_of="done"),
    ]
    assert [a.id for a in select(actions, since=50)] == ["b", "crashed", "a"]
    assert [a.id for a in select(actions, action_id="r")] == ["r"]


def _json(steps: list[tuple[Kind, str, Any]]) -> list[tuple[str, str, Any]]:
    return [(k.value, t, v.to_json()) for k, t, v in steps]


def test_inverse_of_each_kind() -> None:
    assert _json(inverse(act("a", 1, "update_scheduler_conf", "scheduler", {"k": 5},
                             {"k": None}))) == [("update_scheduler_conf", "scheduler", {"k": None})]
    assert _json(inverse(act("a", 1, "replace_node_labels", "h:1", ["x"], [],
                             answer={"status": 200, "added_cluster_labels": ["x"]}))) == [
        ("replace_node_labels", "h:1", []), ("remove_cluster_labels", "cluster", ["x"])]
    assert _json(inverse(act("a", 1, "add_cluster_labels", "cluster", ["x", "y"], ["y"]))) == [
        ("remove_cluster_labels", "cluster", ["x"])]
    assert _json(inverse(act("a", 1, "remove_cluster_labels", "cluster", ["x", "z"],
                             ["x"]))) == [("add_cluster_labels", "cluster", ["x"])]


def _actuator(j: Journal) -> Actuator:
    return Actuator(ActuatorSettings(), j, writer=None, global_dry_run=False)


def test_irreversible_actions_are_reported_and_journaled(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    steps = _actuator(j).rollback([
        act("s", 1, "signal_container", "container_1_0001_01_000002", "GRACEFUL_SHUTDOWN",
            {"state": "RUNNING", "node": "h:1"})])
    assert [s.outcome for s in steps] == ["irreversible"]
    (rec,) = j.entries()
    assert (rec.policy, rec.rollback_of, rec.phase) == ("rollback", "s", Phase.BLOCKED)


def test_dry_run_rollback_only_journals(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    steps = _actuator(j).rollback([act("a", 1)], dry_run=True)
    assert [(s.outcome, s.value, s.rollback_of) for s in steps] == [("dry_run", 0, "a")]


@pytest.mark.parametrize(("text", "expected"), [
    ("1700000000", 1_700_000_000.0), ("30m", 10_000.0 - 1800), ("2h", 10_000.0 - 7200),
    ("2023-11-14T22:13:20Z", 1_700_000_000.0), ("2023-11-14T23:13:20+01:00", 1_700_000_000.0),
])
def test_parse_time(text: str, expected: float) -> None:
    assert parse_time(text, now=10_000.0) == expected


@pytest.mark.parametrize("text", ["yesterday", "2023-11-14T22:13:20"])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_time(text, now=0.0)


def test_cli_needs_since_or_action() -> None:
    p = argparse.ArgumentParser()
    register(p.add_subparsers(dest="command"))
    args = p.parse_args(["rollback", "--since", "1h", "--config", "c.yaml", "--json"])
    assert (args.since, args.action, args.config, args.json) == ("1h", None, "c.yaml", True)
    with pytest.raises(SystemExit):
        p.parse_args(["rollback"])
    with pytest.raises(SystemExit):
        p.parse_args(["rollback", "--since", "1h", "--action", "x"])


def test_rollback_reports_a_line_it_could_not_read_and_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The probe's case: a torn line among applied actions; rollback said "all restored"
    with rc 0 while the change it recorded was still on the RM."""
    import yaml

    from yarn_advisor.advisor.cli.main import main

    journal = tmp_path / "state" / "journal.jsonl"
    j = Journal(journal)
    j.append(Entry(id="a", phase=Phase.DRY_RUN, kind=Kind.SET_APP_PRIORITY, target="app_1",
                   policy="haste", value=5, outcome="dry_run"))
    with open(journal, "ab") as fh:
        fh.write(b'{"id": "b", "phase": "intent", "kind": "set_app_pri')  # kill -9 here
    j.append(Entry(id="c", phase=Phase.DRY_RUN, kind=Kind.SET_APP_PRIORITY, target="app_2",
                   policy="haste", value=5, outcome="dry_run"))
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump({"state_dir": str(tmp_path / "state")}))
    assert main(["rollback", "--since", "1h", "--config", str(cfg)]) == 1
    out, err = capsys.readouterr()
    assert "1 line(s) of" in err and "could not be read" in err
    assert "NOT all restored" in out
