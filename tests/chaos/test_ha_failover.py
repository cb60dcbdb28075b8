"""The active RM of an HA pair with automatic failover killed with -9 during cycles.

A real pair (``chaos_ha``: two RMs electing through a real ZooKeeper). The
advisor, configured with both addresses, runs enforce cycles every 0.5 s (a
write every cycle). While no RM is active every cycle is skipped and nothing
is written; the first cycle after the standby takes over senses it and writes
to it. Printed: the failover time and the advisor's recovery time.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chaos_ha import RM_IDS, ZK_TIMEOUT_MS, HAPair
from chaos_rigs import (
    ORIGINAL_DELAY,
    CycleLoop,
    chaos_config,
    install_writing_decide,
    live_advisor,
    scheduler_delay,
)
from yarnmini import MiniCluster

from yarn_advisor.advisor.act.rollback import select
from yarn_advisor.advisor.loop import daemon

pytestmark = [pytest.mark.chaos, pytest.mark.cluster]


@pytest.fixture(scope="module")
def pair(mini_cluster: MiniCluster) -> Iterator[HAPair]:
    """Asks for the session cluster only to share its skip switch and its jars."""
    workdir = Path(tempfile.mkdtemp(prefix="yarn-chaos-ha-"))
    ha = HAPair(workdir)
    t0 = time.monotonic()
    ha.start()
    print(f"\nHA pair with ZooKeeper up in {time.monotonic() - t0:.1f}s", file=sys.stderr)
    yield ha
    ha.stop()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(autouse=True)
def writing_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon, "decide", daemon.decide)
    install_writing_decide()


def test_failover_to_the_standby_during_cycles(pair: HAPair, tmp_path: Path) -> None:
    old = pair.active()
    assert old is not None
    new = next(r for r in RM_IDS if r != old)
    advisor = live_advisor(chaos_config([pair.url(r) for r in RM_IDS], tmp_path))
    with CycleLoop(advisor) as loop:
        loop.wait_cycles(3)
        before = [r for _, r in loop.reports]
        assert all(r.outcome == "ok" for r in before), [r.reason for r in before]
        assert before[-1].snapshot is not None
        assert before[-1].snapshot.rm_url == pair.url(old)
        lines = len(advisor.actuator.journal.entries())
        t_kill = pair.kill_rm(old)
        deadline = time.monotonic() + 120
        while pair.ha_state(new) != "ACTIVE":
            assert time.monotonic() < deadline, "the standby never took over"
            time.sleep(0.05)
        t_active = time.monotonic()
        gap = loop.since(t_kill)
        lines_gap = len(advisor.actuator.journal.entries())
        t_ok, first = loop.first_ok_after(t_active)
        loop.wait_cycles(3)
    assert not loop.crashed
    skipped = [r for r in gap if r.outcome == "skipped"]
    assert all(not r.actions for r in skipped)
    assert {r.reason.split(":")[0] for r in skipped} <= {"unavailable", "standby", "timeout"}
    assert lines_gap - lines <= 2  # at most the write the kill interrupted
    assert first.snapshot is not None and first.snapshot.rm_url == pair.url(new)
    after = loop.since(t_ok)
    assert all(r.outcome == "ok" for r in after), [r.reason for r in after]
    assert any(o == "applied" for r in after for (_, _, o) in r.actions)
    assert scheduler_delay(pair.url(new)) != ORIGINAL_DELAY  # the new active took writes
    journal = advisor.actuator.journal
    steps = advisor.actuator.rollback(select(journal.actions(), since=0))
    assert journal.unreadable == 0
    assert all(s.outcome in ("applied", "noop") for s in steps), [s.to_json() for s in steps]
    assert scheduler_delay(pair.url(new)) == ORIGINAL_DELAY
    print(f"\nchaos HA failover (kill -9 of the active, ZooKeeper session {ZK_TIMEOUT_MS} ms): "
          f"standby ACTIVE {t_active - t_kill:.1f}s after the kill; {len(skipped)} cycle(s) "
          f"skipped meanwhile ({sorted({r.reason.split(':')[0] for r in skipped})}), nothing "
          f"written; first ok cycle on the new active {t_ok - t_active:.2f}s after it became "
          f"ACTIVE; rollback {len(steps)} steps on it", file=sys.stderr)
