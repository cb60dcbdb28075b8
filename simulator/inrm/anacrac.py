"""ANACRAC as the RM's scheduler (Manjaly, Subbulakshmi, CSSE 2023; seed 003).

The seed's "Algorithm: ANACRAC scheduler" (steps 1-30), on the Fair
scheduler (apps by the Fair policy's usage, one container per heartbeat
unless ``assignmultiple``), with the application rules of Table 4 (the
advisor's :class:`~yarn_advisor.advisor.policies.anacrac.params.Rule`, the
first matching one applies) and the advisor's Eq 1-3 and Eq 9-12. On a
heartbeat, apps are tried in order, HIGH priority first (step 9), each:

* steps 12-14, node and container awareness (``node``, ``container``): the
  node must be one of the rule's hosts M (Eq 1) and hold fewer than P of the
  app's *task* containers (Eq 2; Table 4's ``tasks.maximum``, so the AM does
  not count); else the app waits (steps 26-27) and the next is tried;
* step 15, "the node has a local container": the app's most urgent request
  that fits the node's free room is node-local here, or has no locality (AMs,
  reduces, ingestion tasks); otherwise (step 20) only a HIGH-priority app
  takes it non-locally, and is reset to Normal -- the delay scheduling the
  paper combines with its awareness (section 2);
* step 16, resource awareness (``resource``): for a rule with a CPU / ALL
  ``job_type``, a node whose CPU use has reached ``cpu_threshold`` percent of
  its cores takes nothing more this heartbeat (step 19); IO use is not
  simulated, so IO thresholds never trigger;
* steps 17-18, adaptive sizing (``adaptive``): for a rule with a
  ``container_job_type``, when the app's containers use on average more than
  ``container_*_threshold`` percent of what they hold (Eq 9-11), its new
  containers get K + the increment (Eq 12), else K (its request);
* steps 26-27: each skip adds one to the app's waiting count; past
  ``max_wait`` skips (default: one per node, a heartbeat round) it is HIGH.

Without configured rules, :func:`derive_rules` writes the rules an operator
of the workload's cluster would: for each application type whose tasks need
a node tag (external access) or may run only so many per node, its hosts are
the tagged nodes and its ``tasks_maximum`` that limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from yarn_advisor.advisor.policies.anacrac import core as ac
from yarn_advisor.advisor.policies.anacrac.params import Rule
from yarn_advisor.simulator.apps import Ask, SimApp
from yarn_advisor.simulator.cluster import SimNode, build_nodes
from yarn_advisor.simulator.inrm.base import InRMBase, locality_on
from yarn_advisor.simulator.rm import RMCore
from yarn_advisor.simulator.schedulers.base import Calculator
from yarn_advisor.simulator.spec import SchedulerSpec, Workload

AWARENESS = ("node", "container", "resource", "adaptive")


def derive_rules(wl: Workload) -> tuple[Rule, ...]:
    """The Table 4 rules the workload's ingestion apps need (see the module docstring)."""
    nodes = build_nodes(wl.cluster, wl.cluster.timing.nm_heartbeat)
    found: dict[str, Rule] = {}
    for job in wl.jobs:
        for stage in (job.maps, job.reduces):
            if stage is None or not (stage.fail_off_tag or stage.per_node_limit):
                continue
            hosts = tuple(n.host for n in nodes if stage.fail_off_tag in n.tags) \
                if stage.fail_off_tag else ()
            found.setdefault(job.app_type, Rule(
                name=f"{job.app_type.lower()}-ingestion", app_type=job.app_type, hosts=hosts,
                tasks_maximum=stage.per_node_limit or None))
    return tuple(found.values())


def matches(rule: Rule, app: SimApp) -> bool:
    """The advisor's rule matching (``anacrac.inputs.matches``) on a simulated app."""
    if rule.app_name is not None and not re.search(rule.app_name, app.name):
        return False
    if rule.app_type is not None and rule.app_type.lower() != app.job.app_type.lower():
        return False
    if rule.queue is not None and rule.queue not in (app.job.queue, f"root.{app.job.queue}"):
        return False
    return rule.tag is None or rule.tag in app.tags


