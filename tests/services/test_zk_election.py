"""Leader election and session safety against a real ZooKeeper (Debian's 3.8).

Session timeout 3 s everywhere: kazoo suspends after 2/3 of it without an
answer (2 s), the server expires after all of it (3 s, rounded up to a
200 ms tick).
"""

from __future__ import annotations

import contextlib
import signal
import time

import pytest
from halib import (
    PATH,
    DrivenAdvisor,
    drop_chroot,
    expire_session,
    make_chroot,
    spawn_contender,
    wait_until,
)
from kazoo.client import KazooClient
from zkserver import Ensemble, ZooKeeperServer, free_port

from yarn_advisor.connectors.errors import UnavailableError
from yarn_advisor.connectors.zookeeper.election import ZooKeeperConfig, ZooKeeperHA

pytestmark = pytest.mark.services

T = 3.0  # session timeout (s)
SLACK = 1.5  # a loaded 2-core machine: scheduling, JVM pauses


def test_two_advisors_exactly_one_leader_and_clean_handover(zk_hosts: str) -> None:
    a = DrivenAdvisor(zk_hosts, "a", T).start()
    b = DrivenAdvisor(zk_hosts, "b", T).start()
    try:
        wait_until(lambda: a.ha.may_write() or b.ha.may_write(), 10)
        time.sleep(0.3)  # let both settle: neither may flip to leader afterwards
        assert [a.ha.is_leader, b.ha.is_leader].count(True) == 1
        leader, follower = (a, b) if a.ha.is_leader else (b, a)
        assert leader.ha.leader_identity() == leader.identity
        assert follower.ha.role == "follower" and not follower.ha.may_write()
        t_stop = time.monotonic()
        leader.stop()  # a planned stop hands over at once, not after a session timeout
        took = wait_until(follower.ha.may_write, 5) - t_stop
        assert took < 1.0, f"clean handover took {took:.2f}s"
        assert follower.ha.leader_identity() == follower.identity
    finally:
        a.stop()
        b.stop()


def test_kill_9_of_the_leader_process_hands_over_within_the_session_timeout(
        zk_hosts: str) -> None:
    child = spawn_contender(zk_hosts, identity="child", session_timeout_s=T)
    peer = None
    try:
        wait_until(lambda: child.first(role="leader", may_write=True) is not None, 15)
        peer = DrivenAdvisor(zk_hosts, "peer", T).start()
        wait_until(lambda: peer.ha.role == "follower", 5)
        assert not peer.ha.may_write()
        killed_at = child.kill()
        became = wait_until(peer.ha.may_write, T + 5)
        took = became - killed_at
        # the server keeps the dead session until it times out: not before about
        # 2/3 of T (pings go every T/3), not later than T plus a tick and slack
        assert 0.5 * T < took < T + SLACK, f"took {took:.2f}s with a {T}s session timeout"
        assert peer.ha.leader_identity() == "peer"
    finally:
        child.close()
        if peer is not None:
            peer.stop()


def test_expired_session_old_leader_stops_writing_before_the_new_one_starts(
        zk_hosts: str) -> None:
    old = DrivenAdvisor(zk_hosts, "old", T).start()
    wait_until(old.ha.may_write, 10)
    new = DrivenAdvisor(zk_hosts, "new", T).start()
    try:
        wait_until(lambda: new.ha.role == "follower", 5)
        client = old.ha._client
        assert client is not None
        t0 = time.monotonic()
        for _ in range(5):  # the old client may win its session back before the close
            expire_session(zk_hosts, client)
            try:
                wait_until(lambda: any(r == "lost" for t, r in old.ha.history if t >= t0), 3)
                break
            except TimeoutError:
                continue
        new_writes = wait_until(new.ha.may_write, 2 * T)
        new_since = new.writing_since()
        old_stopped = old.stopped_writing_after(t0)
        assert new_since is not None and old_stopped is not None
        assert old_stopped < new_since, (old.samples, new.samples)
        # and the old one never wrote again: the new one holds the lock
        assert not any(may for t, may in old.samples if t > old_stopped), old.samples
        assert new_writes >= new_since
        # the old leader came back as a follower on a new session, asked to reload
        wait_until(lambda: old.ha.role == "follower", 5)
        assert not old.ha.may_write()
        print(f"\nexpiry: old stopped writing {1000 * (new_since - old_stopped):.0f} ms "
              "before the new leader started")
    finally:
        old.stop()
        new.stop()


def test_zookeeper_stopped_no_writes_until_back_then_reload(private_zk: ZooKeeperServer) -> None:
    hosts = make_chroot(private_zk.address)
    adv = DrivenAdvisor(hosts, "solo", T).start()
    try:
        wait_until(adv.ha.may_write, 10)
        t_down = time.monotonic()
        private_zk.stop()
        stopped = wait_until(lambda: not adv.ha.may_write(), 2 * T / 3 + SLACK)
        assert adv.ha.role == "suspended"
        time.sleep(1.0)
        assert not any(may for t, may in adv.samples if t > stopped)
        private_zk.start()
        wait_until(lambda: adv.ha.role == "leader", 15)
        # reconnected within the session: still the leader, but stale until reloaded
        assert adv.ha.is_leader
        wait_until(adv.ha.may_write, 5)  # the driver reloaded
        reloads = [r for t, r in adv.ha.history if t > t_down]
        assert reloads[0] == "suspended", reloads
        print(f"\nZooKeeper stop: writing stopped after {stopped - t_down:.2f}s")
    finally:
        adv.stop()


