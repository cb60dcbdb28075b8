"""Two real ResourceManagers with automatic failover, electing through a real ZooKeeper.

The RM pair is tests/services/rmha.py's ``HAResourceManagers`` (embedded
elector, ``ha.automatic-failover.enabled``): ZooKeeper decides which RM is
active, and killing the active makes the standby take over once the dead one's
ZooKeeper session expires. What this adds is the ZooKeeper: the server class of
the ZooKeeper jar already in the Hadoop class path (``ZooKeeperServerMain``,
standalone, a free loopback port), so the chaos tests need only the mini
cluster's jars. No NodeManagers: the failover is what is tested.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "services"))

from rmha import RM_IDS, ZK_TIMEOUT_MS, HAResourceManagers
from yarnmini import classpath, free_port, java_home

__all__ = ["RM_IDS", "ZK_TIMEOUT_MS", "HAPair"]

ZK_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


@dataclass
class HAPair(HAResourceManagers):
    """rm1 and rm2 (automatic failover) and the ZooKeeper they elect through."""

    cluster_id: str = "yarn-advisor-chaos"
    zk_port: int = 0

    def start(self, timeout: float = 180) -> None:
        """Start the ZooKeeper, then the RM pair on it (its processes stop with ``stop``)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.zk_port = free_port()
        zk_dir = self.workdir / "zk"
        zk_dir.mkdir(exist_ok=True)
        with open(self.workdir / "zk.log", "wb") as log:
            self.procs.append(subprocess.Popen(
                ["java", "-Xmx128m", "-cp", classpath(), ZK_MAIN, str(self.zk_port),
                 str(zk_dir)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=os.environ | {"JAVA_HOME": java_home()}, start_new_session=True))
        try:
            _wait_port(self.zk_port, 60)
        except TimeoutError:
            self.stop()
            raise
        self.zk_hosts = f"127.0.0.1:{self.zk_port}"
        super().start(timeout)


def _wait_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {port}")
