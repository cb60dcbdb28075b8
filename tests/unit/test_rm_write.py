"""The write connector's pure parts: request bodies, ids, value comparisons.

What the RM does with them is shown against the real mini cluster in
tests/cluster/test_write_levers.py.
"""

from __future__ import annotations

import pytest

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    AppState,
    ClusterLabels,
    ConfUpdate,
    ContainerSignal,
    ContainerStatus,
    NodeLabels,
    NodeResource,
    Queue,
    conf_equal,
    holds,
)
from yarn_advisor.connectors.rm.write import _conf_xml, conf_key, container_ids, lever


def test_scheduler_conf_xml_global_and_queue_updates() -> None:
    update = ConfUpdate.of({"yarn.scheduler.capacity.node-locality-delay": 7})
    assert _conf_xml("scheduler", update) == (
        "<sched-conf><global-updates><entry><key>yarn.scheduler.capacity.node-locality-delay"
        "</key><value>7</value></entry></global-updates></sched-conf>")
    assert _conf_xml("adhoc", ConfUpdate.of({"maximum-capacity": 60.0,
                                             "acl_submit_applications": "a&b",
                                             "state": None})) == (
        "<sched-conf><update-queue><queue-name>root.adhoc</queue-name><params>"
        "<entry><key>acl_submit_applications</key><value>a&amp;b</value></entry>"
        "<entry><key>maximum-capacity</key><value>60.0</value></entry>"
        "<entry><key>state</key></entry>"  # no value: unset, as a rollback to "absent" needs
        "</params></update-queue></sched-conf>")


def test_conf_keys() -> None:
    assert conf_key("scheduler", "yarn.x") == "yarn.x"
    assert conf_key("root.etl", "capacity") == "yarn.scheduler.capacity.root.etl.capacity"
    assert conf_key("etl", "capacity") == "yarn.scheduler.capacity.root.etl.capacity"


@pytest.mark.parametrize(("cid", "app", "attempt"), [
    ("container_1795308284821_0002_01_000002", "application_1795308284821_0002",
     "appattempt_1795308284821_0002_000001"),
    ("container_e17_1410901177871_0001_01_000005", "application_1410901177871_0001",
     "appattempt_1410901177871_0001_000001"),
])
def test_container_ids(cid: str, app: str, attempt: str) -> None:
    assert container_ids(cid) == (app, attempt)


def test_container_ids_rejects_other_ids() -> None:
    with pytest.raises(ValueError):
        container_ids("application_1_0001")


def test_value_comparisons() -> None:
    assert conf_equal("100", 100) and conf_equal("60.0", 60) and conf_equal(None, None)
    assert conf_equal(True, "true") and not conf_equal("40", None)
    assert not conf_equal("fifo", "fair")
    q = Kind.MOVE_APP_QUEUE
    assert holds(q, Queue("root.etl"), Queue("etl"))
    assert holds(q, Queue("root.a.etl"), Queue("root.a.etl"))
    assert not holds(q, Queue("root.a.etl"), Queue("root.b.etl"))
    assert holds(Kind.REPLACE_NODE_LABELS, NodeLabels(("x",)), NodeLabels(("x",)))
    assert holds(Kind.UPDATE_NODE_RESOURCE, NodeResource(4096, 4), NodeResource(4096))
    assert not holds(Kind.UPDATE_NODE_RESOURCE, NodeResource(4096, 4), NodeResource(4096, 8))
    stop = ContainerSignal("GRACEFUL_SHUTDOWN")
    assert holds(Kind.SIGNAL_CONTAINER, None, stop)  # already gone
    assert not holds(Kind.SIGNAL_CONTAINER, ContainerStatus("RUNNING", "h:1"), stop)
    assert holds(Kind.KILL_APP, AppState("KILLED"), AppState("KILLED"))
    assert not holds(Kind.KILL_APP, AppState("RUNNING"), AppState("KILLED"))
    assert holds(Kind.REMOVE_CLUSTER_LABELS, ClusterLabels(("y",)), ClusterLabels(("x",)))
    assert not holds(Kind.ADD_CLUSTER_LABELS, ClusterLabels(("y",)), ClusterLabels(("x",)))
    conf = Kind.UPDATE_SCHEDULER_CONF
    assert holds(conf, ConfUpdate.of({"a": "10", "b": "x"}), ConfUpdate.of({"a": 10}))
    assert not holds(conf, ConfUpdate.of({"a": None}), ConfUpdate.of({"a": 10}))


def test_unknown_lever() -> None:
    with pytest.raises(ValueError, match="no RM lever"):
        lever(Kind.ADVISE_CONTAINER_SIZE)
