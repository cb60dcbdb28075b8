"""The SLS nodes file and trace generator (no cluster needed)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from workload import (
    FIXTURES,
    NO_LOCALITY,
    NODE_CLASSES,
    TraceSpec,
    build_trace,
    make_nodes,
    read_manifest,
    read_source,
    write_nodes,
    write_trace,
)

from yarn_advisor.classifiers.readers.rumen import read_trace

SMALL = TraceSpec(window_s=120, load=0.5,
                  sources=("hadoop-gridmix-system-traces/trace_3m.json.gz",
                           "hadoop-gridmix-system-traces/5m_stream_trace.json.gz"),
                  data=FIXTURES)


def test_nodes_are_mixed_on_racks_each_on_its_own_loopback_address(tmp_path: Path) -> None:
    nodes = make_nodes(500, 20)
    sizes = Counter((n.memory_mb, n.vcores) for n in nodes)
    assert sizes == {(c.memory_mb, c.vcores): round(500 * c.weight) for c in NODE_CLASSES}
    assert Counter(n.rack for n in nodes) == {f"rack{r:02d}": 25 for r in range(20)}
    assert len({n.host for n in nodes}) == 500
    assert all(n.host.startswith("127.2.") for n in nodes)
    text = write_nodes(nodes, tmp_path / "n.json").read_text()
    racks = [json.loads(line) for line in text.splitlines()]
    assert sum(len(r["nodes"]) for r in racks) == 500
    assert racks[0]["nodes"][0].keys() == {"node", "memory-mb", "vcores"}
    assert make_nodes(500, 20) == nodes  # seeded


def test_trace_jobs_keep_their_recorded_tasks(tmp_path: Path) -> None:
    nodes = make_nodes(50, 5)
    placed, summary = build_trace(nodes, SMALL)
    trace = write_trace(placed, nodes, True, tmp_path / "t.json")
    sources = {j.source: j for f in SMALL.sources for j in read_source(FIXTURES / f)}
    jobs, problem = read_trace(trace)  # the project's own Rumen reader reads it back
    assert problem is None and len(jobs) == summary.jobs == len(read_manifest(trace))
    hosts = {n.path for n in nodes}
    for job, row in zip(jobs, read_manifest(trace), strict=True):
        assert job.job_id == row.job_id and job.submit_ms == row.start_ms
        source = sources[row.source]
        assert sorted(t.duration_ms for t in (*job.maps, *job.reduces)) == sorted(
            t.duration_ms for t in source.tasks)
        assert all(a.host in hosts for t in job.maps for a in t.attempts)
        assert all(a.host == NO_LOCALITY for t in job.reduces for a in t.attempts)


def test_trace_fills_the_window_to_the_load_and_is_reproducible(tmp_path: Path) -> None:
    nodes = make_nodes(50, 5)
    placed, summary = build_trace(nodes, SMALL)
    # copies are whole source traces: the last one overshoots by at most one trace
    capacity = sum(n.vcores for n in nodes) * SMALL.window_s * 1000
    largest = max(sum(j.vcore_ms() for j in read_source(FIXTURES / f)) for f in SMALL.sources)
    assert SMALL.load <= summary.offered_load <= SMALL.load + largest / capacity
    assert all(0 <= p.start_ms < SMALL.window_s * 1000 for p in placed)
    assert [p.start_ms for p in placed] == sorted(p.start_ms for p in placed)
    assert set(Counter(p.queue for p in placed)) == {"default", "etl", "adhoc"}
    a = write_trace(placed, nodes, True, tmp_path / "a.json").read_bytes()
    again, _ = build_trace(nodes, SMALL)
    assert write_trace(again, nodes, True, tmp_path / "b.json").read_bytes() == a
    other, _ = build_trace(nodes, TraceSpec(**{**SMALL.__dict__, "seed": 2}))
    assert [p.start_ms for p in other] != [p.start_ms for p in placed]


def test_a_window_no_source_fits_is_refused() -> None:
    with pytest.raises(ValueError, match="fits"):
        build_trace(make_nodes(10, 2), TraceSpec(window_s=5, sources=SMALL.sources,
                                                      data=FIXTURES))
