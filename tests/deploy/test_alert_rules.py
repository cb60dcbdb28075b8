"""The chart's alerting rules: valid for promtool, each fires on a scripted series,
and each metric they read is one the advisor really exports."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CHART, JOB, RunningAdvisor, tool
from promserver import PrometheusServer
from test_dashboards_prometheus import EARLY_CYCLES, wait_cycles

pytestmark = pytest.mark.deploy

RULE_FILES = sorted((CHART / "rules").glob("*.yaml"))
UNIT_TESTS = Path(__file__).with_name("rules_test.yaml")


def rules() -> list[dict[str, Any]]:
    out = []
    for path in RULE_FILES:
        for group in yaml.safe_load(path.read_text())["groups"]:
            out.extend(group["rules"])
    return out


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("promtool"), *args], capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_issue_alerts_are_there() -> None:
    names = {r["alert"] for r in rules()}
    assert {"YarnAdvisorDown", "YarnAdvisorCyclesSkipped", "YarnAdvisorRMUnreachable",
            "YarnAdvisorActionsBlocked", "YarnAdvisorClassifierLongCalledShort"} <= names


def test_promtool_check_rules() -> None:
    done = promtool("check", "rules", *map(str, RULE_FILES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules())} rules found" in done.stdout


def test_every_alert_fires_in_promtool_test_rules() -> None:
    spec = yaml.safe_load(UNIT_TESTS.read_text())
    fired = {case["alertname"] for test in spec["tests"]
             for case in test.get("alert_rule_test", []) if case.get("exp_alerts")}
    assert fired == {r["alert"] for r in rules()}, "an alert without a test that fires it"
    done = promtool("test", "rules", str(UNIT_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_rules_read_metrics_the_advisor_exports(replay_prometheus: PrometheusServer,
                                                replay_advisor: RunningAdvisor) -> None:
    """A renamed metric must not leave an alert silently watching nothing."""
    wait_cycles(replay_prometheus, replay_advisor, EARLY_CYCLES)
    names = sorted({n for r in rules() for n in re.findall(r"\byarn_advisor_\w+", r["expr"])})
    assert names
    missing = [n for n in names
               if not replay_prometheus.query(f'count({{__name__="{n}", job="{JOB}"}})')]
    assert not missing, f"alert rules read metrics the advisor does not export: {missing}"
