"""connectors.parse_mapreduce on the MR AM (mram__) and JobHistory (jhs__) doc examples."""

from __future__ import annotations

import re
from typing import Any

import pytest
from _data import get_examples, junk_outcomes, rest_doc

from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.mapreduce import parse as m

ENDPOINTS: list[tuple[str, Any]] = [
    (r"/mapreduce/jobs(/[^/]+)?$", m.parse_jobs),
    (r"/tasks(/[^/]+)?$", m.parse_tasks),
    (r"/attempts(/[^/]+)?$", m.parse_task_attempts),
]


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [("mram__", [2, 3, 7, 8, 10, 11]), ("jhs__", [2, 3, 7, 8, 10, 11])],
)
def test_every_get_example_of_a_parsed_endpoint_parses(prefix: str, expected: list[int]) -> None:
    parsed = []
    for name, url, body in get_examples(prefix):
        for pattern, parse in ENDPOINTS:
            if re.search(pattern, url.split("?")[0]):
                assert parse(body), name
                parsed.append(int(name[len(prefix) : len(prefix) + 2]))
    assert parsed == expected


@pytest.mark.parametrize(
    ("prefix", "parse"),
    [
        ("mram__02", m.parse_jobs),
        ("jhs__03", m.parse_jobs),
        ("mram__07", m.parse_tasks),
        ("mram__10", m.parse_task_attempts),
        ("jhs__11", m.parse_task_attempts),
    ],
)
def test_junk_anywhere_gives_a_result_or_parse_error(prefix: str, parse: Any) -> None:
    outcomes = junk_outcomes(parse, rest_doc(prefix))
    assert outcomes["ok"] > outcomes["ParseError"] > 0


# --------------------------------------------------------------------------- jobs


def test_running_job_from_the_am() -> None:
    for prefix in ("mram__02", "mram__03"):
        (job,) = m.parse_jobs(rest_doc(prefix))
        assert job.id == "job_1326232085508_4_4"
        assert job.app_id == "application_1326232085508_0004"  # the proxy URL's app
        assert (job.name, job.user, job.state) == ("Sleep job", "user1", "RUNNING")
        assert (job.maps_total, job.maps_completed, job.maps_running) == (1, 1, 0)
        assert (job.reduces_total, job.reduces_running, job.reduces_pending) == (1, 1, 0)
        assert (job.map_progress, job.reduce_progress) == (100.0, 100.0)
        assert (job.start_time, job.finish_time, job.uberized) == (1326238769379, 0, False)


def test_finished_jobs_from_history() -> None:
    first, second = m.parse_jobs(rest_doc("jhs__02"))
    assert (first.id, first.name) == ("job_1326381300833_1_1", "word count")
    assert first.app_id == "application_1326381300833_0001"
    assert (second.queue, second.finish_time) == ("default", 1326381582106)
    (job,) = m.parse_jobs(rest_doc("jhs__03"))
    assert (job.avg_map_time, job.avg_reduce_time) == (2638, 124961)
    assert (job.state, job.reduces_completed) == ("SUCCEEDED", 1)


def test_jobs_defensive() -> None:
    body = rest_doc("jhs__02")
    item = body["jobs"]["job"][1]
    item.update(id="job_1326381300833_0002", mapsTotal="10", uberized="true")
    body["jobs"]["job"] = item
    (job,) = m.parse_jobs(body)
    assert (job.app_id, job.maps_total, job.uberized) == (
        "application_1326381300833_0002",
        10,
        True,
    )
    assert m.parse_jobs({"jobs": None}) == ()
    assert m.parse_jobs({"jobs": {"job": {}}}) == ()
    del item["id"]
    with pytest.raises(ParseError, match="job without 'id'"):
        m.parse_jobs(body)
    with pytest.raises(ParseError, match="missing top-level key 'jobs'"):
        m.parse_jobs({"tasks": None})


# --------------------------------------------------------------------------- tasks


def test_tasks_from_the_am() -> None:
    map_task, reduce_task = m.parse_tasks(rest_doc("mram__07"))
    assert map_task.id == "task_1326232085508_4_4_m_0"
    assert (map_task.job_id, map_task.app_id) == (
        "job_1326232085508_4_4",
        "application_1326232085508_0004",
    )
    assert (map_task.type, map_task.state, map_task.elapsed_time) == ("MAP", "SUCCEEDED", 2768)
    assert map_task.attempt_id == "attempt_1326232085508_4_4_m_0_0"
    assert (reduce_task.type, reduce_task.state, reduce_task.finish_time) == (
        "REDUCE",
        "RUNNING",
        0,
    )
    assert reduce_task.attempt_id == "" and reduce_task.phase == ""
    (single,) = m.parse_tasks(rest_doc("mram__08"))
    assert single == reduce_task


