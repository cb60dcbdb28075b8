"""The figures of a trace run, on typed samples (no cluster needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from slsrun import AppTimes, SlsCluster
from slswatch import MetricsSample, figures, utilization_profile

ZERO = 1_000_000


def sample(at_s: float, alloc: int, reserved: int = 0, cpu: float = 0.0) -> MetricsSample:
    return MetricsSample(at_ms=ZERO + int(at_s * 1000), allocated_vcores=alloc,
                         total_vcores=100 + reserved, allocated_mb=alloc * 1024,
                         total_mb=(100 + reserved) * 1024, pending_vcores=5,
                         reserved_vcores=reserved, reserved_mb=reserved * 1024,
                         apps_pending=0, apps_running=1, rm_cpu_s=cpu)


def done(job: str, start_s: float, end_s: float, state: str = "FINISHED") -> AppTimes:
    return AppTimes(job, f"app_{job}", "root.etl", state, ZERO + int(start_s * 1000), -1,
                    ZERO + int(end_s * 1000) if end_s else 0)


def test_figures_from_rm_times_and_samples_inside_the_makespan(tmp_path: Path) -> None:
    cluster = SlsCluster(tmp_path, trace_zero_ms=ZERO)
    apps = [done("a", 10, 40), done("b", 20, 30), done("c", 30, 110), done("d", 35, 0, "KILLED")]
    # before the first start and after the last finish: not counted
    samples = [sample(0, 0), *(sample(t, 50, cpu=t / 10) for t in range(10, 111, 10)),
               sample(200, 0)]
    samples[3] = sample(30, 90, reserved=1, cpu=2.0)  # 90 of 100 (101 with the reservation)
    f = figures(cluster, samples, apps)
    assert (f.apps, f.finished, f.not_finished) == (4, 3, 1)
    assert f.makespan_s == 100.0 and f.end_after_trace_zero_s == 110.0
    assert f.mean_jct_s == pytest.approx((30 + 10 + 80) / 3, abs=0.01)
    assert f.median_jct_s == 30.0
    assert f.mean_alloc_vcores == pytest.approx((50 * 10 + 90) / 11 / 100, abs=0.001)
    assert f.rm_cpu_percent == pytest.approx(10.0)  # 10 CPU-s over 100 s


def test_per_minute_profile() -> None:
    samples = [sample(t, 20 if t < 60 else 80) for t in range(0, 120, 5)]
    rows = utilization_profile(samples, ZERO)
    assert [(r["from_s"], r["alloc_vcores"]) for r in rows] == [(0, 0.2), (60, 0.8)]


def test_no_app_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no trace application"):
        figures(SlsCluster(tmp_path), [], [])
