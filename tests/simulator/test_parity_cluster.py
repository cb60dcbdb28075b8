"""The simulator against the real thing: the same sleep jobs on the real mini cluster.

Trace-driven, as SLS replays a trace: three MapReduce sleep jobs in three
queues are run on the real test cluster (tests/minicluster/yarnmini.py); what
the scheduler does not decide is read back from it -- each task's run time
(JobHistoryServer attempt start to finish, JVM start-up included), the AM's
start-up (RM launch to the job's start) and wind-down (last task to the app's
end) -- and the same jobs, submitted at the same moments (each AM's own start-up
added), are simulated on a
twin of the cluster read from the live RM (node sizes, the CapacityScheduler's
live configuration). The simulated scheduling must give the same job order
(for jobs that end more than 5 % of the makespan apart on the real cluster:
closer than that, the order is noise) and a makespan within 10 % of the real
one.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from typing import Any

import pytest

from yarn_advisor.simulator.schedulers.capacity_conf import parse
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import (
    MAP,
    REDUCE,
    Cluster,
    Job,
    NodeGroup,
    Phase,
    QueueSpec,
    Res,
    SchedulerSpec,
    Stage,
    Timing,
    Workload,
)

pytestmark = pytest.mark.cluster

WORKLOAD = [dict(queue="default", maps=8, reduces=1, map_ms=6000, reduce_ms=3000),
            dict(queue="etl", maps=4, reduces=1, map_ms=30000, reduce_ms=4000),
            dict(queue="adhoc", maps=3, reduces=0, map_ms=5000)]
TASK_MB = AM_MB = 512
TOLERANCE = 0.10
ORDER_MARGIN = 0.05
CONTAINER_LAUNCH_MS = 300  # AM pulled it -> NM launched it (not measured; small)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def _wait_idle(rm: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        apps = _get(f"{rm}/ws/v1/cluster/apps?states=NEW,SUBMITTED,ACCEPTED,RUNNING")
        if not (apps.get("apps") or {}).get("app"):
            return
        time.sleep(2)
    pytest.fail("the mini cluster still runs other apps")


def _history(cluster: Any, app_id: str, timeout_s: float = 120) -> tuple[dict[str, Any],
                                                                        list[dict[str, Any]]]:
    """The finished job and its tasks from the JobHistoryServer (once it has moved them)."""
    job_id = app_id.replace("application_", "job_", 1)
    base = f"{cluster.jhs_url}/ws/v1/history/mapreduce/jobs/{job_id}"
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            job = _get(base)["job"]
            tasks = _get(f"{base}/tasks")["tasks"]["task"]
            return job, tasks
        except (OSError, KeyError, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(2)


def _run_real(cluster: Any, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    subs = [cluster.sleep_job(**s) for s in specs]
    for s in subs:
        assert s.wait(timeout=900) == 0
    rows = []
    for s, spec in zip(subs, specs, strict=True):
        app = _get(f"{cluster.rm_url}/ws/v1/cluster/apps/{s.app_id}")["app"]
        assert app["finalStatus"] == "SUCCEEDED"
        job, tasks = _history(cluster, s.app_id)
        ordered = sorted(tasks, key=lambda t: t["id"])
        rows.append({
            "spec": spec, "started": app["startedTime"], "finished": app["finishedTime"],
            "am_start_ms": job["startTime"] - app["launchTime"],
            "am_end_ms": app["finishedTime"] - max(t["finishTime"] for t in tasks),
            "maps": [t["finishTime"] - t["startTime"] for t in ordered if t["type"] == "MAP"],
            "reduces": [t["finishTime"] - t["startTime"] for t in ordered
                        if t["type"] == "REDUCE"]})
    return rows


def _twin(rm: str) -> tuple[tuple[NodeGroup, ...], SchedulerSpec]:
    """Nodes and CapacityScheduler settings as the live RM has them."""
    nodes = _get(f"{rm}/ws/v1/cluster/nodes")["nodes"]["node"]
    groups = tuple(
        NodeGroup(1, n["totalResource"]["memory"], n["totalResource"]["vCores"],
                  label=(n.get("nodeLabels") or [""])[0])
        for n in sorted(nodes, key=lambda n: n["id"]) if n["state"] == "RUNNING")
    props = _get(f"{rm}/ws/v1/cluster/scheduler-conf?user.name=yarn")["property"]
    conf = parse({p["name"]: str(p.get("value", "")) for p in props})
    queues = tuple(QueueSpec(q.name, q.capacity, q.maximum_capacity, q.user_limit_factor)
                   for q in conf.leaves)
    am = conf.leaves[0].maximum_am_resource_percent
    return groups, SchedulerSpec(queues=queues, maximum_am_resource_percent=am,
                                 node_locality_delay=conf.node_locality_delay,
                                 max_application_priority=10)


def _stage(kind: str, durations: list[int]) -> Stage | None:
    if not durations:
        return None
    phases = ((Phase("SHUFFLE", 0.0, 200, 0.05), Phase("REDUCE", 1.0, 200, 0.05))
              if kind == REDUCE else (Phase(MAP, 1.0, 200, 0.05),))
    return Stage(kind, Res(TASK_MB, 1), tuple(durations), phases)


def _simulate(rows: list[dict[str, Any]], groups: tuple[NodeGroup, ...],
              sched: SchedulerSpec) -> Any:
    t0 = min(r["started"] for r in rows)
    # each AM's own start-up, as measured: the simulator has one AM launch time for all
    # jobs (the shortest), and a job whose AM took longer is submitted that much later
    # (on a loaded host the AMs' JVMs start 10-30 s apart, which decides the order)
    am_start = min(r["am_start_ms"] for r in rows)
    jobs = tuple(
        Job(id=f"{i}-{r['spec']['queue']}", name="Sleep job",
            submit_ms=r["started"] - t0 + r["am_start_ms"] - am_start,
            maps=_stage(MAP, r["maps"]), reduces=_stage(REDUCE, r["reduces"]),
            queue=r["spec"]["queue"], user="root", am=Res(AM_MB, 1),
            am_use=Phase("AM", 1.0, 300, 0.2), slowstart=1.0)
        for i, r in enumerate(rows))
    am_end = sum(r["am_end_ms"] for r in rows) // len(rows)
    timing = Timing(nm_heartbeat=1000, am_heartbeat=1000, container_launch=CONTAINER_LAUNCH_MS,
                    am_launch=am_start, am_finish=am_end)
    cluster = Cluster(groups=groups, timing=timing, minimum_allocation=Res(128, 1),
                      maximum_allocation=Res(4096, 4))
    return Simulation(Workload("mini-twin", cluster, sched, jobs), scheduler="capacity").run()


def _real_figures(rows: list[dict[str, Any]]) -> tuple[float, list[str]]:
    """Makespan (first submission to last end) and the order the jobs ended in."""
    t0 = min(r["started"] for r in rows)
    order = [f"{i}-{r['spec']['queue']}" for i, r in
             sorted(enumerate(rows), key=lambda x: x[1]["finished"])]
    return (max(r["finished"] for r in rows) - t0) / 1000, order


@pytest.mark.slow  # a real batch on the mini cluster, then its twin simulated: minutes
def test_simulated_twin_schedules_like_the_real_cluster(mini_cluster: Any) -> None:
    rm = mini_cluster.rm_url
    _wait_idle(rm)
    groups, sched = _twin(rm)
    real = _run_real(mini_cluster, WORKLOAD)
    predicted = _simulate(real, groups, sched)
    span, order = _real_figures(real)
    t0 = min(r["started"] for r in real)
    print(f"\nreal: makespan {span:.1f} s, order {order}, ends "
          f"{[round((r['finished'] - t0) / 1000, 1) for r in real]}\nsimulated: makespan "
          f"{predicted.makespan_s:.1f} s, order {predicted.job_order}, ends "
          f"{[predicted.job_times[j]['finish_s'] for j in sorted(predicted.job_times)]}",
          file=sys.stderr)
    real_end = {f"{i}-{r['spec']['queue']}": (r["finished"] - t0) / 1000
                for i, r in enumerate(real)}
    sim_end = {j: t["finish_s"] for j, t in predicted.job_times.items()}
    for a in real_end:
        for b in real_end:
            if real_end[a] + ORDER_MARGIN * span < real_end[b]:
                assert sim_end[a] < sim_end[b], (a, b, real_end, sim_end)
    assert abs(predicted.makespan_s - span) <= TOLERANCE * span
