"""Small builders for hand-computable simulator cases (no file, no loader)."""

from __future__ import annotations

from yarn_advisor.simulator.spec import (
    MAP,
    REDUCE,
    Cluster,
    Job,
    NodeGroup,
    Phase,
    Res,
    SchedulerSpec,
    Stage,
    Timing,
    Workload,
)

# heartbeats every second; the AM registers, containers launch and apps end at once
INSTANT = Timing(nm_heartbeat=1000, am_heartbeat=1000, container_launch=0, am_launch=0,
                 am_finish=0)


def stage(kind: str, durations_s: list[float], mem: int = 1024, vc: int = 1,
          phases: tuple[Phase, ...] | None = None, hosts: tuple[str, ...] = ()) -> Stage:
    if phases is None:
        phases = ((Phase("SHUFFLE", 1 / 3, mem, 0.1 * vc), Phase("REDUCE", 2 / 3, mem, vc))
                  if kind == REDUCE else (Phase(kind, 1.0, mem, vc),))
    return Stage(kind, Res(mem, vc), tuple(int(d * 1000) for d in durations_s), phases,
                 input="hosts" if hosts else "none", hosts=hosts)


def maps(durations_s: list[float], **kw: object) -> Stage:
    return stage(MAP, durations_s, **kw)  # type: ignore[arg-type]


def reduces(durations_s: list[float], **kw: object) -> Stage:
    return stage(REDUCE, durations_s, **kw)  # type: ignore[arg-type]


AM = Res(1024, 1)
AM_USE = Phase("AM", 1.0, 512, 0.0)
MIN_ALLOC = Res(1024, 1)


def job(jid: str, m: Stage | None = None, r: Stage | None = None, submit_s: float = 0,
        am: Res = AM, am_use: Phase = AM_USE, **kw: object) -> Job:
    return Job(id=jid, name=jid, submit_ms=int(submit_s * 1000), maps=m, reduces=r, am=am,
               am_use=am_use, **kw)  # type: ignore[arg-type]


def workload(jobs: list[Job], *, nodes: int = 1, mem: int = 4096, vc: int = 4,
             real_mem: int = 0, real_cpu: float = 0.0, groups: tuple[NodeGroup, ...] = (),
             scheduler: SchedulerSpec | None = None, nodes_per_rack: int = 0,
             timing: Timing = INSTANT, minimum: Res = MIN_ALLOC) -> Workload:
    cluster = Cluster(groups=groups or (NodeGroup(nodes, mem, vc, real_mem, real_cpu),),
                      nodes_per_rack=nodes_per_rack, timing=timing, minimum_allocation=minimum,
                      maximum_allocation=Res(1 << 20, 1 << 10))
    return Workload("test", cluster, scheduler or SchedulerSpec(), tuple(jobs))
