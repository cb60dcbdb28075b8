"""The advisor's connectors and levers against SLS: a real RM with 500 simulated nodes.

One SLS (``sls_cluster``, session) replays the standard trace, so every lever
meets a busy CapacityScheduler with pending demand. Reads go through the
project's own connectors (the sensor, the writer over ``RMLevers``) and are checked against
the RM's REST API read directly. Every test restores what it changed.
What SLS cannot show (its NMs ignore container signals, run no web server,
report a fixed utilization) is asserted as the README describes it.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from rmwrites import JsonWrites
from slsrun import SlsCluster
from workload import FIXTURES, TraceJob, TraceSpec, make_nodes

from yarn_advisor.advisor.act.actuator import open_journal
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor, http_client
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.policies import params_models
from yarn_advisor.config.schema import load
from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.jmx.client import JmxClient
from yarn_advisor.connectors.mapreduce.client import MapReduceClient
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers

pytestmark = pytest.mark.sls
ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def wait_until(cond: Callable[[], T], what: str, timeout: float = 120,
               every: float = 1.0) -> T:
    """Poll ``cond()`` until it returns something truthy; that value is returned."""
    deadline = time.monotonic() + timeout
    while True:
        found = cond()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


@pytest.fixture(scope="module")
def writer(sls_cluster: SlsCluster) -> JsonWrites:
    cfg = load(None, {"rm": {"urls": [sls_cluster.rm_url]}})
    return JsonWrites(RMClient(http_client(cfg), [sls_cluster.rm_url]))


def apps_in(c: SlsCluster, states: str, queue: str = "") -> list[dict[str, Any]]:
    q = f"&queue={queue}" if queue else ""
    body = c.get(f"/ws/v1/cluster/apps?states={states}{q}").get("apps") or {}
    return list(body.get("app") or [])


def app(c: SlsCluster, app_id: str) -> dict[str, Any]:
    return dict(c.get(f"/ws/v1/cluster/apps/{app_id}")["app"])


def node(c: SlsCluster, node_id: str) -> dict[str, Any]:
    return dict(c.get(f"/ws/v1/cluster/nodes/{node_id}")["node"])


def busy(c: SlsCluster) -> dict[str, Any]:
    """Cluster metrics once there is demand the cluster cannot place at once."""
    def pending() -> dict[str, Any] | None:
        m = c.get("/ws/v1/cluster/metrics")["clusterMetrics"]
        return m if m["pendingVirtualCores"] > 0 and m["appsRunning"] > 20 else None
    return wait_until(pending, "pending demand", timeout=180)


def without_am(c: SlsCluster) -> list[dict[str, Any]]:
    """adhoc's apps that wait for their AM: ACCEPTED with no AM container yet (an app
    stays ACCEPTED a moment after its AM container is placed, until it registers)."""
    return [a for a in apps_in(c, "ACCEPTED", "adhoc") if not a.get("amHostHttpAddress")]


def adhoc_queue(c: SlsCluster) -> dict[str, Any]:
    queues = c.get("/ws/v1/cluster/scheduler")["scheduler"]["schedulerInfo"]["queues"]["queue"]
    return dict(next(q for q in queues if q["queueName"] == "adhoc"))


def trace_of(c: SlsCluster) -> dict[str, TraceJob]:
    """Application id -> the trace job it replays (recorded span, task count)."""
    ids = c.app_ids()
    return {ids[j.job_id]: j for j in c.trace_jobs() if j.job_id in ids}


def test_one_sense_cycle_sees_every_node_and_queue(sls_cluster: SlsCluster) -> None:
    c = sls_cluster
    busy(c)
    # what one cycle reads, not how fast: the SLS RM shares this machine with the
    # other shard's clusters, and a loaded run once took the default 20 s deadline
    sensor = build_sensor(load(None, {"rm": {"urls": [c.rm_url]}, "sense": {"deadline_s": 90}}))
    before = {a["id"] for a in apps_in(c, "RUNNING")}
    t0 = time.monotonic()
    snap = sensor.sense(int(time.time() * 1000))
    print(f"one sense cycle of {c.nodes} nodes: {time.monotonic() - t0:.1f}s",
          {k: round(v.seconds, 1) for k, v in sensor.stats.items()})
    throughout = before & {a["id"] for a in apps_in(c, "RUNNING")}

    expected = {n.host: n for n in make_nodes(c.nodes, c.racks)}
    assert len(snap.nodes) == c.nodes == 500
    assert {n.host for n in snap.nodes} == set(expected)
    assert all(n.state == "RUNNING" for n in snap.nodes)
    assert len({n.rack for n in snap.nodes}) == c.racks
    for n in snap.nodes:
        assert (n.total.memory_mb, n.total.vcores) == (expected[n.host].memory_mb,
                                                        expected[n.host].vcores)
    assert sum(n.total.vcores for n in snap.nodes) == sum(n.vcores for n in expected.values())
    assert {q.name for q in snap.queues if q.is_leaf} == {"default", "etl", "adhoc"}
    assert throughout and throughout <= {a.id for a in snap.apps if a.state == "RUNNING"}
    assert snap.containers, "containers of running apps (appattempts/containers) were read"
    assert snap.sources["rm_jmx"] and snap.queue_metrics
    assert snap.sources["scheduler_conf"] and snap.scheduler_conf
    assert snap.rm_conf.get("yarn.cluster.max-application-priority") == "10"
    # SLS's NMs have no web server: NM JMX degrades, the cycle does not fail
    assert snap.sources["nm_jmx"] is False
    # and the utilization they report is SLS's fixed share of each node
    n = snap.nodes[0]
    assert n.utilization is not None
    assert n.utilization.node_pmem_mb == round(n.total.memory_mb * c.nm_utilization_ratio)


def test_one_enforce_advisor_cycle_senses_every_node_and_its_priorities_hold(
        sls_cluster: SlsCluster, tmp_path: Path) -> None:
    """The daemon as bench/bench_gain_sls.py runs it (examples/sls-gain.yaml, enforce):
    one cycle's snapshot has all 500 nodes, and every priority its actuator applied
    is what SLS's RM now shows for that app, as the journal says."""
    c = sls_cluster
    wait_until(lambda: len(apps_in(c, "ACCEPTED")) >= 2, "apps waiting for an AM")
    # am_first_alone: SLS's apps give HaSTE nothing else to rank, and by default it then
    # writes nothing (bench/GAIN_SLS.md); here the write path is what is checked
    cfg = load(ROOT / "examples" / "sls-gain.yaml",
               {"rm": {"urls": [c.rm_url]}, "state_dir": str(tmp_path),
                "policies": {"haste": {"params": {"am_first_alone": True}}}}, params_models())
    sensor = build_sensor(cfg)
    writer = Writer(RMLevers(sensor.connectors.rm, cfg.actuator.overcommit_timeout_ms))
    advisor = build_advisor(cfg, sensor, writer, persist=False)
    def applied_cycle() -> CycleReport | None:
        r = advisor.run_once()
        return r if any(outcome == "applied" for _, _, outcome in r.actions) else None

    report = wait_until(applied_cycle, "a cycle that applied an action", timeout=90, every=2)
    snap = report.snapshot
    assert report.outcome == "ok" and snap is not None
    assert len(snap.nodes) == c.nodes == 500
    assert {n.host for n in snap.nodes} == {n.host for n in make_nodes(c.nodes, c.racks)}
    applied = [a for a in open_journal(cfg).actions() if a.outcome == "applied"]
    assert applied, f"nothing applied: {dict(report.actions)}"
    assert {a.kind for a in applied} == {Kind.SET_APP_PRIORITY}
    for a in applied:  # the RM holds what the journal says (read directly, not by the writer)
        assert app(c, a.target)["priority"] == int(a.value), a
        assert a.previous != a.value


