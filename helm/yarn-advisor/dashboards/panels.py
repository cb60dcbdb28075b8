"""What the five yarn-advisor dashboards show: rows of panels and their PromQL.

Plain data, no Grafana types: ``build.py`` turns it into dashboard JSON with
Grafana's grafana-foundation-sdk, and into the PANELS.md table. Every query
selects the chosen advisor with ``job="$job", instance=~"$instance"``;
``tests/deploy/test_dashboards.py`` evaluates each one on a real Prometheus
scraping the advisor and fails on a query that returns nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NS = "yarn_advisor"
RATE = "$__rate_interval"
PICK = 'job="$job", instance=~"$instance"'


def m(name: str, *matchers: str) -> str:
    """The selector of advisor metric ``yarn_advisor_<name>`` for the chosen advisor."""
    return f"{NS}_{name}{{{', '.join((PICK, *matchers))}}}"


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    """One panel; ``kind`` is a Grafana panel type: timeseries, stat or table."""

    title: str
    description: str
    queries: tuple[Query, ...]
    kind: str = "timeseries"
    unit: str = "short"
    width: int = 12
    height: int = 8
    stacked: bool = False


@dataclass(frozen=True)
class Row:
    title: str
    panels: tuple[Panel, ...]


@dataclass(frozen=True)
class Board:
    uid: str
    title: str
    description: str
    rows: tuple[Row, ...]
    policy_variable: bool = False
    tags: tuple[str, ...] = field(default=("yarn-advisor",))


def eq(label: str, value: str) -> str:
    return f'{label}="{value}"'


def rx(label: str, pattern: str) -> str:
    return f'{label}=~"{pattern}"'


def by(labels: str) -> str:
    return f" by ({labels}) " if labels else ""


def total(selector: str, labels: str = "") -> str:
    """Sum of the selected series, by ``labels``."""
    return f"sum{by(labels)}({selector})"


def per_minute(selector: str, labels: str = "") -> str:
    """Increase per minute of a counter, by ``labels``."""
    return f"sum{by(labels)}(rate({selector}[{RATE}])) * 60"


def in_range(selector: str, labels: str = "") -> str:
    """Increase of a counter over the dashboard's time range, by ``labels``."""
    return f"sum{by(labels)}(increase({selector}[$__range]))"


def share(part: str, whole: str) -> str:
    """``part / whole`` of two sums; 0 (not NaN) while ``whole`` is 0."""
    return f"{total(part)} / clamp_min({total(whole)}, 1)"


def q(expr: str, legend: str = "") -> Query:
    return Query(expr, legend)


def ts(title: str, description: str, *queries: Query, unit: str = "short", width: int = 12,
       stacked: bool = False) -> Panel:
    return Panel(title, description, queries, "timeseries", unit, width, 8, stacked)


def stat(title: str, description: str, *queries: Query, unit: str = "short",
         width: int = 6) -> Panel:
    return Panel(title, description, queries, "stat", unit, width, 4)


def table(title: str, description: str, *queries: Query, width: int = 12) -> Panel:
    return Panel(title, description, queries, "table", "short", width, 8)



POLICY = rx("policy", "$policy")

