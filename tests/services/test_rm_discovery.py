"""Active RM discovery through ZooKeeper, checked against a real HA RM pair.

The pair (tests/services/rmha.py) elects its active RM through the session's
test ZooKeeper with the RM's own embedded elector; the advisor reads the
election lock and decodes the protobuf the real RM wrote. The daemon, built
as ``yarn-advisor run`` builds it with ``rm.discovery: zookeeper`` and the
standby listed first, finds the active RM through the lock and follows a
kill -9 of it; when ZooKeeper cannot say, it probes and says why in one line.
"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from halib import wait_until
from kazoo.client import KazooClient
from rmha import RM_IDS, ZK_TIMEOUT_MS, HAResourceManagers
from zkserver import ZooKeeperServer, free_port

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.sense import LiveSensor
from yarn_advisor.advisor.loop.wiring import build_live_advisor
from yarn_advisor.config.base import ConfigError
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.errors import ParseError, StandbyError
from yarn_advisor.connectors.rm.active import (
    ZooKeeperRMClient,
    active_rm_url,
    lock_path,
    parse_active_rm_info,
    read_active_rm,
)

pytestmark = pytest.mark.services
RECORDED = Path(__file__).resolve().parent / "recorded"
LIGHT_SENSE = {"mapreduce": {"enabled": False}, "nm_jmx": {"enabled": False}, "rm_jmx": False}
FELL_BACK = "active RM not found through ZooKeeper"


@pytest.fixture(scope="module")
def ha_rms(zk_server: ZooKeeperServer) -> Iterator[HAResourceManagers]:
    workdir = Path(tempfile.mkdtemp(prefix="yarn-rm-ha-"))
    pair = HAResourceManagers(workdir, zk_hosts=zk_server.address,
                              cluster_id="yarn-advisor-" + uuid.uuid4().hex[:8])
    t0 = time.monotonic()
    pair.start()
    print(f"\nHA RM pair up in {time.monotonic() - t0:.1f}s: active {pair.active()}",
          file=sys.stderr)
    yield pair
    pair.stop()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def zk(zk_server: ZooKeeperServer) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zk_server.address, timeout=5)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


def discovery_config(ha_rms: HAResourceManagers, hosts: str, state: Path,
                     **zookeeper: Any) -> AdvisorConfig:
    """rm.discovery zookeeper, the standby RM listed first (a probe would ask it first)."""
    active = ha_rms.active()
    assert active is not None
    urls = [ha_rms.url(r) for r in sorted(RM_IDS, key=lambda r: r == active)]
    return load_config(None, {
        "state_dir": str(state), "sense": LIGHT_SENSE, "server": {"enabled": False},
        "rm": {"urls": urls, "discovery": "zookeeper",
               "zookeeper": {"hosts": hosts, "cluster_id": ha_rms.cluster_id,
                             "rm_ids": ha_rms.urls} | zookeeper}})


def zk_rm(advisor: Advisor) -> ZooKeeperRMClient:
    assert isinstance(advisor.sensor, LiveSensor)
    rm = advisor.sensor.connectors.rm
    assert isinstance(rm, ZooKeeperRMClient)
    return rm


def fallback_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith(FELL_BACK)]


@pytest.mark.cluster
def test_the_daemon_finds_the_active_rm_through_the_lock_and_follows_a_failover(
        ha_rms: HAResourceManagers, zk_server: ZooKeeperServer, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    active = ha_rms.active()
    assert active is not None
    other = next(r for r in RM_IDS if r != active)
    cfg = discovery_config(ha_rms, zk_server.address, tmp_path)
    assert cfg.rm.urls[0] == ha_rms.url(other)  # the standby first
    advisor = build_live_advisor(cfg)
    rm = zk_rm(advisor)
    try:
        report = advisor.run_once()
        assert (report.outcome, report.reason) == ("ok", "")
        assert rm.active_url == ha_rms.url(active)
        assert (rm.discovered, rm.fallbacks) == (1, 0)  # the lock answered; nothing probed

        killed_at = ha_rms.kill_rm(active)
        outcomes: list[str] = []

        def follows() -> bool:
            report = advisor.run_once()
            outcomes.append(report.outcome)
            return report.outcome == "ok" and rm.active_url == ha_rms.url(other)

        followed = wait_until(follows, ZK_TIMEOUT_MS / 1000 + 90, step=0.2)
        # once the lock has moved, the lock alone names the new active RM
        found = rm.discovered
        assert rm.resolve()[0] == ha_rms.url(other) and rm.discovered == found + 1
        for record in fallback_lines(caplog):  # the dead RM still named, or not confirmed
            assert record.exc_info is None and "\n" not in record.getMessage()
        print(f"\ndaemon followed the RM failover {followed - killed_at:.1f}s after kill -9: "
              f"{len(outcomes)} cycles {dict.fromkeys(outcomes)}, {rm.fallbacks} probe(s), "
              f"{rm.discovered} lock resolution(s)", file=sys.stderr)
    finally:
        rm.close()
        if ha_rms.rm_procs[active].poll() is not None:
            ha_rms.restart_rm(active)  # the pair is whole again for the next test


@pytest.mark.cluster
@pytest.mark.parametrize("fault", ["no lock", "garbled lock", "rm id without URL",
                                   "ZooKeeper down"])
def test_when_zookeeper_cannot_say_the_daemon_probes_and_says_why_in_one_line(
        fault: str, ha_rms: HAResourceManagers, zk_server: ZooKeeperServer, zk: KazooClient,
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    active = ha_rms.active()
    assert active is not None
    hosts, overrides = zk_server.address, dict[str, Any]()
    base = "/yarn-advisor-tests/rm-" + uuid.uuid4().hex
    if fault == "no lock":
        overrides["cluster_id"] = "nobody"
    elif fault == "garbled lock":  # the real lock's bytes, cut short
        raw, _ = zk.get(lock_path(ha_rms.cluster_id))
        zk.create(lock_path(ha_rms.cluster_id, base), raw[:3], makepath=True)
        overrides["base_path"] = base
    elif fault == "rm id without URL":
        overrides["rm_ids"] = {r: u for r, u in ha_rms.urls.items() if r != active}
    else:
        hosts = f"127.0.0.1:{free_port()}"
    advisor = build_live_advisor(discovery_config(ha_rms, hosts, tmp_path, **overrides))
    rm = zk_rm(advisor)
    try:
        t0 = time.monotonic()
        report = advisor.run_once()
        took = time.monotonic() - t0
        assert (report.outcome, report.reason) == ("ok", "")
        assert rm.active_url == ha_rms.url(active)  # found by probing
        assert (rm.discovered, rm.fallbacks) == (0, 1)
        lines = fallback_lines(caplog)
        assert len(lines) == 1 and lines[0].levelno == logging.WARNING
        assert lines[0].exc_info is None and "\n" not in lines[0].getMessage()
        expected = {"no lock": "no ResourceManager of cluster 'nobody' is active",
                    "garbled lock": "ActiveRMInfoProto: truncated",
                    "rm id without URL": f"the active ResourceManager is '{active}', which "
                                         "has no configured URL",
                    "ZooKeeper down": "no ZooKeeper session with"}[fault]
        assert expected in lines[0].getMessage()
        assert took < rm.connect_wait_s + 10  # a ZooKeeper that is down costs little
        print(f"\n{fault}: {lines[0].getMessage()} (cycle {took:.2f}s)", file=sys.stderr)
    finally:
        rm.close()
        if fault == "garbled lock":
            zk.delete(base, recursive=True)


def test_rm_discovery_configuration_is_checked_at_load() -> None:
    rm = {"urls": ["http://rm1:8088", "http://rm2:8088"], "discovery": "zookeeper"}
    ids = {"rm1": "http://rm1:8088", "rm2": "http://rm2:8088"}
    with pytest.raises(ConfigError, match=r"needs zookeeper\.cluster_id and zookeeper\.rm_ids"):
        load_config(None, {"rm": rm | {"zookeeper": {"hosts": "zk:2181"}}})
    with pytest.raises(ConfigError, match=r"needs rm\.zookeeper\.hosts or ha\.zookeeper\.hosts"):
        load_config(None, {"rm": rm | {"zookeeper": {"cluster_id": "c", "rm_ids": ids}}})
    with pytest.raises(ConfigError, match=r"rm_ids \['rm3'\]: their URLs must be in urls"):
        load_config(None, {"rm": rm | {"zookeeper": {
            "hosts": "zk:2181", "cluster_id": "c", "rm_ids": ids | {"rm3": "http://rm3:8088"}}}})
    cfg = load_config(None, {"rm": rm | {"zookeeper": {"cluster_id": "c", "rm_ids": ids}},
                             "ha": {"zookeeper": {"hosts": "zk:2181/advisors"}}})
    assert cfg.rm.zookeeper.hosts is None  # ha's connect string (and auth) is used
    assert load_config().rm.discovery == "probe"


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
