"""The ``rm.auth`` Kerberos keys are checked by the loader, and the keytab reader
reads what MIT's own ``ktutil`` writes (no KDC needed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _kdc import write_keytab

from yarn_advisor.connectors.kerberos import keytab_principals

pytestmark = pytest.mark.kerberos

ADVISOR = Path(sys.executable).with_name("yarn-advisor")


@pytest.mark.parametrize(("auth", "expected"), [
    ({"method": "kerberos", "keytab": "/etc/advisor.keytab"},
     "rm.auth: keytab needs principal (the keytab's principal to log in as)"),
    ({"method": "simple", "principal": "advisor@EXAMPLE.COM"},
     "rm.auth: principal and keytab are for method kerberos"),
    ({"method": "none", "principal": "advisor", "keytab": "/etc/advisor.keytab"},
     "rm.auth: principal and keytab are for method kerberos"),
])
def test_inconsistent_auth_keys_are_one_line(tmp_path: Path, auth: dict[str, str],
                                            expected: str) -> None:
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump({"rm": {"auth": auth}, "state_dir": str(tmp_path)}))
    done = subprocess.run([str(ADVISOR), "run", "--once", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [x.strip() for x in done.stderr.strip().splitlines()]
    assert lines == ["yarn-advisor: invalid configuration:", expected], done.stderr


def test_keytab_principals_as_ktutil_wrote_them(tmp_path: Path) -> None:
    if shutil.which("ktutil") is None:
        pytest.skip("ktutil is not installed: run bash .ci/setup-kerberos")
    keytab = tmp_path / "two.keytab"
    write_keytab(keytab, "advisor/host.example.com@EXAMPLE.COM", "one")
    write_keytab(keytab, "HTTP/host.example.com@EXAMPLE.COM", "two")  # appends
    write_keytab(keytab, "advisor/host.example.com@EXAMPLE.COM", "one",
                 enctype="aes256-cts-hmac-sha1-96")  # a second key, same principal
    assert keytab_principals(keytab) == ["advisor/host.example.com@EXAMPLE.COM",
                                         "HTTP/host.example.com@EXAMPLE.COM"]
    cut = tmp_path / "cut.keytab"
    cut.write_bytes(keytab.read_bytes()[:40])
    with pytest.raises(ValueError, match="not a keytab"):
        keytab_principals(cut)
