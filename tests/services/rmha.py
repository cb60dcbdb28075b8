"""Two real ResourceManagers with automatic failover through a test ZooKeeper.

An addition to tests/minicluster/yarnmini.py (whose standby RM has automatic
failover off): both RMs run RM HA with the embedded ``ActiveStandbyElector``
(``yarn.resourcemanager.ha.automatic-failover.enabled=true``) on the given
ZooKeeper, so ZooKeeper decides which one is active, and killing it makes the
other take over. No NodeManagers: the election is what is tested.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "minicluster"))

from yarnmini import RM_CLASS, MiniCluster, classpath, free_port

RM_IDS = ("rm1", "rm2")
ZK_TIMEOUT_MS = 4000  # the RMs' ZooKeeper session timeout: how long a dead active holds the lock


@dataclass
class HAResourceManagers(MiniCluster):
    """rm1 and rm2 electing their active one through ZooKeeper at ``zk_hosts``."""

    zk_hosts: str = ""
    cluster_id: str = "yarn-advisor-ha"
    rm_ports: dict[str, dict[str, int]] = field(default_factory=dict)
    rm_procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def url(self, rm_id: str) -> str:
        return f"http://127.0.0.1:{self.rm_ports[rm_id]['web']}"

    @property
    def urls(self) -> dict[str, str]:
        return {rm_id: self.url(rm_id) for rm_id in RM_IDS}

    def _ha_conf(self, rm_id: str) -> dict[str, object]:
        conf: dict[str, object] = {
            "yarn.resourcemanager.ha.enabled": "true",
            "yarn.resourcemanager.ha.rm-ids": ",".join(RM_IDS),
            "yarn.resourcemanager.ha.id": rm_id,
            "yarn.resourcemanager.cluster-id": self.cluster_id,
            "yarn.resourcemanager.ha.automatic-failover.enabled": "true",
            "yarn.resourcemanager.ha.automatic-failover.embedded": "true",
            "hadoop.zk.address": self.zk_hosts,
            "yarn.resourcemanager.zk-address": self.zk_hosts,
            "hadoop.zk.timeout-ms": ZK_TIMEOUT_MS,
            "yarn.resourcemanager.zk-timeout-ms": ZK_TIMEOUT_MS,
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
        if not self.zk_hosts:
            raise ValueError("zk_hosts is required")
        cp = classpath()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.rm_ports = {rid: {k: free_port() for k in ("rpc", "sched", "tracker", "admin",
                                                          "web")} for rid in RM_IDS}
        for rid in RM_IDS:
            conf_dir = self._write_conf(rid, self._ha_conf(rid), {})
            self._spawn(rid, RM_CLASS, conf_dir, cp, heap="512m")
            self.rm_procs[rid] = self.procs[-1]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [rid for rid, p in self.rm_procs.items() if p.poll() is not None]
            if dead:
                self.stop()
                raise RuntimeError(f"RM {dead} exited during start-up; see {self.workdir}")
            states = sorted(str(self.ha_state(rid)) for rid in RM_IDS)
            if states == ["ACTIVE", "STANDBY"]:
                return
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"no ACTIVE/STANDBY pair after {timeout}s; see {self.workdir}")

    def ha_state(self, rm_id: str) -> str | None:
        """The RM's own word (REST ``/ws/v1/cluster/info``), None if it does not answer."""
        try:
            return str(self._get(f"{self.url(rm_id)}/ws/v1/cluster/info")["clusterInfo"]
                       ["haState"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def active(self) -> str | None:
        found = [rid for rid in RM_IDS if self.ha_state(rid) == "ACTIVE"]
        return found[0] if len(found) == 1 else None

    def kill_rm(self, rm_id: str) -> float:
        """SIGKILL one RM (its ZooKeeper session lives on until it times out)."""
        proc = self.rm_procs[rm_id]
        t = time.monotonic()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        return t


    def restart_rm(self, rm_id: str, timeout: float = 120) -> None:
        """Start a killed RM again with its configuration; it rejoins as the standby."""
        if self.rm_procs[rm_id].poll() is None:
            raise RuntimeError(f"{rm_id} is still running")
        self._spawn(rm_id, RM_CLASS, self.workdir / "conf" / rm_id, classpath(), heap="512m")
        self.rm_procs[rm_id] = self.procs[-1]
        deadline = time.monotonic() + timeout
        while self.ha_state(rm_id) != "STANDBY":
            if self.rm_procs[rm_id].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{rm_id} did not come back as standby; see {self.workdir}")
            time.sleep(0.5)
