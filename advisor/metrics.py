"""Prometheus metrics: a stateless collector over the latest cycle report.

Each scrape reads the newest :class:`CycleReport` fresh (as client_python
recommends for custom collectors). Labels are bounded: source names, step
names, outcomes, policy and kind names; never app or container ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from yarn_advisor.advisor.classify import ClassifierSummary
from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.recommendation import Kind, Recommendation
from yarn_advisor.advisor.report import CycleReport, Totals

NS = "yarn_advisor"
TOP_N = 10  # apps named in labels per cycle, at most
SOURCES = ("rm", "containers", "nm_jmx", "rm_jmx", "scheduler_conf", "rm_conf", "mapreduce",
           "history")


class AdvisorCollector(Collector):
    """Yields the advisor's metric families from ``latest()`` and ``totals``."""

    def __init__(self, latest: Callable[[], CycleReport | None], totals: Totals,
                 blocked: Callable[[], Mapping[str, int]] = dict) -> None:
        self.latest = latest
        self.totals = totals
        self.blocked = blocked

    def collect(self) -> Iterable[Metric]:
        report = self.latest()
        yield from self._totals()
        if report is None:
            return
        yield from self._cycle(report)
        if report.snapshot is not None:
            yield from _snapshot(report.snapshot)
        recs = GaugeMetricFamily(f"{NS}_recommendations", "Recommendations of the latest cycle",
                                 labels=["policy", "kind"])
        counts = Counter((r.policy, r.kind.value) for r in report.recommendations)
        for (policy, kind), n in sorted(counts.items()):
            recs.add_metric([policy, kind], n)
        yield recs
        yield _top_priorities(report.recommendations)
        if report.classifier is not None:
            yield from _classifier(report.classifier)

    def _totals(self) -> Iterable[Metric]:
        cycles = CounterMetricFamily(f"{NS}_cycles", "Cycles by outcome", labels=["outcome"])
        for outcome in ("ok", "skipped"):
            cycles.add_metric([outcome], self.totals.cycles[outcome])
        yield cycles
        errors = CounterMetricFamily(f"{NS}_connector_errors", "Failed reads by source",
                                     labels=["source"])
        for name in SOURCES:
            errors.add_metric([name], self.totals.source_errors[name])
        yield errors
        actions = CounterMetricFamily(f"{NS}_actions", "Actions by kind, policy and outcome",
                                      labels=["kind", "policy", "outcome"])
        for (kind, policy, outcome), n in sorted(self.totals.actions.items()):
            actions.add_metric([kind.value, policy, outcome], n)
        yield actions
        blocked = CounterMetricFamily(f"{NS}_actions_blocked", "Actions a guardrail stopped",
                                      labels=["reason"])
        for reason, n in sorted(self.blocked().items()):
            blocked.add_metric([reason], n)
        yield blocked
        perrors = CounterMetricFamily(f"{NS}_policy_errors", "Policy failures (cycle went on)",
                                      labels=["policy"])
        for policy, n in sorted(self.totals.policy_errors.items()):
            perrors.add_metric([policy], n)
        yield perrors

    def _cycle(self, report: CycleReport) -> Iterable[Metric]:
        up = GaugeMetricFamily(f"{NS}_connector_up", "1 if the source was read in the latest "
                               "cycle", labels=["source"])
        latency = GaugeMetricFamily(f"{NS}_connector_latency_seconds",
                                    "Time spent reading the source in the latest cycle",
                                    labels=["source"])
        for name, stat in sorted(report.sources.items()):
            up.add_metric([name], 1.0 if stat.ok else 0.0)
            latency.add_metric([name], stat.seconds)
        yield up
        yield latency
        steps = GaugeMetricFamily(f"{NS}_cycle_step_seconds", "Duration of each step of the "
                                  "latest cycle", labels=["step"])
        for step, seconds in report.step_seconds.items():
            steps.add_metric([step], seconds)
        yield steps
        policies = GaugeMetricFamily(f"{NS}_policy_seconds", "Time each policy took in the "
                                     "latest cycle", labels=["policy"])
        for policy, seconds in report.policy_seconds.items():
            policies.add_metric([policy], seconds)
        yield policies
        yield GaugeMetricFamily(f"{NS}_cycle_duration_seconds", "Duration of the latest cycle",
                                value=sum(report.step_seconds.values()))
        yield GaugeMetricFamily(f"{NS}_last_cycle_timestamp_seconds",
                                "Start of the latest cycle (unix time)", value=report.started_at)
        yield GaugeMetricFamily(f"{NS}_last_cycle_ok", "1 if the latest cycle sensed the cluster",
                                value=1.0 if report.outcome == "ok" else 0.0)


