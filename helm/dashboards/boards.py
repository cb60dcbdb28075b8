"""The five dashboards: every panel with its PromQL queries (built by ``build.py``).

Conventions: cluster state (the same for every advisor watching one RM) is
aggregated with ``max``, counts of what advisors did with ``sum``; the
latest cycle's gauges make the time series, counters since start the totals.
"""

from __future__ import annotations

from build import Board, Panel, Query

Q = Query

CLUSTER = Board(
    "yarn-advisor-cluster", "YARN advisor / Cluster overview",
    "Capacity, allocated against measured use, opportunistic headroom and what OPERA borrows.",
    rows=(
        ("Capacity", (
            Panel("Memory capacity", "Total memory of the cluster (RM metrics).",
                  [Q('max(yarn_advisor_cluster_memory_bytes{kind="total"})', "total")],
                  kind="stat", unit="bytes", width=6, height=4),
            Panel("Vcores capacity", "Total vcores of the cluster (RM metrics).",
                  [Q('max(yarn_advisor_cluster_vcores{kind="total"})', "total")],
                  kind="stat", width=6, height=4),
            Panel("Active nodes", "NodeManagers the RM counts as active.",
                  [Q('max(yarn_advisor_cluster_nodes{state="active"})', "active")],
                  kind="stat", width=6, height=4),
            Panel("Running apps", "Applications running, as the RM counts them.",
                  [Q('max(yarn_advisor_cluster_apps{state="running"})', "running")],
                  kind="stat", width=6, height=4),
        )),
        ("Allocated against measured use", (
            Panel("Memory: allocated vs measured",
                  "What the scheduler allocated against what the NodeManagers measure in use "
                  "(whole nodes, and their containers).",
                  [Q('max by (kind) (yarn_advisor_cluster_memory_bytes'
                     '{kind=~"total|allocated|reserved"})', "{{kind}}"),
                   Q("max by (scope) (yarn_advisor_cluster_measured_memory_bytes)",
                     "measured ({{scope}})")], unit="bytes"),
            Panel("Vcores: allocated vs measured",
                  "Allocated vcores against the CPU the NodeManagers measure in use (vcores).",
                  [Q('max by (kind) (yarn_advisor_cluster_vcores'
                     '{kind=~"total|allocated|reserved"})', "{{kind}}"),
                   Q("max by (scope) (yarn_advisor_cluster_measured_vcores)",
                     "measured ({{scope}})")]),
            Panel("Measured use of allocated memory",
                  "Memory the containers really use, as a share of what is allocated to "
                  "them: the room OPERA and PRISM work with.",
                  [Q('max(yarn_advisor_cluster_measured_memory_bytes{scope="containers"}) / '
                     'clamp_min(max(yarn_advisor_cluster_memory_bytes{kind="allocated"}), 1)',
                     "measured / allocated")], kind="stat", unit="percentunit", width=6),
            Panel("Leaf queues: used capacity",
                  "Used capacity of each leaf queue, as a share of its configured capacity.",
                  [Q("max by (queue) (yarn_advisor_queue_used_capacity_ratio)", "{{queue}}")],
                  kind="bargauge", unit="percentunit", width=18),
        )),
        ("Opportunistic headroom and borrowed resources", (
            Panel("Memory: idle headroom and borrowed",
                  "Allocated but idle memory (PRISM's phase profiles) and what OPERA lends "
                  "to short tasks beyond the nodes' capacity, summed over nodes.",
                  [Q("max(yarn_advisor_opportunistic_headroom_memory_bytes)", "idle headroom"),
                   Q("max(yarn_advisor_borrowed_memory_bytes)", "borrowed (OPERA)")],
                  unit="bytes"),
            Panel("Vcores: idle headroom and borrowed",
                  "The same for vcores, and the number of nodes OPERA lends on.",
                  [Q("max(yarn_advisor_opportunistic_headroom_vcores)", "idle headroom"),
                   Q("max(yarn_advisor_borrowed_vcores)", "borrowed (OPERA)"),
                   Q("max(yarn_advisor_lending_nodes)", "lending nodes")]),
        )),
        ("Applications and nodes", (
            Panel("Applications by state", "RM application counts.",
                  [Q("max by (state) (yarn_advisor_cluster_apps)", "{{state}}")]),
            Panel("Nodes by state", "RM NodeManager counts.",
                  [Q("max by (state) (yarn_advisor_cluster_nodes)", "{{state}}")]),
        )),
    ),
)

