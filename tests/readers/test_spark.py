"""The Spark event-log reader on every real log of tests/fixtures, and on broken copies."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pytest
from _counts import count_spark, spark_compress, stage_sizes

from yarn_advisor.classifiers.readers.records import TraceJob
from yarn_advisor.classifiers.readers.sources import ReadReport
from yarn_advisor.classifiers.readers.spark import EventLog, SparkEventLogReader, read_event_log

RETRIES = "application_1516285256255_0012"  # failed attempts retried, 2 stages
SPECULATIVE = "application_1628109047826_1317105"  # a speculative copy killed


def read_one(path: Path) -> tuple[TraceJob, ReadReport]:
    report = ReadReport("spark")
    job = read_event_log(EventLog(path.name, (path,), False), report)
    assert job is not None, report
    return job, report


def by_key(job: TraceJob) -> dict[tuple[int, int, int], object]:
    out = {}
    for t in job.stage_tasks:
        stage, _, index = t.task_id.removeprefix("stage_").partition("_task_")
        sid, attempt = stage.split(".")
        out[(int(sid), int(attempt), int(index))] = t
    return out


def test_every_log_matches_an_independent_count(spark_logs: list[Path]) -> None:
    reader = SparkEventLogReader([spark_logs[0].parent])
    jobs = {j.job_id: j for j in reader}
    assert reader.report.files == len(spark_logs) == len(jobs) == 5
    assert reader.report.damaged == 0 and reader.report.ignored == {}
    total = 0
    for path in spark_logs:
        job = jobs[path.name]
        expected = count_spark(path)
        tasks = by_key(job)
        assert set(tasks) == set(expected), path.name
        for key, want in expected.items():
            task = tasks[key]
            assert task.launch_ms == want.launch_ms and task.finish_ms == want.finish_ms  # type: ignore[attr-defined]
            assert task.duration_ms == want.finish_ms - want.launch_ms  # type: ignore[attr-defined,operator]
            assert task.status == ("SUCCESS" if want.status == "Success" else "KILLED")  # type: ignore[attr-defined]
        # Spark's own count: every completed stage attempt ran Number of Tasks partitions
        for (stage, attempt), size in stage_sizes(path).items():
            assert sum(1 for k in tasks if k[:2] == (stage, attempt)) == size
        total += len(tasks)
    assert reader.report.tasks == total == 36


def test_identity_stages_and_attempts(spark_logs: list[Path]) -> None:
    job, _ = read_one(spark_logs[0].parent / RETRIES)
    assert (job.framework, job.name, job.user) == ("SPARK", "Spark shell", "attilapiros")
    assert (job.total_maps, job.maps, job.reduces) == (-1, (), ())
    assert {t.type for t in job.stage_tasks} == {"map at <console>:27", "collect at <console>:30"}
    retried = [t for t in job.stage_tasks if len(t.attempts) == 2]
    assert len(retried) == 4  # partitions 1, 4, 5, 6 of stage 0 failed once
    for t in retried:
        assert [a.result for a in t.attempts] == ["FAILED", "SUCCESS"]
        assert t.launch_ms == t.attempts[0].start_ms and t.finish_ms == t.attempts[1].finish_ms
    job, _ = read_one(spark_logs[0].parent / SPECULATIVE)
    slow = max(job.stage_tasks, key=lambda t: t.duration_ms or 0)
    assert [a.result for a in slow.attempts] == ["SUCCESS", "KILLED"]
    assert slow.status == "SUCCESS" and slow.duration_ms == 1628638137677 - 1628638073904


@pytest.mark.parametrize(("name", "memory", "cores"), [
    # spark.executor.memory 2G, no overhead set: 2048 + max(384, 204)
    (RETRIES, 2048 + 384, 1),
    # 7g and spark.executor.memoryOverhead 1024
    ("application_1553914137147_0018", 7168 + 1024, 1),
    # stage profile 3 (4 cores, no memory); the default profile's 1024 MiB + 384
    ("application_1578436911597_0052", 1024 + 384, 4),
    # default profile: 4096 MiB heap, overhead max(384, 409)
    (SPECULATIVE, 4096 + 409, 1),
])
def test_demand_is_the_executor_container(spark_logs: list[Path], name: str, memory: int,
                                          cores: int) -> None:
    job, _ = read_one(spark_logs[0].parent / name)
    assert {(t.memory_mb, t.vcores) for t in job.stage_tasks} == {(memory, cores)}
    assert job.demand_mb(job.stage_tasks[0]) == memory


def test_truncated_garbled_unknown_and_missing_are_counted(spark_logs: list[Path],
                                                           tmp_path: Path) -> None:
    original = spark_logs[0].parent / RETRIES
    whole, _ = read_one(original)
    data = original.read_bytes()
    cut = tmp_path / "cut"
    cut.write_bytes(data[: len(data) * 3 // 4])
    job, report = read_one(cut)
    assert report.skipped == {"truncated_file": 1}
    done = {k: t for k, t in by_key(job).items() if t.finish_ms > 0}  # type: ignore[attr-defined]
    assert 0 < len(done) < 20 and all(t == by_key(whole)[k] for k, t in done.items())

    lines = data.splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if b'"SparkListenerTaskEnd"' in line]
    event = json.loads(lines[ends[-1]])
    del event["Task Info"]
    lines[ends[-1]] = json.dumps(event).encode() + b"\n"
    lines.insert(ends[3], b'{"Event":"SparkListenerTaskEnd","Stage ID":0,"Task\n')
    lines.insert(ends[1], b'{"Event":"com.example.MyListenerEvent","x":1}\n')
    broken = tmp_path / "broken"
    broken.write_bytes(b"".join(lines))
    job, report = read_one(broken)
    assert report.skipped == {"garbled_line": 1, "missing_field": 1}
    assert report.ignored == {"unknown_event": 1}
    lost = [k for k, t in by_key(job).items() if t.finish_ms == -1]  # type: ignore[attr-defined]
    assert len(lost) == 1 and len(by_key(job)) == 20


def test_compressed_logs(spark_logs: list[Path], tmp_path: Path) -> None:
    original = spark_logs[0].parent / RETRIES
    (tmp_path / f"{RETRIES}.gz").write_bytes(gzip.compress(original.read_bytes()))
    (tmp_path / f"{RETRIES}.bz2").write_bytes(bz2.compress(original.read_bytes()))
    # codecs not read: named, not misread (the magic numbers of each format)
    (tmp_path / f"{RETRIES}.zstd").write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 64)
    (tmp_path / f"{RETRIES}.lzf").write_bytes(b"ZV\x01" + b"\0" * 64)
    (tmp_path / f"{RETRIES}.sz").write_bytes(b"\xff\x06\x00\x00sNaPpY" + b"\0" * 64)
    # Spark's lz4 and snappy framings around garbage: corrupt, counted
    (tmp_path / f"{RETRIES}.lz4").write_bytes(b"LZ4Block" + b"\x25" + b"\xff" * 64)
    (tmp_path / f"{RETRIES}.snappy").write_bytes(b"\x82SNAPPY\x00" + b"\0" * 64)
    reader = SparkEventLogReader([tmp_path])
    jobs = list(reader)
    whole, _ = read_one(original)
    assert jobs == [whole, whole]
    assert reader.report.skipped == {"unsupported_file": 3, "unreadable_file": 2}
    for codec in ("zstd", "lzf", "snappy-framed"):
        assert any(f"{codec} compression" in p for p in reader.report.problems)


def _roll(original: Path, folder: Path, parts: int, done: bool) -> None:
    folder.mkdir()
    lines = original.read_bytes().splitlines(keepends=True)
    step = len(lines) // parts + 1
    for n in range(parts):
        name = f"events_{n + 1}_{original.name}"
        (folder / name).write_bytes(b"".join(lines[n * step:(n + 1) * step]))
    status = f"appstatus_{original.name}" + ("" if done else ".inprogress")
    (folder / status).write_bytes(b"")


def test_rolling_event_log_folders(spark_logs: list[Path], tmp_path: Path) -> None:
    original = spark_logs[0].parent / RETRIES
    whole, _ = read_one(original)
    _roll(original, tmp_path / f"eventlog_v2_{RETRIES}", parts=12, done=True)  # 12 > 10: n sorts
    reader = SparkEventLogReader([tmp_path])
    assert list(reader) == [whole]
    assert reader.report.files == 12 and reader.report.damaged == 0
    # still running: only the first part written so far
    running = tmp_path / "running"
    running.mkdir()
    _roll(original, running / f"eventlog_v2_{RETRIES}", parts=3, done=False)
    (running / f"eventlog_v2_{RETRIES}" / f"events_3_{RETRIES}").unlink()
    (running / f"eventlog_v2_{RETRIES}" / f"events_2_{RETRIES}").unlink()
    reader = SparkEventLogReader([running / f"eventlog_v2_{RETRIES}"])
    jobs = list(reader)
    assert reader.report.ignored == {"in_progress_log": 1} and reader.report.damaged == 0
    assert len(jobs) == 1 and len(jobs[0].stage_tasks) < 20


def test_files_that_are_not_event_logs(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("not an event log\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / ".hidden").write_text("skipped\n")
    reader = SparkEventLogReader([tmp_path, tmp_path / "missing"])
    assert list(reader) == []
    assert reader.report.skipped == {"unsupported_file": 2, "unreadable_file": 1}


def test_spark_lz4_and_snappy_logs_read_as_the_plain_ones(spark_codec_jars: str,
                                                          spark_logs: list[Path],
                                                          tmp_path: Path) -> None:
    for log in spark_logs:
        lz4, snappy = spark_compress(spark_codec_jars, log, tmp_path)
        assert lz4.read_bytes().startswith(b"LZ4Block")
        assert snappy.read_bytes().startswith(b"\x82SNAPPY\x00")
        assert len(lz4.read_bytes()) < log.stat().st_size // 2
        plain, _ = read_one(log)
        for packed in (lz4, snappy):
            job, report = read_one(packed)
            assert job == plain and report.damaged == 0, (packed.name, report)
    # cut short, or a block damaged: counted, never a traceback
    for packed in (lz4, snappy):
        data = packed.read_bytes()
        cut = tmp_path / f"cut.{packed.suffix}"
        cut.write_bytes(data[: len(data) * 2 // 3])
        reader = SparkEventLogReader([cut])
        list(reader)
        assert reader.report.skipped == {"truncated_file": 1}, reader.report
        bad = tmp_path / f"bad.{packed.suffix}"
        bad.write_bytes(data[:40] + bytes(b ^ 0x5A for b in data[40:400]) + data[400:])
        reader = SparkEventLogReader([bad])
        list(reader)
        assert reader.report.damaged >= 1, reader.report
