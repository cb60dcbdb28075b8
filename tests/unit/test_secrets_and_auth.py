"""Secrets in configured URLs never reach a log line, an error, /healthz or the journal;
a 401 from every RM is an authentication failure, not an outage."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import responses

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor, http_client
from yarn_advisor.connectors.errors import AuthError, redact_url
from yarn_advisor.connectors.rm.client import RMClient

SECRET = "s3cr3t-pa55"


def test_redact_url_hides_user_and_password_everywhere_in_a_text() -> None:
    text = f"GET http://bob:{SECRET}@rm1:8088/x failed; also https://tok@rm2/y and http://rm3/z"
    shown = redact_url(text)
    assert SECRET not in shown and "tok@" not in shown
    assert "http://***@rm1:8088/x" in shown and "https://***@rm2/y" in shown
    assert "http://rm3/z" in shown


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_a_password_in_an_rm_url_is_never_shown(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://ops:{SECRET}@127.0.0.1:{_closed_port()}"
    cfg = load_config(None, {"rm": {"urls": [url], "history_url": url,
                                    "retry": {"attempts": 1}},
                             "state_dir": str(tmp_path)})
    assert SECRET not in json.dumps(cfg.redacted())
    advisor = build_advisor(cfg, build_sensor(cfg), persist=False)
    with caplog.at_level(logging.INFO):
        report = advisor.run_once()
    assert report.outcome == "skipped"
    assert SECRET not in report.reason and "***@" in report.reason
    assert SECRET not in caplog.text
    assert not (tmp_path / "journal.jsonl").exists() or \
        SECRET not in (tmp_path / "journal.jsonl").read_text()


@responses.activate
def test_401_from_every_rm_is_reported_as_auth() -> None:
    """What a Kerberized RM answers a client without a ticket (the body is the one
    Hadoop's AuthenticationFilter sends)."""
    for host in ("rm1", "rm2"):
        responses.get(f"http://{host}:8088/ws/v1/cluster/info", status=401,
                      body="Authentication required")
    cfg = load_config(None, {"rm": {"retry": {"attempts": 1}}})
    rm = RMClient(http_client(cfg), ["http://rm1:8088", "http://rm2:8088"])
    with pytest.raises(AuthError) as exc:
        rm.resolve()
    assert exc.value.reason == "auth" and "authentication refused" in str(exc.value)


# --- issue 30: a raw '@' in a password, recordings, ZooKeeper digests at DEBUG -------

RAW_AT = "p@55word"


def test_a_password_with_a_raw_at_is_hidden_whole() -> None:
    """requests takes the userinfo up to the authority's last '@'; so does the pattern
    (it stopped at the first and left ``55word@`` in logs, /healthz and the journal)."""
    text = f"GET http://probe:{RAW_AT}@rm1:8088/ws?x=a@b failed; http://rm3/z?u=c@d"
    shown = redact_url(text)
    assert "55word" not in shown and "probe" not in shown
    assert "http://***@rm1:8088/ws?x=a@b" in shown  # the query's '@' is not userinfo
    assert "http://rm3/z?u=c@d" in shown


def test_a_raw_at_password_reaches_no_log_health_reason_or_journal(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://probe:{RAW_AT}@127.0.0.1:{_closed_port()}"
    cfg = load_config(None, {"rm": {"urls": [url], "retry": {"attempts": 1}},
                             "state_dir": str(tmp_path)})
    assert "55word" not in json.dumps(cfg.redacted())
    advisor = build_advisor(cfg, build_sensor(cfg), persist=False)
    with caplog.at_level(logging.DEBUG):
        report = advisor.run_once()
    assert report.outcome == "skipped" and "***@127.0.0.1" in report.reason
    assert "55word" not in report.reason  # what /healthz serves as its reason
    assert "55word" not in caplog.text
    journal = tmp_path / "journal.jsonl"
    assert not journal.exists() or "55word" not in journal.read_text()


def test_record_writes_no_password_into_recording_json(tmp_path: Path) -> None:
    """``record --rm http://user:pw@host``: the manifest names the RM as the cycle
    files do, userinfo hidden (it held the password, mode 0644)."""
    from yarn_advisor.advisor.cli.main import main

    out = tmp_path / "rec"
    url = f"http://ops:{SECRET}@127.0.0.1:{_closed_port()}"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"state_dir: {tmp_path / 'state'}\nrm:\n  retry:\n    attempts: 1\n")
    assert main(["record", "--rm", url, "--history", url, "--out", str(out), "--cycles", "1",
                 "--interval", "0", "--config", str(cfg)]) == 0
    files = sorted(out.iterdir())
    assert [f.name for f in files] == ["cycle-0001.yaml", "recording.json"]
    for f in files:
        assert SECRET not in f.read_text(), f.name
    manifest = json.loads((out / "recording.json").read_text())
    assert manifest["rm_urls"] == [f"http://***@127.0.0.1:{url.rsplit(':', 1)[1]}"]


def _kazoo_sends_auth(digest: str) -> None:
    """What kazoo's connection logs for the Auth request it sends on every connect
    (kazoo/protocol/connection.py: its logger, level and format)."""
    from kazoo.protocol.serialization import Auth

    logging.getLogger("kazoo.protocol.connection").log(
        logging.DEBUG, "Sending request(xid=%s): %s", -4, Auth(0, "digest", digest))


@pytest.fixture
def restore_levels() -> Iterator[None]:
    names = ("yarn_advisor", "kazoo")
    levels = {n: logging.getLogger(n).level for n in names}
    yield
    for n, level in levels.items():
        logging.getLogger(n).setLevel(level)


@pytest.mark.usefixtures("restore_levels")
@pytest.mark.parametrize("json_lines", [False, True])
def test_debug_logging_keeps_kazoo_at_info_and_never_shows_a_digest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], json_lines: bool) -> None:
    from yarn_advisor.advisor.cli.logs import setup_logging

    digest = f"advisor:{SECRET}"
    cfg = load_config(None, {"logging": {"level": "DEBUG", "json": json_lines}})
    setup_logging(cfg)
    logging.getLogger("yarn_advisor.advisor.loop.sense").debug("own debug line")
    _kazoo_sends_auth(digest)
    err = capsys.readouterr().err
    assert "own debug line" in err  # the advisor's own DEBUG is there
    assert "Sending request" not in err and SECRET not in err  # kazoo capped at INFO

    asked = load_config(None, {"logging": {"level": "DEBUG", "json": json_lines,
                                           "loggers": {"kazoo": "DEBUG"}}})
    setup_logging(asked)
    _kazoo_sends_auth(digest)
    err = capsys.readouterr().err
    assert "Sending request" in err  # asked for: kazoo's DEBUG shows ...
    assert SECRET not in err and "auth='***'" in err  # ... the digest masked


