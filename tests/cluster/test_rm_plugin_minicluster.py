"""The RM plug-in inside a real ResourceManager (Hadoop 3.4.2 mini cluster, the jar on the
RM's classpath and its keys in the RM's yarn-site.xml, docs/plugin.md).

A served table's rule keeps a queue's applications off a host from their first container
(the RM offers the host and the plug-in refuses: its JMX counters say so); with the table
past its TTL, or the advisor's endpoint gone mid-run, the RM schedules as YARN does (the
plug-in counts fall-backs, vetoes nothing) and the application finishes."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from rmplugin import build
from yarnmini import MiniCluster

from yarn_advisor.advisor.model.decision_table import (
    Allow,
    Decisions,
    DecisionTable,
    Match,
    Reason,
    RequestDecision,
    Rule,
)

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
MBEAN = "Hadoop:service=ResourceManager,name=AdvisorPlugin"


class TableServer:
    """The advisor's /decision-table endpoint: the Python side's own serialization of the
    table it holds (404 without one), as advisor/observe/server.py serves it."""

    def __init__(self) -> None:
        self.body: bytes | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = outer.body
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/decision-table"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, table: DecisionTable | None) -> None:
        self.body = None if table is None else table.dumps().encode()

    def kill(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def advisor() -> Iterator[TableServer]:
    server = TableServer()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def plugin_cluster(advisor: TableServer) -> Iterator[MiniCluster]:
    jar = build()
    cluster = MiniCluster(Path(tempfile.mkdtemp(prefix="yarn-mini-plugin-")),
                          rm_classpath=(str(jar),),
                          extra_conf={
                              "yarn.scheduler.app-placement-allocator.class":
                                  "io.github.yarnadvisor.plugin.AdvisorPlacementAllocator",
                              "yarn.advisor.plugin.table.url": advisor.url,
                              "yarn.advisor.plugin.poll-ms": 200,
                          })
    cluster.start()
    # the plug-in starts with the RM's first request (docs/plugin.md): one application
    # without a table loads it, so the tests' first containers already see their table
    advisor.serve(None)
    run_watching(cluster, containers=1)
    wait_for(lambda: jmx(cluster)["TableStatus"] == "withdrawn", "the plug-in's first poll")
    yield cluster
    cluster.stop()
    shutil.rmtree(cluster.workdir, ignore_errors=True)


def jmx(cluster: MiniCluster) -> dict[str, Any]:
    beans = cluster.read(f"{cluster.rm_url}/jmx?qry={MBEAN}")["beans"]
    assert beans, "the RM has no AdvisorPlugin MBean: the allocator was not loaded"
    bean: dict[str, Any] = beans[0]
    return bean


def wait_for(cond: Callable[[], Any], what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def nodes(cluster: MiniCluster) -> dict[str, int]:
    """Node id -> containers running on it now."""
    got = cluster.read(f"{cluster.rm_url}/ws/v1/cluster/nodes")["nodes"]["node"]
    return {n["id"]: int(n["numContainers"]) for n in got}


def app_state(cluster: MiniCluster, app_id: str) -> tuple[str, str]:
    a = cluster.read(f"{cluster.rm_url}/ws/v1/cluster/apps/{app_id}")["app"]
    return a["state"], a["finalStatus"]


def keep_off(node_id: str, generated_at_ms: int, ttl_ms: int = 600_000) -> DecisionTable:
    """Every application of queue adhoc may run only on ``node_id`` (ANACRAC's host rule)."""
    rule = Rule(Match(queue="adhoc"), (RequestDecision(
        None, allow=Allow(frozenset({node_id}), Reason.ANACRAC_HOST)),))
    return DecisionTable(seq=1, generated_at_ms=generated_at_ms, ttl_ms=ttl_ms,
                         leader="test-advisor", decisions=Decisions(rules=(rule,)))


def run_watching(cluster: MiniCluster, containers: int) -> tuple[str, dict[str, int]]:
    """Run a distributed shell in adhoc; the most containers seen on each node meanwhile."""
    app = cluster.distributed_shell(queue="adhoc", containers=containers, command="sleep 6")
    seen: dict[str, int] = {}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        for node, n in nodes(cluster).items():
            seen[node] = max(seen.get(node, 0), n)
        state, final = app_state(cluster, app.app_id)
        if state in ("FINISHED", "FAILED", "KILLED"):
            app.wait(60)
            assert (state, final) == ("FINISHED", "SUCCEEDED"), (state, final)
            return app.app_id, seen
        time.sleep(0.3)
    raise AssertionError(f"{app.app_id} did not finish")


def test_a_served_rule_keeps_an_app_off_a_host_from_its_first_container(
        plugin_cluster: MiniCluster, advisor: TableServer) -> None:
    big, small = sorted(nodes(plugin_cluster))  # 127.0.0.2 (6 GiB), 127.0.0.3 (3 GiB)
    advisor.serve(keep_off(small, int(time.time() * 1000)))
    wait_for(lambda: jmx(plugin_cluster)["TableStatus"] == "ok", "the plug-in to take the table")
    vetoes0 = jmx(plugin_cluster)["Vetoes.anacrac.host"]
    _, seen = run_watching(plugin_cluster, containers=4)
    assert seen.get(big, 0) == 0, seen  # not even the AM
    assert seen[small] >= 2, seen
    after = jmx(plugin_cluster)
    assert after["Vetoes.anacrac.host"] > vetoes0  # the RM offered the big node: refused
    assert after["TableSeq"] == 1 and after["TableLeader"] == "test-advisor"


def test_a_stale_table_or_a_killed_advisor_is_yarns_default(
        plugin_cluster: MiniCluster, advisor: TableServer) -> None:
    _big, small = sorted(nodes(plugin_cluster))
    advisor.serve(keep_off(small, int(time.time() * 1000) - 700_000))  # past its TTL
    wait_for(lambda: jmx(plugin_cluster)["TableSeq"] == 1 and
             jmx(plugin_cluster)["TableAgeMs"] > 600_000, "the stale table")
    before = jmx(plugin_cluster)
    run_watching(plugin_cluster, containers=2)
    mid = jmx(plugin_cluster)
    assert mid["Vetoes"] == before["Vetoes"]
    assert mid["Fallbacks.expired"] > before["Fallbacks.expired"]
    # the advisor dies mid-run, while a fresh table was keeping the app off the big node
    advisor.serve(keep_off(small, int(time.time() * 1000)))
    wait_for(lambda: jmx(plugin_cluster)["TableAgeMs"] < 600_000, "the fresh table")
    app = plugin_cluster.distributed_shell(queue="adhoc", containers=6, command="sleep 4")
    wait_for(lambda: app_state(plugin_cluster, app.app_id)[0] == "RUNNING", "the app to run")
    advisor.kill()
    wait_for(lambda: str(jmx(plugin_cluster)["TableStatus"]).startswith("unreachable"),
             "the plug-in to notice")
    dead = jmx(plugin_cluster)
    wait_for(lambda: app_state(plugin_cluster, app.app_id)[0] in ("FINISHED", "FAILED",
                                                                  "KILLED"), "the app", 300)
    assert app_state(plugin_cluster, app.app_id) == ("FINISHED", "SUCCEEDED")
    app.wait(60)
    end = jmx(plugin_cluster)
    assert end["Vetoes"] == dead["Vetoes"]  # nothing vetoed once the advisor was gone
    assert end["Fallbacks.no_table"] > dead["Fallbacks.no_table"]
