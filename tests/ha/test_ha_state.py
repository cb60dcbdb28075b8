"""The state a leader hands over (advisor/ha/state.py) and the HA metrics, without ZooKeeper.

Advisors replay the recorded mini cluster, so the classifier and the policies
hold real learned state; the hand-over goes through the same bytes that
ZooKeeper stores.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.act.journal import Entry, Phase
from yarn_advisor.advisor.act.outcomes import Block
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.ha.state import export_parts, restore_parts
from yarn_advisor.advisor.ha.status import ALONE, HaCollector, HaStatus
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Priority
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.connectors.replay import open_recording

WRITER = {"advisor": "a", "identity": "a:1", "journal": "/var/journal.a.jsonl"}


def advisor(recording_dir: Path, cycles: int, **overrides: object) -> Advisor:
    recording = open_recording(recording_dir)
    adv = replay_advisor(recording, load_config(None, dict(overrides)))
    for _ in itertools.islice(replay_cycles(adv, recording), cycles):
        pass
    return adv


def test_a_new_leader_takes_every_part_as_it_was_saved(recording_dir: Path) -> None:
    old = advisor(recording_dir, 40)  # the whole recording: the classifier has learned
    memory = old.actuator.memory
    memory.times[(Kind.SET_APP_PRIORITY, "application_1_0001")] = [1000.0, 1100.0]
    memory.holds[(Kind.MOVE_APP_QUEUE, "application_1_0002")] = 5000.0
    memory.origins[(Kind.SET_APP_PRIORITY, "application_1_0001")] = Priority(0)
    memory.owners[(Kind.SET_APP_PRIORITY, "application_1_0001")] = ("haste", 1100.0)
    last = [Entry(id="x1", phase=Phase.INTENT, kind=Kind.SET_APP_PRIORITY,
                  target="application_1_0001", policy="haste", value=5, previous=0, ts=1100.0)]
    parts = export_parts(old, WRITER, last)
    assert set(parts) == {"classifier", "policies", "actuator"}
    assert old.classifier is not None and old.classifier.live.model.to_dict()["counts"]

    new = advisor(recording_dir, 1)  # a follower that observed less
    assert export_parts(new, WRITER, last) != parts
    assert restore_parts(new, parts) == {}
    again = export_parts(new, WRITER, last)
    for name in ("classifier", "policies"):
        assert again[name] == parts[name]  # byte for byte
    saved = json.loads(parts["actuator"])
    assert {**json.loads(again["actuator"]), "saved_at": 0} == {**saved, "saved_at": 0}
    assert saved["writer"] == WRITER and saved["last_actions"][0]["id"] == "x1"


def test_restored_actuator_memory_is_merged_never_forgotten(recording_dir: Path) -> None:
    old, new = advisor(recording_dir, 1), advisor(recording_dir, 1)
    key = (Kind.SET_APP_PRIORITY, "application_1_0001")
    old.actuator.memory.times[key] = [1000.0]
    new.actuator.memory.times[key] = [900.0, 1000.0]  # its own journal knew of one more
    assert restore_parts(new, export_parts(old, WRITER, [])) == {}
    assert new.actuator.memory.times[key] == [900.0, 1000.0]


def test_policy_conflict_holds_across_a_leader_change(recording_dir: Path) -> None:
    """HaSTE's leader raised an application's priority; after a failover ANACRAC's
    recommendation for the same application is still a policy conflict on the new
    leader (the owner travels with the actuator's state), so the two policies
    cannot flap the priority across leaders."""
    old, new = advisor(recording_dir, 1), advisor(recording_dir, 1)
    snap = recorded_snapshot(recording_dir)
    now = snap.taken_at / 1000
    app = snap.apps[0].id
    for a in (old, new):
        a.actuator.clock = lambda: now
        a.actuator.settings = a.actuator.settings.model_copy(update={"cooldown_s": 0.0})

    def priority(policy: str, value: int) -> Recommendation:
        return Recommendation(Kind.SET_APP_PRIORITY, app, Priority(value), policy,
                              Explanation("test.rule", "because"), Priority(0))

    assert old.actuator.act([priority("haste", 5)], snap) == {
        (Kind.SET_APP_PRIORITY, "haste", "dry_run"): 1}
    assert restore_parts(new, export_parts(old, WRITER, [])) == {}
    assert new.actuator.act([priority("anacrac", 9)], snap) == {
        (Kind.SET_APP_PRIORITY, "anacrac", "blocked"): 1}
    assert new.actuator.blocked[Block.POLICY_CONFLICT] == 1


def recorded_snapshot(recording_dir: Path) -> Snapshot:
    adv = advisor(recording_dir, 1)
    assert adv.latest is not None and adv.latest.snapshot is not None
    return adv.latest.snapshot


@pytest.mark.parametrize(("part", "raw", "why"), [
    ("policies", b"{not json", "JSONDecodeError"),
    ("policies", b'{"format": 99, "states": {}}', "not format 1"),
    ("actuator", b'{"format": 1, "times": [["no_such_kind", "t", [1]]], "holds": [],'
                 b' "origins": []}', "no_such_kind"),
])
def test_a_bad_part_is_reported_and_left_out(recording_dir: Path, part: str, raw: bytes,
                                             why: str) -> None:
    adv = advisor(recording_dir, 2)
    before = export_parts(adv, WRITER, [])
    problems = restore_parts(adv, {part: raw})
    assert list(problems) == [part] and why in problems[part]
    assert unsaved(export_parts(adv, WRITER, [])) == unsaved(before)


def test_a_classifier_of_another_threshold_starts_fresh(recording_dir: Path) -> None:
    other = advisor(recording_dir, 2, classifier={"threshold_s": 30.0})
    adv = advisor(recording_dir, 2)
    before = export_parts(adv, WRITER, [])
    problems = restore_parts(adv, {"classifier": export_parts(other, WRITER, [])["classifier"]})
    assert "threshold" in problems["classifier"]
    assert unsaved(export_parts(adv, WRITER, [])) == unsaved(before)


def unsaved(parts: dict[str, bytes]) -> dict[str, object]:
    """The parts without the actuator's save time."""
    return {name: {**json.loads(raw), "saved_at": 0} for name, raw in parts.items()}


def scrape(status: HaStatus, now: float = 1000.0) -> dict[str, float]:
    registry = CollectorRegistry()
    registry.register(HaCollector(lambda: status, clock=lambda: now))
    out = {}
    for line in generate_latest(registry).decode().splitlines():
        if not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_metrics_alone_leader_and_follower() -> None:
    alone = scrape(ALONE)
    assert alone["yarn_advisor_leader"] == 1.0 and alone["yarn_advisor_state_bytes"] == 0.0
    assert {v for k, v in alone.items() if "session_state" in k} == {0.0}
    assert math.isnan(alone["yarn_advisor_state_checkpoint_age_seconds"])
    leader = scrape(HaStatus("leader", "CONNECTED", 2048, 990.0))
    assert leader == {
        "yarn_advisor_leader": 1.0,
        'yarn_advisor_zookeeper_session_state{state="CONNECTED"}': 1.0,
        'yarn_advisor_zookeeper_session_state{state="SUSPENDED"}': 0.0,
        'yarn_advisor_zookeeper_session_state{state="LOST"}': 0.0,
        "yarn_advisor_state_bytes": 2048.0,
        "yarn_advisor_state_checkpoint_age_seconds": 10.0}
    suspended = scrape(HaStatus("suspended", "SUSPENDED"))
    assert suspended["yarn_advisor_leader"] == 0.0
    assert suspended['yarn_advisor_zookeeper_session_state{state="SUSPENDED"}'] == 1.0
    assert math.isnan(suspended["yarn_advisor_state_checkpoint_age_seconds"])
