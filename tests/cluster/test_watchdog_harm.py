"""The harm watchdog against real harm on a real cluster: OPERA, with the settings of
``examples/lend-memory.yaml``, lends a node's idle memory (the RM's total for the node
rises past its real size); tasks then placed on the lent room grow past the memory they
were given and their attempts fail, twice per task, until the tasks fail. The watchdog
trips OPERA: the policy goes to dry-run and the node is written back to its real size,
seen on the RM.

How the tasks fail: their sort buffer outgrows their JVM's heap ("Error: Java heap
space"), a failed attempt as the MapReduce AM reports it. Not a NodeManager kill: with
``yarn.nodemanager.pmem-check-enabled`` on (this module's cluster has it), a map JVM
pre-touching a 768 MiB heap in a 512 MiB container ran at 878 MiB RSS to its end, never
killed; and the host has far more memory than the lent node, so a lent node never runs
short here. The watchdog judges the failed tasks the RM and the AM report, not why.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cluster_writes import records
from yarnmini import MiniCluster, NodeSpec, SubmittedApp

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.wiring import build_live_advisor

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
NODE = NodeSpec(3072, 4)


@pytest.fixture(scope="module")
def enforced_cluster() -> Iterator[MiniCluster]:
    """A real RM and one NodeManager that kills a container past its memory ask."""
    for attempt in (1, 2, 3):  # a port picked free may be taken before a daemon binds it
        cluster = MiniCluster(Path(tempfile.mkdtemp(prefix="yarn-mini-harm-")), nodes=(NODE,),
                              extra_conf={"yarn.nodemanager.pmem-check-enabled": "true"})
        try:
            cluster.start(timeout=600)  # a loaded machine starts JVMs slowly
            break
        except RuntimeError:
            if attempt == 3:
                raise
    yield cluster
    cluster.stop()


def node_total(cluster: MiniCluster) -> int:
    (node,) = cluster.read(f"{cluster.rm_url}/ws/v1/cluster/nodes")["nodes"]["node"]
    return int(node["totalResource"]["memory"])


def advisor(cluster: MiniCluster, state: Path) -> Advisor:
    """The enforcing daemon: OPERA alone, with lend-memory.yaml's settings; quicker
    cycles, settling and cooldowns than a production cluster's, and the watchdog's
    task threshold at 2 (one job's failed map and the map its failure kills).

    OPERA keeps a node raised ``return_after_s`` after it last lent (120 s by default),
    then hands the memory back (``opera.return_headroom``); the watchdog counts harm
    only on live changes. On a loaded machine the second job's AM can take longer than
    that to start, and the node was back at its size before its tasks failed: nothing
    to trip on. Here the node stays raised until the watchdog acts."""
    others = {name: {"enabled": False} for name in load(None).policies.sections()
              if name != "opera"}
    cfg = load(ROOT / "examples" / "lend-memory.yaml", {
        "rm": {"urls": [cluster.rm_url], "history_url": cluster.jhs_url},
        "dry_run": False, "state_dir": str(state),
        "sense": {"interval_s": 2},
        "classifier": {"checkpoint": str(state / "classifier.json")},
        "server": {"enabled": False},
        "actuator": {"cooldown_s": 4, "max_actions_per_target": 1000,
                     "max_snapshot_age_s": 60,
                     "kinds": {"update_node_resource": {"cooldown_s": 4,
                                                        "max_actions_per_target": 1000}},
                     "watchdog": {"task_failures": 2}},
        "policies": others | {"opera": {"params": {"lend_memory": True, "lend_to": "any",
                                                   "settle_s": 0, "return_after_s": 3600}}},
    })
    return build_live_advisor(cfg)


def cycles_until(adv: Advisor, done: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        adv.run_once()
        if done():
            return
        time.sleep(2)
    raise AssertionError(f"no {what} in {timeout:.0f} s; last cycle: "
                         f"{adv.latest.outcome if adv.latest else '-'} "
                         f"{adv.latest.reason if adv.latest else ''}")


def test_lent_memory_that_tasks_grow_into_trips_opera_and_the_node_returns(
        enforced_cluster: MiniCluster, tmp_path: Path) -> None:
    cluster = enforced_cluster
    adv = advisor(cluster, tmp_path)
    jobs: list[SubmittedApp] = []
    try:
        # over-sized asks (1 GiB for a sleep task's ~200 MiB JVM), more than the node
        # holds: OPERA lends the measured idle memory
        jobs.append(cluster.sleep_job(maps=4, reduces=0, map_ms=600_000, map_mb=1024,
                                      name="lent"))
        cycles_until(adv, lambda: node_total(cluster) > NODE.memory_mb,
                     "memory lent by OPERA", timeout=600)
        lent = node_total(cluster)
        assert adv.actuator.enforcing("opera")
        # tasks on the lent room whose memory grows past what they were given: each
        # map's sort buffer (400 MiB) outgrows its JVM's heap (256 MiB), the attempt
        # fails ("Error: Java heap space"), twice per task here (maxattempts 2), and the
        # job's other tasks are killed. In another queue: the first job holds the
        # default queue's share of AMs.
        jobs.append(cluster.sleep_job(queue="etl", maps=2, reduces=1, map_ms=60_000,
                                      map_mb=512, name="grows", conf={
                                          "mapreduce.map.java.opts": "-Xmx256m",
                                          "mapreduce.task.io.sort.mb": 400,
                                          "mapreduce.map.maxattempts": 2}))
        cycles_until(adv, lambda: not adv.actuator.enforcing("opera"),
                     "trip of OPERA", timeout=900)
    finally:
        for job in jobs:
            job.proc.kill()
    tripped = [r for r in records(adv.actuator.journal) if r["phase"] == "tripped"]
    assert [(r["policy"], r["reason"]) for r in tripped][:1] == [("opera", "task_failures")]
    assert tripped[0]["count"] >= 2
    assert adv.actuator.tripped_policies() == ["opera"]
    assert node_total(cluster) == NODE.memory_mb < lent  # rolled back on the real RM
    back = [r for r in records(adv.actuator.journal)
            if r["policy"] == "rollback" and r["phase"] == "result"]
    assert [(r["kind"], r["outcome"]) for r in back] == [("update_node_resource", "applied")]
    # OPERA still decides, but nothing it decides is sent while it is held
    adv.run_once()
    assert node_total(cluster) == NODE.memory_mb