class AnacracScheduler(InRMBase):
    """ANACRAC (see the module docstring)."""

    def __init__(self, spec: SchedulerSpec, rules: Sequence[Rule] = (),
                 awareness: Sequence[str] = AWARENESS, max_wait: int | None = None) -> None:
        super().__init__(spec)
        unknown = set(awareness) - set(AWARENESS)
        if unknown:
            raise ValueError(f"unknown awareness {sorted(unknown)} (of {', '.join(AWARENESS)})")
        self.rules = tuple(rules)
        self.awareness = frozenset(awareness)
        self.max_wait = max_wait
        self.type_name = "inrm:anacrac"
        self.rule_of: dict[SimApp, Rule | None] = {}
        self.waited: dict[SimApp, int] = {}
        self.high: set[SimApp] = set()
        self.base_size: dict[tuple[SimApp, int], tuple[int, int]] = {}

    def attach(self, rm: RMCore) -> None:
        super().attach(rm)
        rm.calc = Calculator(dominant=True)  # the Fair scheduler's Resources.fitsIn

    def app_added(self, app: SimApp) -> None:
        self.rule_of[app] = next((r for r in self.rules if matches(r, app)), None)

    def app_done(self, app: SimApp) -> None:
        super().app_done(app)
        self.rule_of.pop(app, None)
        self.waited.pop(app, None)
        self.high.discard(app)

    # --- heartbeat ----------------------------------------------------------------------
    def order(self) -> list[SimApp]:
        """Step 9: HIGH first, then the Fair policy (memory, or dominant share), then age."""
        tm, tv = self.rm.partition_total("")
        drf = self.spec.fair_policy == "drf"

        def usage(a: SimApp) -> float:
            if not drf:
                return float(a.alloc_mem)
            return max(a.alloc_mem / tm if tm else 0.0, a.alloc_vc / tv if tv else 0.0)

        return sorted(self.pending(), key=lambda a: (a not in self.high, usage(a), a.seq))

    def node_update(self, node: SimNode) -> None:
        while True:
            outcome = "none"
            for app in self.order():
                outcome = self.try_app(app, node)
                if outcome != "skip":
                    break
            if outcome != "allocated" or not self.spec.assign_multiple:
                return

    def try_app(self, app: SimApp, node: SimNode) -> str:
        """Steps 11-28 for one app: ``allocated``, ``stop`` (node too busy) or ``skip``."""
        rule = self.rule_of.get(app)
        if rule is not None and not self._restrictions_hold(rule, app, node):
            return self._wait(app)
        ask = next((a for a in self.asks_of(app) if self._fits(app, a, node)), None)
        if ask is None:
            return "skip"
        if locality_on(ask, node) == "NODE_LOCAL" or not ask.by_host:
            if rule is not None and "resource" in self.awareness and self._hot(rule, node):
                return "stop"  # step 19
            self._allocate(app, ask, node, rule)
            return "allocated"
        if app in self.high:  # steps 20-22
            self._allocate(app, ask, node, rule)
            return "allocated"
        return self._wait(app)

    def _restrictions_hold(self, rule: Rule, app: SimApp, node: SimNode) -> bool:
        """Eq 1 and Eq 2 for the app's next task on ``node``."""
        in_m = not rule.hosts or node.host in rule.hosts or node.id in rule.hosts
        if "node" in self.awareness and ac.node_restriction(in_m) == 0:
            return False
        if "container" not in self.awareness or rule.tasks_maximum is None:
            return True
        tasks = sum(1 for c in node.containers.values()
                    if c.app is app and not c.is_am and c.state in ("ALLOCATED", "RUNNING"))
        return ac.container_restriction(tasks + 1, rule.tasks_maximum) == 1

    def _hot(self, rule: Rule, node: SimNode) -> bool:
        cpu = 100.0 * min(node.use_cpu, node.real_cpu) / node.real_cpu if node.real_cpu else None
        return bool(ac.hot(rule, ac.NodeLoad(cpu, None)))

    def _wait(self, app: SimApp) -> str:
        """Steps 26-27."""
        n = self.waited.get(app, 0)
        limit = self.max_wait if self.max_wait is not None else self.rm.running_nodes
        if n > limit:
            self.high.add(app)
        else:
            self.waited[app] = n + 1
        return "skip"

    # --- sizes (Eq 9-12) -----------------------------------------------------------------
    def _size(self, app: SimApp, ask: Ask, rule: Rule | None) -> tuple[int, int]:
        k = self.base_size.setdefault((app, ask.priority), (ask.mem, ask.vc))
        if rule is None or rule.container_job_type is None or "adaptive" not in self.awareness:
            return k
        mem, vc = k
        kind = rule.container_job_type
        if kind in ("CPU", "ALL") and self._average_use(app, cpu=True) is not None:
            u = self._average_use(app, cpu=True)
            assert u is not None
            vc = ac.adaptive_size(vc, u, rule.container_cpu_threshold,
                                  rule.container_cpu_increment)
        if kind in ("MEMORY", "ALL") and self._average_use(app, cpu=False) is not None:
            u = self._average_use(app, cpu=False)
            assert u is not None
            mem = ac.adaptive_size(mem, u, rule.container_memory_threshold,
                                   rule.container_memory_increment_mb)
        return self.rm.normalize(mem, vc)

    def _average_use(self, app: SimApp, cpu: bool) -> float | None:
        """Eq 9-11: the app's running task containers' mean use, percent of their size."""
        use = [100.0 * (c.task.phase.cpu / c.vc if cpu else c.task.phase.memory_mb / c.mem)
               for c in app.containers.values()
               if c.state == "RUNNING" and not c.is_am and (c.vc if cpu else c.mem) > 0]
        return ac.app_average_usage(ac.app_total_usage(use), len(use))

    def _fits(self, app: SimApp, ask: Ask, node: SimNode) -> bool:
        mem, vc = self._size(app, ask, self.rule_of.get(app))
        return self.fits_free(mem, vc, node)

    def _allocate(self, app: SimApp, ask: Ask, node: SimNode, rule: Rule | None) -> None:
        ask.mem, ask.vc = self._size(app, ask, rule)
        self.place(app, ask, node)
        self.waited.pop(app, None)
        self.high.discard(app)