ACTIONS = Board(
    "yarn-advisor-actions", "YARN advisor / Recommendations and actions",
    "What the policies recommend, what the actuator did with it (dry-run or applied), and "
    "what the guardrails blocked.",
    rows=(
        ("Recommendations", (
            Panel("Recommendations per cycle by policy and kind",
                  "Recommendations of the latest cycle.",
                  [Q("sum by (policy, kind, mode) (yarn_advisor_recommendations)",
                     "{{policy}} {{kind}} ({{mode}})")], stacked=True),
            Panel("Current recommendations",
                  "The first targets of each policy and kind in the latest cycle, with the "
                  "rule that fired (yarn-advisor explain TARGET says why).",
                  [Q("max by (policy, kind, target, rule, mode) "
                     "(yarn_advisor_recommendation_info)")], kind="table"),
            Panel("Recommended application priorities",
                  "Priority recommended for the top applications.",
                  [Q("max by (app, policy, mode) (yarn_advisor_recommended_app_priority)",
                     "{{app}} ({{policy}})")]),
        )),
        ("Actions", (
            Panel("Actions per cycle by outcome",
                  "What the actuator did with the latest cycle's recommendations: dry_run, "
                  "applied, blocked, advisory, ...",
                  [Q("sum by (outcome, mode) (yarn_advisor_cycle_actions)",
                     "{{outcome}} ({{mode}})")], stacked=True),
            Panel("Dry-run vs applied since start",
                  "Actions recorded only (dry_run) against actions written to the RM "
                  "(applied), and the other outcomes of enforced writes.",
                  [Q('sum by (outcome) (yarn_advisor_actions_total'
                     '{outcome=~"dry_run|applied|noop|failed|unknown|refused|standby"})',
                     "{{outcome}}")], kind="bargauge"),
            Panel("Actions since start by policy, kind and outcome", "Counters since start.",
                  [Q("sum by (policy, kind, outcome, mode) (yarn_advisor_actions_total)",
                     "{{policy}} {{kind}} {{outcome}} ({{mode}})")], kind="bargauge", width=24,
                  height=10),
        )),
        ("Guardrails", (
            Panel("Guardrail blocks by reason",
                  "Actions a guardrail stopped since start, by reason (top 8).",
                  [Q("topk(8, sum by (reason) (yarn_advisor_actions_blocked_total))",
                     "{{reason}}")], kind="bargauge"),
            Panel("Blocked per cycle by policy",
                  "Recommendations of the latest cycle that a guardrail stopped.",
                  [Q('sum by (policy, mode) (yarn_advisor_cycle_actions{outcome="blocked"}) '
                     'or sum by (policy, mode) (yarn_advisor_cycle_actions) * 0',
                     "{{policy}} ({{mode}})")], stacked=True),
        )),
    ),
)

HASTE = Board(
    "yarn-advisor-haste", "YARN advisor / HaSTE scores",
    "HaSTE's scores of the top applications it ranked in the latest cycle: preference "
    "(Eq 4/6) from fitness (Eq 1), urgency (Eq 2-3) and alignment (Eq 5).",
    rows=(
        ("Top applications", (
            Panel("Preference", "Weighted preference of each top app (higher runs first).",
                  [Q('max by (app) (yarn_advisor_haste_score{score="preference"})', "{{app}}")],
                  kind="bargauge", width=12),
            Panel("All scores", "Every score of every top app.",
                  [Q("max by (app, score) (yarn_advisor_haste_score)")], kind="table"),
            Panel("Fitness", "FFD dot-product fitness of the app's next request (Eq 1).",
                  [Q('max by (app) (yarn_advisor_haste_score{score="fitness"})', "{{app}}")],
                  width=8),
            Panel("Urgency", "Urgency of the app's next request (Eq 2-3).",
                  [Q('max by (app) (yarn_advisor_haste_score{score="urgency"})', "{{app}}")],
                  width=8),
            Panel("Alignment", "Alignment of known iterations or stages (HaSTE-A, Eq 5).",
                  [Q('max by (app) (yarn_advisor_haste_score{score="alignment"})',
                     "{{app}}")], width=8),
            Panel("Recommended priority", "The priority HaSTE recommends for each top app.",
                  [Q('max by (app, mode) (yarn_advisor_recommended_app_priority'
                     '{policy="haste"})', "{{app}} ({{mode}})")], width=24),
        )),
    ),
)

