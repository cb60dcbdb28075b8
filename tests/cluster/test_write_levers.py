"""Each RM lever, enforced by the actuator on the real mini cluster, then rolled back.

Every assertion reads the RM back through its own REST API (plain urllib, not
our connector). The cluster is shared by the whole session, so each test
restores what it changed (that restore is the rollback under test).
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from _cluster_writes import actuator_for, rec, records
from yarnmini import MiniCluster, SubmittedApp

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.journal import Entry
from yarn_advisor.advisor.act.rollback import select
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.wiring import build_sensor

pytestmark = pytest.mark.cluster
T = TypeVar("T")
LIGHT_SENSE = {"mapreduce": {"enabled": False}, "nm_jmx": {"enabled": False}, "rm_jmx": False}
DELAY = "yarn.scheduler.capacity.node-locality-delay"


def rm_get(cluster: MiniCluster, path: str) -> Any:
    url = f"{cluster.rm_url}/ws/v1/cluster{path}"
    url += ("&" if "?" in url else "?") + "user.name=yarn-advisor"
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def rm_kill(cluster: MiniCluster, app_id: str) -> None:
    req = urllib.request.Request(
        f"{cluster.rm_url}/ws/v1/cluster/apps/{app_id}/state?user.name=yarn-advisor",
        data=b'{"state":"KILLED"}', method="PUT",
        headers={"Content-Type": "application/json", "X-XSRF-HEADER": "t"})
    with contextlib.suppress(urllib.error.HTTPError):  # already finished
        urllib.request.urlopen(req, timeout=10).close()


def wait_for(cond: Callable[[], T], what: str, timeout: float = 180) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = cond()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(1.0)


def live_containers(cluster: MiniCluster, app_id: str) -> list[dict[str, Any]]:
    attempt = "appattempt_" + app_id[len("application_"):] + "_000001"
    body = rm_get(cluster, f"/apps/{app_id}/appattempts/{attempt}/containers")
    items = body.get("container") or []
    return [items] if isinstance(items, dict) else list(items)


MADE: list[Actuator] = []


@pytest.fixture(autouse=True)
def leave_the_cluster_as_found() -> Iterator[None]:
    """Whatever a failing test left changed is rolled back (a no-op otherwise)."""
    yield
    while MADE:
        a = MADE.pop()
        if a.writer is not None:
            a.rollback(select(a.journal.actions(), since=0))


def actuator(cluster: MiniCluster, state: Path, **settings: Any) -> Actuator:
    cfg = load(None, {"rm": {"urls": [cluster.rm_url]}, "sense": LIGHT_SENSE, "dry_run": False,
                      "state_dir": str(state), "actuator": {"cooldown_s": 0, **settings}})
    MADE.append(actuator_for(cfg, build_sensor(cfg).connectors.rm))
    return MADE[-1]


def enforce(cluster: MiniCluster, state: Path, *recs: dict[str, Any],
            **settings: Any) -> tuple[Actuator, dict[tuple[str, str, str], int]]:
    """One act step on a fresh snapshot of the real cluster."""
    a = actuator(cluster, state, **settings)
    cfg = load(None, {"rm": {"urls": [cluster.rm_url]}, "sense": LIGHT_SENSE})
    snap = build_sensor(cfg).sense(int(time.time() * 1000))
    return a, a.act(list(recs), snap)


def undo_all(a: Actuator) -> list[Entry]:
    assert a.writer is not None
    steps = a.rollback(select(a.journal.actions(), since=0))
    assert all(s.outcome in ("applied", "noop", "irreversible") for s in steps), steps
    return steps


def only(a: Actuator, phase: str) -> dict[str, Any]:
    (r,) = [r for r in records(a.journal) if r["phase"] == phase and r["policy"] == "test"]
    return r


@pytest.fixture(scope="module")
def app(mini_cluster: MiniCluster) -> Iterator[SubmittedApp]:
    """A running distributed-shell app with two long sleeping containers."""
    submitted = mini_cluster.distributed_shell(queue="default", containers=2,
                                               command="sleep 600", container_mb=256,
                                               name="write-levers")
    wait_for(lambda: sum(c.get("containerState") == "RUNNING"
                         for c in live_containers(mini_cluster, submitted.app_id)) >= 3,
             "the shell app's AM and two containers running")
    yield submitted
    rm_kill(mini_cluster, submitted.app_id)
    submitted.proc.kill()


def test_priority_of_a_running_app(mini_cluster: MiniCluster, app: SubmittedApp,
                                   tmp_path: Path) -> None:
    aid = app.app_id
    a, counts = enforce(mini_cluster, tmp_path, rec("set_app_priority", aid, 7, 0))
    assert counts == {("set_app_priority", "test", "applied"): 1}
    assert rm_get(mini_cluster, f"/apps/{aid}/priority") == {"priority": 7}
    assert rm_get(mini_cluster, f"/apps/{aid}")["app"]["priority"] == 7
    assert only(a, "intent")["previous"] == 0
    assert only(a, "result")["answer"] == {"status": 200, "body": {"priority": 7}}
    undo_all(a)
    assert rm_get(mini_cluster, f"/apps/{aid}/priority") == {"priority": 0}


def test_a_denied_queue_is_left_alone(mini_cluster: MiniCluster, app: SubmittedApp,
                                      tmp_path: Path) -> None:
    a, counts = enforce(mini_cluster, tmp_path, rec("set_app_priority", app.app_id, 9, 0),
                        queues={"deny": ["default"]})
    assert counts == {("set_app_priority", "test", "blocked"): 1}
    assert only(a, "blocked")["reason"] == "out_of_scope"
    assert rm_get(mini_cluster, f"/apps/{app.app_id}/priority") == {"priority": 0}


def test_move_to_another_queue(mini_cluster: MiniCluster, app: SubmittedApp,
                               tmp_path: Path) -> None:
    aid = app.app_id
    a, counts = enforce(mini_cluster, tmp_path, rec("move_app_queue", aid, "etl", "root.default"))
    assert counts == {("move_app_queue", "test", "applied"): 1}
    assert rm_get(mini_cluster, f"/apps/{aid}/queue") == {"queue": "root.etl"}
    assert rm_get(mini_cluster, f"/apps/{aid}")["app"]["queue"] == "root.etl"
    undo_all(a)
    assert rm_get(mini_cluster, f"/apps/{aid}/queue") == {"queue": "root.default"}


def conf(cluster: MiniCluster) -> dict[str, str]:
    return {p["name"]: p["value"] for p in rm_get(cluster, "/scheduler-conf")["property"]}


def max_capacity(cluster: MiniCluster, leaf: str) -> float:
    queues = rm_get(cluster, "/scheduler")["scheduler"]["schedulerInfo"]["queues"]["queue"]
    return float(next(q["maxCapacity"] for q in queues if q["queueName"] == leaf))


def test_scheduler_conf_global_and_queue_updates(mini_cluster: MiniCluster,
                                                 tmp_path: Path) -> None:
    a, counts = enforce(mini_cluster, tmp_path,
                        rec("update_scheduler_conf", "scheduler", {DELAY: 7}),
                        rec("update_scheduler_conf", "root.adhoc", {"maximum-capacity": 60}))
    assert counts == {("update_scheduler_conf", "test", "applied"): 2}
    live = conf(mini_cluster)
    assert live[DELAY] == "7"
    assert live["yarn.scheduler.capacity.root.adhoc.maximum-capacity"] == "60"
    assert max_capacity(mini_cluster, "adhoc") == pytest.approx(60, abs=0.01)
    undo_all(a)
    live = conf(mini_cluster)
    assert live[DELAY] == "40"
    assert live["yarn.scheduler.capacity.root.adhoc.maximum-capacity"] == "100"
    assert max_capacity(mini_cluster, "adhoc") == pytest.approx(100, abs=0.01)


def small_node(cluster: MiniCluster) -> dict[str, Any]:
    nodes = rm_get(cluster, "/nodes")["nodes"]["node"]
    return next(n for n in nodes if n["nodeHostName"] == "127.0.0.3")


def test_node_labels_replaced_and_removed(mini_cluster: MiniCluster, tmp_path: Path) -> None:
    nid = small_node(mini_cluster)["id"]
    a, counts = enforce(mini_cluster, tmp_path, rec("replace_node_labels", nid, ["fast"], []))
    assert counts == {("replace_node_labels", "test", "applied"): 1}
    assert small_node(mini_cluster).get("nodeLabels") == ["fast"]
    made = rm_get(mini_cluster, "/get-node-labels")["nodeLabelInfo"]
    made = made if isinstance(made, list) else [made]
    # a label the advisor adds is non-exclusive: other apps may use the idle node
    assert [str(i["exclusivity"]).lower() for i in made if i["name"] == "fast"] == ["false"]
    assert only(a, "result")["answer"]["added_cluster_labels"] == ["fast"]
    undo_all(a)
    assert not small_node(mini_cluster).get("nodeLabels")
    assert "fast" not in json.dumps(rm_get(mini_cluster, "/get-node-labels"))


def test_node_resource_and_new_containers_in_the_headroom(mini_cluster: MiniCluster,
                                                          tmp_path: Path) -> None:
    node = small_node(mini_cluster)
    nid = node["id"]
    assert (node["totalResource"]["memory"], node["totalResource"]["vCores"]) == (3072, 3)
    a, counts = enforce(mini_cluster, tmp_path,
                        rec("update_node_resource", nid, {"memory_mb": 20480, "vcores": 20}))
    assert counts == {("update_node_resource", "test", "applied"): 1}
    total = small_node(mini_cluster)["totalResource"]
    assert (total["memory"], total["vCores"]) == (20480, 20)
    # two 4096 MiB containers: the big node (6144) holds one at most, and the
    # small one could hold none before; now one lands beyond its old 3072 MiB
    big = mini_cluster.distributed_shell(queue="etl", containers=2, command="sleep 60",
                                         container_mb=4096, name="headroom")
    try:
        placed = wait_for(lambda: [c for c in live_containers(mini_cluster, big.app_id)
                                   if c["nodeId"] == nid and c["allocatedMB"] == "4096"],
                          "a 4096 MiB container on the enlarged node")
        assert placed
        assert small_node(mini_cluster)["usedMemoryMB"] > 3072
    finally:
        rm_kill(mini_cluster, big.app_id)
        big.proc.kill()
    undo_all(a)
    total = small_node(mini_cluster)["totalResource"]
    assert (total["memory"], total["vCores"]) == (3072, 3)


def test_a_node_lowered_under_its_allocation_is_killed_on_after_the_timeout(
        mini_cluster: MiniCluster, tmp_path: Path) -> None:
    # OPERA's relief through the RM: a node lowered under what it holds keeps its
    # containers for actuator.overcommit_timeout_ms, then the RM itself kills non-AM
    # containers, newest first, until the node fits (signalContainersIfOvercommitted).
    node = small_node(mini_cluster)
    nid = node["id"]
    shell = mini_cluster.distributed_shell(queue="etl", containers=6, command="sleep 600",
                                           container_mb=512, name="overcommit")
    try:
        def on_node() -> list[dict[str, Any]]:
            return [c for c in live_containers(mini_cluster, shell.app_id)
                    if c["nodeId"] == nid and c.get("containerState") == "RUNNING"
                    and not c["containerId"].endswith("_000001")]
        def running() -> int:
            return sum(c.get("containerState") == "RUNNING"
                       for c in live_containers(mini_cluster, shell.app_id))
        wait_for(lambda: running() >= 7, "the shell's AM and six containers running")

        def settled() -> list[dict[str, Any]]:  # the shell AM may get and start extras
            first = {c["containerId"] for c in on_node()}
            time.sleep(3)
            now = on_node()
            return now if first == {c["containerId"] for c in now} else []
        held = wait_for(settled, "the small node's containers to stay the same for 3 s")
        used = small_node(mini_cluster)["usedMemoryMB"]
        lowered = used - 512  # one 512 MiB container too many
        sent = time.monotonic()
        a, counts = enforce(mini_cluster, tmp_path,
                            rec("update_node_resource", nid,
                                {"memory_mb": lowered, "vcores": node["totalResource"]["vCores"]}),
                            overcommit_timeout_ms=5000)
        assert counts == {("update_node_resource", "test", "applied"): 1}
        ids = {c["containerId"] for c in held}
        assert ids <= {c["containerId"] for c in on_node()}  # the RM waits for the timeout
        wait_for(lambda: small_node(mini_cluster)["usedMemoryMB"] <= lowered,
                 "the RM to kill what the lowered node cannot hold", timeout=90)
        assert time.monotonic() - sent >= 5.0
        left = {c["containerId"] for c in on_node()}
        assert sorted(ids - left) == [max(ids)]  # the newest one
        am = [c for c in live_containers(mini_cluster, shell.app_id)
              if c["containerId"].endswith("_000001")]
        assert am and am[0].get("containerState") == "RUNNING"  # never the AM
    finally:
        rm_kill(mini_cluster, shell.app_id)
        shell.proc.kill()
    undo_all(a)
    assert small_node(mini_cluster)["totalResource"]["memory"] == node["totalResource"]["memory"]


def test_container_signal_is_opt_in_and_ends_the_container(
        mini_cluster: MiniCluster, app: SubmittedApp, tmp_path: Path) -> None:
    aid = app.app_id
    target = next(c["containerId"] for c in live_containers(mini_cluster, aid)
                  if not c["containerId"].endswith("_000001"))
    signal = rec("signal_container", target, "GRACEFUL_SHUTDOWN")
    _, counts = enforce(mini_cluster, tmp_path / "default", signal)
    assert counts == {("signal_container", "test", "blocked"): 1}
    assert any(c["containerId"] == target for c in live_containers(mini_cluster, aid))

    a, counts = enforce(mini_cluster, tmp_path / "opt-in", signal, allow_kill_like=True)
    assert counts == {("signal_container", "test", "applied"): 1}
    assert only(a, "intent")["previous"]["state"] == "RUNNING"
    wait_for(lambda: all(c["containerId"] != target
                         for c in live_containers(mini_cluster, aid)),
             "the signalled container to end", timeout=60)
    assert rm_get(mini_cluster, f"/apps/{aid}/state") == {"state": "RUNNING"}
    assert [s.outcome for s in undo_all(a)] == ["irreversible"]


def test_kill_app_is_opt_in(mini_cluster: MiniCluster, app: SubmittedApp,
                            tmp_path: Path) -> None:
    aid = app.app_id
    _, counts = enforce(mini_cluster, tmp_path / "default", rec("kill_app", aid, "KILLED"))
    assert counts == {("kill_app", "test", "blocked"): 1}
    assert rm_get(mini_cluster, f"/apps/{aid}/state") == {"state": "RUNNING"}
    a, counts = enforce(mini_cluster, tmp_path / "opt-in", rec("kill_app", aid, "KILLED"),
                        allow_kill_like=True)
    assert counts == {("kill_app", "test", "applied"): 1}
    assert rm_get(mini_cluster, f"/apps/{aid}/state") == {"state": "KILLED"}
    assert only(a, "result")["answer"]["status"] in (200, 202)


def test_the_watchdog_trips_a_policy_the_rm_refuses_and_rolls_its_node_back(
        mini_cluster: MiniCluster, tmp_path: Path) -> None:
    """Harm on the real RM: it refuses a policy's writes (invalid scheduler-conf values,
    HTTP 400). Past ``refused_writes`` the watchdog switches the policy to dry-run and
    writes the node it had enlarged back to its size before; the RM shows it."""
    nid = small_node(mini_cluster)["id"]
    a = actuator(mini_cluster, tmp_path, watchdog={"refused_writes": 2})
    cfg = load(None, {"rm": {"urls": [mini_cluster.rm_url]}, "sense": LIGHT_SENSE})
    sensor = build_sensor(cfg)

    def act(*recs: Any) -> dict[tuple[str, str, str], int]:
        return dict(a.act(list(recs), sensor.sense(int(time.time() * 1000))))

    grow = rec("update_node_resource", nid, {"memory_mb": 8192, "vcores": 6}, policy="opera")
    assert act(grow) == {("update_node_resource", "opera", "applied"): 1}
    assert small_node(mini_cluster)["totalResource"]["memory"] == 8192
    for value in ("abc", "xyz"):  # each refused by the RM: not numbers
        bad = rec("update_scheduler_conf", "root.adhoc", {"maximum-capacity": value},
                  policy="opera")
        assert act(bad) == {("update_scheduler_conf", "opera", "refused"): 1}
    assert a.enforcing("opera")
    act()  # the next cycle judges: two refused writes
    assert not a.enforcing("opera")
    total = small_node(mini_cluster)["totalResource"]
    assert (total["memory"], total["vCores"]) == (3072, 3)  # rolled back on the real RM
    tripped = [r for r in records(a.journal) if r["phase"] == "tripped"]
    assert [(r["policy"], r["reason"]) for r in tripped] == [("opera", "refused_writes")]
    steps = [r for r in records(a.journal) if r["policy"] == "rollback" and r["phase"] == "result"]
    assert [(s["kind"], s["target"], s["outcome"]) for s in steps] == [
        ("update_node_resource", nid, "applied")]
    # the policy's next write stays a dry run
    other = rec("update_node_resource", nid, {"memory_mb": 6144, "vcores": 3}, policy="opera")
    assert act(other) in ({("update_node_resource", "opera", "blocked"): 1},
                          {("update_node_resource", "opera", "dry_run"): 1})
    assert small_node(mini_cluster)["totalResource"]["memory"] == 3072
