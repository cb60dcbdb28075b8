"""The bare-metal unit (examples/systemd/yarn-advisor.service) is valid and hardened,
as systemd itself judges it (systemd-analyze verify and security, offline)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.deploy

UNIT = ROOT / "examples" / "systemd" / "yarn-advisor.service"
INSTALLED = "/opt/yarn-advisor/bin/yarn-advisor"
MAX_EXPOSURE = 2.0  # systemd-analyze security rates up to 2.0 as "OK"


@pytest.fixture
def unit(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at this checkout's yarn-advisor (verify checks it)."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    exe = Path(sys.executable).with_name("yarn-advisor")
    assert exe.exists(), exe
    text = UNIT.read_text()
    assert INSTALLED in text
    path = tmp_path / "yarn-advisor.service"
    path.write_text(text.replace(INSTALLED, str(exe)))
    return path


def test_unit_names_the_hardening_of_issue_16() -> None:
    directives = dict(re.findall(r"^(\w+)=(.*)$", UNIT.read_text(), re.M))
    assert directives["User"] == "yarn-advisor"
    assert directives["NoNewPrivileges"] == "yes"
    assert directives["ProtectSystem"] == "strict"
    assert directives["PrivateTmp"] == "yes"
    assert directives["ReadWritePaths"] == "/var/lib/yarn-advisor"
    assert directives["StateDirectory"] == "yarn-advisor"


def test_systemd_analyze_verify_is_clean(unit: Path) -> None:
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                          text=True, timeout=60, check=False)
    # verify exits 0 on an unknown directive and only warns: any output is a failure
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_systemd_rates_the_unit_exposure_ok(unit: Path) -> None:
    done = subprocess.run(["systemd-analyze", "security", "--offline=true", str(unit)],
                          capture_output=True, text=True, timeout=60, check=False)
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert found, done.stdout[-2000:] + done.stderr
    exposure = float(found.group(1))
    print(f"systemd-analyze security: exposure {exposure} (10 = unprotected)")
    assert exposure <= MAX_EXPOSURE, done.stdout