def test_apps_start_at_their_trace_times_and_keep_their_times(sls_cluster: SlsCluster) -> None:
    c = sls_cluster
    wait_until(lambda: sum(t.state == "FINISHED" for t in c.app_times()) >= 20,
               "20 finished apps", timeout=180)
    starts = {j.job_id: j.start_ms for j in c.trace_jobs()}
    times = c.app_times()
    late = [t.started_ms - c.trace_zero_ms - starts[t.job_id] for t in times]
    # submitted when the trace says (SLS alone submits every Rumen job at 0)
    assert min(late) >= -1000 and sorted(late)[len(late) // 2] < 3000, late[:20]
    assert max(starts[t.job_id] for t in times) > 20_000
    done = [t for t in times if t.state == "FINISHED"]
    assert all(t.started_ms < t.finished_ms for t in done)
    # SLS's MockAMLauncher reports the AM launch without a time: launchTime is -1
    assert {t.launched_ms for t in done} == {-1}
    assert all(t.queue in ("root.default", "root.etl", "root.adhoc", "default", "etl", "adhoc")
               for t in times)


def test_priority_reorders_pending_apps_in_a_fifo_leaf_queue(
        sls_cluster: SlsCluster, writer: JsonWrites) -> None:
    """Squeeze adhoc (scheduler-conf lever) until its apps wait as ACCEPTED, raise
    the newest one's priority: it must be activated before older waiting apps.

    The AM share is cut to 60% of the AMs adhoc runs now (max capacity 20% of
    the cluster, so the AM limit is that share of 20% of its vcores), so new
    apps wait until a few running ones end. A high user-limit-factor lifts the
    per-user AM limit to the queue's: activation then follows the queue's
    ordering policy alone (priority, then submission)."""
    c = sls_cluster
    busy(c)
    active = adhoc_queue(c)["numActiveApplications"]
    total = c.get("/ws/v1/cluster/metrics")["clusterMetrics"]["totalVirtualCores"]
    share = round(max(1, int(active * 0.6)) / (0.2 * total), 4)
    squeeze = {"maximum-capacity": 20, "maximum-am-resource-percent": share,
               "user-limit-factor": 100}
    out = writer.apply("update_scheduler_conf", "adhoc", squeeze)
    try:
        assert out.status == "applied" and out.observed == {
            "maximum-capacity": "20", "maximum-am-resource-percent": str(share),
            "user-limit-factor": "100"}
        assert adhoc_queue(c)["maxCapacity"] == pytest.approx(20.0)
        waiting = wait_until(lambda: (w if len(w := without_am(c)) >= 6 else None),
                             "6 apps waiting in adhoc", timeout=180)
        newest = max(waiting, key=lambda a: a["startedTime"])
        older = {a["id"] for a in waiting if a["id"] != newest["id"]}
        raised = writer.apply("set_app_priority", newest["id"], 9)
        assert (raised.previous, raised.status, raised.observed) == (0, "applied", 9)
        assert app(c, newest["id"])["priority"] == 9

        def started() -> set[str] | None:
            now_waiting = {a["id"] for a in without_am(c)}
            if newest["id"] in now_waiting:
                return None
            return now_waiting & older or {"none"}

        # polled often: on a loaded machine several apps may start between two polls
        still_waiting = wait_until(started, "the raised app to start", timeout=240, every=0.2)
        assert still_waiting != {"none"}, "every older app started first: priority ignored"
    finally:
        writer.apply("update_scheduler_conf", "adhoc", {
            "maximum-capacity": 100, "maximum-am-resource-percent": None,
            "user-limit-factor": None})


def test_queue_move_and_the_simulated_am_still_finishes(
        sls_cluster: SlsCluster, writer: JsonWrites) -> None:
    c = sls_cluster
    busy(c)
    jobs = trace_of(c)
    candidates = [a for a in apps_in(c, "RUNNING", "etl")
                  if a["id"] in jobs and jobs[a["id"]].span_ms < 40_000]
    target = max(candidates, key=lambda a: a["startedTime"])
    out = writer.apply("move_app_queue", target["id"], "default")
    assert (out.previous, out.status, out.observed) == ("root.etl", "applied", "root.default")
    final = wait_until(lambda: (a if (a := app(c, target["id"]))["state"] != "RUNNING"
                                else None), "the moved app to finish", timeout=240, every=2)
    assert (final["state"], final["finalStatus"], final["queue"]) == (
        "FINISHED", "SUCCEEDED", "root.default")


@pytest.fixture()
def small_node(sls_cluster: SlsCluster, writer: JsonWrites) -> Iterator[dict[str, Any]]:
    """A busy 2-vcore node; its size and labels are restored afterwards."""
    c = sls_cluster
    busy(c)
    nodes = c.get("/ws/v1/cluster/nodes")["nodes"]["node"]
    pick = next(n for n in nodes if n["totalResource"]["vCores"] == 2
                and n["usedResource"]["vCores"] == 2 and not n.get("nodeLabels"))
    total = {"memory_mb": pick["totalResource"]["memory"], "vcores": 2}
    yield pick
    writer.apply("replace_node_labels", pick["id"], [])
    writer.apply("remove_cluster_labels", "", ["sls_test"])
    writer.apply("update_node_resource", pick["id"], total)


def test_node_resource_changes_what_the_scheduler_places(
        sls_cluster: SlsCluster, writer: JsonWrites, small_node: dict[str, Any]) -> None:
    c = sls_cluster
    out = writer.apply("update_node_resource", small_node["id"], {"memory_mb": 8192, "vcores": 8})
    assert out.status == "applied" and out.observed == {"memory_mb": 8192, "vcores": 8}
    assert node(c, small_node["id"])["totalResource"]["vCores"] == 8
    grown = wait_until(lambda: (n if (n := node(c, small_node["id"]))["usedResource"]["vCores"] > 2
                                else None), "containers beyond the old size", timeout=60)
    assert grown["numContainers"] > 2


def test_exclusive_label_keeps_unlabelled_work_off_the_node(
        sls_cluster: SlsCluster, writer: JsonWrites, small_node: dict[str, Any]) -> None:
    """Labelled (an exclusive partition the operator made) and then grown, the
    node gets no new container; the same growth alone fills it within seconds
    (test above). The writer uses the operator's label as it is."""
    c = sls_cluster
    writer.send("POST", "/add-node-labels", json_body={
        "nodeLabelInfo": [{"name": "sls_test", "exclusivity": "true"}]})
    out = writer.apply("replace_node_labels", small_node["id"], ["sls_test"])
    assert out.status == "applied" and out.observed == ["sls_test"]
    assert out.answer["added_cluster_labels"] == []
    assert "sls_test" in json.dumps(c.get("/ws/v1/cluster/get-node-labels"))
    before = node(c, small_node["id"])["numContainers"]
    writer.apply("update_node_resource", small_node["id"], {"memory_mb": 8192, "vcores": 8})
    counts = []
    for _ in range(20):
        time.sleep(1)
        counts.append(node(c, small_node["id"])["numContainers"])
    assert max(counts) <= before, counts
    cleared = writer.apply("replace_node_labels", small_node["id"], [])
    assert cleared.observed == []
    removed = writer.apply("remove_cluster_labels", "", ["sls_test"])
    assert removed.status == "applied" and "sls_test" not in removed.observed


def test_container_signal_is_accepted_but_the_simulated_nm_ignores_it(
        sls_cluster: SlsCluster, writer: JsonWrites) -> None:
    """GRACEFUL_SHUTDOWN to the AMs of three big jobs early in their run: a real NM
    would stop them (and the apps would fail); SLS's NMs never read the signal."""
    c = sls_cluster
    busy(c)
    jobs = trace_of(c)
    big = sorted((a for a in apps_in(c, "RUNNING") if a["id"] in jobs
                  and jobs[a["id"]].tasks >= 100), key=lambda a: a["progress"])[:3]
    assert big, "no big job running"
    signalled = {}
    for a in big:
        attempt = c.get(f"/ws/v1/cluster/apps/{a['id']}/appattempts")["appAttempts"]
        cid = attempt["appAttempt"][-1]["containerId"]
        out = writer.apply("signal_container", cid, "GRACEFUL_SHUTDOWN")
        assert out.status == "applied" and out.answer["status"] == 200
        signalled[a["id"]] = cid
    time.sleep(5)  # several NM heartbeats
    states = {a: app(c, a)["state"] for a in signalled}
    assert set(states.values()) <= {"RUNNING", "FINISHED"}, states
    alive = [cid for a, cid in signalled.items() if states[a] == "RUNNING"]
    assert alive, states
    assert all(writer.read("signal_container", cid)["state"] == "RUNNING" for cid in alive)


def test_kill_app_and_the_simulation_goes_on(sls_cluster: SlsCluster, writer: JsonWrites) -> None:
    c = sls_cluster
    busy(c)
    victim = max(apps_in(c, "RUNNING"), key=lambda a: a["startedTime"])
    done_before = c.progress()["done"]
    out = writer.apply("kill_app", victim["id"], "KILLED")
    assert (out.previous, out.status, out.observed) == ("RUNNING", "applied", "KILLED")
    assert app(c, victim["id"])["state"] == "KILLED"
    wait_until(lambda: c.progress()["done"] > done_before + 5, "other apps to finish", timeout=120)
    assert c.proc is not None and c.proc.poll() is None
    log = c.log_file.read_text(errors="replace")
    assert "NullPointerException" not in log, "an SLS step died instead of being logged"


def test_what_slss_nodes_and_ams_do_not_serve(sls_cluster: SlsCluster) -> None:
    """NM web (JMX) and the MapReduce AM REST API (through the RM proxy) do not exist."""
    c = sls_cluster
    busy(c)
    cfg = load(None, {"rm": {"urls": [c.rm_url], "retry": {"attempts": 1}}})
    http = http_client(cfg)
    rm = RMClient(http, [c.rm_url])
    some_node = c.get("/ws/v1/cluster/nodes")["nodes"]["node"][0]
    assert some_node["nodeHTTPAddress"].endswith(":80")
    with pytest.raises(ConnectorError):
        JmxClient(http, rm, "http").nm_container_beans(some_node["nodeHTTPAddress"])
    running = apps_in(c, "RUNNING")
    assert {a["applicationType"] for a in running} == {"YARN"}  # never read as MapReduce
    with pytest.raises(ConnectorError):
        MapReduceClient(http, rm, None).am_jobs(running[0]["id"])


def test_a_short_trace_runs_to_completion() -> None:
    """A second, small SLS: every trace job finishes, each read back with its times."""
    if os.environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip("YARN_ADVISOR_SKIP_CLUSTER=1")
    spec = TraceSpec(window_s=30, load=0.2,
                     sources=("hadoop-gridmix-system-traces/trace_1m.json.gz",), data=FIXTURES)
    c = SlsCluster(Path(tempfile.mkdtemp(prefix="yarn-sls-small-")), nodes=50, racks=5,
                   trace=spec)
    c.start()
    try:
        jobs = c.trace_jobs()
        assert len(jobs) >= 10
        progress = c.wait_finished(timeout=240, poll_s=2)
        assert progress["done"] == progress["submitted"] == len(jobs)
        times = {t.job_id: t for t in c.app_times()}
        assert set(times) == {j.job_id for j in jobs}
        assert all(t.state == "FINISHED" and t.finished_ms > t.started_ms for t in times.values())
        # SLS submits each job at its trace time; jobs a few hundred ms apart may reach
        # the RM in either order on a loaded machine (seen: the third of three jobs
        # 0.6 s apart first), jobs seconds apart may not
        offset = {j.job_id: j.start_ms for j in jobs}
        first = min(times.values(), key=lambda t: t.started_ms)
        assert offset[first.job_id] - jobs[0].start_ms <= 2_000
        swapped = [(a.job_id, b.job_id) for a in jobs for b in jobs
                   if offset[b.job_id] - offset[a.job_id] > 5_000
                   and times[b.job_id].started_ms < times[a.job_id].started_ms]
        assert not swapped, swapped
    finally:
        c.stop()

