"""Live wiring: Snapshot -> features -> learning and predictions each cycle."""

from __future__ import annotations

import dataclasses
from typing import Any

from yarn_advisor.advisor.model.snapshot import (
    App,
    ClusterInfo,
    ClusterMetrics,
    Container,
    MRJob,
    ResourceRequest,
    Resources,
    Snapshot,
    Task,
)
from yarn_advisor.classifiers.model.live import LiveTaskClassifier
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier

S = 1000
T0 = 1_700_000_000_000
INFO = ClusterInfo(1, "STARTED", "ACTIVE", "3.4.1", "3.4.1", T0)
METRICS = ClusterMetrics(*([0] * 6), Resources(), Resources(), Resources(), Resources(),
                         *([0] * 8))  # fmt: skip
APP = App(
    id="application_1_0001", name="nightly-etl 2024-05-01", user="u", queue="default",
    type="MAPREDUCE", tags=(), state="RUNNING", final_status="UNDEFINED", priority=0,
    progress=0.5, started_time=T0, finished_time=0, elapsed_time=0, allocated=Resources(),
    reserved=Resources(), running_containers=2, am_host_http_address="", tracking_url="",
    resource_requests=(
        ResourceRequest(20, "*", Resources(1024, 1), 5, True, ""),
        ResourceRequest(10, "*", Resources(2048, 1), 1, True, ""),
        ResourceRequest(20, "host1", Resources(1024, 1), 5, True, ""),
    ),
)  # fmt: skip
JOB = MRJob("job_1_0001", APP.id, "nightly-etl", "u", "default", "RUNNING", T0, 0,
            maps_total=100, maps_completed=0, reduces_total=1, reduces_completed=0)  # fmt: skip


def task(n: int, state: str, start: int, finish: int = 0, **kw: Any) -> Task:
    return Task(id=f"task_1_0001_m_{n:06d}", job_id=JOB.id, app_id=APP.id, type="MAP",
                state=state, progress=0.0, start_time=start, finish_time=finish,
                elapsed_time=(finish or start) - start, **kw)  # fmt: skip


def snap(
    at: int, tasks: tuple[Task, ...] = (), finished: tuple[Task, ...] = (), **kw: Any
) -> Snapshot:
    return Snapshot(taken_at=at, rm_url="http://rm:8088", cluster=INFO, metrics=METRICS,
                    nodes=(), queues=(), apps=(kw.pop("app", APP),),
                    containers=kw.pop("containers", ()),
                    jobs=(kw.pop("job", JOB),), tasks=tasks, finished_tasks=finished)  # fmt: skip


def test_cycle_learns_finished_and_censored_tasks_once() -> None:
    live = LiveTaskClassifier(NaiveBayesTaskClassifier())
    running_long = task(0, "RUNNING", T0)
    first = live.update(snap(T0 + 30 * S, (running_long,)))
    assert (first.finished, first.censored, first.running) == (0, 0, 1)
    second = live.update(snap(T0 + 61 * S, (running_long,)))
    assert (second.censored, live.model.class_counts) == (1, [0, 1])
    done = dataclasses.replace(running_long, state="SUCCEEDED", finish_time=T0 + 200 * S)
    quick = task(1, "SUCCEEDED", T0 + 70 * S, T0 + 75 * S)
    killed = task(2, "KILLED", T0 + 70 * S, T0 + 71 * S)
    third = live.update(snap(T0 + 210 * S, finished=(done, quick, killed)))
    assert third.finished == 1 and live.model.class_counts == [1, 1]


