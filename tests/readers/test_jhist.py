"""The JobHistory reader on every real ``.jhist`` of tests/fixtures, and on broken copies."""

from __future__ import annotations

import bz2
import gzip
import json
import shutil
from pathlib import Path

import pytest
from _counts import count_jhist
from _layouts import layouts

from yarn_advisor.classifiers.readers.jhist import JhistReader, read_jhist
from yarn_advisor.classifiers.readers.records import TraceJob, TraceTask
from yarn_advisor.classifiers.readers.sources import ReadReport

SLEEP_JOB = "job_1329348432655_0001-1329348443227-user-Sleep+job-1329348468601-10-1-SUCCEEDED-default.jhist"  # noqa: E501
RUMEN_STATUS = {"SUCCEEDED": "SUCCESS", "FAILED": "FAILED", "KILLED": "KILLED"}


def read_one(path: Path) -> tuple[TraceJob, ReadReport]:
    report = ReadReport("jhist")
    job = read_jhist(path, report)
    assert job is not None, report
    return job, report


def all_tasks(job: TraceJob) -> dict[str, TraceTask]:
    return {t.task_id: t for t in (*job.maps, *job.reduces, *job.others)}


def test_every_file_matches_an_independent_count(jhist_files: list[Path]) -> None:
    reader = JhistReader([jhist_files[0].parent])
    jobs = list(reader)
    assert reader.report.files == len(jhist_files) == len(jobs) == 6
    assert reader.report.damaged == 0 and reader.report.problems == []
    by_file = {j.job_id: j for j in jobs}
    total = 0
    for path in jhist_files:
        expected = count_jhist(path)
        job = next(j for j in by_file.values() if next(iter(expected)).split("_")[1] in j.job_id)
        tasks = all_tasks(job)
        assert set(tasks) == set(expected), path.name
        for task_id, want in expected.items():
            got = tasks[task_id]
            assert got.status == RUMEN_STATUS[want.status or ""], task_id
            assert got.finish_ms == want.finish_ms, task_id
            if want.launch_ms is None:  # never got a container: not evaluated
                assert got in job.others and not got.attempts and got.status != "SUCCESS"
            else:
                assert got in (*job.maps, *job.reduces)
                assert got.launch_ms == want.launch_ms, task_id
                assert got.duration_ms == want.finish_ms - want.launch_ms  # type: ignore[operator]
        total += len(tasks)
    assert reader.report.tasks == total == 24


def test_identity_and_stages_of_a_job(jhist_files: list[Path]) -> None:
    job, _ = read_one(jhist_files[0].parent / SLEEP_JOB)
    assert (job.job_id, job.name, job.user, job.queue) == (
        "job_1329348432655_0001", "Sleep job", "user", "default")
    assert (job.framework, job.outcome, job.total_maps) == ("MAPREDUCE", "SUCCESS", 10)
    assert {t.type for t in job.maps} == {"MAP"} and {t.type for t in job.reduces} == {"REDUCE"}
    assert (len(job.maps), len(job.reduces)) == (10, 2)
    # durations from the first attempt's launch, not from TASK_STARTED (scheduling)
    m0 = next(t for t in job.maps if t.task_id.endswith("m_000000"))
    assert (m0.start_ms, m0.launch_ms, m0.finish_ms) == (1329348448373, 1329348450485,
                                                           1329348462562)


def test_failed_job_keeps_its_retries_and_statuses(jhist_files: list[Path]) -> None:
    job, report = read_one(jhist_files[0].parent / "job_2.4.0-FAILED.jhist")
    assert job.outcome == "FAILED" and job.queue == "unfunded"
    failed = next(t for t in job.maps if t.task_id.endswith("m_000000"))
    assert failed.status == "FAILED" and len(failed.attempts) == 4
    assert {a.result for a in failed.attempts} == {"FAILED"}
    assert failed.launch_ms == failed.attempts[0].start_ms
    # killed before any attempt started: kept aside, counted
    assert {t.status for t in job.others} == {"KILLED"} and len(job.others) == 2
    assert report.ignored == {"never_launched_task": 2}


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _event_lines(path: Path) -> list[int]:
    return [i for i, line in enumerate(_lines(path)) if line.lstrip().startswith(b'{"type"')]


