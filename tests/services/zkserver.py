"""Real ZooKeeper servers for yarn-advisor's tests: one server or a 3-server ensemble.

The server is Debian's ZooKeeper 3.8 (``libzookeeper-java``, installed by
``.ci/setup-zookeeper``): ``/usr/share/java/zookeeper.jar`` names its own
dependency jars in its manifest, so the class path is that jar plus an SLF4J
binding for the log. Each server gets its own ``zoo.cfg``, data directory and
free loopback ports; nothing is shared with a system ZooKeeper.

Faults the tests need: ``stop()`` (SIGTERM, a clean shutdown), ``kill()``
(SIGKILL, as a crash), ``restart()`` (same ports and data, so sessions
survive), and on an ensemble stopping a majority to lose quorum.

Command line (for trying things by hand)::

    python tests/services/zkserver.py up [--ensemble]   # Ctrl-C stops it
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ZK_JAR = Path(os.environ.get("YARN_ADVISOR_ZK_JAR", "/usr/share/java/zookeeper.jar"))
LOG_BINDING = Path("/usr/share/java/slf4j-simple.jar")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
TICK_MS = 200


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def four_letter(port: int, word: str, timeout: float = 2.0) -> str:
    """Send a four-letter command (``ruok``, ``srvr``, ``mntr``) and return the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(word.encode())
        chunks = []
        while chunk := s.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    exe = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not exe:
        raise RuntimeError("java not found: install a JDK 17 (see .ci/setup)")
    return exe


@dataclass
class ZooKeeperServer:
    """One ZooKeeper server process (standalone, or one member of an ensemble)."""

    workdir: Path
    server_id: int = 1
    client_port: int = field(default_factory=free_port)
    quorum_port: int = field(default_factory=free_port)
    election_port: int = field(default_factory=free_port)
    peers: tuple[ZooKeeperServer, ...] = field(default=(), repr=False)
    max_session_timeout_ms: int = 60_000
    sasl_users: dict[str, str] = field(default_factory=dict)  # SASL DIGEST-MD5 user -> password
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _atexit: bool = field(default=False, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    @property
    def data_dir(self) -> Path:
        return self.workdir / f"zk{self.server_id}" / "data"

    @property
    def log_file(self) -> Path:
        return self.workdir / f"zk{self.server_id}.log"

    def _write_config(self) -> Path:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lines = [
            f"tickTime={TICK_MS}",
            f"dataDir={self.data_dir}",
            f"clientPort={self.client_port}",
            "clientPortAddress=127.0.0.1",
            # sessions between 2 ticks and max_session_timeout_ms are granted as asked
            f"minSessionTimeout={2 * TICK_MS}",
            f"maxSessionTimeout={self.max_session_timeout_ms}",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,srvr,mntr,stat,cons",
            "autopurge.purgeInterval=0",
            "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
        ]
        if self.peers:
            lines += ["initLimit=10", "syncLimit=5", "reconfigEnabled=false",
                      "standaloneEnabled=false", "electionPortBindRetry=5"]
            lines += [f"server.{p.server_id}=127.0.0.1:{p.quorum_port}:{p.election_port}"
                      for p in self.peers]
            (self.data_dir / "myid").write_text(f"{self.server_id}\n")
        cfg = self.workdir / f"zoo{self.server_id}.cfg"
        cfg.write_text("\n".join(lines) + "\n")
        return cfg

    def start(self, wait: bool = True, timeout: float = 60) -> None:
        if self.running:
            return
        if not ZK_JAR.exists():
            raise RuntimeError(f"{ZK_JAR} is missing: run .ci/setup-zookeeper")
        cfg = self._write_config()
        jaas = []
        if self.sasl_users:
            users = "".join(f'\n  user_{u}="{p}"' for u, p in self.sasl_users.items())
            jaas_file = self.workdir / f"jaas{self.server_id}.conf"
            jaas_file.write_text("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule "
                                 f"required{users};\n}};\n")
            jaas = [f"-Djava.security.auth.login.config={jaas_file}"]
        cmd = [java(), "-Xmx1024m", *jaas, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dorg.slf4j.simpleLogger.showDateTime=true",
               "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
               "-Dzookeeper.admin.enableServer=false",
               "-cp", f"{ZK_JAR}:{LOG_BINDING}", MAIN_CLASS, str(cfg)]
        with open(self.log_file, "ab") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        if not self._atexit:
            atexit.register(self.kill)
            self._atexit = True
        if wait:
            self.wait_serving(timeout)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def mode(self) -> str:
        """``standalone``, ``leader``, ``follower``, or ``""`` while not serving."""
        try:
            answer = four_letter(self.client_port, "srvr")
        except OSError:
            return ""
        for line in answer.splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return ""

    def wait_serving(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper {self.server_id} exited: see {self.log_file}")
            if self.mode():
                return
            time.sleep(0.1)
        raise TimeoutError(f"ZooKeeper {self.server_id} not serving after {timeout}s: "
                           f"see {self.log_file}")

    def stop(self, timeout: float = 20) -> None:
        """A clean shutdown (SIGTERM); the data directory is kept."""
        self._signal(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """A crash (SIGKILL); the data directory is kept."""
        self._signal(signal.SIGKILL, 10)

    def _signal(self, sig: signal.Signals, timeout: float) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.proc = None

    def restart(self, wait: bool = True) -> None:
        """Stop and start again on the same ports and data (sessions survive)."""
        self.stop()
        self.start(wait=wait)


@dataclass
class Ensemble:
    """Three servers on loopback forming one quorum (majority 2)."""

    workdir: Path
    size: int = 3
    servers: list[ZooKeeperServer] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.servers:
            self.servers = [ZooKeeperServer(self.workdir, server_id=i + 1)
                            for i in range(self.size)]
            for s in self.servers:
                s.peers = tuple(self.servers)

    @property
    def hosts(self) -> str:
        return ",".join(s.address for s in self.servers)

    def start(self, timeout: float = 90) -> None:
        for s in self.servers:
            s.start(wait=False)
        deadline = time.monotonic() + timeout
        for s in self.servers:
            s.wait_serving(max(1.0, deadline - time.monotonic()))

    def stop(self) -> None:
        for s in self.servers:
            s.stop()

    def modes(self) -> list[str]:
        return [s.mode() if s.running else "down" for s in self.servers]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a server (or an ensemble) until Ctrl-C")
    up.add_argument("--ensemble", action="store_true")
    args = ap.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="yarn-zk-"))
    t0 = time.monotonic()
    if args.ensemble:
        ens = Ensemble(workdir)
        ens.start()
        hosts, stop = ens.hosts, ens.stop
    else:
        server = ZooKeeperServer(workdir)
        server.start()
        hosts, stop = server.address, server.stop
    print(json.dumps({"hosts": hosts, "workdir": str(workdir),
                      "start_s": round(time.monotonic() - t0, 2)}), flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
