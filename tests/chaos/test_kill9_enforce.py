"""The advisor killed with -9 during enforce cycles, again and again, on the real RM.

Each round starts the daemon (``chaos_daemon.py``: the real advisor, enforce mode,
a write every cycle), lets it run for a random moment (so kills land anywhere:
between an intent and its result, mid-read, while sleeping) and kills it with
SIGKILL. After every round the journal is read whole and the RM is checked
against it; after the last, ``yarn-advisor rollback`` restores the original
value trusting only the journal. Printed: how long each restart took to its
first acting cycle, and how many writes were interrupted.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from chaos_rigs import DELAY, ORIGINAL_DELAY, chaos_raw, restore_delay, scheduler_delay
from yarnmini import MiniCluster

from yarn_advisor.advisor.act.journal import Journal, Phase
from yarn_advisor.advisor.cli.main import main as cli

pytestmark = [pytest.mark.chaos, pytest.mark.cluster]
HERE = Path(__file__).resolve().parent
ROUNDS = 6


def start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as fh:
        return subprocess.Popen([sys.executable, str(HERE / "chaos_daemon.py"), str(config),
                                 "0.2"], stdout=subprocess.DEVNULL, stderr=fh,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def wait_lines(path: Path, more_than: int, timeout: float = 60) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") > more_than:
            return time.monotonic()
        time.sleep(0.02)
    raise AssertionError(f"the daemon wrote nothing in {timeout}s")


def test_kill9_during_enforce_cycles(mini_cluster: MiniCluster, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    config = tmp_path / "advisor.yaml"
    config.write_text(yaml.safe_dump(chaos_raw([mini_cluster.rm_url], state)))
    journal_path, log = state / "journal.jsonl", tmp_path / "daemon.log"
    rng = random.Random(17)
    to_first_action: list[float] = []
    try:
        for _ in range(ROUNDS):
            lines = journal_path.read_bytes().count(b"\n") if journal_path.exists() else 0
            t0 = time.monotonic()
            proc = start(config, log)
            to_first_action.append(wait_lines(journal_path, lines) - t0)
            time.sleep(rng.uniform(0.0, 1.5))
            os.killpg(proc.pid, signal.SIGKILL)
            assert proc.wait(10) == -signal.SIGKILL
            journal = Journal(journal_path)
            entries = journal.entries()
            assert journal.unreadable == 0
            # the RM holds what the journal says: the last intent's value, or its
            # previous one if the kill came before the write was sent
            last = [e for e in entries if e.phase is Phase.INTENT][-1]
            done = any(e.phase is Phase.RESULT and e.id == last.id for e in entries)
            live = scheduler_delay(mini_cluster.rm_url)
            allowed = {str(last.value[DELAY])} if done else {  # type: ignore[index]
                str(last.value[DELAY]), str(last.previous[DELAY])}  # type: ignore[index]
            assert live in allowed, (live, last.to_json(), done)
        text = log.read_text()
        assert "Traceback" not in text and "internal error" not in text
        cycles = [ln for ln in text.splitlines() if " cycle " in ln and ": " in ln]
        assert cycles and not [ln for ln in cycles if "skipped" in ln], cycles[:3]

        journal = Journal(journal_path)
        actions = journal.actions()
        interrupted = [a for a in actions if a.sent and not a.outcome]
        assert journal.unreadable == 0
        capsys.readouterr()
        assert cli(["rollback", "--since", "1h", "--config", str(config), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["ok"] is True
        assert {s["outcome"] for s in out["steps"]} <= {"applied", "noop"}
        assert scheduler_delay(mini_cluster.rm_url) == ORIGINAL_DELAY
        with capsys.disabled():
            print(f"\nchaos kill -9 x{ROUNDS}: {len(actions)} actions journaled, "
                  f"{len(interrupted)} interrupted between intent and result; restart to "
                  f"first journaled action {min(to_first_action):.2f}-"
                  f"{max(to_first_action):.2f}s (median "
                  f"{sorted(to_first_action)[len(to_first_action) // 2]:.2f}s); rollback "
                  f"{len(out['steps'])} steps, rc 0", file=sys.stderr)
    finally:
        restore_delay(mini_cluster.rm_url)