CLUSTER = Board(
    "yarn-advisor-cluster", "YARN advisor / Cluster overview",
    "Capacity, allocated against measured use, OPERA's opportunistic headroom and what it "
    "borrowed, as the advisor's latest snapshot saw the cluster.",
    (
        Row("Capacity", (
            stat("Active NodeManagers", "NodeManagers in state RUNNING (RM cluster metrics).",
                 q(total(m("cluster_nodes", eq("state", "active"))))),
            stat("Memory", "Total memory of the cluster (RM cluster metrics).",
                 q(total(m("cluster_memory_bytes", eq("kind", "total")))), unit="bytes"),
            stat("Vcores", "Total vcores of the cluster (RM cluster metrics).",
                 q(total(m("cluster_vcores", eq("kind", "total"))))),
            stat("Running applications", "Applications the RM runs now.",
                 q(total(m("cluster_apps", eq("state", "running"))))),
            ts("NodeManagers by state", "Active, unhealthy, lost and decommissioning nodes.",
               q(total(m("cluster_nodes"), "state"), "{{state}}"), stacked=True),
            ts("Applications by state", "Running and pending applications (RM counts).",
               q(total(m("cluster_apps", rx("state", "running|pending")), "state"),
                 "{{state}}")),
        )),
        Row("Use", (
            ts("Memory: allocated and measured",
               "What the scheduler allocated against what the containers really use (NM "
               "ContainerResource beans, summed), and the cluster total.",
               q(total(m("cluster_memory_bytes", eq("kind", "total"))),
                 "total"),
               q(total(m("cluster_memory_bytes", eq("kind", "allocated"))),
                 "allocated"),
               q(total(m("cluster_measured_memory_bytes")), "measured"), unit="bytes"),
            ts("Vcores: allocated and measured",
               "Allocated vcores against the CPU the containers use, in vcores.",
               q(total(m("cluster_vcores", eq("kind", "total"))), "total"),
               q(total(m("cluster_vcores", eq("kind", "allocated"))), "allocated"),
               q(total(m("cluster_measured_vcores")), "measured")),
            ts("Leaf queues: used capacity",
               "Used capacity of each leaf queue, as a ratio of its configured capacity.",
               q(m("queue_used_capacity_ratio"), "{{queue}}"), unit="percentunit"),
            ts("Snapshot size", "Objects in the advisor's latest snapshot.",
               q(total(m("snapshot_objects"), "kind"), "{{kind}}")),
        )),
        Row("Opportunistic (OPERA)", (
            ts("Opportunistic headroom",
               "Idle reserved memory OPERA could lend to short tasks (OA_i, summed over "
               "nodes), and the memory node resource raises lend now.",
               q(total(m("opportunistic_headroom_memory_bytes")), "headroom"),
               q(total(m("borrowed_memory_bytes")), "borrowed"), unit="bytes"),
            ts("Opportunistic vcores", "Vcores headroom and vcores lent.",
               q(total(m("opportunistic_headroom_vcores")), "headroom"),
               q(total(m("borrowed_vcores")), "borrowed")),
            ts("Node resource changes per minute",
               "OPERA's node resource updates by outcome (dry_run, applied, blocked, ...).",
               # 0 (not "no data") until OPERA's first node resource recommendation
               q(f'{per_minute(m("actions_total", eq("kind", "update_node_resource")), "outcome")}'
                 ' or on() vector(0)', "{{outcome}}"), unit="opm"),
        )),
    ),
)

ACTIONS = Board(
    "yarn-advisor-actions", "YARN advisor / Recommendations and actions",
    "What each policy recommends, what the actuator did with it (dry-run or applied) and "
    "which guardrail blocked what.",
    (
        Row("Recommendations", (
            ts("Recommendations by policy and kind (latest cycle)",
               "Recommendations of the latest cycle.",
               q(total(m("recommendations", POLICY), "policy, kind"), "{{policy}} {{kind}}"),
               stacked=True),
            ts("Recommendations by mode (latest cycle)",
               "dry_run or enforce, as each policy is configured.",
               q(total(m("recommendations", POLICY, rx("mode", "dry_run|enforce")), "mode"),
                 "{{mode}}"), stacked=True),
            table("Top recommended targets",
                  "The top targets of each policy and kind in the latest cycle.",
                  q(m("recommendation_info", POLICY)), width=24),
        )),
        Row("Actions", (
            ts("Actions per minute by outcome",
               "What the actuator did: dry_run, applied, noop, blocked, refused, failed, "
               "unknown, standby, advisory.",
               q(per_minute(m("actions_total", POLICY), "outcome"), "{{outcome}}"),
               unit="opm", stacked=True),
            ts("Actions per minute by policy and kind", "All outcomes.",
               q(per_minute(m("actions_total", POLICY), "policy, kind"),
                 "{{policy}} {{kind}}"), unit="opm"),
            stat("Dry-run vs applied (time range)",
                 "Actions recorded as dry_run against actions applied to the RM.",
                 q(in_range(m("actions_total", POLICY, rx("outcome", "dry_run|applied")),
                            "outcome"), "{{outcome}}"), width=12),
            ts("Actions per minute by mode", "dry_run or enforce, by outcome.",
               q(per_minute(m("actions_total", POLICY, rx("mode", "dry_run|enforce")),
                            "mode, outcome"), "{{mode}} {{outcome}}"), unit="opm"),
        )),
        Row("Guardrails and policies", (
            ts("Guardrail blocks per minute by reason",
               "Recommendations a guardrail stopped (kill switch, stale snapshot, RM not "
               "active, scope, cooldown, limits, minimum change).",
               q(per_minute(m("actions_blocked_total"), "reason"), "{{reason}}"),
               unit="opm", stacked=True),
            table("Guardrail blocks by reason (time range)", "Blocks in the dashboard range.",
                  q(in_range(m("actions_blocked_total"), "reason"))),
            ts("Policy time (latest cycle)", "Time each policy took in the latest cycle.",
               q(m("policy_seconds", POLICY), "{{policy}}"), unit="s"),
            ts("Policy errors per minute",
               "Policies that failed (the cycle went on without them).",
               q(per_minute(m("policy_errors_total", POLICY), "policy"), "{{policy}}"),
               unit="opm"),
        )),
    ),
    policy_variable=True,
)


