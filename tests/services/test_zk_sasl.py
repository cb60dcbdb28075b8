"""SASL against a real ZooKeeper: DIGEST-MD5 through kazoo's sasl_options.

Kerberos (GSSAPI) takes the same path with another mechanism; it needs a KDC,
which these tests do not run.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from halib import make_chroot, wait_until
from kazoo.client import KazooClient
from zkserver import ZooKeeperServer

from yarn_advisor.connectors.errors import ZooKeeperAuthError
from yarn_advisor.connectors.zookeeper.election import ZooKeeperConfig, ZooKeeperHA, zk_errors
from yarn_advisor.connectors.zookeeper.state import StateStore

pytestmark = pytest.mark.services

USER, PASSWORD = "advisor", "s3cret"


@pytest.fixture
def sasl_zk() -> Iterator[ZooKeeperServer]:
    if __import__("os").environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip("YARN_ADVISOR_SKIP_CLUSTER=1: real ZooKeeper tests skipped")
    workdir = Path(tempfile.mkdtemp(prefix="yarn-zk-sasl-"))
    server = ZooKeeperServer(workdir, sasl_users={USER: PASSWORD})
    server.start()
    yield server
    server.kill()
    shutil.rmtree(workdir, ignore_errors=True)


def sasl_config(hosts: str, password: str) -> ZooKeeperConfig:
    return ZooKeeperConfig(hosts=hosts, path="/yarn-advisor/sasl", session_timeout_s=3,
                           connect_timeout_s=5,
                           sasl={"mechanism": "DIGEST-MD5", "username": USER,
                                 "password": password})


def test_sasl_user_leads_saves_and_owns_its_znodes(sasl_zk: ZooKeeperServer) -> None:
    hosts = make_chroot(sasl_zk.address)
    ha = ZooKeeperHA(sasl_config(hosts, PASSWORD))
    ha.start()
    try:
        wait_until(lambda: ha.is_leader, 10)
        ha.load()
        assert ha.save("actuator", b'{"cooldowns": {}}')
        assert ha._client is not None
        acl, _ = ha._client.get_acls("/yarn-advisor/sasl/state/actuator")
        assert [(a.id.scheme, a.id.id) for a in acl] == [("sasl", USER)]
        anonymous = KazooClient(hosts=hosts, timeout=3)
        anonymous.start(timeout=10)
        try:
            with pytest.raises(ZooKeeperAuthError, match="denied access"):
                StateStore(anonymous, "/yarn-advisor/sasl", guard=zk_errors).get("actuator")
        finally:
            anonymous.stop()
            anonymous.close()
    finally:
        ha.stop()


def test_wrong_sasl_password_is_a_clear_auth_error(sasl_zk: ZooKeeperServer) -> None:
    ha = ZooKeeperHA(sasl_config(sasl_zk.address, "wrong"))
    t0 = time.monotonic()
    with pytest.raises(ZooKeeperAuthError):
        ha.start()
    assert time.monotonic() - t0 < 10
    assert not ha.may_write()
