"""Two real ResourceManagers with automatic failover, electing through a real ZooKeeper.

ZooKeeper is the server class of the ZooKeeper jar already in the Hadoop class
path (``ZooKeeperServerMain``, standalone, a free loopback port). Both RMs run RM
HA with the embedded elector (``ha.automatic-failover.enabled``): ZooKeeper
decides which is active, and killing the active makes the standby take over
once the dead one's ZooKeeper session expires (``ZK_TIMEOUT_MS``). No
NodeManagers: the failover is what is tested. Built on yarnmini's configuration
writer and process spawner, so ports, logs and clean-up are the same.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field

from yarnmini import RM_CLASS, MiniCluster, classpath, free_port, java_home

ZK_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
RM_IDS = ("rm1", "rm2")
ZK_TIMEOUT_MS = 4000


@dataclass
class HAPair(MiniCluster):
    """rm1 and rm2 (automatic failover) and the ZooKeeper they elect through."""

    zk_port: int = 0
    rm_ports: dict[str, dict[str, int]] = field(default_factory=dict)
    by_id: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def url(self, rm_id: str) -> str:
        return f"http://127.0.0.1:{self.rm_ports[rm_id]['web']}"

    def _rm_conf(self, rm_id: str) -> dict[str, object]:
        zk = f"127.0.0.1:{self.zk_port}"
        conf: dict[str, object] = {
            "yarn.resourcemanager.ha.enabled": "true",
            "yarn.resourcemanager.ha.rm-ids": ",".join(RM_IDS),
            "yarn.resourcemanager.ha.id": rm_id,
            "yarn.resourcemanager.cluster-id": "yarn-advisor-chaos",
            "yarn.resourcemanager.ha.automatic-failover.enabled": "true",
            "yarn.resourcemanager.ha.automatic-failover.embedded": "true",
            "hadoop.zk.address": zk,
            "hadoop.zk.timeout-ms": ZK_TIMEOUT_MS,
            "yarn.resourcemanager.recovery.enabled": "false",
            "yarn.resourcemanager.scheduler.class": "org.apache.hadoop.yarn.server."
            "resourcemanager.scheduler.capacity.CapacityScheduler",
            "yarn.scheduler.configuration.store.class": "memory",
        }
        for rid, p in self.rm_ports.items():
            conf |= {
                f"yarn.resourcemanager.hostname.{rid}": "127.0.0.1",
                f"yarn.resourcemanager.address.{rid}": f"127.0.0.1:{p['rpc']}",
                f"yarn.resourcemanager.scheduler.address.{rid}": f"127.0.0.1:{p['sched']}",
                f"yarn.resourcemanager.resource-tracker.address.{rid}":
                    f"127.0.0.1:{p['tracker']}",
                f"yarn.resourcemanager.admin.address.{rid}": f"127.0.0.1:{p['admin']}",
                f"yarn.resourcemanager.webapp.address.{rid}": f"127.0.0.1:{p['web']}",
            }
        return conf

    def start(self, timeout: float = 180) -> None:
        cp = classpath()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.zk_port = free_port()
        zk_dir = self.workdir / "zk"
        zk_dir.mkdir(exist_ok=True)
        with open(self.workdir / "zk.log", "wb") as log:
            self.procs.append(subprocess.Popen(
                ["java", "-Xmx128m", "-cp", cp, ZK_MAIN, str(self.zk_port), str(zk_dir)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=os.environ | {"JAVA_HOME": java_home()}, start_new_session=True))
        self._wait_port(self.zk_port, 60)
        self.rm_ports = {rid: {k: free_port() for k in ("rpc", "sched", "tracker", "admin",
                                                          "web")} for rid in RM_IDS}
        for rid in RM_IDS:
            self._spawn(rid, RM_CLASS, self._write_conf(rid, self._rm_conf(rid), {}), cp,
                        heap="512m")
            self.by_id[rid] = self.procs[-1]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sorted(str(self.ha_state(r)) for r in RM_IDS) == ["ACTIVE", "STANDBY"]:
                return
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"no ACTIVE/STANDBY pair after {timeout}s; see {self.workdir}")

    def _wait_port(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return
            time.sleep(0.2)
        raise TimeoutError(f"nothing listens on {port}")

    def ha_state(self, rm_id: str) -> str | None:
        try:
            return str(self._get(f"{self.url(rm_id)}/ws/v1/cluster/info")["clusterInfo"]
                       ["haState"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def active(self) -> str | None:
        found = [r for r in RM_IDS if self.ha_state(r) == "ACTIVE"]
        return found[0] if len(found) == 1 else None

    def kill9(self, rm_id: str) -> float:
        proc = self.by_id[rm_id]
        t = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        return t
