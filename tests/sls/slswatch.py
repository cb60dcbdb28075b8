"""Watch one SLS trace run and turn it into figures (for benches).

:class:`Sampler` reads the RM's ``/ws/v1/cluster/metrics`` (one small GET) and
the SLS JVM's CPU time every few seconds in a thread of its own, while the
caller does whatever the run is about (nothing, or an advisor polling and
writing). :func:`figures` then reads each trace job's RM times and computes:

* makespan: last ``finishedTime`` - first ``startedTime`` over the trace's
  applications (RM clock, ms -> s);
* job completion time (JCT) of an application: ``finishedTime`` -
  ``startedTime`` (submission accepted to finish), over FINISHED ones;
* allocated utilization at a sample: allocated vcores / the cluster's vcores
  (and MB); its mean is over the samples taken between the first start and
  the last finish (samples are evenly spaced, so this is a time average). The
  cluster's size is ``total - reserved``: with the CapacityScheduler the RM's
  ``totalVirtualCores`` is available + allocated + reserved
  (``ClusterMetricsInfo``), so a reservation briefly inflates it.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from slsrun import AppTimes, SlsCluster


@dataclass(frozen=True)
class MetricsSample:
    at_ms: int
    allocated_vcores: int
    total_vcores: int
    allocated_mb: int
    total_mb: int
    pending_vcores: int
    reserved_vcores: int
    reserved_mb: int
    apps_pending: int
    apps_running: int
    rm_cpu_s: float  # the SLS JVM's CPU seconds so far


@dataclass
class Sampler:
    """Samples cluster metrics every ``every_s`` until stopped (a context manager)."""

    cluster: SlsCluster
    every_s: float = 5.0
    samples: list[MetricsSample] = field(default_factory=list)
    errors: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        self._thread = threading.Thread(target=self._run, name="sls-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self.sample())
            except (OSError, ValueError, KeyError) as exc:  # a slow or restarting RM
                self.errors += 1
                if self.errors == 1:
                    print(f"sampler: {exc!r}", file=sys.stderr)
            self._stop.wait(self.every_s)

    def sample(self) -> MetricsSample:
        m = self.cluster.get("/ws/v1/cluster/metrics")["clusterMetrics"]
        return MetricsSample(
            at_ms=int(time.time() * 1000),
            allocated_vcores=int(m["allocatedVirtualCores"]),
            total_vcores=int(m["totalVirtualCores"]),
            allocated_mb=int(m["allocatedMB"]),
            total_mb=int(m["totalMB"]),
            pending_vcores=int(m["pendingVirtualCores"]),
            reserved_vcores=int(m["reservedVirtualCores"]),
            reserved_mb=int(m["reservedMB"]),
            apps_pending=int(m["appsPending"]),
            apps_running=int(m["appsRunning"]),
            rm_cpu_s=self.cluster.cpu_s(),
        )


def vcore_share(s: MetricsSample) -> float:
    size = s.total_vcores - s.reserved_vcores
    return s.allocated_vcores / size if size > 0 else 0.0


def memory_share(s: MetricsSample) -> float:
    size = s.total_mb - s.reserved_mb
    return s.allocated_mb / size if size > 0 else 0.0


@dataclass(frozen=True)
class TraceFigures:
    apps: int
    finished: int
    not_finished: int  # KILLED, FAILED or still live
    makespan_s: float
    end_after_trace_zero_s: float
    mean_jct_s: float
    median_jct_s: float
    p95_jct_s: float
    mean_alloc_vcores: float  # fraction of total vcores
    mean_alloc_mb: float
    mean_pending_vcores: float
    rm_cpu_percent: float  # SLS JVM (the RM and the simulation), over the makespan

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def figures(cluster: SlsCluster, samples: list[MetricsSample],
            apps: list[AppTimes] | None = None) -> TraceFigures:
    apps = cluster.app_times() if apps is None else apps
    if not apps:
        raise ValueError("no trace application is known to the RM")
    done = [a for a in apps if a.state == "FINISHED" and a.finished_ms > 0]
    first = min(a.started_ms for a in apps)
    last = max((a.finished_ms for a in apps if a.finished_ms > 0), default=first)
    jct = sorted((a.finished_ms - a.started_ms) / 1000 for a in done) or [0.0]
    inside = [s for s in samples if first <= s.at_ms <= last] or samples
    cpu = (inside[-1].rm_cpu_s - inside[0].rm_cpu_s) if len(inside) > 1 else 0.0
    span = (inside[-1].at_ms - inside[0].at_ms) / 1000 if len(inside) > 1 else 0.0
    return TraceFigures(
        apps=len(apps),
        finished=len(done),
        not_finished=len(apps) - len(done),
        makespan_s=round((last - first) / 1000, 1),
        end_after_trace_zero_s=round((last - cluster.trace_zero_ms) / 1000, 1),
        mean_jct_s=round(statistics.fmean(jct), 2),
        median_jct_s=round(statistics.median(jct), 2),
        p95_jct_s=round(jct[min(len(jct) - 1, int(0.95 * len(jct)))], 2),
        mean_alloc_vcores=round(statistics.fmean(map(vcore_share, inside)), 3)
        if inside else 0.0,
        mean_alloc_mb=round(statistics.fmean(map(memory_share, inside)), 3) if inside else 0.0,
        mean_pending_vcores=round(statistics.fmean(s.pending_vcores for s in inside), 1)
        if inside else 0.0,
        rm_cpu_percent=round(100 * cpu / span, 1) if span else 0.0,
    )


def utilization_profile(samples: list[MetricsSample], zero_ms: int,
                        bucket_s: int = 60) -> list[dict[str, float]]:
    """Mean allocated vcore share and pending vcores per ``bucket_s`` after trace zero."""
    buckets: dict[int, list[MetricsSample]] = {}
    for s in samples:
        buckets.setdefault(max(0, s.at_ms - zero_ms) // (bucket_s * 1000), []).append(s)
    return [{"from_s": b * bucket_s,
             "alloc_vcores": round(statistics.fmean(map(vcore_share, ss)), 3),
             "pending_vcores": round(statistics.fmean(s.pending_vcores for s in ss), 1),
             "apps_running": round(statistics.fmean(s.apps_running for s in ss), 1)}
            for b, ss in sorted(buckets.items())]
