"""The RM plug-in inside SLS's real ResourceManager and CapacityScheduler (500 simulated
nodes, the jar on the RM's classpath, docs/plugin.md): it is loaded there, takes the
served table and vetoes at the simulated heartbeats. A rule lets every queue's
applications use half of the nodes (ANACRAC's host rule): the trace's containers go to
that half. A 500-node SLS of its own (the session's has no jar), with a one-minute trace."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rmplugin import MBEAN, TableServer, build, rm_conf, served
from slsrun import SlsCluster
from workload import FIXTURES, TEST_SOURCE_FILES, TraceSpec

from yarn_advisor.advisor.model.decision_table import (
    Allow,
    Decisions,
    DecisionTable,
    Match,
    Reason,
    RequestDecision,
    Rule,
)

pytestmark = [pytest.mark.sls, pytest.mark.slow]
QUEUES = ("default", "etl", "adhoc")
CS_METRICS = "Hadoop:service=ResourceManager,name=CapacitySchedulerMetrics"


@pytest.fixture(scope="module")
def advisor() -> Iterator[TableServer]:
    yield from served()


@pytest.fixture(scope="module")
def plugin_sls(advisor: TableServer) -> Iterator[SlsCluster]:
    workdir = Path(tempfile.mkdtemp(prefix="yarn-sls-plugin-"))
    cluster = SlsCluster(workdir, nodes=500, racks=20,
                         trace=TraceSpec(window_s=60, sources=TEST_SOURCE_FILES, data=FIXTURES),
                         rm_classpath=(str(build()),),
                         # the table names 250 nodes; a loaded machine serves it slowly
                         extra_conf=rm_conf(url=advisor.url, timeout_ms=3000))
    cluster.start()
    yield cluster
    cluster.stop()
    shutil.rmtree(workdir, ignore_errors=True)


def jmx(cluster: SlsCluster) -> dict[str, Any] | None:
    beans = cluster.get(f"/jmx?qry={MBEAN}")["beans"]
    return beans[0] if beans else None


def containers(cluster: SlsCluster) -> dict[str, int]:
    return {n["id"]: int(n["numContainers"])
            for n in cluster.get("/ws/v1/cluster/nodes")["nodes"]["node"]}


def test_the_plugin_is_loaded_in_the_sls_rm_and_keeps_the_trace_on_the_allowed_nodes(
        plugin_sls: SlsCluster, advisor: TableServer) -> None:
    ids = sorted(containers(plugin_sls))
    allowed = frozenset(ids[::2])
    rules = tuple(Rule(Match(queue=q), (RequestDecision(
        None, allow=Allow(allowed, Reason.ANACRAC_HOST)),)) for q in QUEUES)
    advisor.serve(DecisionTable(seq=1, generated_at_ms=int(time.time() * 1000),
                                ttl_ms=600_000, leader="test-advisor",
                                decisions=Decisions(rules=rules)))
    # the MBean starts with the first application's first allocator (docs/plugin.md)
    deadline = time.monotonic() + 180
    bean = jmx(plugin_sls)
    while (bean is None or bean["TableStatus"] != "ok") and time.monotonic() < deadline:
        time.sleep(1)
        bean = jmx(plugin_sls)
    assert bean is not None and bean["TableStatus"] == "ok", bean
    start = bean
    time.sleep(45)  # the trace's apps arrive and run
    now = containers(plugin_sls)
    end = jmx(plugin_sls)
    assert end is not None and end["TableSeq"] == 1
    assert end["Vetoes.anacrac.host"] > start["Vetoes.anacrac.host"]
    assert end["Admits"] > start["Admits"]
    on_allowed = sum(n for node, n in now.items() if node in allowed)
    elsewhere = sum(n for node, n in now.items() if node not in allowed)
    print(f"\nSLS with the plug-in: {on_allowed} containers on the allowed nodes, {elsewhere}"
          f" elsewhere; vetoes {end['Vetoes.anacrac.host'] - start['Vetoes.anacrac.host']},"
          f" admits {end['Admits'] - start['Admits']}, polls failed {end['PollsFailed']}"
          f" of {end['PollsOk'] + end['PollsFailed']}", file=sys.stderr)
    cs = plugin_sls.get(f"/jmx?qry={CS_METRICS}")["beans"]
    if cs:  # the scheduler's own timing of its passes (one run: a figure, not a check)
        print("CapacityScheduler: " + ", ".join(
            f"{k} {cs[0][k]}" for k in ("NodeUpdateNumOps", "NodeUpdateAvgTime",
                                        "AllocateNumOps", "AllocateAvgTime") if k in cs[0]),
              file=sys.stderr)
    # only containers placed before the plug-in's first poll may still run elsewhere
    assert on_allowed > 0 and elsewhere <= on_allowed // 10, (on_allowed, elsewhere)
