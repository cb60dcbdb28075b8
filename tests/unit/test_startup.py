"""A daemon that cannot start says why in one line and exits 2: never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from yarn_advisor.advisor.cli.main import main


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: dict[str, object],
         *argv: str) -> tuple[int, str]:
    raw = {"state_dir": str(tmp_path / "state"), "server": {"port": 0}, **extra}
    f = tmp_path / "advisor.yaml"
    f.write_text(yaml.safe_dump(raw))
    code = main(["run", "--config", str(f), "--once", *argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_state_dir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "state").write_text("x")
    code, err = _run(tmp_path, capsys, {})
    assert code == 2 and "state_dir:" in err and "is not a directory" in err


def test_journal_path_that_is_a_directory(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "j").mkdir()
    code, err = _run(tmp_path, capsys, {"actuator": {"journal_path": str(tmp_path / "j")}})
    assert code == 2 and "actuator.journal_path:" in err and "is a directory" in err


def test_missing_tls_files_and_kerberos_extra(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("requests")
    try:
        import gssapi  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
        kerberos_missing = False
    except ImportError:
        kerberos_missing = True
    code, err = _run(tmp_path, capsys, {"rm": {
        "tls": {"client_cert": str(tmp_path / "nope.pem")},
        "auth": {"method": "kerberos"}}})
    assert code == 2 and "rm.tls.client_cert:" in err and "not a readable file" in err
    assert ("yarn-advisor[kerberos]" in err) is kerberos_missing


def test_server_port_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        code, err = _run(tmp_path, capsys, {"server": {"port": busy.getsockname()[1]},
                                            "rm": {"retry": {"attempts": 1}}})
    finally:
        busy.close()
    assert code == 2 and "server: cannot listen on 127.0.0.1:" in err


def test_an_unexpected_failure_is_one_line_unless_debug(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import yarn_advisor.advisor.cli.main as cli

    def broken(*a: object, **k: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "build_live_advisor", broken)
    code, err = _run(tmp_path, capsys, {})
    assert code == 1 and err.strip().splitlines()[-1] == (
        "yarn-advisor: run failed: RuntimeError: a bug (--debug shows the traceback)")
    with pytest.raises(RuntimeError):
        main(["--debug", "run", "--config", str(tmp_path / "advisor.yaml"), "--once"])
