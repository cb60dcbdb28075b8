"""Hierarchical task features (Eq. 1, widened) and the live-model adapter."""

from __future__ import annotations

from dataclasses import replace

from yarn_advisor.advisor.model.snapshot import App, MRJob, ResourceRequest, Resources, Task
from yarn_advisor.classifiers.model.features import (
    LEVEL_NAMES,
    LEVELS,
    TaskProps,
    app_identity,
    app_name,
    count_bucket,
    demand_bucket,
    features,
    job_key,
    progress_bucket,
    props_for_request,
    props_from_live,
    queue_leaf,
    size_bucket,
)

PROPS = TaskProps(framework="MAPREDUCE", stage="MAP", queue="etl", user="alice", app="sort",
                  size="m64|r8", demand="1024", job="job_1_0001", progress="<50")


def test_levels_are_the_documented_hierarchy() -> None:
    assert LEVEL_NAMES == ("F,S,Q,U", "F,S,Q,U,A", "F,S,Q,U,A,P", "J,S", "F,S,Q,U,A,Z,D",
                           "F,S,Q,U,A,R,D")
    # the main chain user > application > its reduces > shape > job, progress a
    # branch of the application
    parents = {lv.name: LEVELS[lv.parent].name if lv.parent >= 0 else None for lv in LEVELS}
    assert parents == {"F,S,Q,U": None, "F,S,Q,U,A": "F,S,Q,U", "F,S,Q,U,A,P": "F,S,Q,U,A",
                       "F,S,Q,U,A,R,D": "F,S,Q,U,A", "F,S,Q,U,A,Z,D": "F,S,Q,U,A,R,D",
                       "J,S": "F,S,Q,U,A,Z,D"}
    assert [lv.name for lv in LEVELS if lv.branch] == ["F,S,Q,U,A,P"]


def test_features_one_string_per_level() -> None:
    assert features(PROPS) == (
        "F,S,Q,U=MAPREDUCE|MAP|etl|alice",
        "F,S,Q,U,A=MAPREDUCE|MAP|etl|alice|sort",
        "F,S,Q,U,A,P=MAPREDUCE|MAP|etl|alice|sort|<50",
        "J,S=job_1_0001|MAP",
        "F,S,Q,U,A,Z,D=MAPREDUCE|MAP|etl|alice|sort|m64|r8|1024",
        "F,S,Q,U,A,R,D=MAPREDUCE|MAP|etl|alice|sort|r8|1024",
    )
    # one name shared by every job pools no two users: each level keys the user
    bob = features(replace(PROPS, user="bob"))
    assert not set(bob) & set(features(PROPS)) - {"J,S=job_1_0001|MAP"}


def test_app_name_normalisation() -> None:
    assert app_name("[DOTS-PROD-job_name-DAILY/20100210] - data\\.transform") == (
        "[DOTS-PROD-job_name-DAILY/#] - data.transform"
    )
    assert app_name("report-20100211") == app_name("report-20100212") == "report-#"
    assert app_name(None) == app_name("") == "?"
    assert len(app_name("x" * 500)) == 80
    # dispatch-trace-output: a daily job dated in its name; times and ids too
    daily = "daily\\.UK\\.web/split-by-bcookie/2009-04-20"
    assert app_name(daily) == app_name(daily[:-2] + "21") == "daily.UK.web/split-by-bcookie/#"
    assert app_name("load at 23:15:02") == app_name("load at 7:00") == "load at #"
    assert app_name("job_1795319059678_0001") == "job_#_#"
    assert app_name("load dt=2010-02-10/hr=05") == app_name("load dt=2010-02-11/hr=17") == (
        "load dt=#/hr=#"
    )
    assert app_name("export 2010-02-10T05:30") == app_name("export 2010-02-10 17") == "export #"


def test_short_numbers_name_the_work_and_are_kept() -> None:
    assert app_name("tpch q12") != app_name("tpch q1")
    assert app_name("Sleep job") == "Sleep job"
    # Rumen's Anonymizer names each distinct job name job<n>: all kept apart
    assert [app_name(f"job{n}") for n in (0, 1, 1234, 56789)] == [
        "job0", "job1", "job1234", "job56789"
    ]


def test_identity_is_the_name_else_the_tags() -> None:
    assert app_identity("report-20100211", ("oozie-wf-0000123",)) == "report-#"  # a name wins
    assert app_identity(None, ("etl", "daily-20240501")) == "daily-#,etl"  # sorted, normalised
    assert app_identity("", ()) == app_identity(None) == "?"
    assert [count_bucket(n) for n in (-1, 0, 1, 2, 3, 1000)] == ["?", "0", "1", "2", "4", "1024"]
    assert size_bucket(60, 7) == "m64|r8" and size_bucket(-1, -1) == "m?|r?"
    assert queue_leaf("root.etl") == queue_leaf("etl") == "etl" and queue_leaf("") == "?"
    assert job_key("application_1_0001") == job_key("job_1_0001") == "job_1_0001"


