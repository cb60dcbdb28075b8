"""Helpers of the write tests: a recommendation as a policy would make it, the journal
as JSON lines (what an operator reads), the actuator for a configuration."""

from __future__ import annotations

from typing import Any

from yarn_advisor.advisor.act.actuator import Actuator, build_actuator
from yarn_advisor.advisor.act.journal import Journal
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import previous_from_json, value_from_json
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers


def rec(kind: str, target: str, value: Any, previous: Any = None, policy: str = "test",
        rule: str = "test.write", summary: str = "a test write") -> Recommendation:
    """A recommendation from the JSON forms of its value and previous value."""
    k = Kind(kind)
    return Recommendation(k, target, value_from_json(k, value), policy,
                          Explanation(rule, summary), previous_from_json(k, previous))


def records(journal: Journal) -> list[dict[str, Any]]:
    """The journal's lines as the JSON objects on disk."""
    return [e.to_json() for e in journal.entries()]


def actuator_for(cfg: AdvisorConfig, rm: RMClient) -> Actuator:
    """The actuator of ``cfg`` writing to ``rm``."""
    return build_actuator(cfg, Writer(RMLevers(rm, cfg.actuator.overcommit_timeout_ms)))