def test_tasks_from_history() -> None:
    tasks = m.parse_tasks(rest_doc("jhs__07"))
    assert [t.type for t in tasks] == ["MAP", "REDUCE"]
    assert tasks[1].elapsed_time == 135559 and tasks[1].job_id == "job_1326381300833_2_2"
    (t,) = m.parse_tasks(rest_doc("jhs__08"))
    assert (t.id, t.start_time, t.finish_time) == (
        "task_1326381300833_2_2_m_0",
        1326381446541,
        1326381453318,
    )


def test_task_ids_real_format_fallback_and_defaults() -> None:
    body = rest_doc("mram__07")
    real, odd = body["tasks"]["task"]
    real.update(id="task_1326232085508_0004_r_000003", startTime=-1, progress="12.5")
    del real["type"]
    odd["id"] = "reduce-0"
    a, b = m.parse_tasks(body, job_id="job_1326232085508_0004")
    assert (a.job_id, a.app_id, a.type) == (
        "job_1326232085508_0004",
        "application_1326232085508_0004",
        "REDUCE",
    )
    assert (a.start_time, a.progress) == (0, 12.5)
    assert b.job_id == "job_1326232085508_0004"  # from the argument
    assert m.job_id_of_task("task_1326232085508_4_4_r_0") == "job_1326232085508_4_4"
    assert m.parse_tasks({"tasks": {}}) == () and m.parse_tasks({"tasks": None}) == ()
    body["tasks"]["task"] = [real, "junk"]
    with pytest.raises(ParseError, match="task item is str"):
        m.parse_tasks(body)


# --------------------------------------------------------------------------- attempts


def test_reduce_attempt_from_the_am_and_its_phase() -> None:
    for prefix in ("mram__10", "mram__11"):
        (att,) = m.parse_task_attempts(rest_doc(prefix))
        assert att.id == "attempt_1326232085508_4_4_r_0_0"
        assert (att.task_id, att.job_id) == ("task_1326232085508_4_4_r_0", "job_1326232085508_4_4")
        assert (att.type, att.state, att.rack) == ("REDUCE", "RUNNING", "/98.139.92.0")
        assert att.node_http_address == "host.domain.com:8042"
        assert att.container_id == "container_1326232085508_0004_01_000003"
        assert (att.shuffle_finish_time, att.merge_finish_time) == (1326238780052, 1326238780099)
        assert m.attempt_phase(att, now_ms=1326238790000) == "REDUCE"
        assert m.attempt_phase(att, now_ms=1326238780060) == "MERGE"  # merge end not yet reached


def test_reduce_phases_from_finish_times() -> None:
    body = rest_doc("mram__11")
    body["taskAttempt"]["mergeFinishTime"] = 0
    (att,) = m.parse_task_attempts(body)
    assert m.attempt_phase(att, 1326238790000) == "MERGE"
    body["taskAttempt"].update(shuffleFinishTime="0")
    (att,) = m.parse_task_attempts(body)
    assert m.attempt_phase(att, 1326238790000) == "SHUFFLE"


def test_map_attempt_from_history() -> None:
    for prefix in ("jhs__10", "jhs__11"):
        (att,) = m.parse_task_attempts(rest_doc(prefix))
        assert (att.id, att.type, att.state) == (
            "attempt_1326381300833_2_2_m_0_0",
            "MAP",
            "SUCCEEDED",
        )
        assert att.container_id == "container_1326381300833_0002_01_000002"
        assert (att.start_time, att.finish_time, att.elapsed_time) == (
            1326381450680,
            1326381453318,
            2638,
        )
        assert att.shuffle_finish_time == 0
        assert m.attempt_phase(att, 1326381453318) == "MAP"


def test_task_with_attempt() -> None:
    (task,) = m.parse_tasks(rest_doc("mram__08"))
    (att,) = m.parse_task_attempts(rest_doc("mram__11"))
    t = m.task_with_attempt(task, att, now_ms=1326238790000)
    assert (t.phase, t.attempt_id) == ("REDUCE", "attempt_1326232085508_4_4_r_0_0")
    assert t.container_id == "container_1326232085508_0004_01_000003"


def test_attempt_fallback_and_errors() -> None:
    body = rest_doc("mram__11")
    body["taskAttempt"]["id"] = "weird"
    (att,) = m.parse_task_attempts(body, task_id="task_1326232085508_0004_r_000000")
    assert (att.task_id, att.job_id) == (
        "task_1326232085508_0004_r_000000",
        "job_1326232085508_0004",
    )
    assert m.parse_task_attempts({"taskAttempts": None}) == ()
    body["taskAttempt"]["id"] = None
    with pytest.raises(ParseError, match="taskAttempt without 'id'"):
        m.parse_task_attempts(body)
    with pytest.raises(ParseError, match="body is NoneType"):
        m.parse_task_attempts(None)