def test_progress_buckets() -> None:
    assert [progress_bucket(d, 10) for d in (0, 1, 4, 5, 9, 10)] == [
        "0",
        "<50",
        "<50",
        "<100",
        "<100",
        "100",
    ]
    assert progress_bucket(0, 0) == "100"  # a job without maps: its reduces wait for nothing
    assert progress_bucket(-1, 10) == "?"
    assert progress_bucket(6, 10, maps_waiting=True) == "<100+wait"
    assert progress_bucket(10, 10, maps_waiting=True) == "100"


def test_demand_buckets() -> None:
    assert [demand_bucket(m) for m in (-1, 0, 200, 512, 513, 640, 1024, 3072)] == [
        "?",
        "?",
        "512",
        "512",
        "1024",
        "1024",
        "1024",
        "4096",
    ]


def _app(**kw: object) -> App:
    base: dict[str, object] = dict(
        id="application_1_0001",
        name="word count 2024-01-02",
        user="u",
        queue="default",
        type="MAPREDUCE",
        tags=(),
        state="RUNNING",
        final_status="UNDEFINED",
        priority=0,
        progress=0.5,
        started_time=1,
        finished_time=0,
        elapsed_time=1,
        allocated=Resources(),
        reserved=Resources(),
        running_containers=1,
        am_host_http_address="",
        tracking_url="",
        resource_requests=(
            ResourceRequest(20, "*", Resources(2048, 1), 7, True, ""),
            ResourceRequest(10, "*", Resources(3000, 1), 2, True, ""),
        ),
    )
    base.update(kw)
    return App(**base)  # type: ignore[arg-type]


JOB = MRJob(
    id="job_1_0001",
    app_id="application_1_0001",
    name="word count",
    user="u",
    queue="default",
    state="RUNNING",
    start_time=1,
    finish_time=0,
    maps_total=10,
    maps_completed=6,
    reduces_total=2,
    reduces_completed=0,
)


def test_live_task_adapter_matches_trace_features() -> None:
    task = Task(
        id="task_1_0001_r_000000",
        job_id=JOB.id,
        app_id=JOB.app_id,
        type="REDUCE",
        state="RUNNING",
        progress=0.1,
        start_time=5,
        finish_time=0,
        elapsed_time=3,
    )
    props = props_from_live(task, JOB, _app())
    assert props == TaskProps(framework="MAPREDUCE", stage="REDUCE", queue="default", user="u",
                              app="word count #", size="m16|r2", demand="4096",
                              job="job_1_0001", progress="<100")
    # an explicit container size wins over the request's
    assert props_from_live(task, JOB, _app(), memory_mb=1024).demand == "1024"
    # no app (a finished job from the JobHistoryServer): the job's name, user, queue
    assert props_from_live(task, JOB, None).app == "word count"
    assert props_from_live(task, replace(JOB, queue="root.etl"), None).queue == "etl"
    bare = props_from_live(task)
    assert (bare.progress, bare.size, bare.user, bare.job) == ("?", "m?|r?", "?", "job_1_0001")
    # an app without a name is known by its tags
    assert props_from_live(task, None, _app(name="", tags=("nightly",))).app == "nightly"
    # maps still waiting for a container: a reduce will wait for them too
    waiting = replace(JOB, maps_pending=2)
    assert props_from_live(task, waiting, _app()).progress == "<100+wait"
    assert props_from_live(replace(task, type="MAP"), waiting, _app()).progress == "<100"


def test_pending_request_group_props() -> None:
    app = _app()
    props = [props_for_request(app, rr, JOB) for rr in app.resource_requests]
    assert [(p.stage, p.demand, p.progress, p.job, p.size) for p in props] == [
        ("MAP", "2048", "<100", "job_1_0001", "m16|r2"),
        ("REDUCE", "4096", "<100", "job_1_0001", "m16|r2"),
    ]
    waiting = replace(JOB, maps_pending=1)
    assert [props_for_request(app, rr, waiting).progress for rr in app.resource_requests] == [
        "<100",
        "<100+wait",
    ]
    spark = _app(
        type="SPARK", resource_requests=(ResourceRequest(1, "*", Resources(4096, 2), 3, True, ""),)
    )
    p = props_for_request(spark, spark.resource_requests[0])
    assert (p.framework, p.stage, p.progress, p.job) == ("SPARK", "PRIORITY1", "?", "job_1_0001")
