"""ANACRAC's mapping rules on the real mini cluster: placed at submission, rolled back verbatim.

The operator's own JSON mapping rules are set first (as an operator would,
straight through scheduler-conf); the advisor labels one node ``ext``
(non-exclusive), binds queue ``etl`` to it, and writes its rule set. A
distributed-shell app then submitted to ``default`` under the rule's name is
placed into ``etl`` by the RM and its first container (the AM) lands on the
labelled node. ``rollback`` restores the operator's mapping-rule settings byte
for byte, as ``/ws/v1/cluster/scheduler-conf`` reads them back.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from _cluster_writes import rec
from test_write_levers import (
    LIGHT_SENSE,
    conf,
    enforce,
    live_containers,
    rm_get,
    rm_kill,
    small_node,
    undo_all,
    wait_for,
)
from yarnmini import MiniCluster

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.wiring import build_sensor
from yarn_advisor.advisor.model import mapping_rules as mr
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.policies import anacrac
from yarn_advisor.advisor.policies.anacrac.params import Rule

pytestmark = pytest.mark.cluster
OPERATOR = ('{"rules": [\n  {"type": "user", "matches": "nobody-here", "policy": "custom",'
            ' "customPlacement": "root.adhoc"}\n]}')
NAME = "anacrac-mapped"


def put_global(cluster: MiniCluster, settings: dict[str, str | None]) -> None:
    """A global scheduler-conf update, as an operator sends it (not the advisor)."""
    entries = "".join(f"<entry><key>{escape(k)}</key>"
                      + ("" if v is None else f"<value>{escape(v)}</value>") + "</entry>"
                      for k, v in settings.items())
    req = urllib.request.Request(
        f"{cluster.rm_url}/ws/v1/cluster/scheduler-conf?user.name=yarn-advisor",
        data=f"<sched-conf><global-updates>{entries}</global-updates></sched-conf>".encode(),
        method="PUT", headers={"Content-Type": "application/xml", "X-XSRF-HEADER": "t"})
    urllib.request.urlopen(req, timeout=30).close()


def test_a_named_app_is_placed_on_the_label_from_its_first_container(
        mini_cluster: MiniCluster, tmp_path: Path) -> None:
    before = conf(mini_cluster)
    put_global(mini_cluster, {mr.FORMAT_KEY: "json", mr.JSON_KEY: OPERATOR})
    operator = conf(mini_cluster)
    assert operator.get(mr.JSON_KEY) == OPERATOR
    node = small_node(mini_cluster)
    rules = {"rules": [{"name": "anacrac-test", "type": "application", "matches": NAME,
                        "queue": "root.etl"}]}
    a, counts = enforce(
        mini_cluster, tmp_path,
        rec("replace_node_labels", node["id"], ["ext"], []),
        rec("update_scheduler_conf", "root.etl", {
            "accessible-node-labels": "ext", "accessible-node-labels.ext.capacity": 100,
            "default-node-label-expression": "ext"}),
        rec("set_mapping_rules", "scheduler", rules))
    try:
        assert counts[("set_mapping_rules", "test", "applied")] == 1, counts
        live = conf(mini_cluster)
        assert live[mr.FORMAT_KEY] == "json"
        assert mr.advisor_block(live[mr.JSON_KEY])[0]["matches"] == NAME
        app = mini_cluster.distributed_shell(queue="default", containers=1,
                                             command="sleep 5", name=NAME)
        try:
            first = wait_for(lambda: sorted(live_containers(mini_cluster, app.app_id),
                                            key=lambda c: c["containerId"])[:1],
                             "the app's first container")[0]
            placed = rm_get(mini_cluster, f"/apps/{app.app_id}")["app"]
            assert placed["queue"] in ("etl", "root.etl"), placed["queue"]
            assert first["nodeId"] == node["id"], (first, node["id"])
        finally:
            rm_kill(mini_cluster, app.app_id)
            app.proc.kill()
    finally:
        undo_all(a)
        after = conf(mini_cluster)
        assert after.get(mr.JSON_KEY) == operator[mr.JSON_KEY]  # byte for byte
        assert after.get(mr.FORMAT_KEY) == "json"
        assert not small_node(mini_cluster).get("nodeLabels")
        put_global(mini_cluster, {k: before.get(k) for k in (mr.FORMAT_KEY, mr.JSON_KEY)})


def etl_partition(cluster: MiniCluster, label: str) -> dict[str, object]:
    """Queue etl's capacities in ``label``'s partition, as the RM's scheduler reports them."""
    queues = rm_get(cluster, "/scheduler")["scheduler"]["schedulerInfo"]["queues"]["queue"]
    etl = next(q for q in queues if q["queueName"] == "etl")
    parts = etl["capacities"]["queueCapacitiesByPartition"]
    return dict(next(p for p in (parts if isinstance(parts, list) else [parts])
                     if p.get("partitionName") == label))


def test_the_policys_partition_cap_is_the_queues_share_the_rm_then_holds(
        mini_cluster: MiniCluster, tmp_path: Path) -> None:
    """ANACRAC's stand-in for its per-node limit: the rule's queue capped in the label's
    partition at 2 task containers of 256 MiB on its one host plus a 512 MiB AM."""
    node = small_node(mini_cluster)
    cfg = load(None, {"rm": {"urls": [mini_cluster.rm_url]}, "sense": LIGHT_SENSE})
    snap = build_sensor(cfg).sense(int(time.time() * 1000))
    rule = Rule(name="capped", app_names=(NAME,), hosts=(node["nodeHostName"],),
                tasks_maximum=2, task_memory_mb=256, am_memory_mb=512, label="ext",
                target_queue="etl")
    (cap,) = [r for r in anacrac.advise(snap, anacrac.State(), anacrac.Params(rules=(rule,)))
              .recommendations if r.kind is Kind.UPDATE_SCHEDULER_CONF]
    pct = round(100 * (2 * 256 + 512) / int(node["totalResource"]["memory"]), 2)
    key = "accessible-node-labels.ext.maximum-capacity"
    assert (cap.target, cap.value.to_json()) == ("root.etl", {key: pct})
    a, counts = enforce(
        mini_cluster, tmp_path,
        rec("replace_node_labels", node["id"], ["ext"], []),
        rec("update_scheduler_conf", "root.etl", {
            "accessible-node-labels": "ext", "accessible-node-labels.ext.capacity": 100}),
        cap)
    try:
        assert counts[("update_scheduler_conf", "anacrac", "applied")] == 1, counts
        held = etl_partition(mini_cluster, "ext")
        assert (float(held["capacity"]), float(held["maxCapacity"])) == (100.0, pytest.approx(
            pct, abs=0.01))
    finally:
        undo_all(a)
    assert f"yarn.scheduler.capacity.root.etl.{key}" not in conf(mini_cluster)
    assert not small_node(mini_cluster).get("nodeLabels")
