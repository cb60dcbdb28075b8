"""Fixtures of the deployment tests: the tools, a replaying advisor, a real Prometheus.

The tools (prometheus, promtool, helm) are installed by ``.ci/setup-deploy``.
A test whose tool is missing is skipped on a developer's machine, with the
command that installs it, and fails under CI (``CI`` set), where a skip would
hide a broken setup.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from promserver import PrometheusServer

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "yarn-advisor"
RECORDING = ROOT / "examples" / "recordings" / "short-stream"
RULES_CONFIG = ROOT / "examples" / "anacrac-rules.yaml"
TOOLS = Path(os.environ.get("YARN_ADVISOR_TOOLS", Path.home() / ".cache/yarn-advisor/bin"))
JOB = "yarn-advisor"
SCRAPE_S = 1.0
START_TIMEOUT_S = 60.0


def tool(name: str) -> str:
    """Path of a deployment tool, or skip (fail under CI) when it is missing."""
    found = shutil.which(name) or (str(TOOLS / name) if (TOOLS / name).exists() else None)
    if found:
        return found
    message = f"{name} is not installed: run bash .ci/setup-deploy"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@dataclass
class RunningAdvisor:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    started_at: float

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_advisor(workdir: Path, args: list[str]) -> RunningAdvisor:
    """``yarn-advisor run ARGS --port 0`` in ``workdir``; waits for its HTTP port."""
    log = workdir / "advisor.log"
    cmd = [sys.executable, "-c", "from yarn_advisor.advisor.cli.main import main; "
           "raise SystemExit(main())", "run", *args, "--port", "0"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=out, stderr=subprocess.STDOUT,
                                env=os.environ | {"TMPDIR": str(workdir)})  # scratch dirs too
    started = time.time()
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", log.read_text())
        if found:
            return RunningAdvisor(proc, int(found.group(1)), log, started)
        time.sleep(0.1)
    stop_advisor(proc)
    raise RuntimeError(f"the advisor did not start serving:\n{log.read_text()[-3000:]}")


def stop_advisor(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="yarn-advisor-deploy-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def replay_advisor(workdir: Path) -> Iterator[RunningAdvisor]:
    """The advisor replaying the short-stream recording with the example ANACRAC rules,
    one cycle about every 0.6 s (45 cycles in about half a minute)."""
    tool("prometheus")
    advisor = start_advisor(workdir, ["--replay", str(RECORDING), "--config", str(RULES_CONFIG),
                                      "--interval", "0.5"])
    yield advisor
    stop_advisor(advisor.proc)


@pytest.fixture(scope="session")
def replay_prometheus(workdir: Path, replay_advisor: RunningAdvisor) -> Iterator[PrometheusServer]:
    """A real Prometheus scraping the replaying advisor every second (job yarn-advisor)."""
    tool("prometheus")
    server = PrometheusServer(workdir / "prometheus", {JOB: [replay_advisor.address]},
                              scrape_interval_s=SCRAPE_S)
    with server:
        yield server
