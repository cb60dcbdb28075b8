"""Fixtures for the services tests: real ZooKeeper servers (Debian's 3.8).

One standalone server serves the whole test session (``zk_server``); each
test gets its own chroot on it (``zk_hosts``: ``"/yarn-advisor-tests/" +
uuid4().hex``, as kazoo's ``KazooTestHarness`` does), removed afterwards.
Tests that stop or kill the server get a server of their own
(``private_zk``), and quorum tests a 3-server ensemble (``zk_ensemble``).
``YARN_ADVISOR_SKIP_CLUSTER=1`` skips them all (fast local runs); CI never
sets it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from kazoo.client import KazooClient

sys.path.insert(0, str(Path(__file__).resolve().parent))

from halib import drop_chroot, make_chroot
from zkserver import Ensemble, ZooKeeperServer

SKIP_REASON = "YARN_ADVISOR_SKIP_CLUSTER=1: real ZooKeeper tests skipped"
_ZK = TypeVar("_ZK", ZooKeeperServer, Ensemble)


def _skip_if_asked() -> None:
    if os.environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip(SKIP_REASON)


def _started(prefix: str, make: Callable[[Path], _ZK], stop: Callable[[_ZK], None],
             describe: Callable[[_ZK, float], str] | None = None) -> Iterator[_ZK]:
    """Start ``make(workdir)`` in a fresh temporary folder, yield it, then ``stop``
    it and remove the folder; ``describe`` says what came up and in how long."""
    _skip_if_asked()
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    zk = make(workdir)
    t0 = time.monotonic()
    zk.start()
    if describe is not None:
        print(f"\n{describe(zk, time.monotonic() - t0)}", file=sys.stderr)
    yield zk
    stop(zk)
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def zk_server() -> Iterator[ZooKeeperServer]:
    yield from _started("yarn-zk-test-", ZooKeeperServer, ZooKeeperServer.stop,
                        lambda zk, s: f"ZooKeeper up in {s:.2f}s at {zk.address}")


@pytest.fixture
def zk_hosts(zk_server: ZooKeeperServer) -> Iterator[str]:
    """A connect string with a fresh chroot on the session's server."""
    hosts = make_chroot(zk_server.address)
    yield hosts
    drop_chroot(hosts)


@pytest.fixture
def zk_client(zk_hosts: str) -> Iterator[KazooClient]:
    """A started kazoo client inside the test's chroot (for looking at znodes)."""
    client = KazooClient(hosts=zk_hosts, timeout=5)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def private_zk() -> Iterator[ZooKeeperServer]:
    """A server of the test's own, which it may stop, kill and restart."""
    yield from _started("yarn-zk-private-", ZooKeeperServer, ZooKeeperServer.kill)


@pytest.fixture(scope="module")
def zk_ensemble() -> Iterator[Ensemble]:
    """Three servers on loopback forming one quorum."""
    yield from _started("yarn-zk-ensemble-", Ensemble, _kill_all,
                        lambda e, s: f"ZooKeeper ensemble up in {s:.2f}s: {e.modes()}")


def _kill_all(ensemble: Ensemble) -> None:
    for server in ensemble.servers:
        server.kill()