def test_quorum_lost_stops_writes_and_they_resume_after_reload(zk_ensemble: Ensemble) -> None:
    hosts = make_chroot(zk_ensemble.hosts)
    adv = DrivenAdvisor(hosts, "q", T).start()
    down = []
    try:
        wait_until(adv.ha.may_write, 15)
        # stop two of three servers: the survivor stops serving
        down = [s for s in zk_ensemble.servers][:2]
        t_lost = time.monotonic()
        for server in down:
            server.stop()
        survivor = zk_ensemble.servers[2]
        # The survivor serves until it notices the lost quorum (syncLimit, about
        # 1 s): a client may reconnect to it meanwhile. Nobody else can win the
        # election then (creating a lock znode or expiring our session needs a
        # quorum), and once the survivor stops serving, nothing connects.
        wait_until(lambda: survivor.mode() == "", 10)
        stopped = wait_until(lambda: not adv.ha.may_write(), 2 * T / 3 + SLACK)
        time.sleep(1.0)
        assert not any(may for t, may in adv.samples if t > stopped), (adv.samples, t_lost)
        assert adv.ha.role == "suspended"
        for server in down:
            server.start(wait=False)
        for server in down:
            server.wait_serving(60)
        wait_until(adv.ha.may_write, 30)
        print(f"\nquorum loss: writing stopped after {stopped - t_lost:.2f}s; "
              f"modes {zk_ensemble.modes()}")
    finally:
        adv.stop()
        for server in down:
            if not server.running:
                server.start(wait=False)
        drop_chroot(hosts)


def test_no_zookeeper_is_a_clear_unavailable_error() -> None:
    ha = ZooKeeperHA(ZooKeeperConfig(hosts=f"127.0.0.1:{free_port()}", connect_timeout_s=1.0))
    t0 = time.monotonic()
    with pytest.raises(UnavailableError, match="connecting to ZooKeeper at 127"):
        ha.start()
    assert time.monotonic() - t0 < 5
    assert not ha.may_write()


def test_paused_leader_resumes_without_writing(zk_hosts: str, zk_client: KazooClient) -> None:
    """A leader frozen past its session timeout (SIGSTOP: a VM or GC pause) wakes up
    believing it still leads; its state writes are fenced on the lock znode that
    expired with its session, so nothing it writes lands."""
    child = spawn_contender(zk_hosts, identity="child", session_timeout_s=T, write=True)
    peer = None
    beat = f"{PATH}/state/beat"
    try:
        wait_until(lambda: child.first(role="leader", may_write=True) is not None, 15)
        wait_until(lambda: zk_client.exists(beat) is not None, 5)
        peer = DrivenAdvisor(zk_hosts, "peer", T).start()
        wait_until(lambda: peer.ha.role == "follower", 5)
        child.proc.send_signal(signal.SIGSTOP)
        wait_until(peer.ha.may_write, T + 5)
        _, before = zk_client.get(beat)
        resumed = time.monotonic()
        child.proc.send_signal(signal.SIGCONT)
        wait_until(lambda: any(e.get("role") == "follower" and e["t"] > resumed
                               for e in child.events), 10)
        time.sleep(0.5)
        _, after = zk_client.get(beat)
        assert after.version == before.version, "the paused leader wrote after it lost the lock"
        assert peer.ha.may_write()
        after_resume = [e for e in child.events if e["t"] > resumed]
        assert not [e for e in after_resume if "act" in e], after_resume
        refused = [e for e in after_resume if e.get("error")]
        stale = [e for e in after_resume if e.get("stale")]
        print(f"\npause: after resuming, no act and no state write; {len(stale)} acts stopped "
              f"by confirm_leadership, {len(refused)} saves refused "
              f"({sorted({e['error'] for e in refused})})")
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.proc.send_signal(signal.SIGCONT)
        child.close()
        if peer is not None:
            peer.stop()


def test_started_while_zookeeper_is_down_it_waits_then_leads(
        private_zk: ZooKeeperServer) -> None:
    hosts = make_chroot(private_zk.address)
    private_zk.stop()
    ha = ZooKeeperHA(ZooKeeperConfig(hosts=hosts, session_timeout_s=T))
    ha.start(block=False)
    try:
        time.sleep(1.0)
        assert ha.role == "connecting" and not ha.may_write()
        private_zk.start()
        wait_until(lambda: ha.is_leader, 15)
        assert ha.needs_reload and not ha.may_write()
        assert ha.load() == {}
        assert ha.may_write()
    finally:
        ha.stop()