def haste_score(score: str) -> Query:
    return q(f'topk(10, {m("haste_score", eq("score", score))})', "{{app}}")


HASTE_PRIORITY = m("recommended_app_priority", eq("policy", "haste"))

HASTE = Board(
    "yarn-advisor-haste", "YARN advisor / HaSTE applications",
    "HaSTE's scores (fitness, urgency, alignment, preference) and the priorities it "
    "recommends for the top applications of the latest cycle.",
    (
        Row("Top applications", (
            table("Recommended priority of the top applications",
                  "Recommended application priority, top applications only.",
                  q(HASTE_PRIORITY)),
            ts("Recommended priority", "Per top application, over time.",
               q(HASTE_PRIORITY, "{{app}}")),
            ts("Preference (Eq. 4 and 6)", "The weighted score HaSTE ranks applications by.",
               haste_score("preference")),
            ts("Fitness (Eq. 1)", "Dot product of the demand and the free resources.",
               haste_score("fitness")),
            ts("Urgency (Eq. 2 and 3)", "How far behind its share of the cluster the app is.",
               haste_score("urgency")),
            ts("Alignment (Eq. 5)", "HaSTE-A's alignment with known iterations or stages.",
               haste_score("alignment")),
        )),
        Row("Activity", (
            ts("Priority changes per minute by outcome",
               "HaSTE's set_app_priority actions, dry_run or applied.",
               q(per_minute(m("actions_total", eq("policy", "haste"),
                              eq("kind", "set_app_priority")), "outcome"), "{{outcome}}"),
               unit="opm"),
            ts("HaSTE recommendations (latest cycle)", "By kind.",
               q(total(m("recommendations", eq("policy", "haste")), "kind"), "{{kind}}")),
        )),
    ),
)

OUTCOMES = "classifier_outcomes_total"

CLASSIFIER = Board(
    "yarn-advisor-classifier", "YARN advisor / Task classifier",
    "OPERA's online short/long task classifier scored against what the tasks turned out to be.",
    (
        Row("Accuracy", (
            stat("Long tasks called short (all time)",
                 "Share of long tasks the classifier called short: each one may be lent "
                 "borrowed resources it then holds too long.",
                 q(share(m(OUTCOMES, eq("actual", "long"), eq("predicted", "short")),
                         m(OUTCOMES, eq("actual", "long")))), unit="percentunit"),
            stat("Short recall (all time)", "Share of short tasks predicted short.",
                 q(share(m(OUTCOMES, eq("actual", "short"), eq("predicted", "short")),
                         m(OUTCOMES, eq("actual", "short")))), unit="percentunit"),
            stat("Short precision (all time)", "Share of tasks predicted short that were short.",
                 q(share(m(OUTCOMES, eq("actual", "short"), eq("predicted", "short")),
                         m(OUTCOMES, eq("predicted", "short")))), unit="percentunit"),
            stat("Long tasks called short (time range)", "Count in the dashboard range.",
                 q(in_range(m(OUTCOMES, eq("actual", "long"), eq("predicted", "short"))))),
            ts("Recall by actual class", "Running recall of the predictions, per actual class.",
               q(share(m(OUTCOMES, eq("actual", "short"), eq("predicted", "short")),
                       m(OUTCOMES, eq("actual", "short"))), "short"),
               q(share(m(OUTCOMES, eq("actual", "long"), eq("predicted", "long")),
                       m(OUTCOMES, eq("actual", "long"))), "long"), unit="percentunit"),
            ts("Outcomes per minute", "Scored predictions, by actual and predicted class.",
               q(per_minute(m(OUTCOMES), "actual, predicted"), "{{actual}} called {{predicted}}"),
               unit="opm"),
        )),
        Row("Predictions and learning", (
            ts("Predictions by class (latest cycle)",
               "Pending request groups predicted short or long.",
               q(total(m("classifier_predictions"), "class"), "{{class}}"), stacked=True),
            ts("Tasks learned (latest cycle)",
               "Finished tasks, tasks still running past the threshold (censored), and "
               "running tasks seen.",
               q(total(m("classifier_learned"), "kind"), "{{kind}}")),
        )),
    ),
)

