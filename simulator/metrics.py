"""What a run measures, and the report it ends with.

Utilisation is a time integral over the run's window (first submission to last
finish): *allocated* is what containers hold of the schedulable resource,
*used* what they consume of the real one (CPU capped at the cores there are).
Locality counts map containers that read an HDFS block (node-local /
all). Kills count containers killed by memory pressure, a signal, the RM, or
the AM preempting a reduce; wasted container-seconds are the time they held
their container. A sampled timeline (allocation per app) feeds the PNG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


class Integral:
    """A step function's running integral (value x ms)."""

    __slots__ = ("area", "since", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.area = 0.0
        self.since = 0

    def add(self, now: int, delta: float) -> None:
        self.area += self.value * (now - self.since)
        self.since = now
        self.value += delta

    def total(self, now: int) -> float:
        return self.area + self.value * (now - self.since)

    def restart(self, now: int) -> None:
        self.area = 0.0
        self.since = now


@dataclass
class JobRecord:
    app_id: str
    job: str
    name: str
    queue: str
    submit_ms: int
    start_ms: int = 0  # its AM container allocated (the wait ends)
    finish_ms: int = 0
    state: str = "RUNNING"
    user: str = ""


@dataclass
class Sample:
    t_ms: int
    alloc_mem: int
    alloc_vc: int
    used_mem: float
    used_cpu: float
    per_app_mem: dict[str, int] = field(default_factory=dict)


class Metrics:
    """Counters and integrals, updated by the RM and NM sides as things happen."""

    def __init__(self) -> None:
        self.alloc_mem = Integral()
        self.alloc_vc = Integral()
        self.used_mem = Integral()
        self.used_cpu = Integral()
        self.cap_mem = Integral()
        self.cap_vc = Integral()
        self.real_mem = Integral()
        self.real_cpu = Integral()
        self.jobs: dict[str, JobRecord] = {}
        self.maps_with_input = 0
        self.maps_node_local = 0
        self.maps_rack_local = 0
        self.kills = 0
        self.kills_by_reason: dict[str, int] = {}
        self.wasted_ms = 0
        self.map_response_ms = 0
        self.maps_finished = 0
        self.samples: list[Sample] = []
        self.started_ms: int | None = None
        self.now = 0
        self.last_progress_ms = 0
        self.stalled = False
        # container kills since a task last finished or a job was submitted or ended:
        # "task on host: reason" -> count (what a kill-and-rerun loop repeats)
        self.kill_streak: dict[str, int] = {}
        self.kills_in_streak = 0

    def begin(self, now: int) -> None:
        if self.started_ms is None:
            self.started_ms = now
            for i in (self.alloc_mem, self.alloc_vc, self.used_mem, self.used_cpu,
                      self.cap_mem, self.cap_vc, self.real_mem, self.real_cpu):
                i.restart(now)

    def alloc_changed(self, d_mem: int, d_vc: int) -> None:
        self.alloc_mem.add(self.now, d_mem)
        self.alloc_vc.add(self.now, d_vc)

    def used_changed(self, d_mem: float, d_cpu: float) -> None:
        if d_mem:
            self.used_mem.add(self.now, d_mem)
        if d_cpu:
            self.used_cpu.add(self.now, d_cpu)

    def capacity_changed(self, d_mem: int, d_vc: int, d_real_mem: int = 0,
                         d_real_cpu: float = 0.0) -> None:
        self.cap_mem.add(self.now, d_mem)
        self.cap_vc.add(self.now, d_vc)
        if d_real_mem or d_real_cpu:
            self.real_mem.add(self.now, d_real_mem)
            self.real_cpu.add(self.now, d_real_cpu)

    def killed(self, reason: str, held_ms: int, what: str = "") -> None:
        self.kills += 1
        self.kills_by_reason[reason] = self.kills_by_reason.get(reason, 0) + 1
        self.wasted_ms += max(0, held_ms)
        self.kills_in_streak += 1
        key = f"{what}: {reason}" if what else reason
        self.kill_streak[key] = self.kill_streak.get(key, 0) + 1

    def progressed(self) -> None:
        """A task finished, or a job was submitted or ended: the kill streak ends."""
        if self.kills_in_streak:
            self.kills_in_streak = 0
            self.kill_streak = {}

    def report(self, mode: str, scheduler: str, workload: str, events: int,
               wall_s: float) -> Report:
        done = [j for j in self.jobs.values() if j.finish_ms]
        jcts = sorted((j.finish_ms - j.submit_ms) / 1000 for j in done)
        first = min((j.submit_ms for j in self.jobs.values()), default=0)
        last = max((j.finish_ms for j in done), default=first)
        end = last
        window = max(end - first, 0)

        def ratio(num: Integral, den: Integral) -> float:
            d = den.total(end) if window else 0.0
            return round(num.total(end) / d, 4) if d > 0 else 0.0

        return Report(
            mode=mode, scheduler=scheduler, workload=workload,
            makespan_s=round(window / 1000, 3),
            mean_jct_s=round(sum(jcts) / len(jcts), 3) if jcts else 0.0,
            p95_jct_s=round(jcts[max(0, math.ceil(0.95 * len(jcts)) - 1)], 3) if jcts else 0.0,
            utilization={"memory": ratio(self.alloc_mem, self.cap_mem),
                         "vcores": ratio(self.alloc_vc, self.cap_vc)},
            used_utilization={"memory": ratio(self.used_mem, self.real_mem),
                              "vcores": ratio(self.used_cpu, self.real_cpu)},
            locality_rate=round(self.maps_node_local / self.maps_with_input, 4)
            if self.maps_with_input else None,
            kills=self.kills, wasted_container_s=round(self.wasted_ms / 1000, 3),
            jobs=len(self.jobs), jobs_finished=sum(1 for j in done if j.state == "FINISHED"),
            jobs_failed=sum(1 for j in self.jobs.values() if j.state in ("FAILED", "KILLED")),
            mean_map_response_s=round(self.map_response_ms / self.maps_finished / 1000, 3)
            if self.maps_finished else None,
            kills_by_reason=dict(self.kills_by_reason), events=events, stalled=self.stalled,
            wall_s=round(wall_s, 3),
            job_order=[j.job for j in sorted(done, key=lambda j: (j.finish_ms, j.submit_ms))],
            job_times={j.job: {"submit_s": j.submit_ms / 1000, "start_s": j.start_ms / 1000,
                               "finish_s": j.finish_ms / 1000, "state": j.state,
                               "queue": j.queue, "user": j.user}
                       for j in self.jobs.values()},
        )


@dataclass(frozen=True)
class Report:
    """One run's figures (``to_json`` is the CLI's per-mode line)."""

    mode: str
    scheduler: str
    workload: str
    makespan_s: float
    mean_jct_s: float
    p95_jct_s: float
    utilization: dict[str, float]
    used_utilization: dict[str, float]
    locality_rate: float | None
    kills: int
    wasted_container_s: float
    jobs: int
    jobs_finished: int
    jobs_failed: int
    mean_map_response_s: float | None
    kills_by_reason: dict[str, int]
    events: int
    stalled: bool
    wall_s: float
    job_order: list[str]
    job_times: dict[str, dict[str, Any]]

    def to_json(self, with_jobs: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode, "scheduler": self.scheduler, "workload": self.workload,
            "makespan_s": self.makespan_s, "mean_jct_s": self.mean_jct_s,
            "p95_jct_s": self.p95_jct_s, "utilization": self.utilization,
            "used_utilization": self.used_utilization, "locality_rate": self.locality_rate,
            "kills": self.kills, "wasted_container_s": self.wasted_container_s,
            "jobs": self.jobs, "jobs_finished": self.jobs_finished,
            "jobs_failed": self.jobs_failed, "mean_map_response_s": self.mean_map_response_s,
            "kills_by_reason": self.kills_by_reason, "events": self.events,
            "wall_s": self.wall_s, "stalled": self.stalled,
        }
        if with_jobs:
            out["job_order"] = self.job_order
            out["job_times"] = self.job_times
        return out
