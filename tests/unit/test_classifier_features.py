"""OPERA hierarchical features (Eq. 1) and the live-model adapter."""

from __future__ import annotations

from dataclasses import replace

from yarn_advisor.advisor.model import App, MRJob, ResourceRequest, Resources, Task
from yarn_advisor.classifiers.features import (
    LEVEL_NAMES,
    TaskProps,
    app_identity,
    app_name,
    count_bucket,
    demand_bucket,
    features,
    progress_bucket,
    props_for_request,
    props_from_live,
)


def test_levels_are_the_documented_hierarchy() -> None:
    assert LEVEL_NAMES == ("F", "F,A", "F,A,S", "F,A,S,P", "F,A,S,D", "F,A,S,P,D")


def test_features_one_string_per_level() -> None:
    props = TaskProps("MAPREDUCE", "sort", "MAP", "<50", "1024")
    assert features(props) == (
        "F=MAPREDUCE",
        "F,A=MAPREDUCE|sort",
        "F,A,S=MAPREDUCE|sort|MAP",
        "F,A,S,P=MAPREDUCE|sort|MAP|<50",
        "F,A,S,D=MAPREDUCE|sort|MAP|1024",
        "F,A,S,P,D=MAPREDUCE|sort|MAP|<50|1024",
    )


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


def test_nameless_jobs_are_told_apart_by_user_and_shape() -> None:
    assert app_identity("report-20100211", "alice", 64, 8) == "report-#"  # a name wins
    assert app_identity(None, "alice", 60, 7) == "?alice|m64|r8"
    assert app_identity("", "alice", 33, 0) == "?alice|m64|r0"
    assert app_identity(None, "bob", 60, 7) != app_identity(None, "alice", 60, 7)
    assert app_identity(None, "", -1, -1) == "??|m?|r?"
    assert [count_bucket(n) for n in (-1, 0, 1, 2, 3, 1000)] == ["?", "0", "1", "2", "4", "1024"]


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
    assert props == TaskProps("MAPREDUCE", "word count #", "REDUCE", "<100", "4096")
    # an explicit container size wins over the request's
    assert props_from_live(task, JOB, _app(), memory_mb=1024).demand == "1024"
    # no app, no job: the name falls back to the job's, progress unknown
    assert props_from_live(task, JOB, None).app == "word count"
    assert props_from_live(task).progress == "?"
    # maps still waiting for a container: a reduce will wait for them too
    waiting = replace(JOB, maps_pending=2)
    assert props_from_live(task, waiting, _app()).progress == "<100+wait"
    assert props_from_live(replace(task, type="MAP"), waiting, _app()).progress == "<100"


def test_pending_request_group_props() -> None:
    app = _app()
    props = [props_for_request(app, rr, JOB) for rr in app.resource_requests]
    assert [(p.stage, p.demand, p.progress) for p in props] == [
        ("MAP", "2048", "<100"),
        ("REDUCE", "4096", "<100"),
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
    assert (p.framework, p.stage, p.progress) == ("SPARK", "PRIORITY1", "?")
