"""The RM plug-in inside a real ResourceManager (Hadoop 3.4.2 mini cluster, the jar on the
RM's classpath and its keys in the RM's yarn-site.xml, docs/plugin.md).

A served table's rule keeps a queue's applications off a host from their first container
(the RM offers the host and the plug-in refuses: its JMX counters say so); Matchmaking's
``local_only`` makes every map of a wordcount node-local where YARN's default places some
rack-local; the table's ranks decide which of two contending applications of a queue gets
the freed cluster first, and a stale table leaves YARN's FIFO order; with the table past its
TTL, or the advisor's endpoint gone mid-run, the RM schedules as YARN does (the plug-in
counts fall-backs, vetoes nothing) and the application finishes.

The small NodeManager runs at ``localhost``: the host that a local file's splits name, so
the maps of a job over ``file://`` input ask for that node (and its rack, the only one)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest
from rmplugin import MBEAN, ORDERING, TableServer, build, rm_conf, served, wait_for
from yarnmini import MiniCluster, NodeSpec, SubmittedApp

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.wiring import build_sensor
from yarn_advisor.advisor.model.decision_table import (
    Allow,
    AppDecisions,
    Decisions,
    DecisionTable,
    Hold,
    LocalOnly,
    Match,
    Reason,
    RequestDecision,
    Rule,
)
from yarn_advisor.advisor.model.snapshot import Snapshot

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
# one user may fill the cluster from any queue; queue etl orders its apps by the table's
# ranks; a heartbeat places many off-switch containers (YARN's default: one), so the
# cluster goes to the first application of the order within a heartbeat or two
SCHEDULER = {
    **{f"yarn.scheduler.capacity.root.{q}.user-limit-factor": 10
       for q in ("default", "etl", "adhoc")},
    "yarn.scheduler.capacity.root.etl.ordering-policy": ORDERING,
    "yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments": 40,
}


@pytest.fixture(scope="module")
def advisor() -> Iterator[TableServer]:
    yield from served()


@pytest.fixture(scope="module")
def plugin_cluster(advisor: TableServer) -> Iterator[MiniCluster]:
    jar = build()
    cluster = MiniCluster(Path(tempfile.mkdtemp(prefix="yarn-mini-plugin-")),
                          nodes=(NodeSpec(6144, 6), NodeSpec(3072, 3)),
                          node_hosts=("127.0.0.2", "localhost"),
                          rm_classpath=(str(jar),), scheduler_conf=SCHEDULER,
                          extra_conf=rm_conf(url=advisor.url))
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
    big, small = sorted(nodes(plugin_cluster))  # 127.0.0.2 (6 GiB), localhost (3 GiB)
    advisor.serve(keep_off(small, int(time.time() * 1000)))
    wait_for(lambda: jmx(plugin_cluster)["TableStatus"] == "ok", "the plug-in to take the table")
    vetoes0 = jmx(plugin_cluster)["Vetoes.anacrac.host"]
    # more 256 MiB containers than the small node holds with the AM (12 + 1 > 3072 MiB): some
    # asks wait while the big node heartbeats, so the RM offers it (one heartbeat of the small
    # node may place 40 off-switch containers here, and a fitting batch never met the big one)
    _, seen = run_watching(plugin_cluster, containers=12)
    assert seen.get(big, 0) == 0, seen  # not even the AM
    assert seen[small] >= 2, seen
    after = jmx(plugin_cluster)
    assert after["Vetoes.anacrac.host"] > vetoes0  # the RM offered the big node: refused
    assert after["TableSeq"] == 1 and after["TableLeader"] == "test-advisor"


# --- the advisor senses the plug-in ----------------------------------------------------
RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "rm-plugin-jmx"


def sensed(cluster: MiniCluster, precision: bool) -> Snapshot:
    """One sense step of the advisor against the cluster (precision mode on or off, the
    plug-in's source at its default, ``auto``)."""
    cfg = load_config(None, {"rm": {"urls": [cluster.rm_url]},
                             "precision": {"enabled": precision},
                             "sense": {"mapreduce": {"enabled": False}, "nm_jmx": {
                                 "enabled": False}}})
    return build_sensor(cfg).sense(int(time.time() * 1000))


def record(cluster: MiniCluster, name: str, what: str) -> None:
    """Save the RM's ``/jmx`` answer for the plug-in's MBean as the tests' fixture, with
    where and when it was read (only when YARN_ADVISOR_RECORD_PLUGIN_JMX=1)."""
    if os.environ.get("YARN_ADVISOR_RECORD_PLUGIN_JMX") != "1":
        return
    url = f"{cluster.rm_url}/jmx?qry={MBEAN}"
    with urlopen(url, timeout=30) as resp:
        status, body = resp.status, resp.read().decode()
    RECORDED.mkdir(parents=True, exist_ok=True)
    (RECORDED / f"{name}.json").write_text(json.dumps({
        "provenance": f"GET /jmx?qry={MBEAN} of a real Hadoop 3.4.2 ResourceManager (mini "
                      f"cluster) running rm-plugin's jar, {what}; recorded by "
                      f"tests/cluster/test_rm_plugin_minicluster.py at "
                      f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        "status": status, "body": body}, indent=1) + "\n")


def test_the_advisor_senses_the_plugins_bean_while_it_publishes(
        plugin_cluster: MiniCluster, advisor: TableServer) -> None:
    _big, small = sorted(nodes(plugin_cluster))
    advisor.serve(keep_off(small, int(time.time() * 1000)))
    wait_for(lambda: jmx(plugin_cluster)["TableStatus"] == "ok", "the plug-in to take the table")
    run_watching(plugin_cluster, containers=12)  # the RM offers the big node: vetoes
    got = sensed(plugin_cluster, precision=True).plugin
    raw = jmx(plugin_cluster)
    assert got is not None and got.table_status == "ok" and got.applying
    assert (got.table_seq, got.table_leader) == (1, "test-advisor")
    assert 0 <= got.table_age_ms < 600_000
    assert 0 < got.vetoes["anacrac.host"] <= raw["Vetoes.anacrac.host"]
    assert sum(got.vetoes.values()) <= raw["Vetoes"]
    assert got.admits > 0 and got.polls_ok > 0
    assert set(got.fallbacks) == {"no_table", "expired", "unknown_app", "error"}
    record(plugin_cluster, "applying", "a table (seq 1) keeping queue adhoc off one of two "
           "nodes applied, after an application the plug-in kept off it")
    # an advisor that does not publish a table does not read the bean (sense.rm_plugin auto)
    assert sensed(plugin_cluster, precision=False).plugin is None
    advisor.serve(None)
    wait_for(lambda: jmx(plugin_cluster)["TableStatus"] == "withdrawn", "the withdrawal")
    gone = sensed(plugin_cluster, precision=True).plugin
    assert gone is not None and gone.table_status == "withdrawn" and not gone.applying
    assert gone.table_seq == -1 and gone.vetoes["anacrac.host"] >= got.vetoes["anacrac.host"]
    record(plugin_cluster, "withdrawn", "the advisor's endpoint answering 404 (no table) "
           "after the table above")


# --- Matchmaking: node-local maps ------------------------------------------------------
MAPS = 16
JOB_COUNTERS = "org.apache.hadoop.mapreduce.JobCounter"


def local_only(seq: int, generated_at_ms: int) -> DecisionTable:
    """Matchmaking's table part (advisor/policies/matchmaking/decisions.py: one rule per
    leaf queue, every request priority), here for queue default and without a skip budget:
    a request with host asks is placed only where one of them is local."""
    rule = Rule(Match(queue="default"), (RequestDecision(
        None, local_only=LocalOnly(Reason.MATCHMAKING_NONLOCAL, frozenset(), None)),))
    return DecisionTable(seq=seq, generated_at_ms=generated_at_ms, ttl_ms=600_000,
                         leader="test-advisor", decisions=Decisions(rules=(rule,)))


def history(cluster: MiniCluster, path: str) -> Any:
    """A JobHistory REST body, None while the job is not there yet."""
    try:
        return cluster.read(f"{cluster.jhs_url}/ws/v1/history/mapreduce/jobs/{path}")
    except HTTPError:
        return None


def wordcount_locality(cluster: MiniCluster, inputs: Path, out: str) -> tuple[dict[str, int],
                                                                             dict[str, int]]:
    """Run a wordcount over ``inputs`` (one split per file); its map locality counters and
    the hosts its maps ran on (map attempts per host), both from the JobHistoryServer."""
    app = cluster.example_job("wordcount", inputs.as_uri(), (cluster.workdir / out).as_uri(),
                              queue="default", conf={"mapreduce.job.reduces": 1})
    assert app.wait(600) == 0, app.log.read_text()[-3000:]
    job = app.app_id.replace("application_", "job_")
    body = wait_for(lambda: history(cluster, f"{job}/counters"), f"{job} in JobHistory")
    group = next(g for g in body["jobCounters"]["counterGroup"]
                 if g["counterGroupName"] == JOB_COUNTERS)
    counters = {c["name"]: int(c["totalCounterValue"]) for c in group["counter"]}
    hosts: dict[str, int] = {}
    for task in history(cluster, f"{job}/tasks?type=m")["tasks"]["task"]:
        attempts = history(cluster, f"{job}/tasks/{task['id']}/attempts")
        for a in attempts["taskAttempts"]["taskAttempt"]:
            host = str(a["nodeHttpAddress"]).rsplit(":", 1)[0]
            hosts[host] = hosts.get(host, 0) + 1
    return counters, hosts


def test_matchmaking_local_only_makes_maps_node_local_where_yarns_default_does_not(
        plugin_cluster: MiniCluster, advisor: TableServer) -> None:
    inputs = plugin_cluster.workdir / "wordcount-in"
    inputs.mkdir(exist_ok=True)
    for i in range(MAPS):  # small files: one split (one map) each, all local to localhost
        (inputs / f"part-{i:02d}.txt").write_text(f"split {i} of the matchmaking test\n" * 50)
    advisor.serve(None)  # YARN's default: the plug-in is loaded and has no table
    wait_for(lambda: jmx(plugin_cluster)["TableStatus"] == "withdrawn", "no table")
    default, default_hosts = wordcount_locality(plugin_cluster, inputs, "out-default")
    assert default["TOTAL_LAUNCHED_MAPS"] == MAPS
    # the small node holds at most 6 maps at a time; YARN's delay (node-locality-delay
    # capped at the node count, 2) sends the others to the big node, rack-local
    assert default.get("RACK_LOCAL_MAPS", 0) > 0, (default, default_hosts)
    assert default_hosts.get("127.0.0.2", 0) > 0, default_hosts

    advisor.serve(local_only(2, int(time.time() * 1000)))
    wait_for(lambda: jmx(plugin_cluster)["TableSeq"] == 2, "the plug-in to take the table")
    vetoes0 = jmx(plugin_cluster)["Vetoes.matchmaking.nonlocal"]
    table, table_hosts = wordcount_locality(plugin_cluster, inputs, "out-table")
    assert table["TOTAL_LAUNCHED_MAPS"] == MAPS
    assert table["DATA_LOCAL_MAPS"] == MAPS, (table, table_hosts)
    assert table.get("RACK_LOCAL_MAPS", 0) == 0
    assert table_hosts == {"localhost": MAPS}
    assert jmx(plugin_cluster)["Vetoes.matchmaking.nonlocal"] > vetoes0  # the big node asked
    advisor.serve(None)


# --- the application order -------------------------------------------------------------
TASKS = 1  # the request priority of the contending apps' shell containers (their AM's: 0)


def running(cluster: MiniCluster, app_id: str) -> tuple[str, int]:
    a = cluster.read(f"{cluster.rm_url}/ws/v1/cluster/apps/{app_id}")["app"]
    return str(a["state"]), int(a.get("runningContainers") or 0)


def held(seq: int) -> DecisionTable:
    """Queue etl's tasks wait (the AMs do not): the start line of the contention."""
    rule = Rule(Match(queue="etl"), (RequestDecision(TASKS, hold=Hold(Reason.HASTE_HOLDBACK)),))
    return DecisionTable(seq=seq, generated_at_ms=int(time.time() * 1000), ttl_ms=600_000,
                         leader="test-advisor", decisions=Decisions(rules=(rule,)))


def ranked(seq: int, generated_at_ms: int, first: str, second: str) -> DecisionTable:
    apps = {first: AppDecisions(rank=0), second: AppDecisions(rank=1)}
    return DecisionTable(seq=seq, generated_at_ms=generated_at_ms, ttl_ms=600_000,
                         leader="test-advisor", decisions=Decisions(apps=apps))


def contend(cluster: MiniCluster, advisor: TableServer, seq: int, age_ms: int) -> str:
    """Two applications of queue etl, b submitted before c, each asking for more than the
    whole cluster; both AMs run and their tasks are held until the table ranking c first
    (``age_ms`` old) replaces the hold. Which app gets the cluster: the one whose tasks
    ran while the other held only its AM ("b" or "c")."""
    advisor.serve(held(seq))
    wait_for(lambda: jmx(cluster)["TableSeq"] == seq, "the plug-in to hold etl's tasks")
    apps: dict[str, SubmittedApp] = {}
    for name in ("b", "c"):  # 17 tasks of 512 MiB: the cluster fits 16 or 17 beside 2 AMs
        apps[name] = cluster.distributed_shell(queue="etl", containers=17, container_mb=512,
                                               command="sleep 8", name=f"order-{name}",
                                               task_priority=TASKS)
        app_id = apps[name].app_id
        wait_for(lambda a=app_id: running(cluster, a) == ("RUNNING", 1), f"{name}'s AM")
    b, c = apps["b"].app_id, apps["c"].app_id
    time.sleep(2)  # heartbeats that offer both apps the nodes
    assert running(cluster, b)[1] == running(cluster, c)[1] == 1  # held, asking
    advisor.serve(ranked(seq + 1, int(time.time() * 1000) - age_ms, first=c, second=b))
    winner = ""
    deadline = time.monotonic() + 180
    while not winner and time.monotonic() < deadline:
        nb, nc = running(cluster, b)[1], running(cluster, c)[1]
        if nb >= 9 or nc >= 9:  # one app got half the cluster
            assert min(nb, nc) <= 1, (nb, nc)  # the other still has only its AM
            winner = "b" if nb > nc else "c"
        time.sleep(0.2)
    assert winner, "no application got the cluster"
    for app in apps.values():
        wait_for(lambda a=app.app_id: running(cluster, a)[0] == "FINISHED", "the app", 300)
        app.wait(60)
    return winner


def test_the_tables_ranks_decide_which_app_gets_the_cluster_and_stale_ranks_are_fifo(
        plugin_cluster: MiniCluster, advisor: TableServer) -> None:
    assert contend(plugin_cluster, advisor, seq=3, age_ms=0) == "c"
    # the same ranks past their TTL: YARN's FIFO order (b was submitted first)
    assert contend(plugin_cluster, advisor, seq=5, age_ms=700_000) == "b"
    advisor.serve(None)


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