def test_redact_masks_kazoo_auth_quoted_either_way_and_session_passwords() -> None:
    from kazoo.protocol.serialization import Auth

    from yarn_advisor.config.secrets import redact

    for digest in (f"u:{SECRET}", f"u:it's-{SECRET}"):  # repr switches to double quotes
        assert SECRET not in redact(f"Sending request(xid=-4): {Auth(0, 'digest', digest)}")
    line = f"Using session_id: 4660 session_passwd: b'{SECRET}'"
    assert SECRET not in redact(line) and "session_id: 4660" in redact(line)


def test_the_configuration_line_hides_a_keytab_path(tmp_path: Path) -> None:
    keytab = str(tmp_path / "advisor-s3cr3t.keytab")
    cfg = load_config(None, {"rm": {"auth": {"method": "kerberos", "keytab": keytab,
                                             "principal": "advisor@EXAMPLE.COM"}}})
    shown = json.dumps(cfg.redacted())
    assert keytab not in shown and '"keytab": "***"' in shown
    assert "advisor@EXAMPLE.COM" in shown  # a principal is a name, not a secret


def test_a_keytab_is_named_by_its_file_never_by_where_it_lies(tmp_path: Path) -> None:
    # a garbled keytab is reported only once the Kerberos extra can read it; without
    # the extra (the demo's setup) the problem is the missing extra, tested elsewhere
    pytest.importorskip("gssapi")
    from yarn_advisor.connectors.kerberos import login_problems

    missing = "/secret-place/advisor.keytab"
    assert login_problems(None, missing, []) == [
        "rm.auth.keytab: ***/advisor.keytab is not a readable file"]
    garbled = tmp_path / "garbled.keytab"
    garbled.write_bytes(b"\x05\x02\x00")
    [problem] = login_problems(None, str(garbled), [])
    assert "keytab ***/garbled.keytab" in problem and str(tmp_path) not in problem