def _classifier(c: ClassifierSummary) -> Iterable[Metric]:
    preds = GaugeMetricFamily(f"{NS}_classifier_predictions",
                              "Pending request groups by predicted class (latest cycle)",
                              labels=["class"])
    recall = GaugeMetricFamily(f"{NS}_classifier_recall",
                               "Running recall of the classifier's predictions, by actual class",
                               labels=["class"])
    for cls in ("short", "long"):
        preds.add_metric([cls], c.predictions.get(cls, 0))
        value = c.recall.get(cls)
        if value is not None:
            recall.add_metric([cls], value)
    yield preds
    yield recall
    outcomes = CounterMetricFamily(f"{NS}_classifier_outcomes",
                                   "Predictions scored against what the task turned out to be",
                                   labels=["actual", "predicted"])
    for (actual, predicted), n in sorted(c.outcomes.items()):
        outcomes.add_metric([actual, predicted], n)
    yield outcomes
    learned = GaugeMetricFamily(f"{NS}_classifier_learned",
                                "Tasks learned in the latest cycle", labels=["kind"])
    for kind, n in sorted(c.learned.items()):
        learned.add_metric([kind], n)
    yield learned


def _top_priorities(recs: Sequence[Recommendation], top_n: int = TOP_N) -> Metric:
    """Recommended priorities of the top-N apps only (bounded label set)."""
    family = GaugeMetricFamily(f"{NS}_recommended_app_priority",
                               f"Recommended priority of the top {top_n} apps of the latest cycle",
                               labels=["app", "policy"])
    prio = [(r.value, r) for r in recs if r.kind is Kind.SET_APP_PRIORITY
            and isinstance(r.value, int)]
    for value, r in sorted(prio, key=lambda vr: (-int(vr[0]), vr[1].target))[:top_n]:
        family.add_metric([r.target, r.policy], float(value))
    return family


def _snapshot(s: Snapshot) -> Iterable[Metric]:
    sizes = GaugeMetricFamily(f"{NS}_snapshot_objects", "Objects in the latest snapshot",
                              labels=["kind"])
    for kind, n in (("nodes", len(s.nodes)), ("queues", len(s.queues)), ("apps", len(s.apps)),
                    ("containers", len(s.containers)), ("pending_requests", s.pending_requests),
                    ("tasks", len(s.tasks)), ("finished_tasks", len(s.finished_tasks))):
        sizes.add_metric([kind], n)
    yield sizes
    yield GaugeMetricFamily(f"{NS}_snapshot_taken_at_seconds", "Cluster time of the snapshot",
                            value=s.taken_at / 1000)
    m = s.metrics
    mem = GaugeMetricFamily(f"{NS}_cluster_memory_mb", "Cluster memory (MiB)", labels=["kind"])
    cpu = GaugeMetricFamily(f"{NS}_cluster_vcores", "Cluster vcores", labels=["kind"])
    for kind, r in (("total", m.total), ("allocated", m.allocated),
                    ("available", m.available), ("reserved", m.reserved)):
        mem.add_metric([kind], r.memory_mb)
        cpu.add_metric([kind], r.vcores)
    yield mem
    yield cpu
    apps = GaugeMetricFamily(f"{NS}_cluster_apps", "Applications by state (RM metrics)",
                             labels=["state"])
    for state, n in (("running", m.apps_running), ("pending", m.apps_pending),
                     ("completed", m.apps_completed), ("failed", m.apps_failed),
                     ("killed", m.apps_killed)):
        apps.add_metric([state], n)
    yield apps
    nodes = GaugeMetricFamily(f"{NS}_cluster_nodes", "NodeManagers by state (RM metrics)",
                              labels=["state"])
    for state, n in (("active", m.active_nodes), ("unhealthy", m.unhealthy_nodes),
                     ("lost", m.lost_nodes), ("decommissioning", m.decommissioning_nodes)):
        nodes.add_metric([state], n)
    yield nodes
    queues = GaugeMetricFamily(f"{NS}_queue_used_capacity_percent",
                               "Used capacity of each leaf queue (percent of its capacity)",
                               labels=["queue"])
    for q in s.queues:
        if q.is_leaf:
            queues.add_metric([q.path], q.used_capacity)
    yield queues