def test_truncated_file_is_counted_and_what_ended_before_the_cut_is_kept(
        jhist_files: list[Path], tmp_path: Path) -> None:
    original = jhist_files[0].parent / SLEEP_JOB
    data = original.read_bytes()
    cut = tmp_path / "cut.jhist"
    cut.write_bytes(data[: len(data) * 2 // 3])  # mid-line
    whole, _ = read_one(original)
    job, report = read_one(cut)
    assert report.skipped == {"truncated_file": 1} and "cut short" in report.problems[0]
    ended = {t.task_id: t for t in (*job.maps, *job.reduces) if t.finish_ms > 0}
    assert 0 < len(ended) < 12
    for task_id, task in ended.items():
        assert task == all_tasks(whole)[task_id]
    assert any(t.finish_ms == -1 for t in (*job.maps, *job.reduces))  # cut: not scored
    assert job.outcome == ""


def test_garbled_line_unknown_event_and_missing_field_are_counted(
        jhist_files: list[Path], tmp_path: Path) -> None:
    original = jhist_files[0].parent / SLEEP_JOB
    lines = _lines(original)
    events = _event_lines(original)
    # a TASK_FINISHED without its finishTime: that task has no end
    finished = next(i for i in events if b'{"type":"TASK_FINISHED"' in lines[i])
    event = json.loads(lines[finished])
    body = next(iter(event["event"].values()))
    del body["finishTime"]
    lines[finished] = json.dumps(event, separators=(",", ":")).encode() + b"\n"
    lines.insert(events[5], b'{"type":"MAP_ATTEMPT_STAR\n')  # garbled
    lines.insert(events[3], b'{"type":"TASK_TELEPORTED","event":{"x.TaskTeleported":{}}}\n')
    broken = tmp_path / "broken.jhist"
    broken.write_bytes(b"".join(lines))
    job, report = read_one(broken)
    assert report.skipped == {"garbled_line": 1, "missing_field": 1}
    assert report.ignored == {"unknown_event": 1}
    whole, _ = read_one(original)
    lost = body["taskid"]
    assert all_tasks(job)[lost].finish_ms == -1
    assert {k: v for k, v in all_tasks(job).items() if k != lost} == {
        k: v for k, v in all_tasks(whole).items() if k != lost}


def test_compressed_copies_read_the_same(jhist_files: list[Path], tmp_path: Path) -> None:
    original = jhist_files[0].parent / SLEEP_JOB
    (tmp_path / "a.jhist.gz").write_bytes(gzip.compress(original.read_bytes()))
    (tmp_path / "b.jhist").write_bytes(bz2.compress(original.read_bytes()))
    whole, _ = read_one(original)
    jobs = list(JhistReader([tmp_path]))
    assert jobs == [whole, whole]


def test_files_that_are_not_json_job_history_are_reported(jhist_files: list[Path],
                                                          tmp_path: Path) -> None:
    original = jhist_files[0].parent / SLEEP_JOB
    binary = tmp_path / "binary.jhist"  # JSON events under a binary header
    binary.write_bytes(b"Avro-Binary\n" + original.read_bytes().split(b"\n", 1)[1])
    (tmp_path / "notes.jhist").write_text("hello\n")
    (tmp_path / "empty.jhist").write_bytes(b"")
    data = gzip.compress(original.read_bytes())
    (tmp_path / "cut.jhist.gz").write_bytes(data[: len(data) * 9 // 10])
    (tmp_path / "zstd.jhist").write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 32)
    reader = JhistReader([tmp_path])
    jobs = list(reader)
    assert reader.report.files == 5
    assert reader.report.skipped == {"unsupported_file": 3, "garbled_record": 1,
                                     "truncated_file": 1}
    assert any("binary event does not decode" in p for p in reader.report.problems)
    assert any("zstd" in p for p in reader.report.problems)
    assert len(jobs) == 1  # the gzip cut mid-stream: what ended before is kept
    assert 0 < sum(t.finish_ms > 0 for t in all_tasks(jobs[0]).values()) < 12


def test_a_done_directory_is_walked(jhist_files: list[Path], tmp_path: Path) -> None:
    for i, path in enumerate(jhist_files):
        folder = tmp_path / "done" / "2014" / f"{i % 3:02d}" / "000000"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, folder / path.name)
        (folder / f"{path.stem}.summary").write_text("not read\n")
    reader = JhistReader([tmp_path / "done"])
    assert len(list(reader)) == 6 and reader.report.tasks == 24
    assert reader.report.damaged == 0


@pytest.mark.parametrize("given", ["file", "missing"])
def test_paths_given_explicitly(jhist_files: list[Path], tmp_path: Path, given: str) -> None:
    path = jhist_files[0] if given == "file" else tmp_path / "nope.jhist"
    reader = JhistReader([path])
    jobs = list(reader)
    if given == "file":
        assert len(jobs) == 1 and reader.report.damaged == 0
    else:
        assert jobs == [] and reader.report.skipped == {"unreadable_file": 1}


RECORDED = Path(__file__).resolve().parents[2] / "examples" / "jhist-mini"


def test_hadoop_3_binary_and_json_files_with_their_conf() -> None:
    reader = JhistReader([RECORDED])
    jobs = {j.job_id.rsplit("_", 1)[-1]: j for j in reader}
    assert reader.report.damaged == 0 and reader.report.files == 2
    binary, json_job = jobs["0001"], jobs["0002"]
    assert (binary.name, binary.queue, binary.outcome) == ("Sleep job", "etl", "SUCCESS")
    assert (len(binary.maps), len(binary.reduces)) == (4, 1)
    assert (binary.map_mb, binary.reduce_mb) == (768, 512)  # its _conf.xml
    assert {t.vcores for t in binary.maps} == {2}
    assert (json_job.map_mb, json_job.reduce_mb) == (-1, -1)  # no conf beside it
    assert (len(json_job.maps), len(json_job.reduces)) == (2, 2)
    json_file = next(RECORDED.rglob("job_*_0002-*.jhist"))
    expected = count_jhist(json_file)
    for task in (*json_job.maps, *json_job.reduces):
        want = expected[task.task_id]
        assert (task.launch_ms, task.finish_ms) == (want.launch_ms, want.finish_ms)
    for task in (*binary.maps, *binary.reduces):  # sleeps of 2 s and 0.5 s, in containers
        assert task.status == "SUCCESS" and task.duration_ms
        assert task.duration_ms >= (2000 if task.type == "MAP" else 500)


def test_truncated_binary_file(tmp_path: Path) -> None:
    original = next(RECORDED.rglob("job_*_0001-*.jhist"))
    whole, _ = read_one(original)
    data = original.read_bytes()
    for keep in (len(data) * 3 // 4, len(data) - 1):
        cut = tmp_path / f"cut{keep}.jhist"
        cut.write_bytes(data[:keep])
        job, report = read_one(cut)
        assert report.skipped == {"truncated_file": 1}, report
        ended = [t for t in (*job.maps, *job.reduces) if t.finish_ms > 0]
        assert ended and all(t == all_tasks(whole)[t.task_id] for t in ended)


def test_binary_events_decode_whole_and_filtered_alike() -> None:
    from yarn_advisor.classifiers.readers.avro_binary import AvroStream, compile_schema
    from yarn_advisor.classifiers.readers.jhist import _FIELDS

    original = next(RECORDED.rglob("job_*_0001-*.jhist"))
    decoded = {}
    for keep in (None, _FIELDS):
        with original.open("rb") as fh:
            assert fh.readline() == b"Avro-Binary\n"
            decode = compile_schema(json.loads(fh.readline()), keep=keep)
            source, events = AvroStream(fh), []
            while not source.at_end():
                events.append(decode(source))
        decoded[keep is None] = events
    whole, kept = decoded[True], decoded[False]
    assert len(whole) == len(kept) > 20 and whole[-1]["type"] == "JOB_FINISHED"
    assert "counters" in whole[-3]["event"] or "totalCounters" in whole[-1]["event"]
    for full, some in zip(whole, kept, strict=True):
        assert some["type"] == full["type"]
        assert some["event"] == {k: v for k, v in full["event"].items() if k in _FIELDS}


@pytest.mark.parametrize("layout", list(layouts(b"a\nb\nc")))
def test_events_laid_out_as_hadoops_event_reader_reads_them(
        jhist_files: list[Path], tmp_path: Path, layout: str) -> None:
    # blank lines between events (a real file of another cluster has them), CR
    # LF, events across lines or two on a line: Avro's JSON decoder, which
    # EventReader reads the body with, takes them all; so must the reader
    original = jhist_files[0].parent / SLEEP_JOB
    whole, _ = read_one(original)
    path = tmp_path / "laid-out.jhist"
    path.write_bytes(layouts(original.read_bytes())[layout])
    job, report = read_one(path)
    assert report.damaged == 0 and report.problems == [], report
    assert job == whole
    assert report.tasks == 12 and report.ignored == {}


def test_a_garbled_line_among_events_across_lines_costs_itself_only(
        jhist_files: list[Path], tmp_path: Path) -> None:
    original = jhist_files[0].parent / SLEEP_JOB
    whole, _ = read_one(original)
    laid = layouts(original.read_bytes())["events across lines"].split(b"\n")
    first = next(i for i, ln in enumerate(laid) if ln.startswith(b'{"type":"TASK_FINISHED"'))
    laid.insert(first, b'{"type":"MAP_ATTEMPT_STAR')  # cut short, the next event follows
    path = tmp_path / "garbled.jhist"
    path.write_bytes(b"\n".join(laid))
    job, report = read_one(path)
    assert report.skipped == {"garbled_line": 1}
    assert job == whole
