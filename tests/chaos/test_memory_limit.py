"""The daemon under a 1 GiB memory limit (the chart's), fed unbounded inputs.

A local HTTP server plays the RM: it answers each read with the body the real 3.4.2
mini cluster gave for it (``examples/recordings/mini-hetero``, one cycle), except two
optional reads, whose answers are faults a real RM does not make on demand: the
scheduler's live conf is an endless body, the RM's JMX a decompression bomb (1 MiB of
gzip inflating to 1 GiB). Meanwhile 2,000 connections to the daemon's own HTTP server
are held open and idle. Before the fix the endless body took the daemon to 1.27 GB RSS,
the bomb to 2.1 GB, and 1,019 idle connections every file descriptor.

The limit is ``RLIMIT_DATA`` (set in the child before exec): since Linux 4.7 it counts
private writable mappings, which is what the daemon fills when it reads too much.
``RLIMIT_AS`` would count address space only reserved: every thread's 8 MiB stack,
glibc's 64 MiB malloc arena per thread and OpenBLAS's buffers, which numpy and
scikit-learn map at import, so it fails on start-up reservations long before the
daemon holds 1 GiB, and is not what a container's memory limit measures.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import recorded_rm
import requests

LIMIT = 2**30
IDLE = 2000
ENDLESS = "/ws/v1/cluster/scheduler-conf"
BOMB = "/jmx"

pytestmark = [pytest.mark.chaos, pytest.mark.slow]


def _bomb() -> bytes:
    """1 GiB of zeros as one gzip member (about 1 MiB on the wire)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(2**20)
    parts = [z.compress(chunk) for _ in range(1024)]
    parts.append(z.flush())
    return b"".join(parts)


class FaultyRM(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.answers = recorded_rm.answers()
        self.bomb = _bomb()
        self.served: dict[str, int] = {"endless": 0, "bomb": 0, "recorded": 0, "missing": 0}


class Handler(BaseHTTPRequestHandler):
    server: FaultyRM

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        try:
            if path == ENDLESS:
                self._endless()
            elif path == BOMB:
                self._gzip_bomb()
            else:
                self._recorded()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the advisor gave up reading: what it should do

    def _endless(self) -> None:
        self.server.served["endless"] += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b'{"property":[')
        chunk = b'{"name":"x","value":"' + b"y" * 65000 + b'"},'
        frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        while True:
            self.wfile.write(frame)

    def _gzip_bomb(self) -> None:
        self.server.served["bomb"] += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(self.server.bomb)))
        self.end_headers()
        self.wfile.write(self.server.bomb)

    def _recorded(self) -> None:
        found = recorded_rm.send(self, self.server.answers.get(recorded_rm.key(self.path)))
        self.server.served["recorded" if found else "missing"] += 1


@pytest.fixture
def faulty_rm() -> Iterator[FaultyRM]:
    server = FaultyRM()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (LIMIT, LIMIT))


def _ok_cycles(port: int) -> float | None:
    try:
        text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    except requests.RequestException:
        return None
    for line in text.splitlines():
        if line.startswith("yarn_advisor_cycles_total{") and 'outcome="ok"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _healthz(port: int) -> tuple[int, dict[str, Any]] | None:
    try:
        r = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
    except requests.RequestException:
        return None
    return r.status_code, r.json()


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _idle_connections(port: int, n: int) -> list[socket.socket]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 512), hard))
    held: list[socket.socket] = []
    for _ in range(n):
        # (refused while the backlog was full: the attempt is no less a connection made)
        with contextlib.suppress(OSError):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    return held


def test_unbounded_inputs_under_a_1_gib_limit(tmp_path: Path, faulty_rm: FaultyRM) -> None:
    port = _free_port()
    cfg = {
        "dry_run": True,
        "state_dir": str(tmp_path / "state"),
        "rm": {"urls": [f"http://127.0.0.1:{faulty_rm.server_address[1]}"],
               "timeout": {"connect_s": 1.0, "read_s": 5.0, "total_s": 20.0},
               "retry": {"attempts": 1}},
        "sense": {"interval_s": 2, "deadline_s": 25.0},
        "server": {"enabled": True, "host": "127.0.0.1", "port": port},
        "logging": {"level": "INFO"},
    }
    cfg_file = tmp_path / "advisor.yaml"
    cfg_file.write_text(json.dumps(cfg))
    log = tmp_path / "daemon.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from yarn_advisor.advisor.cli.main import main; main()",
             "run", "--config", str(cfg_file)],
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=_limit, cwd=tmp_path,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    held: list[socket.socket] = []
    try:
        started = time.monotonic()
        first = None
        while first is None or first < 1:
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() - started < 240, log.read_text()[-3000:]
            first = _ok_cycles(port)
            time.sleep(1)
        held = _idle_connections(port, IDLE)
        assert len(held) >= IDLE // 2
        # cycles go on, each reading the endless body and the bomb, while 2,000 sit idle
        answers: list[int] = []
        until = time.monotonic() + 60
        last = first
        while time.monotonic() < until and (last - first < 3 or len(answers) < 5):
            assert proc.poll() is None, log.read_text()[-3000:]
            h = _healthz(port)
            if h is not None:
                answers.append(h[0])
            now = _ok_cycles(port)
            last = now if now is not None else last
            time.sleep(1)
        served = dict(faulty_rm.served)
        assert served["endless"] >= 3 and served["bomb"] >= 3, served
        assert last - first >= 3, (first, last, log.read_text()[-3000:])
        assert answers.count(200) >= 3, answers  # ready: its latest cycle sensed the cluster
        assert proc.poll() is None
        text = log.read_text()
        assert "MemoryError" not in text and "Traceback" not in text, text[-3000:]
        assert _rss_kb(proc.pid) < LIMIT // 1024
    finally:
        for s in held:
            s.close()
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_the_bomb_is_what_it_says() -> None:
    """The fault is as big as stated: about 1 MiB on the wire, 1 GiB inflated."""
    bomb = _bomb()
    assert len(bomb) < 1.1 * 2**20
    d = zlib.decompressobj(31)
    total = 0
    for i in range(0, len(bomb), 65536):
        total += len(d.decompress(bomb[i:i + 65536]))
    assert total == 2**30
