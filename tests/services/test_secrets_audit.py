"""Every secret form, searched for in every output of a running daemon (issue 30).

The daemon runs as operators run it (``yarn-advisor run``), logging at DEBUG with every
third-party logger it touches asked for at DEBUG too, its RM URL carrying a password
with a raw ``@``, its HA section a ZooKeeper digest (the session's real ZooKeeper); the
RM is a local server answering with the real mini cluster's recorded answers
(``examples/recordings/mini-hetero``). After some cycles each secret is searched for in
the log, ``/metrics``, ``/healthz``, ``/recommendations``, every file under the state
dir (the journal among them), a recording made with ``record``, and every znode. A
keytab path is searched for in what a start with it prints (its configuration line, or
without the ``kerberos`` extra the refusal; a cycle with it needs a KDC: tests/kerberos).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import recorded_rm as recording
import requests
from kazoo.client import KazooClient
from zkserver import free_port

pytestmark = pytest.mark.services

RM_USER, RM_PASSWORD = "auditor", "rm-p@ss@w0rd"
ZK_USER, ZK_PASSWORD = "advisor", "zk-digest-s3cret"
KEYTAB = "/secret-place/advisor-audit.keytab"
CLI = [sys.executable, "-c", "from yarn_advisor.advisor.cli.main import main; main()"]


class RecordedRM(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers = recording.answers()


class _Handler(BaseHTTPRequestHandler):
    server: RecordedRM

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        recording.send(self, self.server.answers.get(recording.key(self.path)))


@pytest.fixture
def recorded_rm() -> Iterator[str]:
    server = RecordedRM()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    yield f"http://{RM_USER}:{RM_PASSWORD}@127.0.0.1:{port}"
    server.shutdown()
    server.server_close()


def _found(text: str) -> list[str]:
    return [s for s in (RM_PASSWORD, "w0rd", ZK_PASSWORD, KEYTAB) if s in text]


def _znodes(zk: KazooClient, path: str) -> Iterator[tuple[str, bytes]]:
    data, _ = zk.get(path)
    yield path, data or b""
    for child in zk.get_children(path):
        yield from _znodes(zk, path.rstrip("/") + "/" + child)


def test_no_secret_in_any_output(tmp_path: Path, recorded_rm: str, zk_hosts: str) -> None:
    port = free_port()
    pw_file = tmp_path / "zk.password"
    pw_file.write_text(ZK_PASSWORD + "\n")
    zk_path = f"/yarn-advisor-audit-{port}"
    state = tmp_path / "state"
    cfg = {
        "dry_run": True,
        "state_dir": str(state),
        "rm": {"urls": [recorded_rm], "retry": {"attempts": 1}},
        "sense": {"interval_s": 1},
        "server": {"enabled": True, "host": "127.0.0.1", "port": port},
        "logging": {"level": "DEBUG", "loggers": {
            "kazoo": "DEBUG", "urllib3": "DEBUG", "requests": "DEBUG"}},
        "ha": {"zookeeper": {"hosts": zk_hosts, "path": zk_path, "session_timeout_s": 4,
                             "auth": {"method": "digest", "user": ZK_USER,
                                      "password_file": str(pw_file)}},
               "cluster_name": "audit"},
    }
    cfg_file = tmp_path / "advisor.yaml"
    cfg_file.write_text(json.dumps(cfg))
    log = tmp_path / "daemon.log"
    outputs: dict[str, str] = {}
    with log.open("wb") as out:
        proc = subprocess.Popen([*CLI, "run", "--config", str(cfg_file)], stdout=out,
                                stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        started = time.monotonic()
        ok = 0.0
        while ok < 3 and time.monotonic() - started < 120:
            assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(1)
            try:
                text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
            except requests.RequestException:
                continue
            ok = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                     if line.startswith("yarn_advisor_cycles_total{")
                     and 'outcome="ok"' in line)
        assert ok >= 3, log.read_text()[-3000:]
        for path in ("/metrics", "/healthz", "/recommendations"):
            outputs[path] = requests.get(f"http://127.0.0.1:{port}{path}", timeout=5).text
    finally:
        proc.terminate()
        proc.wait(30)
    outputs["log"] = log.read_text()
    assert "kazoo" in outputs["log"] and "urllib3" in outputs["log"]  # asked for: logged
    assert "***@" in outputs["log"]  # the RM's URL is logged, its userinfo hidden
    for f in state.rglob("*"):
        if f.is_file():
            outputs[str(f)] = f.read_bytes().decode(errors="replace")
    assert any("journal" in name for name in outputs)

    rec_dir = tmp_path / "recording"
    done = subprocess.run([*CLI, "record", "--rm", recorded_rm, "--out", str(rec_dir),
                           "--cycles", "2", "--interval", "0.2"], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    outputs["record output"] = done.stdout + done.stderr
    for f in rec_dir.rglob("*"):
        if f.is_file():
            outputs[str(f)] = f.read_text(errors="replace")
    assert (rec_dir / "recording.json").exists()

    zk = KazooClient(hosts=zk_hosts, auth_data=[("digest", f"{ZK_USER}:{ZK_PASSWORD}")])
    zk.start(15)
    try:
        nodes = list(_znodes(zk, zk_path))
    finally:
        zk.stop()
        zk.close()
    assert len(nodes) > 1  # the election and the saved state
    for path, data in nodes:
        outputs[f"znode {path}"] = data.decode(errors="replace")

    kerberos = json.loads(json.dumps(cfg))
    del kerberos["ha"]
    kerberos["server"] = {"enabled": False}
    kerberos["rm"]["auth"] = {"method": "kerberos", "principal": "advisor@EXAMPLE.COM",
                              "keytab": KEYTAB}
    k_file = tmp_path / "kerberos.yaml"
    k_file.write_text(json.dumps(kerberos))
    k_run = subprocess.run([*CLI, "run", "--once", "--config", str(k_file)],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    outputs["kerberos start"] = k_run.stdout + k_run.stderr

    leaks = {where: found for where, text in outputs.items() if (found := _found(text))}
    assert leaks == {}
