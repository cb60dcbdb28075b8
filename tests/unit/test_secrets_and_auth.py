"""Secrets in configured URLs never reach a log line, an error, /healthz or the journal;
a 401 from every RM is an authentication failure, not an outage."""

from __future__ import annotations

import json
import logging
import socket
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
