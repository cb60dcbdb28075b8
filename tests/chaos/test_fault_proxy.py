"""Connection resets and slow answers between the advisor and the real RM.

Every request, reads and writes, goes through a TCP fault proxy of our own on
loopback (``chaos_proxy``). While a fault lasts each cycle is skipped with one
reason, nothing is decided or written; the first cycle after it senses and acts
again. A reset on the write itself leaves an intent whose outcome is unknown,
which rollback restores. Recovery times are printed (``-s`` shows them).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chaos_proxy import FaultProxy
from chaos_rigs import (
    ORIGINAL_DELAY,
    TOGGLE,
    chaos_config,
    install_writing_decide,
    live_advisor,
    restore_delay,
    scheduler_delay,
)
from yarnmini import MiniCluster

from yarn_advisor.advisor.act.journal import Phase
from yarn_advisor.advisor.act.rollback import select
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.loop import daemon
from yarn_advisor.advisor.loop.daemon import Advisor

pytestmark = [pytest.mark.chaos, pytest.mark.cluster]


@pytest.fixture(autouse=True)
def writing_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon, "decide", daemon.decide)
    install_writing_decide()


@pytest.fixture
def proxy(mini_cluster: MiniCluster) -> Iterator[FaultProxy]:
    p = FaultProxy(mini_cluster.rm_url)
    yield p
    p.close()
    restore_delay(mini_cluster.rm_url)


def advisor_through(proxy: FaultProxy, state: Path) -> Advisor:
    return live_advisor(chaos_config([proxy.url], state))


def phases(advisor: Advisor) -> list[str]:
    return [e.phase.value for e in advisor.actuator.journal.entries()]


def check_rollback_restores(advisor: Advisor, rm_url: str) -> None:
    """The journal is whole and rollback, trusting it, puts the original value back."""
    journal = advisor.actuator.journal
    actions = select(journal.actions(), since=0)
    assert journal.unreadable == 0
    steps = advisor.actuator.rollback(actions)
    assert all(s.outcome in ("applied", "noop") for s in steps), [s.to_json() for s in steps]
    assert scheduler_delay(rm_url) == ORIGINAL_DELAY


FAULTS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "reset": ({}, ("unavailable",)),
    "reset_mid": ({}, ("unavailable", "parse")),
    "slow": ({"slow_bytes": 16, "slow_delay_s": 0.5}, ("timeout",)),  # beyond total_s 4 s
    "blackhole": ({}, ("timeout",)),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_fault_skips_the_cycle_and_the_next_one_recovers(
        proxy: FaultProxy, mini_cluster: MiniCluster, tmp_path: Path, fault: str) -> None:
    options, reasons = FAULTS[fault]
    for k, v in options.items():
        setattr(proxy, k, v)
    advisor = advisor_through(proxy, tmp_path)
    first = advisor.run_once()
    assert first.outcome == "ok", first.reason
    before = phases(advisor)
    assert before[-2:] == ["intent", "result"], before
    written = scheduler_delay(mini_cluster.rm_url)
    assert written in TOGGLE

    proxy.set(fault)
    t0 = time.monotonic()
    faulted = advisor.run_once()
    fault_s = time.monotonic() - t0
    assert faulted.outcome == "skipped"
    assert faulted.reason.split(":")[0] in reasons, faulted.reason
    assert faulted.snapshot is None and not faulted.actions and not faulted.recommendations
    assert phases(advisor) == before                           # nothing journaled
    assert scheduler_delay(mini_cluster.rm_url) == written     # nothing written

    proxy.set("pass")
    t1 = time.monotonic()
    back = advisor.run_once()
    recover_s = time.monotonic() - t1
    assert back.outcome == "ok", back.reason
    assert phases(advisor)[len(before):][-2:] == ["intent", "result"]
    assert scheduler_delay(mini_cluster.rm_url) != written     # acting again
    print(f"\nchaos proxy {fault}: faulted cycle skipped in {fault_s:.2f}s "
          f"({faulted.reason[:80]}); next cycle ok in {recover_s:.2f}s", file=sys.stderr)
    check_rollback_restores(advisor, mini_cluster.rm_url)


def test_slow_answers_within_the_deadline_are_read_whole(
        proxy: FaultProxy, mini_cluster: MiniCluster, tmp_path: Path) -> None:
    proxy.slow_bytes, proxy.slow_delay_s = 2048, 0.02
    proxy.set("slow")
    advisor = advisor_through(proxy, tmp_path)
    t0 = time.monotonic()
    report = advisor.run_once()
    assert report.outcome == "ok", report.reason
    assert proxy.faults["slow"] > 5
    assert report.snapshot is not None and len(report.snapshot.nodes) >= 2
    print(f"\nchaos proxy slow within deadline: cycle ok in {time.monotonic() - t0:.2f}s",
          file=sys.stderr)
    check_rollback_restores(advisor, mini_cluster.rm_url)


def test_a_reset_on_the_write_leaves_an_unknown_outcome_that_rollback_restores(
        proxy: FaultProxy, mini_cluster: MiniCluster, tmp_path: Path) -> None:
    advisor = advisor_through(proxy, tmp_path)
    writer = advisor.actuator.writer
    assert isinstance(writer, Writer)
    real_apply = writer.apply

    def reset_after_intent(kind: Any, target: str, value: Any, before_send: Any) -> Any:
        def then_reset(previous: Any) -> None:
            before_send(previous)          # the intent is on disk
            proxy.set("reset")             # and the write meets a reset
        return real_apply(kind, target, value, then_reset)

    writer.apply = reset_after_intent  # type: ignore[method-assign]
    report = advisor.run_once()
    assert report.outcome == "ok", report.reason
    entries = advisor.actuator.journal.entries()
    (intent,) = [e for e in entries if e.phase is Phase.INTENT]
    results = [e for e in entries if e.phase is Phase.RESULT]
    (result,) = [e for e in results if e.id == intent.id]
    assert intent.previous is not None
    assert result.sent is True and result.outcome == "unknown", result.to_json()
    # the cycle's next write reads first, meets the reset and sends nothing
    assert all(not e.sent and e.outcome == "unavailable" for e in results if e is not result)

    proxy.set("pass")
    writer.apply = real_apply  # type: ignore[method-assign]
    check_rollback_restores(advisor, mini_cluster.rm_url)
