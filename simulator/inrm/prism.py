"""PRISM as the RM's scheduler (Mahendrakar, Patil, IJCA 2017, after Zhang et al.,
IEEE TCC 2015; seed 004).

The section 4.1 listing runs on every heartbeat through the advisor's
``schedule_machine`` (:mod:`yarn_advisor.advisor.policies.prism.core`): the
candidate set is rebuilt after each pick from the top-k jobs by deficit
(``1/N`` minus the job's dominant share), each offering the first phase of a
data-local task if it has one for this node, else of a non-local one (lines
11-17); a phase not schedulable on the node's phase-level utilization (line
20) or with ``U(i, n) = U_fairness + a * U_perf <= 0`` leaves the set; the
best one is placed and the node's utilization updated (lines 29-33), until
the set is empty. The utility's measures are the advisor's (see its core).

What the RM knows (the "job progress monitor"): per job, kind and phase, the
use its NodeManagers measured for tasks in that phase (learned as tasks are
seen running); a phase never seen counts the task's request.

Choices where a YARN simulator differs from PRISM's phase-level RM:

* containers keep their requested size, but admission is on *phase-level*
  use, so a node may hold more than its schedulable size (the RM's own view
  is then over-committed; the base class keeps such nodes beating);
* the simulated NodeManager runs a task's phases back to back -- there is no
  permission to ask between phases (lines 6-10: next phases of running tasks
  are not candidates). So that a later phase cannot overrun memory (which
  the NM would answer with a kill), a task counts its *largest* remaining
  memory and its current CPU: memory is reserved for the whole task, CPU,
  which the kernel shares, by phase; a phase that needs more CPU later runs
  slower instead of waiting for permission;
* AMs (no phases in PRISM's JobTracker world) are placed first, by
  submission, when their measured use fits.
"""

from __future__ import annotations

from yarn_advisor.advisor.policies.prism import core as pc
from yarn_advisor.advisor.policies.prism.params import Params as PrismParams
from yarn_advisor.simulator.apps import PRIORITY_AM, Ask, SimApp, SimContainer, SimTask
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.inrm.base import InRMBase, locality_on
from yarn_advisor.simulator.rm import RMCore
from yarn_advisor.simulator.schedulers.base import Calculator
from yarn_advisor.simulator.spec import MAP, Phase, SchedulerSpec

ProfileKey = tuple[str, str, int]  # (job name, MAP | REDUCE, phase index)


