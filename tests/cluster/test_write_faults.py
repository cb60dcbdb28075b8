"""Faults on the write path, all from real servers: the journal shows each one,
nothing is retried blindly, no state is lost.

- 400: the real RM rejects an invalid scheduler-conf value;
- 401/403: a second real RM with ``yarn.acl.enable`` where we are no admin;
- a timeout in the middle of a write: a small proxy forwards the write to the
  real RM and holds the answer past our read timeout (or never forwards it);
- standby: a real standby RM, alone, or answering the write after the active
  one answered the reads (a failover between read and write).
"""

from __future__ import annotations

import http.client
import json
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _cluster_writes import actuator_for, rec, records
from yarnmini import MiniCluster, NodeSpec

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.rollback import select
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.wiring import build_sensor, http_client
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ConfUpdate
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers

pytestmark = pytest.mark.cluster
LIGHT_SENSE = {"mapreduce": {"enabled": False}, "nm_jmx": {"enabled": False}, "rm_jmx": False}
DELAY = "yarn.scheduler.capacity.node-locality-delay"
MAX_CAP = "yarn.scheduler.capacity.root.adhoc.maximum-capacity"


class Exchanges:
    """A Recorder: every request our HTTP client made, with the answer's status."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    def record(self, method: str, url: str, status: int, content_type: str, body: str) -> None:
        self.seen.append((method, urllib.parse.urlsplit(url).path, status))

    def writes(self) -> list[tuple[str, str, int]]:
        return [s for s in self.seen if s[0] in ("PUT", "POST")]


class Proxy:
    """Reads go to one RM, writes to another (or the same), optionally held or dropped."""

    def __init__(self, reads_to: str, writes_to: str, hold_s: float = 0.0,
                 drop_writes: bool = False) -> None:
        self.writes: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(reads_to)

            def do_PUT(self) -> None:
                self._write()

            def do_POST(self) -> None:
                self._write()

            def _write(self) -> None:
                proxy.writes.append((self.command, self.path))
                if drop_writes:
                    time.sleep(hold_s)
                    return
                self._forward(writes_to, hold_s)

            def _forward(self, upstream: str, hold_s: float = 0.0) -> None:
                try:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    u = urllib.parse.urlsplit(upstream)
                    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=30)
                    keep = ("Content-Type", "Accept", "X-XSRF-HEADER")
                    conn.request(self.command, self.path, body or None,
                                 {k: v for k, v in self.headers.items() if k in keep})
                    resp = conn.getresponse()
                    data = resp.read()
                    conn.close()
                    time.sleep(hold_s)
                    self.send_response(resp.status)
                    for k in ("Content-Type", "Location", "Refresh"):
                        if resp.getheader(k):
                            self.send_header(k, resp.getheader(k) or "")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # our client gave up (the point of the timeout tests)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def rig(urls: list[str], state: Path, read_s: float = 10.0,
        **settings: Any) -> tuple[Actuator, Exchanges]:
    cfg = load(None, {"rm": {"urls": urls, "timeout": {"read_s": read_s},
                             "retry": {"attempts": 2, "base_delay_s": 0.05}},
                      "sense": LIGHT_SENSE, "dry_run": False, "state_dir": str(state),
                      "actuator": {"cooldown_s": 0, **settings}})
    seen = Exchanges()
    return actuator_for(cfg, RMClient(http_client(cfg, seen), urls)), seen


def sense(rm_url: str) -> Any:
    cfg = load(None, {"rm": {"urls": [rm_url]}, "sense": LIGHT_SENSE})
    return build_sensor(cfg).sense(int(time.time() * 1000))


def conf(rm_url: str) -> dict[str, str]:
    sensor = build_sensor(load(None, {"rm": {"urls": [rm_url]}}))
    body = sensor.connectors.rm.get("/ws/v1/cluster/scheduler-conf")
    return {p["name"]: p["value"] for p in body["property"]}


def phases(a: Actuator) -> list[tuple[str, str]]:
    return [(r["phase"], r.get("outcome") or "") for r in records(a.journal)]


def results(a: Actuator) -> list[dict[str, Any]]:
    return [r for r in records(a.journal) if r["phase"] == "result"]


@pytest.fixture(autouse=True)
def leave_the_cluster_as_found(mini_cluster: MiniCluster) -> Iterator[None]:
    """A failing test must not leave the shared cluster changed."""
    yield
    cfg = load(None, {"rm": {"urls": [mini_cluster.rm_url]}})
    writer = Writer(RMLevers(RMClient(http_client(cfg), cfg.rm.urls)))
    conf = Kind.UPDATE_SCHEDULER_CONF
    writer.apply(conf, "scheduler", ConfUpdate.of({DELAY: "40"}))
    writer.apply(conf, "root.adhoc", ConfUpdate.of({"maximum-capacity": "100", "capacity": "20"}))


@pytest.fixture(scope="module")
def acl_cluster() -> Iterator[MiniCluster]:
    """A second real RM (one small node) with ACLs on, where only 'boss' is admin."""
    cluster = MiniCluster(Path(tempfile.mkdtemp(prefix="yarn-mini-acl-")),
                          nodes=(NodeSpec(1024, 1),),
                          extra_conf={"yarn.acl.enable": "true", "yarn.admin.acl": "boss"})
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.mark.parametrize(("key", "value", "was", "why"), [
    ("maximum-capacity", "abc", "100", "For input string"),   # not a number
    ("capacity", "50", "20", "Illegal capacity sum"),         # siblings would sum to 130%
])
def test_rm_rejects_an_invalid_value(mini_cluster: MiniCluster, tmp_path: Path, key: str,
                                     value: str, was: str, why: str) -> None:
    a, seen = rig([mini_cluster.rm_url], tmp_path, cooldown_s=300)
    bad = rec("update_scheduler_conf", "root.adhoc", {key: value})
    assert a.act([bad], sense(mini_cluster.rm_url)) == {
        ("update_scheduler_conf", "test", "refused"): 1}
    assert phases(a) == [("intent", ""), ("result", "refused")]
    (res,) = results(a)
    assert res["sent"] is True and res["status"] == 400 and why in res["error"]
    assert a.journal.actions()[0].previous == {key: was}
    assert conf(mini_cluster.rm_url)[f"yarn.scheduler.capacity.root.adhoc.{key}"] == was
    # the next cycle does not try again blindly: the target is cooling down
    a.act([bad], sense(mini_cluster.rm_url))
    assert phases(a)[-1] == ("blocked", "blocked")
    assert [w[0] for w in seen.writes()] == ["PUT"]


def test_rm_refuses_a_caller_without_rights(acl_cluster: MiniCluster, tmp_path: Path) -> None:
    a, seen = rig([acl_cluster.rm_url], tmp_path)
    snap = sense(acl_cluster.rm_url)
    (node,) = snap.nodes
    counts = a.act([rec("update_scheduler_conf", "scheduler", {DELAY: 5}),
                    rec("replace_node_labels", node.id, ["fast"])], snap)
    assert counts == {("update_scheduler_conf", "test", "refused"): 1,
                      ("replace_node_labels", "test", "refused"): 1}
    conf_res, labels_res = results(a)
    # reading the scheduler conf is admin-only here: refused (403) before anything was sent
    assert (conf_res["sent"], conf_res["status"]) == (False, 403)
    assert "Only admins" in conf_res["error"]
    # the node labels were readable; the write itself was refused (401) after the intent
    assert (labels_res["sent"], labels_res["status"]) == (True, 401)
    intent = next(r for r in records(a.journal) if r["phase"] == "intent")
    assert (intent["kind"], intent["previous"]) == ("replace_node_labels", [])
    assert [w[:2] for w in seen.writes()] == [("POST", "/ws/v1/cluster/add-node-labels")]
    labels = sense(acl_cluster.rm_url).nodes[0].labels
    assert labels == ()


def test_timeout_after_the_rm_applied_the_write(mini_cluster: MiniCluster,
                                                tmp_path: Path) -> None:
    proxy = Proxy(mini_cluster.rm_url, mini_cluster.rm_url, hold_s=3.0)
    try:
        a, _ = rig([proxy.url], tmp_path, read_s=1.0)
        change = rec("update_scheduler_conf", "scheduler", {DELAY: 13})
        assert a.act([change], sense(mini_cluster.rm_url)) == {
            ("update_scheduler_conf", "test", "applied"): 1}
        (res,) = results(a)
        assert res["sent"] is True and "timed out" in res["error"]
        assert res["observed"] == {DELAY: "13"}   # read back once: the RM did apply it
        assert conf(mini_cluster.rm_url)[DELAY] == "13"
        # the next cycle reads first, sees the value there, and sends nothing
        assert a.act([change], sense(mini_cluster.rm_url)) == {
            ("update_scheduler_conf", "test", "noop"): 1}
        assert len(proxy.writes) == 1
    finally:
        proxy.close()
    # no state lost: the journal's previous value is restored
    direct, _ = rig([mini_cluster.rm_url], tmp_path)
    assert direct.writer is not None
    steps = direct.rollback(select(direct.journal.actions(), since=0))
    assert [s.outcome for s in steps] == ["applied"]
    assert conf(mini_cluster.rm_url)[DELAY] == "40"


def test_timeout_before_the_rm_saw_the_write(mini_cluster: MiniCluster, tmp_path: Path) -> None:
    proxy = Proxy(mini_cluster.rm_url, mini_cluster.rm_url, hold_s=2.0, drop_writes=True)
    try:
        a, _ = rig([proxy.url], tmp_path, read_s=1.0)
        counts = a.act([rec("update_scheduler_conf", "scheduler", {DELAY: 13})],
                       sense(mini_cluster.rm_url))
        assert counts == {("update_scheduler_conf", "test", "unknown"): 1}
        (res,) = results(a)
        assert res["sent"] is True and res["observed"] == {DELAY: "40"}
        assert len(proxy.writes) == 1
    finally:
        proxy.close()
    assert conf(mini_cluster.rm_url)[DELAY] == "40"


def test_only_a_standby_rm_blocks_every_action(mini_cluster: MiniCluster, standby_url: str,
                                               tmp_path: Path) -> None:
    a, seen = rig([standby_url], tmp_path)
    snap = sense(mini_cluster.rm_url)  # sensed a moment ago, before the failover
    counts = a.act([rec("update_scheduler_conf", "scheduler", {DELAY: 13}),
                    rec("update_scheduler_conf", "root.adhoc", {"maximum-capacity": 60})], snap)
    assert counts == {("update_scheduler_conf", "test", "blocked"): 2}
    blocked = [r for r in records(a.journal) if r["phase"] == "blocked"]
    assert [r["reason"] for r in blocked] == ["rm_standby", "rm_standby"]
    assert "STANDBY" in blocked[0]["error"]
    assert seen.writes() == []


def test_rm_turns_standby_between_read_and_write(mini_cluster: MiniCluster, standby_url: str,
                                                 tmp_path: Path) -> None:
    proxy = Proxy(mini_cluster.rm_url, standby_url)
    try:
        a, seen = rig([proxy.url], tmp_path)
        counts = a.act([rec("update_scheduler_conf", "scheduler", {DELAY: 13}),
                        rec("update_scheduler_conf", "root.adhoc", {"maximum-capacity": 60})],
                       sense(mini_cluster.rm_url))
    finally:
        proxy.close()
    assert counts == {("update_scheduler_conf", "test", "standby"): 1,
                      ("update_scheduler_conf", "test", "blocked"): 1}
    assert phases(a) == [("intent", ""), ("result", "standby"), ("blocked", "blocked")]
    res = results(a)[0]
    assert res["sent"] is True and "not active" in res["error"]
    assert [r.get("reason") for r in records(a.journal)][-1] == "rm_standby"
    assert len(proxy.writes) == 1 and [w[2] for w in seen.writes()] == [307]
    live = conf(mini_cluster.rm_url)
    assert (live[DELAY], live[MAX_CAP]) == ("40", "100")
    assert json.dumps(a.journal.actions()[0].previous) == json.dumps({DELAY: "40"})