def test_a_task_is_learned_with_the_progress_it_started_with() -> None:
    live = LiveTaskClassifier(NaiveBayesTaskClassifier())
    live.update(snap(T0))  # maps 0 % done at T0
    later = dataclasses.replace(JOB, maps_completed=60)
    quick = task(7, "SUCCEEDED", T0 + 1 * S, T0 + 4 * S)
    reduce = dataclasses.replace(task(8, "SUCCEEDED", T0 + 2 * S, T0 + 9 * S), type="REDUCE",
                                 id="task_1_0001_r_000000")
    no_more_asks = dataclasses.replace(APP, resource_requests=())
    live.update(snap(T0 + 30 * S, finished=(quick, reduce), job=later, app=no_more_asks))
    # the reduce started with no map done (the cycle before its start), not 60 %
    group = "F,S,Q,U,A,P=MAPREDUCE|REDUCE|default|u|nightly-etl #|0"
    assert live.model.counts[group] == [0, 0, 1, 1]  # a branch: task counts only
    assert not any(k.startswith("F,S,Q,U,A,P=MAPREDUCE|MAP") for k in live.model.counts)
    # no container seen and no pending request left: the last memory asked is used
    shape = "F,S,Q,U,A,Z,D=MAPREDUCE|MAP|default|u|nightly-etl #|m128|r1|1024"
    assert live.model.counts[shape] == [1, 0, 1, 1]


def test_container_size_is_the_demand_of_a_running_task() -> None:
    live = LiveTaskClassifier(NaiveBayesTaskClassifier())
    c = Container("container_1", APP.id, "n1:8041", Resources(3000, 1), 20, T0, "RUNNING")
    live.update(snap(T0 + 61 * S, (task(0, "RUNNING", T0, container_id="container_1"),),
                     containers=(c,)))  # fmt: skip
    assert "F,S,Q,U,A,Z,D=MAPREDUCE|MAP|default|u|nightly-etl #|m128|r1|4096" in live.model.counts


def test_pending_groups_and_tasks_are_classified() -> None:
    live = LiveTaskClassifier(NaiveBayesTaskClassifier())
    finished = tuple(task(i, "SUCCEEDED", T0 + i * S, T0 + i * S + 3 * S) for i in range(12))
    live.update(snap(T0 + 20 * S, finished=finished))
    groups = live.classify_pending_groups(snap(T0 + 21 * S))
    assert [(g.priority, g.stage, g.pending, g.prediction.label) for g in groups] == [
        (20, "MAP", 5, "short"),
        (10, "REDUCE", 1, "long"),  # no reduce of this user seen yet
    ]
    assert groups[1].prediction.reason == "unknown"
    pending = tuple(task(100 + i, "SCHEDULED", 0) for i in range(3))
    s = snap(T0 + 21 * S, pending)
    preds = live.classify_tasks(s, live.pending_tasks(s))
    assert [p.label for p in preds] == ["short"] * 3


def test_a_users_short_jobs_make_the_next_job_of_another_name_short() -> None:
    # Three finished jobs of user u, each of its own name, all maps short; a
    # fourth job of u with a name never seen is predicted short from what the
    # user's jobs taught; the same job of a user never seen is not.
    live = LiveTaskClassifier(NaiveBayesTaskClassifier())
    for n, name in enumerate(("etl-a", "etl-b", "etl-c"), start=2):
        app = dataclasses.replace(APP, id=f"application_1_{n:04d}", name=name)
        job = dataclasses.replace(JOB, id=f"job_1_{n:04d}", app_id=app.id, name=name)
        done = tuple(dataclasses.replace(task(i, "SUCCEEDED", T0 + i * S, T0 + i * S + 4 * S),
                                         id=f"task_1_{n:04d}_m_{i:06d}", job_id=job.id,
                                         app_id=app.id) for i in range(8))
        live.update(snap(T0 + 60 * S * n, finished=done, app=app, job=job))
    new = dataclasses.replace(APP, id="application_1_0009", name="report 2024-06-01")
    new_job = dataclasses.replace(JOB, id="job_1_0009", app_id=new.id, name="report")
    maps = live.classify_pending_groups(snap(T0 + 600 * S, app=new, job=new_job))[0]
    assert (maps.stage, maps.prediction.label) == ("MAP", "short")
    stranger = dataclasses.replace(new, user="someone-else")
    other = live.classify_pending_groups(
        snap(T0 + 600 * S, app=stranger, job=dataclasses.replace(new_job, user="someone-else")))
    assert other[0].prediction.label == "long" and other[0].prediction.reason == "unknown"
