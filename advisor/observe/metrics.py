"""Prometheus metrics: a stateless collector over the latest cycle report.

Each scrape reads the newest :class:`CycleReport` and the :class:`Totals` fresh
(as client_python recommends for custom collectors). Names and units follow
the Prometheus conventions (base units: bytes, seconds, ratios 0-1; counters
end in ``_total``; ``promtool check metrics`` is clean, a test checks it).

Labels are bounded: source, step, outcome, reason, policy, kind, rule, mode
and class names, leaf queues; app, node and other target ids only for the
top ``TOP_N`` recommendations of each (policy, kind); never container ids,
never one series per node (per-node quantities are summed).

Every action and recommendation series carries ``mode``: ``enforce`` when the
policy's recommendations are really sent, ``dry_run`` otherwise. Label values
known in advance (skip and block reasons, sources, classes, HA states) are
exported at zero before they first happen, so a query never returns nothing
just because nothing went wrong yet.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from yarn_advisor.advisor.act.outcomes import Block
from yarn_advisor.advisor.act.watchdog import Signal
from yarn_advisor.advisor.engine.classify import ClassifierSummary
from yarn_advisor.advisor.loop.report import CycleReport, Totals
from yarn_advisor.advisor.model.decision_table import Reason
from yarn_advisor.advisor.model.families import MIB, TOP_N, counter, gauge, single
from yarn_advisor.advisor.model.payloads import ContainerSize, NodeResource, Priority
from yarn_advisor.advisor.model.plugin import FALLBACKS, PluginStatus
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import POLICIES, AnyPolicy
from yarn_advisor.config.schema import AdvisorConfig

SOURCES = ("rm", "containers", "nm_jmx", "rm_jmx", "scheduler_conf", "rm_conf", "mapreduce",
           "history")
# the reason classes of skipped cycles: ConnectorError.reason of the required read that
# failed, "disk" (the journal or state could not be written) or "internal error" (the
# first word of CycleReport.reason)
SKIP_REASONS = ("auth", "disk", "error", "http_status", "internal error", "parse", "standby",
                "timeout", "unavailable")
HA_STATES = ("ACTIVE", "STANDBY", "INITIALIZING", "STOPPED")
CLASSES = ("short", "long")
Mode = Callable[[str], str]  # policy -> "enforce" | "dry_run"


def dry_run_only(policy: str) -> str:
    """The mode of every policy of an advisor that cannot write (replays, tests)."""
    return "dry_run"


@dataclass(frozen=True)
class BuildInfo:
    """What ``yarn_advisor_build_info`` says: the package version and the config hash."""

    version: str
    config_hash: str

    @classmethod
    def of(cls, config: AdvisorConfig | None) -> BuildInfo:
        """The installed version and ``config.fingerprint()`` (``unknown`` without one)."""
        try:
            version = metadata.version("yarn-advisor")
        except metadata.PackageNotFoundError:
            version = "unknown"
        return cls(version, config.fingerprint() if config is not None else "unknown")


class AdvisorCollector(Collector):
    """Yields the advisor's metric families from ``latest()`` and ``totals``.

    ``blocked``: guardrail blocks by reason since start; ``mode``: each policy's
    mode; ``build``: the version and configuration hash of this process;
    ``trips``: the harm watchdog's trips by (policy, signal) since start, and
    ``tripped``: the policies it holds in dry-run now.
    """

    def __init__(self, latest: Callable[[], CycleReport | None], totals: Totals,
                 blocked: Callable[[], Mapping[Block, int]] = dict, mode: Mode = dry_run_only,
                 build: BuildInfo | None = None,
                 policies: Mapping[str, AnyPolicy] = POLICIES,
                 trips: Callable[[], Mapping[tuple[str, Signal], int]] = dict,
                 tripped: Callable[[], Collection[str]] = tuple) -> None:
        self.latest = latest
        self.trips = trips
        self.tripped = tripped
        self.totals = totals
        self.blocked = blocked
        self.mode = mode
        self.build = build or BuildInfo.of(None)
        self.policies = policies

    def collect(self) -> Iterable[Metric]:
        report = self.latest()
        yield gauge("build_info", "Version of the advisor and hash of its effective "
                    "configuration (always 1)", ["version", "config_hash"],
                    [((self.build.version, self.build.config_hash), 1)])
        yield from self._totals(report)
        if report is None:
            return
        yield from _cycle(report)
        yield from self._actions_of_cycle(report)
        if report.snapshot is not None:
            yield from _snapshot(report.snapshot)
            if report.snapshot.plugin is not None:
                yield from _plugin(report.snapshot.plugin)
        yield from self._recommendations(report.recommendations)
        yield from self._policies(report)
        if report.classifier is not None:
            yield from _classifier(report.classifier)

    def _policies(self, report: CycleReport) -> Iterable[Metric]:
        """Each policy's own families (its ``metrics`` hook) from its latest state and
        recommendations, in registry order."""
        for name, policy in self.policies.items():
            if name in report.states:
                recs = [r for r in report.recommendations if r.policy == name]
                yield from policy.export(report.states[name], recs, self.mode(name))

    def _advisor_mode(self, report: CycleReport | None) -> str:
        """``enforce`` if any policy seen so far enforces (blocks by reason are not
        kept per policy; ``actions_total{outcome="blocked"}`` has the exact split)."""
        policies = {p for (_, p, _) in self.totals.actions}
        policies |= {r.policy for r in report.recommendations} if report else set()
        return "enforce" if any(self.mode(p) == "enforce" for p in policies) else "dry_run"

    def _totals(self, report: CycleReport | None) -> Iterable[Metric]:
        t = self.totals
        yield counter("cycles", "Cycles by outcome (ok, skipped)", ["outcome"],
                      [((o,), t.cycles[o]) for o in ("ok", "skipped")])
        skipped = Counter(dict.fromkeys(SKIP_REASONS, 0)) + Counter(t.skipped)
        yield counter("cycles_skipped", "Skipped cycles by reason class (the failed read's "
                      "error class, or internal error)", ["reason"],
                      [((r,), skipped[r]) for r in sorted(set(SKIP_REASONS) | set(t.skipped))])
        yield counter("connector_errors", "Failed reads by source", ["source"],
                      [((s,), t.source_errors[s]) for s in SOURCES])
        yield counter("actions", "Recommendations through the actuator by kind, policy, "
                      "outcome and mode", ["kind", "policy", "outcome", "mode"],
                      [((k.value, p, o, self.mode(p)), n)
                       for (k, p, o), n in sorted(t.actions.items())])
        blocked = {b.value: 0 for b in Block} | {b.value: n for b, n in self.blocked().items()}
        mode = self._advisor_mode(report)
        yield counter("actions_blocked", "Actions a guardrail stopped, by reason (mode: the "
                      "advisor's)", ["reason", "mode"],
                      [((r, mode), n) for r, n in sorted(blocked.items())])
        trips = {(p, sig.value): 0 for p in self.policies for sig in Signal} | {
            (p, sig.value): n for (p, sig), n in self.trips().items()}
        yield counter("watchdog_trips", "Policies the harm watchdog switched to dry-run (and "
                      "rolled back), by policy and signal", ["policy", "signal"],
                      sorted(trips.items()))
        held = set(self.tripped())
        yield gauge("policy_tripped", "1 while the harm watchdog holds the policy in dry-run",
                    ["policy"], [((p,), int(p in held)) for p in sorted(set(self.policies) | held)])
        ran = set(report.policy_seconds) if report is not None else set()
        yield counter("policy_errors", "Policy (and classifier) failures; the cycle went on "
                      "without them", ["policy"],
                      [((p,), t.policy_errors[p]) for p in sorted(ran | set(t.policy_errors))])

    def _actions_of_cycle(self, report: CycleReport) -> Iterable[Metric]:
        yield gauge("cycle_actions", "Recommendations through the actuator in the latest "
                    "cycle by kind, policy, outcome and mode", ["kind", "policy", "outcome",
                                                                 "mode"],
                    [((k.value, p, o, self.mode(p)), n)
                     for (k, p, o), n in sorted(report.actions.items())])

    def _recommendations(self, recs: Sequence[Recommendation]) -> Iterable[Metric]:
        mode = self.mode
        counts = Counter((r.policy, r.kind.value) for r in recs)
        yield gauge("recommendations", "Recommendations of the latest cycle by policy, kind "
                    "and mode", ["policy", "kind", "mode"],
                    [((p, k, mode(p)), n) for (p, k), n in sorted(counts.items())])
        top = _top_per_policy_kind(recs)
        yield gauge("recommendation_info", f"The first {TOP_N} targets of each policy and "
                    "kind in the latest cycle, with the rule that fired (always 1)",
                    ["policy", "kind", "target", "rule", "mode"],
                    [((r.policy, r.kind.value, r.target, r.explanation.rule, mode(r.policy)), 1)
                     for r in top])
        sized = [(r, r.value) for r in top if isinstance(r.value, NodeResource | ContainerSize)]
        memory = [(r, v.memory_mb) for r, v in sized if v.memory_mb is not None]
        vcores = [(r, v.vcores) for r, v in sized if v.vcores is not None]
        yield gauge("recommended_memory_bytes", "Memory a recommendation asks for (node "
                    "resource, container size), top targets", ["policy", "kind", "target",
                                                                "mode"],
                    [((r.policy, r.kind.value, r.target, mode(r.policy)), mb * MIB)
                     for r, mb in memory])
        yield gauge("recommended_vcores", "Vcores a recommendation asks for (node resource, "
                    "container size), top targets", ["policy", "kind", "target", "mode"],
                    [((r.policy, r.kind.value, r.target, mode(r.policy)), vc)
                     for r, vc in vcores])
        yield _top_priorities(recs, mode)


def _top_per_policy_kind(recs: Sequence[Recommendation]) -> list[Recommendation]:
    """The first TOP_N recommendations of each (policy, kind), in the order the policy
    ranked them (its own emission order)."""
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for r in recs:
        key = (r.policy, r.kind.value)
        if seen[key] < TOP_N:
            seen[key] += 1
            out.append(r)
    return out


def _top_priorities(recs: Sequence[Recommendation], mode: Mode) -> Metric:
    """Recommended priorities of the top-N apps only (bounded label set)."""
    prio = [(r.value.value, r) for r in recs if isinstance(r.value, Priority)]
    top = sorted(prio, key=lambda vr: (-vr[0], vr[1].target))[:TOP_N]
    return gauge("recommended_app_priority", f"Recommended priority of the top {TOP_N} apps "
                 "of the latest cycle", ["app", "policy", "mode"],
                 [((r.target, r.policy, mode(r.policy)), float(v)) for v, r in top])


def _cycle(report: CycleReport) -> Iterable[Metric]:
    srcs = sorted(report.sources.items())
    yield gauge("connector_up", "1 if the source was read in the latest cycle", ["source"],
                [((n,), 1.0 if s.ok else 0.0) for n, s in srcs])
    yield gauge("connector_latency_seconds", "Time spent reading the source in the latest "
                "cycle", ["source"], [((n,), s.seconds) for n, s in srcs])
    yield gauge("cycle_step_seconds", "Duration of each step of the latest cycle", ["step"],
                [((s,), sec) for s, sec in report.step_seconds.items()])
    yield gauge("policy_seconds", "Time each policy took in the latest cycle", ["policy"],
                [((p,), sec) for p, sec in report.policy_seconds.items()])
    yield single("cycle_duration_seconds", "Duration of the latest cycle", report.seconds)
    yield single("last_cycle_timestamp_seconds", "Start of the latest cycle (unix time)",
                 report.started_at)
    yield single("last_cycle_ok", "1 if the latest cycle sensed the cluster",
                 1.0 if report.outcome == "ok" else 0.0)


def _classifier(c: ClassifierSummary) -> Iterable[Metric]:
    yield gauge("classifier_predictions", "Pending request groups by predicted class "
                "(latest cycle)", ["class"], [((k,), c.predictions.get(k, 0)) for k in CLASSES])
    yield gauge("classifier_recall", "Running recall of the classifier's predictions, by "
                "actual class (absent until a task of the class was scored)", ["class"],
                [((k,), v) for k in CLASSES if (v := c.recall.get(k)) is not None])
    yield counter("classifier_outcomes", "Predictions scored against what the task turned "
                  "out to be", ["actual", "predicted"],
                  [((a, p), c.outcomes.get((a, p), 0)) for a in CLASSES for p in CLASSES])
    yield gauge("classifier_learned", "Tasks learned in the latest cycle (finished, censored, "
                "running)", ["kind"], [((k,), n) for k, n in sorted(c.learned.items())])
    yield gauge("classifier_long_called_short_ratio", "Long tasks called short as a share of "
                "the long tasks learned: realized on this cluster, and allowed (the budget)",
                ["kind"], [((k,), v) for k, v in sorted(c.long_called_short.items())])
    if c.confidence is not None:
        yield single("classifier_confidence", "P(short) a task needs to be called short: "
                     "calibrated to this cluster, or the default at cold start", c.confidence)


def _snapshot(s: Snapshot) -> Iterable[Metric]:
    yield gauge("snapshot_objects", "Objects in the latest snapshot", ["kind"], [
        (("nodes",), len(s.nodes)), (("queues",), len(s.queues)), (("apps",), len(s.apps)),
        (("containers",), len(s.containers)), (("pending_requests",), s.pending_requests),
        (("tasks",), len(s.tasks)), (("finished_tasks",), len(s.finished_tasks))])
    yield single("snapshot_timestamp_seconds", "Cluster time of the latest snapshot "
                 "(unix time)", s.taken_at / 1000)
    m = s.metrics
    kinds = (("total", m.total), ("allocated", m.allocated), ("available", m.available),
             ("reserved", m.reserved))
    yield gauge("cluster_memory_bytes", "Cluster memory by kind (total, allocated, available, "
                "reserved), RM metrics", ["kind"], [((k,), r.memory_mb * MIB) for k, r in kinds])
    yield gauge("cluster_vcores", "Cluster vcores by kind (total, allocated, available, "
                "reserved), RM metrics", ["kind"], [((k,), r.vcores) for k, r in kinds])
    measured = [n.utilization for n in s.nodes if n.utilization is not None]
    if measured:
        yield gauge("cluster_measured_memory_bytes", "Physical memory in use as the "
                    "NodeManagers measure it, summed over nodes: the whole node or its "
                    "containers", ["scope"],
                    [(("node",), sum(u.node_pmem_mb for u in measured) * MIB),
                     (("containers",), sum(u.containers_pmem_mb for u in measured) * MIB)])
        yield gauge("cluster_measured_vcores", "CPU in use as the NodeManagers measure it "
                    "(vcores), summed over nodes: the whole node or its containers", ["scope"],
                    [(("node",), sum(u.node_cpu for u in measured)),
                     (("containers",), sum(u.containers_cpu for u in measured))])
    yield gauge("cluster_apps", "Applications by state (RM metrics)", ["state"], [
        (("running",), m.apps_running), (("pending",), m.apps_pending),
        (("completed",), m.apps_completed), (("failed",), m.apps_failed),
        (("killed",), m.apps_killed)])
    yield gauge("cluster_nodes", "NodeManagers by state (RM metrics)", ["state"], [
        (("active",), m.active_nodes), (("unhealthy",), m.unhealthy_nodes),
        (("lost",), m.lost_nodes), (("decommissioning",), m.decommissioning_nodes)])
    ha = s.cluster.ha_state or "ACTIVE"  # an RM without HA reports no haState
    yield gauge("rm_ha_state", "HA state of the RM the latest cycle read (1 for its state)",
                ["state"], [((st,), 1.0 if st == ha else 0.0)
                            for st in sorted(set(HA_STATES) | {ha})])
    yield gauge("queue_used_capacity_ratio", "Used capacity of each leaf queue as a ratio of "
                "its configured capacity (may exceed 1)", ["queue"],
                [((q.path,), q.used_capacity / 100) for q in s.queues if q.is_leaf])


def _plugin(p: PluginStatus) -> Iterable[Metric]:
    """The RM plug-in's own counters, as the RM's JMX served them this cycle (sense
    ``rm_plugin``): the table it applies, its vetoes and fall-backs (docs/plugin.md)."""
    yield single("rm_plugin_table_seq", "Sequence number of the decision table the RM "
                 "plug-in applies (-1: none)", p.table_seq)
    yield single("rm_plugin_table_age_seconds", "Age of the table the RM plug-in applies, "
                 "by the RM's clock (-1: none)", p.table_age_ms / 1000 if p.applying else -1)
    yield gauge("rm_plugin_table_status", "Outcome of the RM plug-in's last poll of the "
                "table (1 for its status)", ["status"], [((p.status_class,), 1.0)])
    yield counter("rm_plugin_admits", "Allocation attempts the RM plug-in let through on a "
                  "valid table", [], [((), p.admits)])
    reasons = sorted({*(r.value for r in Reason), *p.vetoes})
    yield counter("rm_plugin_vetoes", "Allocation attempts the RM plug-in skipped, by the "
                  "table's reason", ["reason"], [((r,), p.vetoes.get(r, 0)) for r in reasons])
    whys = sorted({*FALLBACKS, *p.fallbacks})
    yield counter("rm_plugin_fallbacks", "Allocation attempts the RM plug-in left to YARN's "
                  "default, by why", ["reason"], [((w,), p.fallbacks.get(w, 0)) for w in whys])
    yield counter("rm_plugin_polls", "The RM plug-in's polls of the table, by outcome",
                  ["outcome"], [(("ok",), p.polls_ok), (("failed",), p.polls_failed)])
