"""connectors.parse_jmx on a production QueueMetrics bean and beans derived from it.

The fixtures hold one real ``/jmx`` body (bk-base, ``QueueMetrics,q0=root``);
the child-queue, per-user, ClusterMetrics and NM ContainerResource beans below are
that bean renamed, with attributes set from Metrics.md's names.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _data import each_mutation, load, rest_doc

from yarn_advisor.advisor.model.snapshot import Resources
from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.jmx import parse as j

ROOT_BEAN = "bk-base-yarn-examples/rm_jmx_QueueMetrics_root.json"


def real_bean() -> dict[str, Any]:
    bean: dict[str, Any] = load(ROOT_BEAN)["beans"][0]
    return bean


def renamed(name: str, **attrs: Any) -> dict[str, Any]:
    bean = real_bean()
    bean["name"] = name
    bean.update(attrs)
    return bean


def test_root_queue_metrics_production_bean() -> None:
    beans = j.parse_beans(load(ROOT_BEAN))
    (q,) = j.queue_metrics(beans)
    assert q.queue_path == "root"
    assert (q.apps_running, q.apps_pending) == (3, 0)
    assert q.available == Resources(248832, 345)
    assert q.allocated == Resources(0, 0) and q.pending == Resources(0, 0)
    assert q.aggregate_containers_allocated == 46337
    assert (q.aggregate_node_local, q.aggregate_rack_local, q.aggregate_off_switch) == (
        43,
        4259,
        78942,
    )


def test_child_user_and_partition_beans() -> None:
    body = load(ROOT_BEAN)
    prefix = "Hadoop:service=ResourceManager,name="
    child = renamed(
        prefix + "QueueMetrics,q0=root,q1=a,q2=b",
        PendingMB=4096,
        PendingVCores=4,
        PendingContainers=4,
        AllocatedMB="2048",
    )
    del child["AggregateNodeLocalContainersAllocated"]
    child["aggregateNodeLocalContainersAllocated"] = 9  # Metrics.md spelling
    body["beans"] += [
        child,
        renamed(prefix + "QueueMetrics,q0=root,q1=a,user=alice"),
        renamed(prefix + "PartitionQueueMetrics,partition=gpu,q0=root"),
        renamed(prefix + "JvmMetrics"),
    ]
    root, ab = j.queue_metrics(j.parse_beans(body))
    assert (root.queue_path, ab.queue_path) == ("root", "root.a.b")
    assert ab.pending == Resources(4096, 4) and ab.pending_containers == 4
    assert ab.allocated == Resources(2048, 0)
    assert ab.aggregate_node_local == 9


def test_cluster_metrics_bean() -> None:
    body = {
        "beans": [
            real_bean(),
            renamed(
                "Hadoop:service=ResourceManager,name=ClusterMetrics",
                NumActiveNMs=5,
                NumLostNMs=1,
                numDecommissioningNMs=0,
                AMLaunchDelayAvgTime=12.7,
            ),
        ]
    }
    metrics = j.cluster_metrics_bean(j.parse_beans(body))
    assert metrics["NumActiveNMs"] == 5 and metrics["NumLostNMs"] == 1
    assert metrics["AMLaunchDelayAvgTime"] == 12
    assert "tag.Queue" not in metrics and "name" not in metrics
    assert j.cluster_metrics_bean(j.parse_beans(load(ROOT_BEAN))) == {}


def test_container_usage() -> None:
    # container ids from the RM containers doc example
    am_id = rest_doc("rm__10")["containers"]["container"][0]["containerId"]
    prefix = "Hadoop:service=NodeManager,name=ContainerResource_"
    full = renamed(
        prefix + am_id,
        PMemUsageMBsAvgMBs=812.5,
        PMemUsageMBsMaxMBs=1024,
        PCpuUsagePercentAvgPercents=150.0,
        PCpuUsagePercentMaxPercents=200,
        pMemLimitMBs=1536,
        vCoreLimit=1,
        PMemUsageMBsNumUsage=42,
    )
    early = {"name": prefix + "container_e17_1531404209605_0008_01_000002", "ContainerPid": "1"}
    beans = j.parse_beans({"beans": [full, early, real_bean()]})
    a, b = j.container_usage(beans)
    assert a.container_id == am_id
    assert (a.pmem_avg_mb, a.pmem_max_mb, a.pmem_limit_mb) == (812.5, 1024.0, 1536.0)
    assert (a.cpu_avg_percent, a.cpu_max_percent, a.vcore_limit, a.samples) == (
        150.0,
        200.0,
        1.0,
        42,
    )
    assert b.container_id == "container_e17_1531404209605_0008_01_000002"
    assert (b.pmem_avg_mb, b.cpu_max_percent, b.samples) == (0.0, 0.0, 0)


def test_beans_as_single_object_and_empty() -> None:
    body = load(ROOT_BEAN)
    body["beans"] = body["beans"][0]
    assert len(j.parse_beans(body)) == 1
    assert j.parse_beans({"beans": []}) == []
    assert j.parse_beans({"beans": None}) == []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b.clear(), "missing top-level key 'beans'"),
        (lambda b: b.update(beans="x"), "beans is str"),
        (lambda b: b["beans"].append(3), "beans item is int"),
        (lambda b: b["beans"][0].pop("name"), "without a string 'name'"),
    ],
)
def test_parse_beans_errors(mutate: Any, message: str) -> None:
    body = copy.deepcopy(load(ROOT_BEAN))
    mutate(body)
    with pytest.raises(ParseError, match=message) as err:
        j.parse_beans(body)
    assert "/jmx" in str(err.value)


def test_parse_beans_not_an_object() -> None:
    with pytest.raises(ParseError, match="body is list"):
        j.parse_beans([real_bean()])


def test_junk_anywhere_gives_a_result_or_parse_error() -> None:
    body = load(ROOT_BEAN)
    body["beans"].append(
        renamed("Hadoop:service=NodeManager,name=ContainerResource_container_1_0001_01_000001")
    )
    outcomes = {"ok": 0, "ParseError": 0}
    for mutated in each_mutation(body):
        try:
            beans = j.parse_beans(mutated)
            j.queue_metrics(beans), j.cluster_metrics_bean(beans), j.container_usage(beans)
            outcomes["ok"] += 1
        except ParseError:
            outcomes["ParseError"] += 1
    assert outcomes["ok"] > outcomes["ParseError"] > 0
