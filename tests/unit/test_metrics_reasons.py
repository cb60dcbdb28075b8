"""Every reason the actuator can block with, and every cycle outcome, is exported at
zero from the first scrape (a dashboard never shows "no data" for a reason that has
simply not happened yet)."""

from __future__ import annotations

from collections import Counter

from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.act.outcomes import Block
from yarn_advisor.advisor.loop.report import Totals
from yarn_advisor.advisor.observe.metrics import AdvisorCollector
from yarn_advisor.connectors.errors import ConnectorError


def _scrape(blocked: Counter[Block]) -> dict[str, float]:
    registry = CollectorRegistry()
    registry.register(AdvisorCollector(lambda: None, Totals(), lambda: blocked))
    out = {}
    for line in generate_latest(registry).decode().splitlines():
        if line.startswith("yarn_advisor_actions_blocked_total{"):
            labels, value = line.rsplit(" ", 1)
            reason = labels.split('reason="', 1)[1].split('"', 1)[0]
            out[reason] = float(value)
    return out


def test_every_block_reason_is_exported_at_zero_before_any_cycle() -> None:
    assert _scrape(Counter()) == {b.value: 0.0 for b in Block}


def test_blocks_are_counted_under_their_reason() -> None:
    got = _scrape(Counter({Block.POLICY_CONFLICT: 3, Block.RM_AUTH: 1}))
    assert got["policy_conflict"] == 3.0 and got["rm_auth"] == 1.0
    assert sum(got.values()) == 4.0


def test_every_rm_error_reason_has_its_block() -> None:
    """A failed live RM check blocks with rm_<reason> of the connector's error; each
    reason a connector can raise has its own Block (none falls back to rm_error)."""
    from yarn_advisor.connectors import errors

    reasons = {cls.reason for cls in vars(errors).values()
               if isinstance(cls, type) and issubclass(cls, errors.ConnectorError)}
    reasons -= {"conflict", "not_leader"}  # ZooKeeper's: never raised by the RM check
    assert {Block.of_rm(_error(r)).value for r in reasons} == {f"rm_{r}" for r in reasons}


def _error(reason: str) -> ConnectorError:
    class E(ConnectorError):
        pass

    E.reason = reason
    return E("x")


def _lines(collector: AdvisorCollector, prefix: str) -> dict[str, float]:
    registry = CollectorRegistry()
    registry.register(collector)
    return {labels: float(value) for labels, value in
            (line.rsplit(" ", 1) for line in generate_latest(registry).decode().splitlines()
             if line.startswith(prefix))}


def test_every_watchdog_signal_is_exported_at_zero_and_trips_are_counted() -> None:
    from yarn_advisor.advisor.act.watchdog import Signal
    from yarn_advisor.advisor.policies import POLICIES

    quiet = _lines(AdvisorCollector(lambda: None, Totals()), "yarn_advisor_watchdog_trips_total{")
    assert len(quiet) == len(POLICIES) * len(Signal) and set(quiet.values()) == {0.0}
    tripped = AdvisorCollector(lambda: None, Totals(),
                               trips=lambda: {("opera", Signal.TASK_FAILURES): 2},
                               tripped=lambda: ["opera"])
    trips = _lines(tripped, "yarn_advisor_watchdog_trips_total{")
    assert trips['yarn_advisor_watchdog_trips_total{policy="opera",signal="task_failures"}'] == 2
    held = _lines(tripped, "yarn_advisor_policy_tripped{")
    assert held == {f'yarn_advisor_policy_tripped{{policy="{p}"}}': float(p == "opera")
                    for p in POLICIES}
