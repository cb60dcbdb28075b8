"""A login that cannot work is one line at start-up and exit 2, never a traceback.

Each case runs the real ``yarn-advisor run`` against the real test KDC: a keytab
that is missing, not a keytab, without the configured principal, with a key the
KDC does not have (a stale keytab), of a principal the KDC does not know; a web
service whose HTTP/ principal the KDC does not know; and a clock 10 minutes ahead
(libfaketime) with MIT's clock correction off (``kdc_timesync = 0``), beyond the
5 minutes' skew Kerberos allows by default.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _advisor import advisor_raw
from _kdc import Kdc, write_keytab

pytestmark = pytest.mark.kerberos

ADVISOR = Path(sys.executable).with_name("yarn-advisor")


def run_advisor(kdc: Kdc, tmp_path: Path, over: dict[str, Any], *, krb5_conf: Path | None = None,
                clock: str | None = None) -> tuple[int, str]:
    """``yarn-advisor run --once`` with the advisor's Kerberos configuration and
    ``over``; ``clock`` runs it under libfaketime (e.g. ``+10m``)."""
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump(advisor_raw(kdc, None, tmp_path / "state", over)))
    cmd = [str(ADVISOR), "run", "--once", "--config", str(cfg)]
    if clock:
        cmd = ["faketime", "-f", clock, *cmd]
    env = os.environ | {"KRB5_CONFIG": str(krb5_conf or kdc.krb5_conf),
                        "KRB5CCNAME": f"FILE:{tmp_path / 'no-cache'}"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stderr


def auth(principal: str, keytab: Path | str) -> dict[str, Any]:
    return {"rm": {"auth": {"principal": principal, "keytab": str(keytab)}}}


def problem_line(err: str) -> str:
    """The one problem of a start-up failure ("cannot start:" then one line)."""
    lines = [x.strip() for x in err.strip().splitlines()]
    assert lines[0] == "yarn-advisor: cannot start:", err
    assert len(lines) == 2, err
    return lines[1]


def test_the_advisors_own_keytab_passes_the_start_up_check(kdc: Kdc, tmp_path: Path) -> None:
    """The control: the same command with a good keytab logs in (tickets for the
    advisor and for HTTP/localhost) and fails later, on the RM address nobody serves."""
    before = kdc.initial_tickets(kdc.principal("advisor"))
    code, err = run_advisor(kdc, tmp_path, {})
    assert code == 1 and "cannot start" not in err and "localhost:1" in err
    # two logins from the keytab: the start-up check's, then the cycles' own client's
    # (each keeps its private in-memory ticket cache)
    assert kdc.initial_tickets(kdc.principal("advisor")) == before + 2


@pytest.mark.parametrize("case", ["missing", "not a keytab", "principal not in it"])
def test_a_bad_keytab_is_named(kdc: Kdc, tmp_path: Path, case: str) -> None:
    keytab = tmp_path / "advisor.keytab"
    principal = kdc.principal("advisor")
    if case == "not a keytab":
        keytab.write_bytes(os.urandom(300))
    elif case == "principal not in it":
        keytab = kdc.keytab("alice.keytab")
    code, err = run_advisor(kdc, tmp_path, auth(principal, keytab))
    line = problem_line(err)
    assert code == 2
    shown = f"***/{Path(keytab).name}"  # its file name: where it lies is not for outputs
    expected = {"missing": f"rm.auth.keytab: {shown} is not a readable file",
                "not a keytab": f"rm.auth.keytab: {shown}: not a keytab",
                "principal not in it": f"rm.auth.principal: {principal} has no key in "
                                       f"{shown} (it holds {kdc.principal('alice')})"}[case]
    assert line.startswith(expected), line
    assert str(Path(keytab).parent) not in line


def test_a_stale_key_is_refused_by_the_kdc(kdc: Kdc, tmp_path: Path) -> None:
    principal = kdc.principal("advisor")
    stale = write_keytab(tmp_path / "stale.keytab", principal, "not-the-password")
    code, err = run_advisor(kdc, tmp_path, auth(principal, stale))
    line = problem_line(err)
    # the keytab by its file name only: where it lies is no output's business
    assert code == 2 and line.startswith(f"rm.auth: kerberos: {principal} with keytab "
                                         "***/stale.keytab cannot log in: "), line
    assert str(tmp_path) not in line
    assert "the keytab's key does not match the KDC's" in line


def test_a_principal_the_kdc_does_not_know(kdc: Kdc, tmp_path: Path) -> None:
    ghost = kdc.principal("ghost")
    keytab = write_keytab(tmp_path / "ghost.keytab", ghost, "whatever")
    code, err = run_advisor(kdc, tmp_path, auth(ghost, keytab))
    line = problem_line(err)
    assert code == 2 and f"Client '{ghost}' not found in Kerberos database" in line


def test_a_service_the_kdc_does_not_know(kdc: Kdc, tmp_path: Path) -> None:
    code, err = run_advisor(kdc, tmp_path, {"rm": {"urls": ["http://127.0.0.9:1"]}})
    line = problem_line(err)
    assert code == 2 and "cannot authenticate to HTTP/127.0.0.9" in line
    assert f"Server HTTP/127.0.0.9@{kdc.realm} not found in Kerberos database" in line


def test_a_clock_beyond_the_allowed_skew(kdc: Kdc, tmp_path: Path) -> None:
    """This process's clock 10 min ahead of the KDC's (and the RM's): MIT's check of
    the KDC's reply refuses it. (With MIT's default ``kdc_timesync = 1`` the library
    corrects its own clock instead: see test_spnego_cluster.)"""
    strict = kdc.write_krb5_conf(tmp_path / "krb5.conf", kdc_timesync=0)
    code, err = run_advisor(kdc, tmp_path, {}, krb5_conf=strict, clock="+10m")
    line = problem_line(err)
    assert code == 2 and "Clock skew too great" in line and "synchronise the clocks" in line
    # within the allowed skew, the same strict configuration logs in
    code, err = run_advisor(kdc, tmp_path, {}, krb5_conf=strict, clock="-4m")
    assert code == 1 and "cannot start" not in err
