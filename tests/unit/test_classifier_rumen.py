"""Rumen reader on the real traces vendored in tests/fixtures (counts checked with
zcat | grep -c)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from yarn_advisor.classifiers.readers.rumen import RumenTrace, read_trace

DATA = Path(__file__).resolve().parents[1] / "fixtures"  # vendored: see its PROVENANCE.md
GRIDMIX = DATA / "hadoop-gridmix-system-traces"


def _counts(path: Path) -> tuple[int, int, int, int, int]:
    jobs, problem = read_trace(path)
    assert problem is None
    maps = sum(len(j.maps) for j in jobs)
    reduces = sum(len(j.reduces) for j in jobs)
    tasks = maps + reduces + sum(len(j.others) for j in jobs)
    attempts = sum(len(t.attempts) for j in jobs for t in (*j.maps, *j.reduces, *j.others))
    return len(jobs), maps, reduces, tasks, attempts


@pytest.mark.parametrize(
    ("relpath", "expected"),
    [
        # (jobs, MAP, REDUCE, all taskIDs, attemptIDs), from zcat | grep -c
        ("hadoop-gridmix-system-traces/trace_1m.json.gz", (5, 42, 5, 57, 57)),
        ("hadoop-gridmix-system-traces/5m_stream_trace.json.gz", (15, 196, 270, 496, 496)),
        (
            "hadoop-rumen-testdata/small-trace-test/folder-input-trace.json.gz",
            (59, 787, 321, 1226, 1226),
        ),
        ("hadoop-rumen-testdata/zombie/input-trace.json", (4, 154, 49, 209, 261)),
        ("hadoop-sls/2jobs2min-rumen-jh.json", (2, 192, 0, 192, 192)),
        # starts with a /* licence */ comment; one task has a crashed first attempt
        ("hadoop-sls/1job-rumen-with-one-crashed-attempt.json", (1, 54, 16, 70, 71)),
    ],
)
def test_real_trace_counts(relpath: str, expected: tuple[int, ...]) -> None:
    assert _counts(DATA / relpath) == expected


def test_first_job_fields() -> None:
    job = next(iter(RumenTrace(GRIDMIX / "trace_1m.json.gz")))
    assert (job.job_id, job.user, job.name) == (
        "job_201102040848_0119",
        "gidmixuser",
        "GridmixStreamingSorter.small",
    )
    assert job.map_mb == 640 and job.memory_mb("REDUCE") == 640
    task = job.maps[0]
    assert task.task_id == "task_201102040848_0119_m_000000"
    assert (task.type, task.status) == ("MAP", "SUCCESS")
    assert (task.start_ms, task.finish_ms) == (1297228041232, 1297228043950)
    assert (task.launch_ms, task.duration_ms) == (1297228041235, 2715)  # from the attempt's start
    assert (task.input_bytes, task.input_records) == (5380112, 4861)
    attempt = task.attempts[0]
    assert attempt.host == "/1.1.1.1/host256"
    assert (attempt.start_ms, attempt.finish_ms, attempt.result) == (
        1297228041235,
        1297228043941,
        "SUCCESS",
    )


def test_duration_excludes_the_wait_for_a_container() -> None:
    """5m_stream: a map of the 11th job was scheduled 12.7 s after its job
    launched but got a container only at 205 s; its attempt ran 5.9 s. The
    old reading (task start to finish) made it a 198 s "long" task."""
    jobs = list(RumenTrace(GRIDMIX / "5m_stream_trace.json.gz"))
    waited = [
        t for j in jobs for t in j.maps if t.attempts and t.launch_ms - t.start_ms > 60_000
    ]
    assert waited, "the trace has maps that waited minutes for a container"
    for task in waited:
        assert task.launch_ms == min(a.start_ms for a in task.attempts)
        assert task.duration_ms == task.finish_ms - task.launch_ms < 60_000
        assert task.finish_ms - task.start_ms > 60_000


def test_crashed_attempt_kept() -> None:
    jobs, _ = read_trace(DATA / "hadoop-sls/1job-rumen-with-one-crashed-attempt.json")
    multi = [t for t in (*jobs[0].maps, *jobs[0].reduces) if len(t.attempts) > 1]
    assert len(multi) == 1
    assert {a.result for a in multi[0].attempts} >= {"SUCCESS"}


def test_hadoop1_trace_uses_heap_as_memory_demand() -> None:
    jobs, _ = read_trace(DATA / "hadoop-rumen-testdata/small-trace-test/folder-input-trace.json.gz")
    assert jobs[0].map_mb == -1 and jobs[0].memory_mb("MAP") == jobs[0].heap_mb > 0


def test_truncated_gzip_yields_complete_jobs_then_reports(tmp_path: Path) -> None:
    raw = gzip.decompress((GRIDMIX / "trace_7m.json.gz").read_bytes())
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(raw)[: len(gzip.compress(raw)) // 2])
    trace = RumenTrace(cut)
    jobs = list(trace)
    assert 0 < len(jobs) < 26  # of its 26 jobs
    assert trace.problem is not None and "cut.json.gz" in trace.problem


def test_truncated_plain_json_mid_object(tmp_path: Path) -> None:
    raw = gzip.decompress((GRIDMIX / "trace_1m.json.gz").read_bytes())
    second = raw.index(b'"jobID"', raw.index(b'"jobID"') + 1)
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: second + 40])
    jobs, problem = read_trace(cut)
    assert len(jobs) == 1
    assert problem is not None and "truncated" in problem and "after 1 complete job" in problem


def test_not_a_job_stream() -> None:
    jobs, problem = read_trace(DATA / "hadoop-rumen-testdata/zombie/input-topology.json")
    assert jobs == [] and problem is not None and "not a Rumen job" in problem


def test_small_chunks_and_comments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("yarn_advisor.classifiers.readers.rumen._CHUNK", 7)
    # objects span many reads
    monkeypatch.setattr("yarn_advisor.classifiers.readers.rumen._PIECE", 3)
    path = tmp_path / "t.json"
    path.write_text('// head\n{"jobID": "job_1", "mapTasks": []}\n/* mid */ {"jobID": "job_2"}\n')
    jobs, problem = read_trace(path)
    assert [j.job_id for j in jobs] == ["job_1", "job_2"] and problem is None


def test_repackaged_copies_read_the_same(tmp_path: Path) -> None:
    # The same real jobs as a JSON array, one per line, with a BOM and CRLF.
    original = DATA / "hadoop-sls/2jobs2min-rumen-jh.json"
    jobs, _ = read_trace(original)
    text = original.read_text()
    objects = [json.loads(chunk) for chunk in _split_objects(text)]
    variants = {
        "array.json": json.dumps(objects, indent=1),
        "lines.json": "\n".join(json.dumps(o) for o in objects),
        "bom.json": "\ufeff" + text.replace("\n", "\r\n"),
    }
    for name, content in variants.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        again, problem = read_trace(path)
        assert problem is None and again == jobs, name


def _split_objects(text: str) -> list[str]:
    decoder, pos, out = json.JSONDecoder(), 0, []
    while pos < len(text.rstrip()):
        while text[pos].isspace():
            pos += 1
        _, end = decoder.raw_decode(text, pos)
        out.append(text[pos:end])
        pos = end
    return out
