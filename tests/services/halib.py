"""Helpers shared by the HA tests and bench/bench_failover.py.

:class:`DrivenAdvisor` runs the HA steps of the daemon loop in a thread, every
``period_s``: reload when asked, then sample ``may_write()`` with
``time.monotonic()``, so a test can say when writing stopped or started.
:func:`spawn_contender` runs the same in a child process (tests/services/contender.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.zookeeper.election import ZooKeeperConfig, ZooKeeperHA

HERE = Path(__file__).resolve().parent
PATH = "/yarn-advisor/test"


def wait_until(pred: Callable[[], bool], timeout: float, step: float = 0.01) -> float:
    """Poll ``pred`` until true; return the monotonic time it was seen true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return time.monotonic()
        time.sleep(step)
    raise TimeoutError(f"condition not met within {timeout}s")


def make_chroot(hosts: str) -> str:
    """Create a fresh chroot on ``hosts``; return the chrooted connect string."""
    chroot = "/yarn-advisor-tests/" + uuid.uuid4().hex
    admin = KazooClient(hosts=hosts, timeout=5)
    admin.start(timeout=15)
    try:
        admin.ensure_path(chroot)
    finally:
        admin.stop()
        admin.close()
    return hosts + chroot


def drop_chroot(chrooted: str) -> None:
    hosts, _, chroot = chrooted.partition("/")
    admin = KazooClient(hosts=hosts, timeout=5)
    try:
        admin.start(timeout=15)
        admin.delete("/" + chroot, recursive=True)
    except Exception:  # the test may have left the server down; its data goes with it
        pass
    finally:
        admin.stop()
        admin.close()


@dataclass
class DrivenAdvisor:
    """A ZooKeeperHA plus a thread doing the daemon's per-cycle HA steps."""

    hosts: str
    identity: str
    session_timeout_s: float = 3.0
    period_s: float = 0.005
    path: str = PATH
    ha: ZooKeeperHA = field(init=False)
    samples: list[tuple[float, bool]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self.ha = ZooKeeperHA(ZooKeeperConfig(
            hosts=self.hosts, path=self.path, session_timeout_s=self.session_timeout_s,
            identity=self.identity))

    def start(self) -> DrivenAdvisor:
        self.ha.start()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.ha.needs_reload and self.ha.role in ("leader", "follower"):
                    self.ha.load()
            except ConnectorError as exc:
                self.errors.append(str(exc))
            may = self.ha.may_write()
            if not self.samples or self.samples[-1][1] != may:
                self.samples.append((time.monotonic(), may))
            self._stop.wait(self.period_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.ha.stop()

    def writing_since(self) -> float | None:
        """When ``may_write()`` last turned True, if it is True now."""
        return self.samples[-1][0] if self.samples and self.samples[-1][1] else None

    def stopped_writing_after(self, t: float) -> float | None:
        """The first time after ``t`` that ``may_write()`` was seen False."""
        return next((ts for ts, may in self.samples if ts >= t and not may), None)


def expire_session(hosts: str, client: KazooClient) -> None:
    """Expire ``client``'s session the way kazoo's tests long did: connect a
    second client with the same session id and password, then close it."""
    session = client.client_id
    if session is None:
        raise RuntimeError("client is not connected")
    evil = KazooClient(hosts=hosts, timeout=client._session_timeout / 1000.0)
    evil._session_id, evil._session_passwd = session
    evil.start(timeout=10)
    evil.stop()
    evil.close()


@dataclass
class Contender:
    """tests/services/contender.py in a child process, and what it printed."""

    proc: subprocess.Popen[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    _reader: threading.Thread | None = None

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.events.append(json.loads(line))
            except ValueError:
                continue

    def first(self, **match: Any) -> dict[str, Any] | None:
        return next((e for e in list(self.events)
                     if all(e.get(k) == v for k, v in match.items())), None)

    def kill(self) -> float:
        """SIGKILL; returns the monotonic time it was sent."""
        t = time.monotonic()
        self.proc.kill()
        self.proc.wait(10)
        return t

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        if self._reader is not None:
            self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def spawn_contender(hosts: str, *, identity: str = "child", session_timeout_s: float = 3.0,
                    write: bool = False, path: str = PATH) -> Contender:
    cmd = [sys.executable, str(HERE / "contender.py"), hosts, "--path", path,
           "--session-timeout", str(session_timeout_s), "--identity", identity]
    if write:
        cmd.append("--write")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    contender = Contender(proc)
    contender._reader = threading.Thread(target=contender._read, daemon=True)
    contender._reader.start()
    return contender


def spawn_cli_advisor(hosts: str, port: int, recording: Path, workdir: Path,
                      session_timeout_s: float, interval_s: float = 1.0) -> subprocess.Popen[bytes]:
    """``yarn-advisor run --replay`` with an ``ha`` section, serving on ``port``."""
    import yaml

    cfg = workdir / f"advisor-{port}.yaml"
    cfg.write_text(yaml.safe_dump({
        "sense": {"interval_s": interval_s}, "server": {"port": port},
        "ha": {"zookeeper": {"hosts": hosts, "session_timeout_s": session_timeout_s}}}))
    exe = Path(sys.executable).with_name("yarn-advisor")
    with open(workdir / f"advisor-{port}.log", "wb") as log:  # the child keeps its own copy
        return subprocess.Popen(
            [str(exe), "run", "--replay", str(recording), "--config", str(cfg)],
            stdout=subprocess.DEVNULL, stderr=log,
            # its replay scratch dir goes in workdir: a SIGKILL'd child cannot remove it
            env=os.environ | {"TMPDIR": str(workdir)})


def scrape(port: int, name: str) -> float | None:
    """The value of the unlabelled metric ``name`` on ``port``'s /metrics (None: no answer)."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None
