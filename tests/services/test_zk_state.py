"""The state store on a real ZooKeeper: compare-and-set, chunks, corruption, auth."""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time

import pytest
from halib import DrivenAdvisor, wait_until
from kazoo.client import KazooClient

from yarn_advisor.connectors.errors import (
    ConflictError,
    NotLeaderError,
    ParseError,
    ZooKeeperAuthError,
)
from yarn_advisor.connectors.zookeeper.election import ZooKeeperConfig, ZooKeeperHA, zk_errors
from yarn_advisor.connectors.zookeeper.state import StateStore

pytestmark = pytest.mark.services

BASE = "/yarn-advisor/test"


def store_on(client: KazooClient) -> StateStore:
    return StateStore(client, BASE, guard=zk_errors)


def incompressible(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def test_compare_and_set(zk_client: KazooClient) -> None:
    store = store_on(zk_client)
    assert store.get("actuator") is None
    v0 = store.put("actuator", b'{"cooldowns": {}}', None)
    assert store.get("actuator") == (b'{"cooldowns": {}}', v0)
    with pytest.raises(ConflictError, match="already exists"):
        store.put("actuator", b"other", None)
    v1 = store.put("actuator", b'{"cooldowns": {"q": 1}}', v0)
    assert v1 == v0 + 1
    with pytest.raises(ConflictError, match=f"no longer at version {v0}"):
        store.put("actuator", b"stale writer", v0)
    assert store.get("actuator") == (b'{"cooldowns": {"q": 1}}', v1)
    assert store.names() == ["actuator"]


def test_three_megabytes_round_trip_in_chunks_and_old_chunks_go(
        zk_client: KazooClient) -> None:
    store = store_on(zk_client)
    big = incompressible(3 * 1024 * 1024, seed=1)
    v = store.put("classifier", big, None)
    head, _ = zk_client.get(store.head_path("classifier"))
    header = json.loads(head.partition(b"\n")[0])
    assert header["chunks"] == 7  # 3 MiB + zlib overhead in 512 KiB chunks
    assert len(zk_client.get_children(store.chunk_dir("classifier"))) == 7
    assert store.get("classifier") == (big, v)
    bigger = incompressible(3 * 1024 * 1024 + 5, seed=2)
    v = store.put("classifier", bigger, v)
    assert store.get("classifier") == (bigger, v)
    small = b'{"counts": {}}'
    v = store.put("classifier", small, v)
    assert store.get("classifier") == (small, v)
    assert zk_client.get_children(store.chunk_dir("classifier")) == []


def test_compressible_state_stays_in_one_znode(zk_client: KazooClient) -> None:
    store = store_on(zk_client)
    data = json.dumps({f"app-{i}": {"short": i, "long": 2 * i} for i in range(60_000)}).encode()
    assert len(data) > 2 * 1024 * 1024
    v = store.put("classifier", data, None)
    head, _ = zk_client.get(store.head_path("classifier"))
    assert json.loads(head.partition(b"\n")[0])["chunks"] == 0
    assert store.get("classifier") == (data, v)


@pytest.mark.parametrize("head, message", [
    (b"garbage", "holds no yarn-advisor state header"),
    (b'{"magic": "yarn-advisor-state", "format": 2}\n', "format 2; this advisor reads format 1"),
    (b'{"magic": "yarn-advisor-state", "format": 1, "codec": "zstd", "size": 1, '
     b'"sha256": "", "chunks": 0, "generation": "g"}\n', "unknown state codec"),
])
def test_foreign_or_incompatible_head_is_a_parse_error(
        zk_client: KazooClient, head: bytes, message: str) -> None:
    store = store_on(zk_client)
    zk_client.create(store.head_path("policy.haste"), head, makepath=True)
    with pytest.raises(ParseError, match=message):
        store.get("policy.haste")


def test_corrupt_chunk_or_inline_payload_is_a_parse_error(zk_client: KazooClient) -> None:
    store = store_on(zk_client)
    store.put("classifier", incompressible(1_200_000, seed=3), None)
    chunk_dir = store.chunk_dir("classifier")
    first = sorted(zk_client.get_children(chunk_dir))[0]
    part, _ = zk_client.get(f"{chunk_dir}/{first}")
    zk_client.set(f"{chunk_dir}/{first}", bytes([part[0] ^ 1]) + part[1:])
    with pytest.raises(ParseError, match="corrupt state"):
        store.get("classifier")
    store.put("small", b"x" * 100, None)
    head, _ = zk_client.get(store.head_path("small"))
    zk_client.set(store.head_path("small"), head[:-1] + bytes([head[-1] ^ 1]))
    with pytest.raises(ParseError, match="corrupt state"):
        store.get("small")


def test_fenced_write_refused_once_the_fence_is_gone(zk_client: KazooClient) -> None:
    store = store_on(zk_client)
    zk_client.create("/fence", b"", ephemeral=True)
    v = store.put("actuator", b"1", None, fence="/fence")
    zk_client.delete("/fence")
    with pytest.raises(NotLeaderError, match="/fence is gone"):
        store.put("actuator", b"2", v, fence="/fence")
    with pytest.raises(NotLeaderError):
        store.put("classifier", incompressible(1_500_000, seed=4), None, fence="/fence")
    assert store.get("actuator") == (b"1", v)
    assert store.get("classifier") is None
    assert zk_client.get_children(store.chunk_dir("classifier")) == []  # refused chunks removed


def test_concurrent_writers_lose_no_increment(zk_hosts: str) -> None:
    """Four clients add 15 each to one counter with read / compare-and-set / retry."""
    clients = [KazooClient(hosts=zk_hosts, timeout=5) for _ in range(4)]
    for c in clients:
        c.start(timeout=15)
    conflicts = [0] * len(clients)

    def add(i: int) -> None:
        store = store_on(clients[i])
        for _ in range(15):
            while True:
                found = store.get("counter")
                n, version = (json.loads(found[0])["n"], found[1]) if found else (0, None)
                try:
                    store.put("counter", json.dumps({"n": n + 1}).encode(), version)
                    break
                except ConflictError:
                    conflicts[i] += 1

    threads = [threading.Thread(target=add, args=(i,)) for i in range(len(clients))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        found = store_on(clients[0]).get("counter")
        assert found is not None and json.loads(found[0]) == {"n": 60}
        print(f"\nconcurrent writers: 60 increments, {sum(conflicts)} conflicts retried")
    finally:
        for c in clients:
            c.stop()
            c.close()


def test_reader_never_sees_a_torn_state_while_a_writer_replaces_chunks(
        zk_hosts: str) -> None:
    states = [incompressible(1_300_000, seed=s) for s in (10, 11, 12)]
    digests = {hashlib.sha256(s).hexdigest() for s in states}
    writer_client, reader_client = (KazooClient(hosts=zk_hosts, timeout=5) for _ in range(2))
    writer_client.start(timeout=15)
    reader_client.start(timeout=15)
    writer, reader = store_on(writer_client), store_on(reader_client)
    version = writer.put("classifier", states[0], None)
    done = threading.Event()
    writes = [0]

    def write() -> None:
        nonlocal version
        i = 0
        while not done.is_set():
            i += 1
            version = writer.put("classifier", states[i % 3], version)
            writes[0] += 1

    thread = threading.Thread(target=write)
    thread.start()
    reads = 0
    try:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            found = reader.get("classifier")
            assert found is not None
            assert hashlib.sha256(found[0]).hexdigest() in digests
            reads += 1
    finally:
        done.set()
        thread.join(30)
        writer_client.stop()
        reader_client.stop()
        writer_client.close()
        reader_client.close()
    assert writes[0] >= 3 and reads >= 3, (writes, reads)
    print(f"\ntorn-read check: {reads} whole reads during {writes[0]} chunked writes, "
          f"{reader.rereads} heads read again after their chunks were replaced")


def test_leader_saves_and_the_next_leader_loads_it(zk_hosts: str) -> None:
    a = DrivenAdvisor(zk_hosts, "a").start()
    wait_until(a.ha.may_write, 10)
    big = incompressible(2_000_000, seed=5)
    assert a.ha.save("classifier", big)
    assert a.ha.save("actuator", b'{"cooldowns": {"etl": 120}}')
    assert not a.ha.save("actuator", b'{"cooldowns": {"etl": 120}}')  # unchanged: no write
    b = DrivenAdvisor(zk_hosts, "b").start()
    try:
        wait_until(lambda: b.ha.role == "follower", 5)
        with pytest.raises(NotLeaderError):
            b.ha.save("actuator", b"from a follower")
        a.stop()
        wait_until(b.ha.may_write, 5)  # b's driver reloaded before writing
        assert b.ha.load() == {"classifier": big, "actuator": b'{"cooldowns": {"etl": 120}}'}
        assert b.ha.save("actuator", b'{"cooldowns": {}}')
    finally:
        a.stop()
        b.stop()


def test_digest_acl_keeps_others_out(zk_hosts: str) -> None:
    owner = ZooKeeperHA(ZooKeeperConfig(hosts=zk_hosts, path=BASE, digest="advisor:s3cret",
                                        session_timeout_s=3))
    owner.start()
    intruder = ZooKeeperHA(ZooKeeperConfig(hosts=zk_hosts, path=BASE, digest="advisor:wrong",
                                           session_timeout_s=3))
    try:
        wait_until(lambda: owner.is_leader, 10)
        owner.load()
        owner.save("actuator", b"secret cooldowns")
        intruder.start()  # digest auth never fails the connection; the ACL refuses reads
        with pytest.raises(ZooKeeperAuthError, match="denied access"):
            intruder.load()
        anonymous = KazooClient(hosts=zk_hosts, timeout=3)
        anonymous.start(timeout=10)
        try:
            with pytest.raises(ZooKeeperAuthError):
                store_on(anonymous).get("actuator")
        finally:
            anonymous.stop()
            anonymous.close()
    finally:
        intruder.stop()
        owner.stop()


def test_a_corrupt_state_is_reported_left_out_and_replaced_by_the_next_save(
        zk_hosts: str, zk_client: KazooClient) -> None:
    store = store_on(zk_client)
    store.put("actuator", b'{"cooldowns": {}}', None)
    zk_client.create(store.head_path("policy.haste"), b"not ours", makepath=True)
    a = DrivenAdvisor(zk_hosts, "a").start()
    try:
        wait_until(a.ha.may_write, 10)
        assert a.ha.load() == {"actuator": b'{"cooldowns": {}}'}
        assert "holds no yarn-advisor state header" in a.ha.load_errors["policy.haste"]
        assert a.ha.may_write()
        assert a.ha.save("policy.haste", b'{"fresh": true}')
        assert a.ha.load() == {"actuator": b'{"cooldowns": {}}',
                               "policy.haste": b'{"fresh": true}'}
        assert a.ha.load_errors == {}
    finally:
        a.stop()


@pytest.mark.parametrize("kazoo_level", [None, "DEBUG"])
def test_a_debug_log_never_shows_the_zookeeper_digest(
        zk_hosts: str, capsys: pytest.CaptureFixture[str], kazoo_level: str | None) -> None:
    """At ``logging.level: DEBUG`` kazoo logged its Auth request, the digest in clear,
    on every connect. Now kazoo stays at INFO unless ``logging.loggers`` asks; asked,
    its requests are logged with the digest masked. A real ZooKeeper, a real connect."""
    import logging

    from yarn_advisor.advisor.cli.logs import setup_logging
    from yarn_advisor.advisor.engine.settings import load_config

    secret = "s3cret-digest-pw"
    levels = {n: logging.getLogger(n).level for n in ("yarn_advisor", "kazoo")}
    logging_cfg: dict[str, object] = {"level": "DEBUG"}
    if kazoo_level:
        logging_cfg["loggers"] = {"kazoo": kazoo_level}
    setup_logging(load_config(None, {"logging": logging_cfg}))
    ha = ZooKeeperHA(ZooKeeperConfig(hosts=zk_hosts, path=BASE + "-debuglog",
                                     digest=f"advisor:{secret}", session_timeout_s=3))
    try:
        ha.start()
        wait_until(lambda: ha.is_leader, 10)
    finally:
        ha.stop()
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)
    err = capsys.readouterr().err
    assert secret not in err
    if kazoo_level:
        assert "Sending request" in err and "auth='***'" in err  # asked for: shown, masked
    else:
        assert "Sending request" not in err  # capped at INFO
