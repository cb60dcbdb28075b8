"""The advisor's /metrics pass ``promtool check metrics`` (naming, units, help texts)
after a replay in which every policy recommends."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, tool
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
from yarn_advisor.advisor.observe.metrics import AdvisorCollector, BuildInfo
from yarn_advisor.connectors.replay import open_recording

pytestmark = pytest.mark.deploy


def _exposition(recording: Path, config: Path) -> bytes:
    cfg = load_config(config)
    rec = open_recording(recording)
    advisor = replay_advisor(rec, cfg)
    for _ in replay_cycles(advisor, rec):
        pass
    registry = CollectorRegistry()
    registry.register(AdvisorCollector(lambda: advisor.latest, advisor.totals,
                                       build=BuildInfo.of(cfg)))
    return generate_latest(registry)


def test_promtool_finds_nothing_to_say_about_the_metrics() -> None:
    text = _exposition(ROOT / "examples" / "recordings" / "short-stream",
                       ROOT / "examples" / "anacrac-rules.yaml")
    assert b'yarn_advisor_build_info{config_hash="' in text
    assert b'config_hash="unknown"' not in text  # the configuration's fingerprint
    assert b'mode="dry_run"' in text
    done = subprocess.run([tool("promtool"), "check", "metrics"], input=text,
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), (
        done.stdout.decode() + done.stderr.decode())
