"""connectors.parse_rm on the RM REST doc examples and variants derived from them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from _data import get_examples, junk_outcomes, load, rest_doc

from yarn_advisor.advisor.model.snapshot import ZERO, Resources
from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.rm import parse as p


def stringify(value: Any) -> Any:
    """Every number in a body rendered as a string (as some RM DAOs do)."""
    if isinstance(value, dict):
        return {k: stringify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stringify(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


# --------------------------------------------------------------------------- every example


ENDPOINTS: list[tuple[str, Any]] = [
    (r"/ws/v1/cluster/info$", p.parse_cluster_info),
    (r"/ws/v1/cluster/metrics$", p.parse_cluster_metrics),
    (r"/ws/v1/cluster/scheduler$", lambda b: p.parse_scheduler(b)[1]),
    (r"/ws/v1/cluster/nodes(/[^/]+)?$", p.parse_nodes),
    (r"/ws/v1/cluster/apps(/application_\d+_\d+)?$", p.parse_apps),
    (r"/appattempts$", p.parse_app_attempts),
    (r"/appattempts/[^/]+/containers(/[^/]+)?$", p.parse_containers),
]


def test_every_rm_get_example_of_a_parsed_endpoint_parses() -> None:
    parsed = []
    for name, url, body in get_examples("rm__"):
        path = url.split("?")[0]
        for pattern, parse in ENDPOINTS:
            if re.search(pattern, path):
                result = parse(body)
                assert result, name
                parsed.append(name[:6])
    assert parsed == [f"rm__{n:02d}" for n in (1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13)]


@pytest.mark.parametrize(
    ("prefix", "parse"),
    [
        ("rm__01", p.parse_cluster_info),
        ("rm__02", p.parse_cluster_metrics),
        ("rm__03", p.parse_scheduler),
        ("rm__04", p.parse_scheduler),
        ("rm__05", p.parse_scheduler),
        ("rm__06", p.parse_apps),
        ("rm__09", p.parse_app_attempts),
        ("rm__10", p.parse_containers),
        ("rm__12", p.parse_nodes),
    ],
)
def test_junk_anywhere_gives_a_result_or_parse_error(prefix: str, parse: Any) -> None:
    """Every value of the example replaced in turn by junk of every JSON kind:
    the parser returns or raises ParseError, never anything else."""
    outcomes = junk_outcomes(parse, rest_doc(prefix))
    assert outcomes["ok"] > outcomes["ParseError"] > 0


# --------------------------------------------------------------------------- cluster


def test_cluster_info() -> None:
    info = p.parse_cluster_info(rest_doc("rm__01"))
    assert info.cluster_id == 1324053971963
    assert info.started_on == 1324053971963
    assert (info.state, info.ha_state) == ("STARTED", "ACTIVE")
    assert info.hadoop_version == info.rm_version == "3.0.0-SNAPSHOT"


def test_cluster_info_old_version_without_ha_and_string_id() -> None:
    body = rest_doc("rm__01")
    body["clusterInfo"]["id"] = "1324053971963"
    del body["clusterInfo"]["haState"]
    info = p.parse_cluster_info(body)
    assert (info.cluster_id, info.ha_state) == (1324053971963, "")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "body is list"),
        ({}, "missing top-level key 'clusterInfo'"),
        ({"clusterInfo": "x"}, "clusterInfo is str"),
        ({"clusterInfo": {"state": "STARTED"}}, "without 'id'"),
    ],
)
def test_cluster_info_errors(body: Any, message: str) -> None:
    with pytest.raises(ParseError, match=message) as err:
        p.parse_cluster_info(body)
    assert "/ws/v1/cluster/info" in str(err.value)


def test_cluster_metrics_doc_example() -> None:
    m = p.parse_cluster_metrics(rest_doc("rm__02"))
    assert m.total == Resources(17408, 8)
    assert m.available == Resources(17408, 7)
    assert m.allocated == Resources(0, 1)
    assert (m.active_nodes, m.total_nodes, m.lost_nodes) == (1, 1, 0)


def test_cluster_metrics_production_cluster() -> None:
    m = p.parse_cluster_metrics(load("bk-base-yarn-examples/rm_ws_v1_cluster_metrics.json"))
    assert m.total == Resources(206848, 208)
    assert m.allocated == Resources(181248, 70)
    assert m.available == Resources(25600, 138)
    assert (m.apps_running, m.apps_completed, m.apps_submitted) == (32, 4971, 5007)
    assert (m.active_nodes, m.total_nodes, m.lost_nodes) == (5, 6, 1)
    assert m.containers_allocated == 70
    assert m.decommissioning_nodes == 0  # field absent in that version


def test_cluster_metrics_every_field_distinct() -> None:
    # pbwebmedia's example numbers each field 1..25, so a swapped field shows.
    m = p.parse_cluster_metrics(load("pbwebmedia-yarn-exporter/example_metrics.json"))
    assert (m.apps_submitted, m.apps_completed, m.apps_pending) == (1, 2, 3)
    assert (m.apps_running, m.apps_failed, m.apps_killed) == (4, 5, 6)
    assert m.reserved == Resources(7, 10)
    assert m.available == Resources(8, 11)
    assert m.allocated == Resources(9, 12)
    assert m.total == Resources(16, 17)
    assert (m.containers_allocated, m.containers_reserved, m.containers_pending) == (13, 14, 15)
    assert (m.total_nodes, m.lost_nodes, m.unhealthy_nodes) == (18, 19, 20)
    assert (m.decommissioning_nodes, m.active_nodes) == (21, 24)


def test_cluster_metrics_string_numbers_and_derived_total() -> None:
    body = stringify(load("bk-base-yarn-examples/rm_ws_v1_cluster_metrics.json"))
    assert p.parse_cluster_metrics(body) == p.parse_cluster_metrics(
        load("bk-base-yarn-examples/rm_ws_v1_cluster_metrics.json")
    )
    del body["clusterMetrics"]["totalMB"], body["clusterMetrics"]["totalVirtualCores"]
    assert p.parse_cluster_metrics(body).total == Resources(181248 + 25600, 70 + 138)


# --------------------------------------------------------------------------- scheduler


def test_capacity_scheduler() -> None:
    kind, queues = p.parse_scheduler(rest_doc("rm__03"))
    assert kind == "capacityScheduler"
    assert [q.path for q in queues] == ["root", "root.a", "root.b", "root.c"]
    root, a, b, c = queues
    assert (root.parent, root.is_leaf, root.children) == ("", False, ("root.a", "root.b", "root.c"))
    assert (root.capacity, root.absolute_capacity, root.max_capacity) == (100.0, 100.0, 100.0)
    assert root.state == "RUNNING" and root.ordering_policy == "utilization"
    assert (a.name, a.parent, a.is_leaf) == ("a", "root", True)
    assert (a.capacity, a.max_capacity, a.absolute_max_capacity) == (12.5, 50.0, 50.0)
    assert (b.capacity, c.capacity, c.absolute_capacity) == (50.0, 37.5, 37.5)
    assert a.node_labels == ("*",) and a.ordering_policy == "fifo"
    assert all(q.scheduler_type == "capacityScheduler" for q in queues)


def test_capacity_scheduler_2x_shape_nested_and_derived() -> None:
    """No queuePath / absolute capacities (2.x), a parent holding b and c,
    a single child given as an object, numbers as strings."""
    body = rest_doc("rm__03")
    info = body["scheduler"]["schedulerInfo"]
    a, b, c = info["queues"]["queue"]
    for q in (a, b, c):
        for key in ("queuePath", "absoluteCapacity", "absoluteMaxCapacity", "queueType"):
            q.pop(key)
    b["numApplications"], c["numApplications"] = "3", 4
    b["resourcesUsed"] = {"memory": "2048", "vCores": "2"}
    del a["numApplications"], a["resourcesUsed"]
    a["type"] = "capacitySchedulerQueueInfo"
    a["queues"] = {"queue": [b, c]}
    c["queues"] = {}
    info["queues"]["queue"] = a  # a single child as an object
    _, queues = p.parse_scheduler(body)
    by_path = {q.path: q for q in queues}
    assert list(by_path) == ["root", "root.a", "root.a.b", "root.a.c"]
    assert by_path["root.a"].children == ("root.a.b", "root.a.c")
    assert not by_path["root.a"].is_leaf and by_path["root.a.c"].is_leaf
    assert by_path["root.a.b"].absolute_capacity == pytest.approx(12.5 * 50 / 100)
    assert by_path["root.a.b"].absolute_max_capacity == pytest.approx(50 * 100 / 100)
    assert by_path["root.a"].num_applications == 7  # summed from the children
    assert by_path["root"].num_applications == 7
    assert by_path["root.a"].used == Resources(2048, 2)


def test_fair_scheduler() -> None:
    kind, queues = p.parse_scheduler(rest_doc("rm__05"))
    assert kind == "fairScheduler"
    paths = [q.path for q in queues]
    assert paths == [
        "root",
        "root.default",
        "root.sample_queue",
        "root.sample_queue.sample_sub_queue",
    ]
    root, default, sample, sub = queues
    assert root.children == ("root.default", "root.sample_queue")
    assert (sample.is_leaf, default.is_leaf, sub.is_leaf) == (False, True, True)
    assert (sub.name, sub.parent) == ("sample_sub_queue", "root.sample_queue")
    assert sub.min_share == Resources(5000, 0)
    assert sub.fair_share == Resources(10000, 0)
    assert sample.max_share == Resources(8192, 0)
    assert root.fair_share == Resources(8192, 8)
    # steady fair share 4096 of 8192 at every level below root
    assert (default.capacity, default.absolute_capacity) == (50.0, 50.0)
    assert (sub.capacity, sub.absolute_capacity) == (100.0, 50.0)
    assert sample.max_capacity == 100.0 and sample.ordering_policy == "fair"
    assert all(q.scheduler_type == "fairScheduler" for q in queues)


def test_fair_scheduler_2x_bare_child_list_and_no_type() -> None:
    body = rest_doc("rm__05")
    info = body["scheduler"]["schedulerInfo"]
    root = info["rootQueue"]
    root["childQueues"] = root["childQueues"]["queue"]  # 2.x: a bare list
    root["childQueues"][0]["numActiveApps"] = "2"
    root["childQueues"][0]["usedResources"] = {"memory": 2048, "vCores": 1}
    del info["type"]
    kind, queues = p.parse_scheduler(body)
    assert kind == "fairScheduler"
    assert len(queues) == 4
    assert queues[1].num_active_applications == 2 and queues[1].num_applications == 2
    assert queues[0].num_active_applications == 2  # root sums its children
    assert queues[1].used_capacity == pytest.approx(50.0)  # 2048 of a 4096 steady share
    assert queues[1].absolute_used_capacity == pytest.approx(25.0)


def test_fifo_scheduler() -> None:
    kind, queues = p.parse_scheduler(rest_doc("rm__04"))
    assert kind == "fifoScheduler"
    (q,) = queues
    assert (q.path, q.is_leaf, q.state) == ("root", True, "RUNNING")
    assert q.capacity == 100.0
    assert q.used_capacity == 0.0  # "NaN" in the example


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"scheduler": {}}, "without a schedulerInfo"),
        ({"scheduler": {"schedulerInfo": {"type": "x", "a": 1}}}, "unknown scheduler type"),
        ({"scheduler": {"schedulerInfo": {"type": "fairScheduler"}}}, "without a rootQueue"),
        ({"schedulerInfo": {}}, "missing top-level key 'scheduler'"),
    ],
)
def test_scheduler_errors(body: Any, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        p.parse_scheduler(body)


def test_capacity_queue_item_not_an_object() -> None:
    body = rest_doc("rm__03")
    body["scheduler"]["schedulerInfo"]["queues"]["queue"].append("junk")
    with pytest.raises(ParseError, match="queue item is str"):
        p.parse_scheduler(body)


# --------------------------------------------------------------------------- nodes


def test_nodes_doc_example() -> None:
    nodes = p.parse_nodes(rest_doc("rm__12"))
    assert len(nodes) == 2
    n = nodes[0]
    assert n.id == "host.domain.com:54158" and n.host == "host.domain.com"
    assert (n.rack, n.state, n.http_address) == ("/default-rack", "RUNNING", "host.domain.com:8042")
    assert n.total == Resources(8192, 8)  # no totalResource: used + available
    assert n.available == Resources(8192, 8) and n.used == ZERO
    assert n.version == "3.0.0-alpha2-SNAPSHOT" and n.last_health_update == 1476995346399
    assert n.labels == ()
    assert n.utilization is not None
    assert n.utilization.node_pmem_mb == 1027
    assert n.utilization.node_cpu == pytest.approx(0.016661113128066063)


def test_single_node_with_total_resource() -> None:
    (n,) = p.parse_nodes(rest_doc("rm__13"))
    assert n.total == Resources(2048, 5)
    assert n.utilization is not None and n.utilization.node_pmem_mb == 968


def test_nodes_variants() -> None:
    body = rest_doc("rm__12")
    first, second = body["nodes"]["node"]
    del second["resourceUtilization"]
    second["nodeLabels"] = "gpu"
    first["nodeLabels"] = ["x", "y"]
    first["usedResource"] = {"memory": 1024, "vCores": 1}
    first["availableResource"] = {"memory": 7168, "vCores": 7}
    second.update(stringify({"usedMemoryMB": 2048, "availMemoryMB": 6144, "numContainers": 2}))
    a, b = p.parse_nodes(body)
    assert (a.labels, b.labels) == (("x", "y"), ("gpu",))
    assert (a.used, a.available, a.total) == (
        Resources(1024, 1),
        Resources(7168, 7),
        Resources(8192, 8),
    )
    assert b.utilization is None
    assert (b.used, b.total, b.num_containers) == (Resources(2048, 0), Resources(8192, 8), 2)
    body["nodes"]["node"] = first  # one node as an object
    assert len(p.parse_nodes(body)) == 1


@pytest.mark.parametrize(
    "empty", [{"nodes": None}, {"nodes": {}}, {"nodes": {"node": None}}, {"nodes": {"node": []}}]
)
def test_no_nodes(empty: Any) -> None:
    assert p.parse_nodes(empty) == ()


def test_node_errors() -> None:
    body = rest_doc("rm__12")
    del body["nodes"]["node"][1]["id"]
    with pytest.raises(ParseError, match="node without 'id'"):
        p.parse_nodes(body)
    with pytest.raises(ParseError, match="nodes is str"):
        p.parse_nodes({"nodes": "none"})
    with pytest.raises(ParseError, match="missing top-level key 'nodes'"):
        p.parse_nodes({"apps": None})


# --------------------------------------------------------------------------- apps


def test_apps_doc_example() -> None:
    apps = p.parse_apps(rest_doc("rm__06"))
    assert [a.id for a in apps] == [
        "application_1476912658570_0002",
        "application_1476912658570_0001",
    ]
    a = apps[0]
    assert (a.name, a.user, a.queue, a.type) == ("word count", "user2", "default", "MAPREDUCE")
    assert (a.state, a.final_status, a.priority, a.progress) == ("FINISHED", "SUCCEEDED", -1, 100.0)
    assert a.tags == ()
    assert (a.started_time, a.finished_time, a.elapsed_time) == (
        1476913457320,
        1476913761898,
        304578,
    )
    assert (a.memory_seconds, a.vcore_seconds) == (206464, 201)
    assert len(a.resource_requests) == 3
    off_switch, host1, _ = a.resource_requests
    assert (off_switch.priority, off_switch.resource_name) == (0, "*")  # {"priority": 0}
    assert off_switch.capability == Resources(4096, 1)  # "virtualCores"
    assert (host1.priority, host1.resource_name, host1.relax_locality) == (
        20,
        "host1.domain.com",
        True,
    )
    assert a.am_resource == Resources(4096, 1)
    assert a.pending == ZERO
    assert apps[1].resource_requests[2].resource_name == "host4.domain.com"


def test_single_app_finished_minus_one() -> None:
    (a,) = p.parse_apps(rest_doc("rm__08"))
    assert a.id == "application_1476912658570_0002" and a.type == "YARN"
    assert a.allocated == ZERO and a.running_containers == 0  # -1 in the body
    assert a.resource_requests == () and a.am_resource == ZERO


def test_accepted_app_minimal_fields() -> None:
    (a,) = p.parse_apps(rest_doc("intro__01"))
    assert (a.id, a.state, a.final_status) == (
        "application_1324057493980_0001",
        "ACCEPTED",
        "UNDEFINED",
    )
    assert a.am_host_http_address == "amNM:2" and a.type == "" and a.memory_seconds == 0


def test_apps_newer_shapes() -> None:
    body = rest_doc("rm__06")
    app = body["apps"]["app"][0]
    app.update(
        state="RUNNING",
        applicationTags="etl, nightly,,",
        priority="5",
        allocatedMB="8192",
        allocatedVCores="3",
        runningContainers="3",
    )
    star = app["resourceRequests"][0]
    star.update(
        priority=20,
        numContainers="2",
        capability={"memory": 2048, "vCores": 2},
        executionTypeRequest={"executionType": "OPPORTUNISTIC", "enforceExecutionType": False},
        allocationRequestId=7,
    )
    app["resourceRequests"] = star  # one request as an object
    app["resourceInfo"] = {
        "resourceUsagesByPartition": [
            {"partitionName": "", "amUsed": {"memory": 1536, "vCores": 1}},
            {"partitionName": "gpu", "amUsed": {"memory": 0, "vCores": 0}},
        ]
    }
    a = p.parse_apps(body)[0]
    assert a.tags == ("etl", "nightly") and a.priority == 5
    assert a.allocated == Resources(8192, 3) and a.running_containers == 3
    (rr,) = a.resource_requests
    assert (rr.priority, rr.num_containers, rr.capability) == (20, 2, Resources(2048, 2))
    assert (rr.execution_type, rr.allocation_request_id) == ("OPPORTUNISTIC", 7)
    assert a.pending == Resources(4096, 4)
    assert a.am_resource == Resources(1536, 1)  # resourceInfo wins over the requests


@pytest.mark.parametrize(
    "empty", [{"apps": None}, {"apps": {}}, {"apps": {"app": None}}, {"apps": {"app": []}}]
)
def test_no_apps(empty: Any) -> None:
    assert p.parse_apps(empty) == ()


def test_app_errors() -> None:
    body = rest_doc("rm__06")
    del body["apps"]["app"][0]["id"]
    with pytest.raises(ParseError, match="app without 'id'"):
        p.parse_apps(body)
    body = rest_doc("rm__08")
    body["app"]["id"] = 2
    with pytest.raises(ParseError, match="id=2"):
        p.parse_apps(body)
    with pytest.raises(ParseError, match="body is str"):
        p.parse_apps("apps")
    body = rest_doc("rm__06")
    body["apps"]["app"][1]["resourceRequests"] = "none"
    with pytest.raises(ParseError, match="resourceRequests is str"):
        p.parse_apps(body)


def test_parse_does_not_mutate_the_body() -> None:
    body = rest_doc("rm__06")
    before = copy.deepcopy(body)
    p.parse_apps(body)
    assert body == before


# --------------------------------------------------------------------------- attempts


def test_app_attempts_doc_example() -> None:
    (att,) = p.parse_app_attempts(rest_doc("rm__09"))
    # the 2.x doc gives only "id": 1; the full id comes from the AM container
    assert att.id == "appattempt_1326821518301_0005_000001"
    assert att.app_id == "application_1326821518301_0005"
    assert att.container_id == "container_1326821518301_0005_01_000001"
    assert (att.node_id, att.state, att.start_time) == (
        "host.domain.com:8041",
        "RUNNING",
        1326381444693,
    )


def test_app_attempts_newer_and_history_shapes() -> None:
    body = rest_doc("rm__09")
    item = body["appAttempts"]["appAttempt"][0]
    item.update(id=2, appAttemptId="appattempt_1326821518301_0005_000002", finishedTime="17")
    body["appAttempts"]["appAttempt"] = item
    (att,) = p.parse_app_attempts(body)
    assert (att.id, att.finished_time) == ("appattempt_1326821518301_0005_000002", 17)
    (ahs,) = p.parse_app_attempts({"appAttempts": rest_doc("ats__08")})
    assert ahs.id == "appattempt_1430424020775_0001_000001"
    assert ahs.container_id == "container_1430424020775_0001_01_000001"


def test_app_attempt_id_from_app_id_argument() -> None:
    body = rest_doc("rm__09")
    item = body["appAttempts"]["appAttempt"][0]
    del item["containerId"]
    item["id"] = "3"
    (att,) = p.parse_app_attempts(body, app_id="application_1326821518301_0005")
    assert att.id == "appattempt_1326821518301_0005_000003"
    with pytest.raises(ParseError, match="without a usable id"):
        p.parse_app_attempts(body)
    assert p.parse_app_attempts({"appAttempts": None}) == ()


# --------------------------------------------------------------------------- containers


def test_containers_doc_example_string_numbers() -> None:
    for prefix in ("rm__10", "rm__11"):
        (c,) = p.parse_containers(rest_doc(prefix))
        assert c.id == "container_1531404209605_0008_01_000001"
        assert c.app_id == "application_1531404209605_0008"
        assert c.node_id == "host.domain.com:37814"
        assert c.allocated == Resources(1536, 1)
        assert (c.priority, c.started_time, c.state) == (0, 1531405909444, "RUNNING")
        assert c.is_am and c.execution_type == "GUARANTEED" and c.usage is None


def test_containers_variants() -> None:
    body = rest_doc("rm__10")
    am = body["containers"]["container"][0]
    task = copy.deepcopy(am)
    task.update(
        containerId="container_e17_1531404209605_0008_01_000002",
        allocatedMB=None,
        allocatedVCores=None,
        priority=20,
        executionType="OPPORTUNISTIC",
    )
    task["allocatedResources"] = [
        {"key": "memory-mb", "value": "3072"},
        {"key": "vcores", "value": "2"},
    ]
    del task["assignedNodeId"]
    body["containers"]["container"].append(task)
    _, t = p.parse_containers(body)
    assert t.app_id == "application_1531404209605_0008" and not t.is_am
    assert t.allocated == Resources(3072, 2) and t.priority == 20
    assert t.node_id == "host.domain.com:37814" and t.execution_type == "OPPORTUNISTIC"
    ahs = p.parse_containers({"containers": rest_doc("ats__10")})
    assert len(ahs) == 7 and {c.app_id for c in ahs} == {"application_1430424020775_0001"}
    assert p.app_id_of_container("container_e17_1531404209605_0008_01_000002") == (
        "application_1531404209605_0008"
    )


@pytest.mark.parametrize(
    ("cid", "message"),
    [
        (None, "container without 'containerId'"),
        ("c_1_2", "malformed containerId"),
        (5, "containerId=5"),
    ],
)
def test_container_errors(cid: Any, message: str) -> None:
    body = rest_doc("rm__11")
    body["container"]["containerId"] = cid
    with pytest.raises(ParseError, match=message):
        p.parse_containers(body)


def test_no_containers() -> None:
    assert p.parse_containers({"containers": None}) == ()
    assert p.parse_containers({"containers": {"container": {}}}) == ()


def test_a_container_built_into_its_slots_equals_the_constructors() -> None:
    """parse_rm._new_container skips Container.__init__ for speed: same value, same
    hash, still frozen."""
    from dataclasses import FrozenInstanceError

    from yarn_advisor.advisor.model.snapshot import Container, Resources
    from yarn_advisor.connectors.rm.parse import _new_container

    args = ("container_1_0001_01_000002", "application_1_0001", "n1:45454",
            Resources(1536, 2), 20, 1531404209605, "RUNNING", "OPPORTUNISTIC", True)
    fast, slow = _new_container(*args), Container(*args)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert fast.usage is None and fast.execution_type == "OPPORTUNISTIC" and fast.is_am
    with pytest.raises(FrozenInstanceError):
        fast.state = "COMPLETE"  # type: ignore[misc]
