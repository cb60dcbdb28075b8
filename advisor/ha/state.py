"""What the HA leader keeps in ZooKeeper, as bytes, and how a new leader takes it back.

Three named parts, each one versioned znode of
:class:`~yarn_advisor.connectors.zookeeper.state.StateStore` (compressed,
checksummed, chunked if large):

- ``classifier``: the task classifier's learned model (its checkpoint form);
- ``policies``: every policy's state (``State.to_json``);
- ``actuator``: the actuator's memory of its own writes: the time of each
  action per (kind, target) in the window (cooldowns and per-target limits),
  rollback holds, each moved target's value before the advisor changed it,
  and the last applied actions with the advisor and journal that wrote them.

The JSON is canonical (sorted keys), so an unchanged part is not rewritten.
A part that cannot be read back (corrupt, another format, another
classifier threshold) is reported and that part starts fresh.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.memory import GuardMemory
from yarn_advisor.advisor.engine.classify import TaskClassifier
from yarn_advisor.advisor.engine.decide import AdvisorState
from yarn_advisor.advisor.policies import POLICIES
from yarn_advisor.classifiers.model.checkpoint import CheckpointError
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier


class Member(Protocol):
    """What HA reads and restores of an advisor (the loop's ``Advisor`` is one):
    its actuator, its classifier and the policies' states."""

    actuator: Actuator
    classifier: TaskClassifier | None
    state: AdvisorState


FORMAT = 1
LAST_ACTIONS = 20  # the last applied actions kept in the actuator part


def _dumps(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()


def _loads(raw: bytes, what: str) -> dict[str, Any]:
    data = json.loads(raw)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{what}: not format {FORMAT}")
    return data


def export_parts(advisor: Member, writer: Mapping[str, Any],
                 last_actions: Iterable[Entry]) -> dict[str, bytes]:
    """Every part of ``advisor``'s state as bytes (``writer``: who and which journal)."""
    parts = {"policies": _dumps({"format": FORMAT, "states": {
        name: state.to_json() for name, state in sorted(advisor.state.policies.items())
        if hasattr(state, "to_json")}})}
    if advisor.classifier is not None:
        parts["classifier"] = _dumps({"format": FORMAT,
                                      "model": advisor.classifier.live.model.to_dict()})
    parts["actuator"] = actuator_part(advisor, writer, last_actions)
    return parts


def actuator_part(advisor: Member, writer: Mapping[str, Any],
                  last_actions: Iterable[Entry]) -> bytes:
    """The actuator's memory of its writes (its guardrails' own type and JSON form,
    owners included: a new leader keeps ``policy_conflict`` between two policies)."""
    return _dumps({
        "format": FORMAT,
        **advisor.actuator.memory.to_json(),
        "writer": dict(writer),
        "last_actions": [e.to_json() for e in last_actions],
        "saved_at": time.time(),
    })


def learn_unsaved_writes(advisor: Member, part: bytes | None) -> int:
    """Writes the old leader journaled after its last save (it died between its RM
    write and the save): read from its journal when this advisor can see the file
    (a shared ``state_dir``) and learned as the actuator learns its own after a
    restart. Returns how many were learned."""
    if part is None:
        return 0
    try:
        data = _loads(part, "actuator")
        path, saved_at = Path(str(data["writer"]["journal"])), float(data["saved_at"])
    except (ValueError, TypeError, KeyError):
        return 0
    a = advisor.actuator
    if path == a.journal.path or not path.exists():
        return 0
    horizon = time.time() - max(a.settings.target_window_s, a.settings.cooldown_s)
    unsaved = [e for e in Journal(path).entries()
               if e.phase is Phase.INTENT and e.ts > saved_at]
    for e in unsaved:
        a.learn(e, horizon, own=True)
    return len(unsaved)


def restore_parts(advisor: Member, parts: Mapping[str, bytes]) -> dict[str, str]:
    """Take each readable part into ``advisor``; returns the problems (part -> why)."""
    problems: dict[str, str] = {}
    for name, apply in (("classifier", _restore_classifier), ("policies", _restore_policies),
                        ("actuator", _restore_actuator)):
        raw = parts.get(name)
        if raw is None:
            continue
        try:
            apply(advisor, _loads(raw, name))
        except (ValueError, TypeError, KeyError, AttributeError, CheckpointError) as exc:
            problems[name] = f"{type(exc).__name__}: {exc}"
    return problems


def _restore_classifier(advisor: Member, data: dict[str, Any]) -> None:
    if advisor.classifier is None:
        return
    m = advisor.classifier.live.model
    advisor.classifier.live.model = NaiveBayesTaskClassifier.from_dict(data["model"],
                                                                       **m.params())


def _restore_policies(advisor: Member, data: dict[str, Any]) -> None:
    states = dict(advisor.state.policies)
    for name, raw in dict(data["states"]).items():
        if name in POLICIES:  # a policy this version no longer has is left out
            states[name] = POLICIES[name].state_from_json(raw)
    advisor.state = replace(advisor.state, policies=states)


def _restore_actuator(advisor: Member, data: dict[str, Any]) -> None:
    """Merged into what the actuator knows (its own journal): never forgets a write."""
    advisor.actuator.memory.merge(GuardMemory.from_json(data))
