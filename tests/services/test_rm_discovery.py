"""Active RM discovery through ZooKeeper, checked against a real HA RM pair.

The pair (tests/services/rmha.py) elects its active RM through the session's
test ZooKeeper with the RM's own embedded elector; the advisor reads the
election lock and decodes the protobuf the real RM wrote.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from halib import wait_until
from kazoo.client import KazooClient
from rmha import RM_IDS, ZK_TIMEOUT_MS, HAResourceManagers
from zkserver import ZooKeeperServer

from yarn_advisor.connectors.errors import ParseError, StandbyError
from yarn_advisor.connectors.rm_zookeeper import (
    active_rm_url,
    lock_path,
    parse_active_rm_info,
    read_active_rm,
)

RECORDED = Path(__file__).resolve().parent / "recorded"


@pytest.fixture(scope="module")
def ha_rms(zk_server: ZooKeeperServer) -> Iterator[HAResourceManagers]:
    pair = HAResourceManagers(Path(tempfile.mkdtemp(prefix="yarn-rm-ha-")),
                              zk_hosts=zk_server.address,
                              cluster_id="yarn-advisor-" + uuid.uuid4().hex[:8])
    t0 = time.monotonic()
    pair.start()
    print(f"\nHA RM pair up in {time.monotonic() - t0:.1f}s: active {pair.active()}",
          file=sys.stderr)
    yield pair
    pair.stop()


@pytest.fixture
def zk(zk_server: ZooKeeperServer) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zk_server.address, timeout=5)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


@pytest.mark.cluster
def test_lock_names_the_active_rm_and_follows_a_failover(
        ha_rms: HAResourceManagers, zk: KazooClient) -> None:
    raw, _ = zk.get(lock_path(ha_rms.cluster_id))
    active = ha_rms.active()
    assert active in RM_IDS
    info = read_active_rm(zk, ha_rms.cluster_id)
    assert (info.cluster_id, info.rm_id) == (ha_rms.cluster_id, active)
    assert parse_active_rm_info(raw) == info
    assert active_rm_url(zk, ha_rms.cluster_id, ha_rms.urls) == ha_rms.url(active)

    other = next(rid for rid in RM_IDS if rid != active)
    killed_at = ha_rms.kill_rm(active)
    seen: list[str] = []

    def lock_follows() -> bool:
        try:
            seen.append(read_active_rm(zk, ha_rms.cluster_id).rm_id)
        except StandbyError:
            seen.append("none")
        return seen[-1] == other

    moved = wait_until(lock_follows, ZK_TIMEOUT_MS / 1000 + 60, step=0.05)
    rm_active = wait_until(lambda: ha_rms.ha_state(other) == "ACTIVE", 60, step=0.1)
    assert active_rm_url(zk, ha_rms.cluster_id, ha_rms.urls) == ha_rms.url(other)
    # until the dead RM's session times out the lock still names it: the
    # advisor's RM client must treat a refused connection as "unavailable"
    assert seen[0] == active
    print(f"\nRM failover: lock moved {moved - killed_at:.1f}s after kill -9 "
          f"(RM ZooKeeper timeout {ZK_TIMEOUT_MS / 1000}s), {other} ACTIVE over REST "
          f"{rm_active - killed_at:.1f}s after; lock readings {dict.fromkeys(seen)}")


def test_recorded_lock_bytes_from_a_real_rm_decode() -> None:
    """Bytes the real RM (Hadoop 3.4.2) wrote into ActiveStandbyElectorLock."""
    raw = (RECORDED / "ActiveStandbyElectorLock.bin").read_bytes()
    info = parse_active_rm_info(raw)
    assert info.rm_id in RM_IDS
    assert info.cluster_id.startswith("yarn-advisor-")


@pytest.mark.parametrize("cut", [1, 3, -1])
def test_truncated_lock_bytes_are_a_parse_error(cut: int) -> None:
    raw = (RECORDED / "ActiveStandbyElectorLock.bin").read_bytes()
    with pytest.raises(ParseError):
        parse_active_rm_info(raw[:cut])


def test_no_lock_means_no_active_rm(zk: KazooClient) -> None:
    with pytest.raises(StandbyError, match="no ResourceManager of cluster 'nobody' is active"):
        read_active_rm(zk, "nobody")