CLASSIFIER = Board(
    "yarn-advisor-classifier", "YARN advisor / Task classifier",
    "The online short/long task classifier: its predictions, scored against what the tasks "
    "turned out to be.",
    rows=(
        ("Accuracy", (
            Panel("Recall by class",
                  "Share of tasks of each actual class that were predicted right (absent "
                  "for a class until one of its tasks was scored).",
                  [Q("max by (class) (yarn_advisor_classifier_recall)", "{{class}}")],
                  unit="percentunit"),
            Panel("Long tasks called short",
                  "Long tasks predicted short, as a share of the long tasks scored: the "
                  "costly mistake (OPERA lends to them). The alert budget is 5%.",
                  [Q('sum(yarn_advisor_classifier_outcomes_total{actual="long",'
                     'predicted="short"}) / clamp_min(sum(yarn_advisor_classifier_outcomes_total'
                     '{actual="long"}), 1)', "long called short")],
                  kind="stat", unit="percentunit", width=6),
            Panel("Accuracy", "Share of all scored predictions that were right.",
                  [Q('(sum(yarn_advisor_classifier_outcomes_total{actual="short",'
                     'predicted="short"}) + sum(yarn_advisor_classifier_outcomes_total'
                     '{actual="long",predicted="long"})) / '
                     'clamp_min(sum(yarn_advisor_classifier_outcomes_total), 1)', "accuracy")],
                  kind="stat", unit="percentunit", width=6),
            Panel("Outcomes (actual, predicted)", "Scored predictions since start.",
                  [Q("sum by (actual, predicted) (yarn_advisor_classifier_outcomes_total)",
                     "actual {{actual}}, predicted {{predicted}}")], kind="bargauge"),
            Panel("Long tasks called short (count)", "Since start.",
                  [Q('sum(yarn_advisor_classifier_outcomes_total{actual="long",'
                     'predicted="short"})', "long called short")]),
        )),
        ("Predictions and learning", (
            Panel("Predictions per cycle", "Pending request groups by predicted class.",
                  [Q("max by (class) (yarn_advisor_classifier_predictions)", "{{class}}")],
                  stacked=True),
            Panel("Tasks learned per cycle",
                  "Finished tasks, censored running ones (past the threshold: long) and "
                  "running tasks seen.",
                  [Q("max by (kind) (yarn_advisor_classifier_learned)", "{{kind}}")]),
        )),
    ),
)

HEALTH = Board(
    "yarn-advisor-health", "YARN advisor / Advisor health",
    "Is the advisor cycling, how long each step takes, which sources fail, why cycles are "
    "skipped, the RM's HA state and who leads.",
    rows=(
        ("Status", (
            Panel("Latest cycle ok", "1 if the latest cycle sensed the cluster.",
                  [Q("min(yarn_advisor_last_cycle_ok)", "ok")], kind="stat", width=4,
                  height=4),
            Panel("Age of the latest cycle", "Seconds since the latest cycle started.",
                  [Q("time() - max(yarn_advisor_last_cycle_timestamp_seconds)", "age")],
                  kind="stat", unit="s", width=4, height=4),
            Panel("RM HA state", "HA state of the RM the advisor follows.",
                  [Q("max by (state) (yarn_advisor_rm_ha_state) == 1", "{{state}}")],
                  kind="stat", width=4, height=4),
            Panel("Leader", "1 on the advisor that may write (ZooKeeper leader); without "
                  "HA every advisor is its own leader.",
                  [Q("max by (instance) (yarn_advisor_leader) or "
                     "max by (instance) (yarn_advisor_build_info)", "{{instance}}")],
                  kind="stat", width=4, height=4),
            Panel("Version and configuration", "Version and configuration hash per advisor.",
                  [Q("max by (instance, version, config_hash) (yarn_advisor_build_info)")],
                  kind="table", width=8, height=4),
        )),
        ("Cycle", (
            Panel("Cycle time per step", "Duration of each step of the latest cycle.",
                  [Q("max by (step) (yarn_advisor_cycle_step_seconds)", "{{step}}")],
                  unit="s", stacked=True),
            Panel("Policy time", "Time each policy (and the classifier) took in the latest "
                  "cycle.", [Q("max by (policy) (yarn_advisor_policy_seconds)", "{{policy}}")],
                  unit="s"),
            Panel("Cycles by outcome", "Cycles since start.",
                  [Q("sum by (outcome) (yarn_advisor_cycles_total)", "{{outcome}}")]),
            Panel("Skipped cycles by reason", "Skipped cycles since start, by the reason "
                  "class of the failed read (auth, timeout, unavailable, standby, ...).",
                  [Q("sum by (reason) (yarn_advisor_cycles_skipped_total)", "{{reason}}")],
                  kind="bargauge"),
        )),
        ("Sources", (
            Panel("Sources up", "1 if the source was read in the latest cycle.",
                  [Q("min by (source) (yarn_advisor_connector_up)", "{{source}}")]),
            Panel("Source read time", "Time spent reading each source in the latest cycle.",
                  [Q("max by (source) (yarn_advisor_connector_latency_seconds)", "{{source}}")],
                  unit="s"),
            Panel("Connector errors", "Failed reads since start, by source.",
                  [Q("sum by (source) (yarn_advisor_connector_errors_total)", "{{source}}")],
                  kind="bargauge"),
            Panel("Policy errors", "Policies that failed since start (the cycle went on).",
                  [Q("sum by (policy) (yarn_advisor_policy_errors_total)", "{{policy}}")],
                  kind="bargauge"),
            Panel("Snapshot size", "Objects in the latest snapshot.",
                  [Q("max by (kind) (yarn_advisor_snapshot_objects)", "{{kind}}")], width=24),
        )),
    ),
)

BOARDS = (CLUSTER, ACTIONS, HASTE, CLASSIFIER, HEALTH)