HEALTH = Board(
    "yarn-advisor-health", "YARN advisor / Advisor health",
    "Is the advisor up, cycling, reading its sources, and acting as the leader.",
    (
        Row("Status", (
            stat("Up", "Prometheus reaches the advisor's /metrics.",
                 q(f"up{{{PICK}}}"), width=4),
            stat("Last cycle sensed the cluster", "1 when the latest cycle was not skipped.",
                 q(m("last_cycle_ok")), width=4),
            stat("Last cycle age", "Seconds since the latest cycle started.",
                 q(f'time() - {m("last_cycle_timestamp_seconds")}'), unit="s", width=4),
            stat("Leader", "1 on the advisor that holds the ZooKeeper leadership (HA).",
                 q(m("leader")), width=4),
            table("Version and configuration",
                  "The advisor's version and the hash of its configuration.",
                  q(m("build_info")), width=8),
        )),
        Row("Cycles", (
            ts("Cycle time per step", "Duration of each step of the latest cycle.",
               q(m("cycle_step_seconds"), "{{step}}"),
               q(m("cycle_duration_seconds"), "whole cycle"), unit="s"),
            ts("Cycles per minute by outcome", "ok or skipped.",
               q(per_minute(m("cycles_total"), "outcome"), "{{outcome}}"), unit="opm",
               stacked=True),
            ts("Skipped cycles per minute by reason",
               "Why cycles were skipped: RM unreachable, standby, timeout, bad answer, ...",
               q(per_minute(m("cycles_skipped_total"), "reason"), "{{reason}}"), unit="opm",
               stacked=True),
            ts("Snapshot age", "Seconds between the cluster time of the snapshot and now.",
               q(f'time() - {m("snapshot_timestamp_seconds")}', "age"), unit="s"),
        )),
        Row("Sources", (
            ts("Connector errors per minute", "Failed reads, by source.",
               q(per_minute(m("connector_errors_total"), "source"), "{{source}}"), unit="opm"),
            ts("Sources read in the latest cycle", "1 if the source was read.",
               q(m("connector_up"), "{{source}}")),
            ts("Source read time", "Time spent reading each source in the latest cycle.",
               q(m("connector_latency_seconds"), "{{source}}"), unit="s"),
            ts("ResourceManager HA state", "The state each configured RM is in.",
               q(f'{m("rm_ha_state")} == 1', "{{rm}} {{state}}")),
        )),
        Row("High availability", (
            ts("ZooKeeper session state", "1 for the current state of the advisor's ZooKeeper "
               "session (HA); every state 0: the advisor runs alone.",
               q(m("zookeeper_session_state"), "{{state}}"), stacked=True),
            ts("Replicated state size", "Bytes of the advisor's state kept in ZooKeeper (HA).",
               q(m("state_bytes"), "state"), unit="bytes"),
            ts("State checkpoint age", "Seconds since the state was last checkpointed (HA).",
               q(m("state_checkpoint_age_seconds"), "age"), unit="s"),
        )),
    ),
)

BOARDS = (CLUSTER, ACTIONS, HASTE, CLASSIFIER, HEALTH)
