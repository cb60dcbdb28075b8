"""The MapReduce AM's reduce scheduling (``RMContainerAllocator``, 3.4.2).

``schedule_reduces`` is ``scheduleReduces``: no reduce before ceil(slowstart
x maps) maps are done; all remaining reduces once no map waits for a
container; otherwise ramp up so reduces hold at most min(completed share,
``maxReduceRampupLimit`` 0.5) of the job's resource limit (headroom + what it
holds), ramping down pending reduces when over.
``preempt_reduces_if_needed`` is ``preemptReducesIfNeeded``: with maps
waiting and none assigned, when maps have waited over 300 s
(``reducer.unconditional-preempt.delay.sec``) or the headroom after pending
reduces cannot fit one map, take back the pending reduce asks and kill
running reduces (least progress first), enough for the waiting maps, at least
one map's worth, at most ``maxReducePreemptionLimit`` 0.5 of the limit.
Container counts use the vcores too only when the RM schedules on them
(``getSchedulerResourceTypes``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from yarn_advisor.simulator.apps import (
    PRIORITY_FAST_FAIL_MAP,
    PRIORITY_MAP,
    PRIORITY_REDUCE,
    SimApp,
    SimTask,
)
from yarn_advisor.simulator.spec import MAP

if TYPE_CHECKING:
    from yarn_advisor.simulator.am import MapReduceAM

MAX_REDUCE_RAMPUP = 0.5
MAX_REDUCE_PREEMPTION = 0.5
UNCONDITIONAL_PREEMPT_MS = 300_000


def _containers(avail: tuple[float, float], req: tuple[int, int], cpu: bool) -> int:
    """``ResourceCalculatorUtils.computeAvailableContainers`` (truncating, may be < 0)."""
    n = int(avail[0] / req[0]) if req[0] else 1 << 30
    if cpu and req[1]:
        n = min(n, int(avail[1] / req[1]))
    return n


def _ceil_containers(need: tuple[float, float], req: tuple[int, int], cpu: bool) -> int:
    n = math.ceil(need[0] / req[0]) if req[0] else 0
    if cpu and req[1]:
        n = max(n, math.ceil(need[1] / req[1]))
    return n


def counts(app: SimApp) -> tuple[int, int, int, int]:
    """Scheduled (asked) and assigned maps and reduces, as the AM counts them. The
    assigned ones are the app's containers of maps and of reduces ALLOCATED or
    RUNNING, counted as they change (``SimApp.live_maps``, ``live_reduces``), not
    looked for among its containers at every AM heartbeat."""
    asks = app.asks
    sm = sum(asks[p].count for p in (PRIORITY_MAP, PRIORITY_FAST_FAIL_MAP) if p in asks)
    sr = asks[PRIORITY_REDUCE].count if PRIORITY_REDUCE in asks else 0
    return sm, app.live_maps, sr, app.live_reduces


def counted(app: SimApp) -> tuple[int, int]:
    """``(live_maps, live_reduces)`` from scratch: the app's containers of maps and of
    reduces ALLOCATED or RUNNING (what the kept counts must equal)."""
    maps = reduces = 0
    for c in app.containers.values():
        if c.state in ("ALLOCATED", "RUNNING"):
            if c.task.kind == MAP:
                maps += 1
            elif not c.is_am:
                reduces += 1
    return maps, reduces

def _reqs(app: SimApp) -> tuple[tuple[int, int], tuple[int, int]]:
    m, r = app.job.maps, app.job.reduces
    mreq = (m.request.memory_mb, m.request.vcores) if m else (0, 0)
    rreq = (r.request.memory_mb, r.request.vcores) if r else (0, 0)
    return mreq, rreq

def schedule_reduces(am: MapReduceAM, app: SimApp) -> None:
    """``RMContainerAllocator.scheduleReduces``."""
    if app.state != "RUNNING" or app.job.reduces is None:
        return
    unrequested = [t for t in app.reduces if t.state == "NEW"]
    if not unrequested:
        return
    total = len(app.maps)
    if not app.reduce_started:
        if app.maps_completed < math.ceil(app.job.slowstart * total):
            return
        app.reduce_started = True
    sm, am_, sr, ar = counts(app)
    if sm == 0:
        for t in unrequested:
            _ask_reduce(am, app, t)
        return
    mreq, rreq = _reqs(app)
    cpu = am.cpu_types
    pct = app.maps_completed / total if total else 1.0
    hm, hv = am.rm.scheduler.headroom(app)
    limit = (hm + mreq[0] * am_ + rreq[0] * ar, hv + mreq[1] * am_ + rreq[1] * ar)
    f = min(pct, MAX_REDUCE_RAMPUP)
    ideal_red = (limit[0] * f, limit[1] * f)
    ideal_map = (limit[0] - ideal_red[0], limit[1] - ideal_red[1])
    net_map = (mreq[0] * (sm + am_), mreq[1] * (sm + am_))
    net_red = (rreq[0] * (sr + ar), rreq[1] * (sr + ar))
    if _containers(ideal_map, mreq, cpu) >= sm + am_:
        final_red = (ideal_red[0] + ideal_map[0] - net_map[0],
                     ideal_red[1] + ideal_map[1] - net_map[1])
    else:
        final_red = ideal_red
    ramp = _containers((final_red[0] - net_red[0], final_red[1] - net_red[1]), rreq, cpu)
    if ramp > 0:
        for t in unrequested[:ramp]:
            _ask_reduce(am, app, t)
    elif ramp < 0:
        _ramp_down(am, app, min(-ramp, sr))

def _ask_reduce(am: MapReduceAM, app: SimApp, task: SimTask) -> None:
    stage = app.job.reduces
    assert stage is not None
    am.rm.add_ask(app, PRIORITY_REDUCE, stage.request.memory_mb, stage.request.vcores,
                    task)

def _ramp_down(am: MapReduceAM, app: SimApp, n: int) -> None:
    pending = [t for t in app.reduces if t.state == "PENDING"]
    for t in pending[len(pending) - n:] if n > 0 else []:
        am.rm.remove_ask(app, t)
        t.state = "NEW"

def preempt_reduces_if_needed(am: MapReduceAM, app: SimApp) -> bool:
    """``RMContainerAllocator.preemptReducesIfNeeded``; True if it preempted."""
    if app.job.reduces is None or app.job.maps is None:
        return False
    sm, am_, sr, ar = counts(app)
    if am_ > 0 or sm <= 0:
        return False
    now = am.events.now
    waiting = [t for t in app.maps if t.state == "PENDING"]
    hanging = sum(1 for t in waiting if now - t.requested_ms > UNCONDITIONAL_PREEMPT_MS)
    mreq, rreq = _reqs(app)
    cpu = am.cpu_types
    if not hanging:
        hm, hv = am.rm.scheduler.headroom(app)
        avail = (hm - rreq[0] * sr, hv - rreq[1] * sr)
        if _containers(avail, mreq, cpu) > 0:
            return False
        hanging = len(waiting)
    _ramp_down(am, app, sr)
    hm, hv = am.rm.scheduler.headroom(app)
    limit = (hm + rreq[0] * ar, hv + rreq[1] * ar)
    one = _ceil_containers(mreq, rreq, cpu)
    by_limit = _ceil_containers((limit[0] * MAX_REDUCE_PREEMPTION,
                                 limit[1] * MAX_REDUCE_PREEMPTION), rreq, cpu)
    all_maps = _ceil_containers((mreq[0] * hanging, mreq[1] * hanging), rreq, cpu)
    to_preempt = min(max(one, by_limit), all_maps)
    running = sorted((t for t in app.reduces if t.state in ("ASSIGNED", "RUNNING")),
                     key=lambda t: t.progress)
    for t in running[:to_preempt]:
        if t.container is not None:
            am.container_killed(t.container, "PREEMPTED_BY_AM", by_rm=True)
    return True
