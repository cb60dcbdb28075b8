"""The write connector's pure parts: request bodies, ids, value comparisons.

What the RM does with them is shown against the real mini cluster in
tests/cluster/test_write_levers.py.
"""

from __future__ import annotations

import pytest

from yarn_advisor.connectors.rm.write import (
    LEVERS,
    _conf_xml,
    conf_equal,
    conf_key,
    container_ids,
    lever,
    same_queue,
)


def test_scheduler_conf_xml_global_and_queue_updates() -> None:
    assert _conf_xml("scheduler", {"yarn.scheduler.capacity.node-locality-delay": 7}) == (
        "<sched-conf><global-updates><entry><key>yarn.scheduler.capacity.node-locality-delay"
        "</key><value>7</value></entry></global-updates></sched-conf>")
    assert _conf_xml("adhoc", {"maximum-capacity": 60.0, "acl_submit_applications": "a&b",
                               "state": None}) == (
        "<sched-conf><update-queue><queue-name>root.adhoc</queue-name><params>"
        "<entry><key>maximum-capacity</key><value>60.0</value></entry>"
        "<entry><key>acl_submit_applications</key><value>a&amp;b</value></entry>"
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
    assert same_queue("root.etl", "etl") and same_queue("root.a.etl", "root.a.etl")
    assert not same_queue("root.a.etl", "root.b.etl")
    assert LEVERS["replace_node_labels"].same(["x"], ["x"])
    assert LEVERS["update_node_resource"].same({"memory_mb": 4096, "vcores": 4},
                                               {"memory_mb": 4096})
    assert LEVERS["signal_container"].same(None, "GRACEFUL_SHUTDOWN")  # already gone
    assert not LEVERS["signal_container"].same({"state": "RUNNING"}, "GRACEFUL_SHUTDOWN")
    assert LEVERS["kill_app"].same("KILLED", "KILLED")
    assert LEVERS["remove_cluster_labels"].same(["y"], ["x"])


def test_unknown_lever() -> None:
    with pytest.raises(ValueError, match="no RM lever"):
        lever("advise_container_size")
