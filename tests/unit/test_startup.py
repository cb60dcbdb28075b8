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


# --- issue 30: exit codes as documented, 2 for bad input ------------------------------

@pytest.mark.parametrize(("extra", "says"), [
    ({"ha": {"zookeeper": {"hosts": ":::"}}}, "ha.zookeeper.hosts"),
    ({"ha": {"zookeeper": {"hosts": "zk1:2181,zk2:99999"}}}, "ha.zookeeper.hosts"),
    ({"rm": {"urls": ["http://"]}}, "has no host"),
    ({"rm": {"urls": ["http://rm:99999"]}}, "not a valid URL"),
    ({"rm": {"history_url": "https://:8088"}}, "rm.history_url"),
])
def test_bad_addresses_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     extra: dict[str, object], says: str) -> None:
    """They passed validation and then failed every cycle (or exited 1)."""
    code, err = _run(tmp_path, capsys, extra)
    assert code == 2 and says in err, err


def test_a_config_that_never_ends_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    """``--config /dev/zero`` allocated until MemoryError; now read up to a bound."""
    assert main(["run", "--config", "/dev/zero", "--once"]) == 2
    assert "not a configuration file" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--cycles", "-1"], ["--cycles", "0"],
                                  ["--interval", "-5"], ["--interval", "nan"]])
def test_record_with_a_bad_count_exits_2(tmp_path: Path, argv: list[str]) -> None:
    """``record --cycles -1`` recorded nothing and exited 0."""
    with pytest.raises(SystemExit) as exc:
        main(["record", "--rm", "http://127.0.0.1:1", "--out", str(tmp_path / "r"), *argv])
    assert exc.value.code == 2
    assert not (tmp_path / "r").exists()


def test_run_with_a_port_out_of_range_exits_2(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--once", "--port", "99999"])
    assert exc.value.code == 2
