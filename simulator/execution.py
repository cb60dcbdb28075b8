"""The NodeManager side: running containers, task phases, contention and kills.

A running task advances through its phases at ``rate`` x real time. When the
CPU its node's containers use passes the node's real cores, every task that
uses CPU runs at ``real / used`` (proportional sharing, as CFS gives with equal
weights); a task whose phase uses no CPU is not slowed. When their resident
memory passes the node's real memory, the newest container (the one launched
last, not an AM unless nothing else is left) is killed, repeatedly, until the
rest fits: its work is lost and its task asks again (the kernel's or the NM's
memory enforcement; the AM counts that attempt as failed, see am.py). A
reduce that has finished shuffling waits, holding its container, until the
last map of its job is done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from yarn_advisor.simulator.apps import SimContainer, SimTask, live_count
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.events import EventQueue
from yarn_advisor.simulator.spec import MAP

if TYPE_CHECKING:
    from yarn_advisor.simulator.metrics import Metrics

SHUFFLE = "SHUFFLE"


class NodeManagers:
    """Runs tasks on nodes; calls back on a task's end or its container's kill."""

    def __init__(self, events: EventQueue, metrics: Metrics,
                 on_task_done: Callable[[SimTask], None],
                 on_killed: Callable[[SimContainer, str], None]) -> None:
        self.events = events
        self.metrics = metrics
        self.on_task_done = on_task_done
        self.on_killed = on_killed
        self.running: dict[SimNode, dict[SimContainer, None]] = {}

    # --- start / stop ---------------------------------------------------------------
    def start(self, c: SimContainer) -> None:
        """The container's process starts (task or AM)."""
        if c.state != "ALLOCATED":
            return
        now = self.events.now
        c.state = "RUNNING"
        c.started_ms = now
        task = c.task
        task.state = "RUNNING"
        task.start_ms = now
        if not task.first_start_ms:
            task.first_start_ms = now
        task.phase_idx = 0
        task.waiting_maps = False
        task.since = now
        task.work_left = task.phases[0].share * task.run_ms
        node = c.node
        self.running.setdefault(node, {})[c] = None
        self._use(node, task.phases[0].memory_mb, task.phases[0].cpu)
        task.rate = self._rate(node, task)
        self._schedule_phase_end(task)
        self._rebalance(node)

    def stop(self, c: SimContainer) -> None:
        """Remove a container's use from its node (it ended or was killed)."""
        if c.state != "RUNNING":
            return
        task = c.task
        node = c.node
        running = self.running.get(node)
        if running is not None:
            running.pop(c, None)
        ph = task.phase
        self._use(node, -ph.memory_mb, -ph.cpu)
        task.version += 1
        live_count(c, -1)
        c.state = "EXITED"
        self._rebalance(node)

    # --- phases ---------------------------------------------------------------------
    def _schedule_phase_end(self, task: SimTask) -> None:
        task.version += 1
        if task.run_ms <= 0 and task.phases[0].name == "AM":
            return  # the AM runs until its app finishes
        left = max(task.work_left, 0.0)
        rate = task.rate if task.rate > 0 else 1e-9
        delay = int(-(-left // rate)) if left > 0 else 0
        self.events.at(self.events.now + delay, self._phase_end, task, task.version)

    def _phase_end(self, task: SimTask, version: int) -> None:
        if version != task.version or task.state != "RUNNING":
            return
        c = task.container
        assert c is not None
        node = c.node
        ph = task.phase
        task.work_left = 0.0
        task.since = self.events.now
        if task.fail_at_ms >= 0 and self._reached_failure(task):
            self.on_killed(c, "FAILED")
            return
        if ph.name == SHUFFLE and task.kind != MAP and not task.app.maps_all_done():
            task.waiting_maps = True
            return
        if task.phase_idx + 1 >= len(task.phases):
            self.on_task_done(task)
            return
        task.phase_idx += 1
        nxt = task.phases[task.phase_idx]
        self._use(node, nxt.memory_mb - ph.memory_mb, nxt.cpu - ph.cpu)
        task.work_left = nxt.share * task.run_ms
        task.rate = self._rate(node, task)
        self._schedule_phase_end(task)
        self._rebalance(node)

    def _reached_failure(self, task: SimTask) -> bool:
        done_share = sum(p.share for p in task.phases[:task.phase_idx + 1])
        return done_share * task.run_ms >= task.fail_at_ms - 0.5

    def maps_done(self, tasks: list[SimTask]) -> None:
        """The job's last map finished: reduces waiting after their shuffle go on."""
        for t in tasks:
            if t.waiting_maps and t.state == "RUNNING":
                t.waiting_maps = False
                t.version += 1
                self.events.at(self.events.now, self._phase_end, t, t.version)

    # --- contention -----------------------------------------------------------------
    def _use(self, node: SimNode, mem: int, cpu: float) -> None:
        before_mem = min(node.use_mem, node.real_mem)
        before_cpu = min(node.use_cpu, node.real_cpu)
        node.use_mem += mem
        node.use_cpu += cpu
        if node.use_cpu < 1e-9:
            node.use_cpu = 0.0
        self.metrics.used_changed(
            min(node.use_mem, node.real_mem) - before_mem,
            min(node.use_cpu, node.real_cpu) - before_cpu)

    def _rate(self, node: SimNode, task: SimTask) -> float:
        return node.cpu_factor if task.phase.cpu > 0 else 1.0

    def _rebalance(self, node: SimNode) -> None:
        """Kill the newest containers while memory is over; re-rate tasks for CPU."""
        while node.use_mem > node.real_mem:
            victim = self._newest(node)
            if victim is None:
                break
            self.on_killed(victim, "KILLED_MEMORY")
        factor = 1.0 if node.use_cpu <= node.real_cpu else node.real_cpu / node.use_cpu
        if abs(factor - node.cpu_factor) < 1e-12:
            return
        node.cpu_factor = factor
        now = self.events.now
        for c in self.running.get(node, {}):
            t = c.task
            if t.waiting_maps or (t.kind == "AM"):
                continue
            new_rate = self._rate(node, t)
            if new_rate == t.rate:
                continue
            t.work_left -= (now - t.since) * t.rate
            t.since = now
            t.rate = new_rate
            self._schedule_phase_end(t)

    def _newest(self, node: SimNode) -> SimContainer | None:
        running = self.running.get(node)
        if not running:
            return None
        tasks = [c for c in running if not c.is_am]
        pool = tasks or list(running)
        return max(pool, key=lambda c: c.seq)

    def settle(self, c: SimContainer) -> None:
        """Bring a running task's progress up to now (for snapshots)."""
        t = c.task
        if c.state == "RUNNING" and not t.waiting_maps and t.kind != "AM":
            now = self.events.now
            t.work_left -= (now - t.since) * t.rate
            t.since = now