class PrismScheduler(InRMBase):
    """PRISM (see the module docstring)."""

    needs_ticks = True

    def __init__(self, spec: SchedulerSpec, params: PrismParams | None = None) -> None:
        super().__init__(spec)
        self.params = params or PrismParams()
        self.type_name = "inrm:prism"
        self.profiles: dict[ProfileKey, pc.Vec] = {}
        self.held: dict[SimContainer, pc.Vec] = {}  # allocated, not started: its demand

    def attach(self, rm: RMCore) -> None:
        super().attach(rm)
        rm.calc = Calculator(dominant=True)

    # --- profiles and phase-level use ---------------------------------------------------
    def learn(self, node: SimNode) -> None:
        """The NM's report: each running task's use in its current phase."""
        for c in node.containers.values():
            if c.state == "RUNNING" and not c.is_am:
                ph = c.task.phase
                self.profiles[(c.app.name, c.task.kind, c.task.phase_idx)] = (
                    float(ph.memory_mb), ph.cpu)

    def _phase_use(self, app: SimApp, kind: str, idx: int, ask_size: pc.Vec) -> pc.Vec:
        return self.profiles.get((app.name, kind, idx), ask_size)

    def demand(self, app: SimApp, kind: str, phases: tuple[Phase, ...], start: int,
               size: pc.Vec) -> pc.Vec:
        """(largest memory from phase ``start`` on, CPU of phase ``start``), as profiled."""
        uses = [self._phase_use(app, kind, i, size) for i in range(start, max(len(phases), 1))]
        return max(u[0] for u in uses), uses[0][1]

    def phase_used(self, node: SimNode) -> pc.Vec:
        """The node's phase-level utilization as PRISM accounts it."""
        mem = cpu = 0.0
        for c in node.containers.values():
            if c.state == "RUNNING":
                if c.is_am:
                    mem += c.task.phase.memory_mb
                    cpu += c.task.phase.cpu
                    continue
                t = c.task
                d = self.demand(c.app, t.kind, t.phases, t.phase_idx, (c.mem, c.vc))
                mem += max(d[0], t.phase.memory_mb)
                cpu += t.phase.cpu
            elif c.state == "ALLOCATED":
                d = self.held.get(c, (float(c.mem), float(c.vc)))
                mem += d[0]
                cpu += d[1]
        return mem, cpu

    def room(self, node: SimNode) -> bool:
        used = self.phase_used(node)
        return pc.schedulable(used, (self.rm.minimum.memory_mb, self.rm.minimum.vcores),
                              (node.total_mem, node.total_vc))

    # --- heartbeat ----------------------------------------------------------------------
    def node_update(self, node: SimNode) -> None:
        self.learn(node)
        cap = (float(node.total_mem), float(node.total_vc))
        for app in self.pending():  # AMs first
            ask = app.asks.get(PRIORITY_AM)
            if ask is None or ask.count == 0 or not self.am_allowed(app):
                continue
            d = (float(app.job.am_use.memory_mb), app.job.am_use.cpu)
            if pc.schedulable(self.phase_used(node), d, cap):
                self.held[self.place(app, ask, node)] = d
        tm, tv = self.rm.partition_total("")
        cluster = (float(tm), float(tv))
        active = [a for a in self.apps if not a.is_done]
        fair = 1.0 / len(active) if active else 0.0
        by_id = {a.id: a for a in active}
        p = self.params

        def candidates(used: pc.Vec) -> list[pc.Phase]:
            jobs = [a for a in self.pending() if any(pr != PRIORITY_AM for pr in a.asks
                                                     if a.asks[pr].count)]
            jobs.sort(key=lambda a: (-(fair - pc.dominant_share(_alloc(a), cluster)), a.seq))
            out = []
            for app in jobs[:p.top_k]:
                for ask in self.asks_of(app):
                    if ask.priority != PRIORITY_AM:
                        out.append(self._first_phase(app, ask, node))
            return out

        def commit(phase: pc.Phase) -> None:
            app = by_id[phase.job]
            ask = app.asks[int(phase.task.rsplit("#", 1)[1])]
            self.held[self.place(app, ask, node)] = phase.demand

        pc.schedule_machine(cap, self.phase_used(node), candidates, commit,
                            lambda j: _alloc(by_id[j]), fair, cluster, p.a,
                            p.max_phases_per_node)

    def _first_phase(self, app: SimApp, ask: Ask, node: SimNode) -> pc.Phase:
        task: SimTask = ask.pick(node, locality_on(ask, node))
        stage = app.job.maps if task.kind == MAP else app.job.reduces
        phases = stage.phases if stage is not None else ()
        size = (float(ask.mem), float(ask.vc))
        useful = 1.0
        if task.kind != MAP and app.maps and not app.maps_all_done():
            useful = app.maps_completed / len(app.maps)  # an early shuffle fetches done maps
        return pc.Phase(app.id, f"{app.id}#{ask.priority}", task.kind,
                        phases[0].name if phases else task.kind,
                        self.demand(app, task.kind, phases, 0, size), size, useful,
                        local=locality_on(ask, node) == "NODE_LOCAL")

    def on_release(self, c: SimContainer) -> None:
        super().on_release(c)
        self.held.pop(c, None)


def _alloc(app: SimApp) -> pc.Vec:
    return float(app.alloc_mem), float(app.alloc_vc)
