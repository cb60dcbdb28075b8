"""What ANACRAC could recover through the CapacityScheduler's mapping rules, at most.

The sidecar recovers nothing of ANACRAC's in-RM gain because it labels hosts
and moves an application a cycle after its first containers were placed. A
JSON mapping rule (``yarn.scheduler.capacity.mapping-rule-format=json``,
written through scheduler-conf) places a matching application at submission
into a queue whose ``default-node-label-expression`` covers its allowed
hosts, so its AM and every task land there from the first container. This
bench measures that lever's ceiling on Tables 5 and 6 before the advisor
writes any rule: the workload on the CapacityScheduler of
``bench/anacrac_sidecar_labels.py`` (queue ``ingest`` owning label ``ext``),
the rules' hosts labelled ``ext`` from the start, and every application a
rule matches submitted into ``ingest`` (what the mapping rule does). Hadoop
3.4.2's mapping rules match the user, the group or the exact application
name (``MappingRuleMatchers.VariableMatcher``: ``%application`` equals), not
the application type ANACRAC's derived rules use, so the rule set written
here would name each matching application (their names are known before
submission in these workloads). ``tasks_maximum`` (ANACRAC's per-node limit)
has no RM lever of its own; the stand-in rows (``stand_ins``) add, one at a
time on top of that ceiling, each outside setting that could take its place:
the label partition's maximum-capacity or the user limit sized to cap x
nodes, the per-node-heartbeat assignment limits, the nodes' resource.

Reported per table: Fair (the paper's reference), ANACRAC in the RM, the
sidecar at its defaults, the sidecar writing the mapping rules itself
(``set_mapping_rules``: ``bench/anacrac_sidecar_labels.py``'s rules, each
naming its applications), the mapping-rule ceiling and each stand-in row: total time, failed
and unfinished jobs (a run that stalls: nothing left could progress, as
when a job's AM has blacklisted every host its queue's label reaches), and
the share of the in-RM gain on each (failed or unfinished jobs counted
together)
(``(fair - ceiling) / (fair - in_rm)``; null when the in-RM mode gains
nothing there: here its total time is longer than Fair's, whose failed job
ends early). Deterministic (simulated time): one run each.

    python bench/anacrac_mapping_ceiling.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from anacrac_sidecar_labels import LABEL, QUEUE, labelled

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.simulator.cli import MIN_GAIN
from yarn_advisor.simulator.inrm import build_scheduler, run_with
from yarn_advisor.simulator.inrm.anacrac import derive_rules
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.workload import load_workload

WORKLOADS = Path(__file__).resolve().parents[1] / "examples" / "workloads"
TABLES = ("anacrac_table5", "anacrac_table6")


def placed_at_submission(wl: Workload) -> tuple[Workload, list[str]]:
    """``wl`` on the labelled CapacityScheduler with the rules' hosts labelled from the
    start and the matching applications submitted into the label's queue; the names
    a mapping rule set would match."""
    rules = derive_rules(wl)
    types = {r.app_type.lower() for r in rules if r.app_type}
    hosts = {h for r in rules for h in r.hosts}
    cs = labelled(wl)
    tagged = [t for r in rules for t in _tags_of(wl, r.app_type)]
    groups = tuple(replace(g, label=LABEL) if (set(g.tags) & set(tagged) or set(g.hosts) & hosts)
                   else g for g in cs.cluster.groups)
    jobs = tuple(replace(j, queue=QUEUE) if j.app_type.lower() in types else j for j in cs.jobs)
    names = sorted({j.name for j in jobs if j.queue == QUEUE})
    return replace(cs, cluster=replace(cs.cluster, groups=groups), jobs=jobs), names


P = "yarn.scheduler.capacity."


def _sizes(wl: Workload) -> tuple[int, int, int, int, int]:
    """The cap (the rules' ``tasks_maximum``), the matched jobs' largest task ask and
    AM ask (MiB), and the label partition's node count and memory (MiB)."""
    placed, _ = placed_at_submission(wl)
    cap = min(r.tasks_maximum or 1 for r in derive_rules(wl))
    matched = [j for j in placed.jobs if j.queue == QUEUE]
    task_mb = max(s.request.memory_mb for j in matched for s in (j.maps, j.reduces)
                  if s is not None)
    am_mb = max(j.am.memory_mb for j in matched)
    groups = [g for g in placed.cluster.groups if g.label == LABEL]
    return (cap, task_mb, am_mb, sum(g.count for g in groups),
            sum(g.count * g.memory_mb for g in groups))


def stand_ins(wl: Workload) -> list[tuple[str, str, Workload, dict[str, str]]]:
    """The mapping-rule ceiling plus each outside setting that could stand in for the
    per-node cap (``tasks_maximum``), as (row, what it sets, workload, scheduler-conf).

    What each does in the real CapacityScheduler (hadoop 3.4.2):

    - ``accessible-node-labels.<label>.maximum-capacity`` of ``ingest``: the queue's
      share of the label's partition (``AbstractCSQueue.canAssignToThisQueue``, the
      queue's headroom): set to cap x nodes task containers plus one AM, it bounds the
      queue's total there, not any node's;
    - ``user-limit-factor``: the same bound per user (``UsersManager.computeUserLimit``;
      ``LeafQueue`` lets a user pass it by one container);
    - ``per-node-heartbeat.maximum-offswitch-assignments`` (default 1; these maps have
      no data locality, so every container is off-switch): one per node heartbeat
      already, which is what lets a total bound act as a per-node one here: the row
      with 100 shows it;
    - ``per-node-heartbeat.maximum-container-assignments`` = cap, and
      ``multiple-assignments-enabled`` false: how many containers one heartbeat may
      assign on a node (``CapacityScheduler.canAllocateMore``, lines 1559-1576), not how
      many may run there: the next heartbeat assigns again;
    - the labelled nodes' resource (``updateNodeResource``, the advisor's
      ``update_node_resource``) at cap x the task ask: a node never holds more than cap
      such containers. The simulator's labels are exclusive, so only the matched jobs
      use these nodes; with the non-exclusive labels the advisor creates, other apps'
      containers on these hosts would count too.

    ``maximum-applications`` (``LeafQueue.validateSubmitApplication``) and
    ``maximum-am-resource-percent`` bound how many apps run, not where their tasks go;
    each matched job is one app here, so they change nothing and get no row.
    """
    placed, _ = placed_at_submission(wl)
    cap, task_mb, am_mb, nodes, part_mb = _sizes(wl)
    pct = round(100.0 * (cap * nodes * task_mb + am_mb) / part_mb, 2)
    ulf = round(pct / 100.0, 4)
    label_max = {f"{P}root.{QUEUE}.accessible-node-labels.{LABEL}.maximum-capacity": str(pct)}
    per_beat = {f"{P}per-node-heartbeat.maximum-container-assignments": str(cap)}
    one_beat = {f"{P}per-node-heartbeat.multiple-assignments-enabled": "false"}
    # these maps have no data locality: each container is off-switch, and the default
    # maximum-offswitch-assignments (1) already gives one per node heartbeat
    many_offswitch = {f"{P}per-node-heartbeat.maximum-offswitch-assignments": "100"}
    shrunk = replace(placed, cluster=replace(placed.cluster, groups=tuple(
        replace(g, memory_mb=cap * task_mb, vcores=min(g.vcores, cap))
        if g.label == LABEL else g for g in placed.cluster.groups)))
    return [
        ("mapping_ceiling", "labels and mapping rules only", placed, {}),
        ("label_max_capacity", f"ingest's {LABEL} maximum-capacity {pct} %", placed, label_max),
        ("label_max_offswitch_100", f"{pct} %, maximum-offswitch-assignments 100", placed,
         label_max | many_offswitch),
        ("user_limit_factor", f"ingest's user-limit-factor {ulf}", placed,
         {f"{P}root.{QUEUE}.user-limit-factor": str(ulf)}),
        ("per_heartbeat_cap", f"maximum-container-assignments {cap}", placed, per_beat),
        ("label_max_per_heartbeat", f"both of the above ({pct} %, {cap} per heartbeat)",
         placed, label_max | per_beat),
        ("label_max_one_per_heartbeat", f"{pct} %, multiple-assignments-enabled false",
         placed, label_max | one_beat),
        ("node_resource_cap", f"labelled nodes at {cap} x {task_mb} MiB", shrunk, {}),
    ]


def run_conf(wl: Workload, conf: dict[str, str]) -> Report:
    """``wl`` with ``conf`` set on its CapacityScheduler before the first submission."""
    sim = Simulation(wl)
    if conf:
        sim.scheduler.update_conf(conf)  # type: ignore[attr-defined]
    return sim.run()


def _tags_of(wl: Workload, app_type: str | None) -> list[str]:
    """The node tags the jobs of ``app_type`` need (their stages' ``fail_off_tag``)."""
    return [s.fail_off_tag for j in wl.jobs if j.app_type == app_type
            for s in (j.maps, j.reduces) if s is not None and s.fail_off_tag]


def with_partition_cap(wl: Workload) -> tuple[Workload, Any]:
    """:func:`with_mapping_rules`, each rule also giving its applications' task and AM
    memory (``task_memory_mb``, ``am_memory_mb``: what an operator knows of the jobs it
    names), so the advisor writes the label partition's cap itself
    (``anacrac.container_awareness.partition_cap``)."""
    _, task_mb, am_mb, _, _ = _sizes(wl)
    return with_mapping_rules(wl, {"task_memory_mb": task_mb, "am_memory_mb": am_mb})


def with_mapping_rules(wl: Workload, extra: dict[str, int] | None = None
                       ) -> tuple[Workload, Any]:
    """The sidecar with the mapping-rule lever: ``bench/anacrac_sidecar_labels.py``'s
    cluster and rules, each rule also naming its applications (``app_names``: the
    jobs of its type, known before submission), so the advisor writes them as JSON
    mapping rules and the RM places them into ``ingest`` at submission. The jobs are
    submitted to ``default`` (mapping rules apply to those only)."""
    rules = [{"name": r.name, "app_type": r.app_type, "hosts": list(r.hosts),
              "tasks_maximum": r.tasks_maximum, "label": LABEL, "target_queue": QUEUE,
              "app_names": sorted({j.name for j in wl.jobs if j.app_type == r.app_type}),
              **(extra or {})}
             for r in derive_rules(wl)]
    cfg = load_config(overrides={"policies": {"anacrac": {"params": {"rules": rules}}}})
    return labelled(wl), cfg


def share(base: float, mode: float, inrm: float) -> float | None:
    """``(base - mode) / (base - inrm)``, lower better; None when the in-RM mode gains
    less than ``MIN_GAIN`` of the baseline (as ``simulate --mode all`` and
    paper_tables count it)."""
    gain = base - inrm
    if gain <= max(0.0, MIN_GAIN * base):
        return None
    return round((base - mode) / gain, 3)


def lost(r: Report) -> int:
    """Jobs that failed or never finished (a stalled run: nothing could progress)."""
    return r.jobs - r.jobs_finished


def _figures(r: Report) -> dict[str, Any]:
    return {"makespan_s": round(r.makespan_s, 1), "jobs_failed": r.jobs_failed,
            "jobs_unfinished": r.jobs - r.jobs_finished - r.jobs_failed,
            "stalled": r.stalled, "kills": r.kills, "kills_by_reason": r.kills_by_reason,
            "mean_jct_s": round(r.mean_jct_s, 1)}


def run(name: str) -> dict[str, Any]:
    wl = load_workload(WORKLOADS / f"{name}.yaml")
    cfg = load_config()
    fair = Simulation(wl).run()
    inrm = run_with(wl, build_scheduler("anacrac", wl, cfg))[0]
    side = run_sidecar(wl, None, cfg)[0]
    _, names = placed_at_submission(wl)
    cs, mcfg = with_mapping_rules(wl)
    mapped, tally, _ = run_sidecar(cs, None, mcfg)
    ccs, ccfg = with_partition_cap(wl)
    capped, cap_tally, _ = run_sidecar(ccs, None, ccfg)
    out: dict[str, Any] = {"workload": name, "matched_apps": names}
    runs: list[tuple[str, Report]] = [("fair", fair), ("in_rm", inrm), ("sidecar", side),
                                      ("sidecar_mapping_rules", mapped),
                                      ("sidecar_partition_cap", capped)]
    sets: dict[str, str] = {}
    for row, what, placed, conf in stand_ins(wl):
        runs.append((row, run_conf(placed, conf)))
        sets[row] = what
    for mode, r in runs:
        out[mode] = _figures(r)
        if mode in sets:
            out[mode]["sets"] = sets[mode]
    out["rows"] = [m for m, _ in runs]
    for mode, t in (("sidecar_mapping_rules", tally), ("sidecar_partition_cap", cap_tally)):
        out[mode]["writes"] = [
            {"at_s": at / 1000, "kind": str(k), "target": tgt} for at, k, tgt, _v in t.sent
            if k.value in ("set_mapping_rules", "replace_node_labels", "move_app_queue",
                           "update_scheduler_conf")]
    for mode, r in runs[2:]:
        out[mode]["share_total_time"] = share(fair.makespan_s, r.makespan_s, inrm.makespan_s)
        out[mode]["share_failed_jobs"] = share(lost(fair), lost(r), lost(inrm))
    return out


def render(res: dict[str, Any]) -> str:
    lines = [f"{res['workload']} (matched: {', '.join(res['matched_apps'])}):"]
    for mode in res["rows"]:
        m = res[mode]
        extra = (f", share of in-RM gain: total time {m['share_total_time']}, "
                 f"failed jobs {m['share_failed_jobs']}" if "share_total_time" in m else "")
        sets = f" [{m['sets']}]" if "sets" in m else ""
        lines.append(f"  {mode:<27} total {m['makespan_s']} s, failed {m['jobs_failed']}, "
                     f"unfinished {m['jobs_unfinished']}, kills {m['kills']}{extra}{sets}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--workload", action="append", choices=TABLES)
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args(argv)
    res = [run(n) for n in args.workload or TABLES]
    print(json.dumps({"tables": res}, indent=1) if args.json
          else "\n\n".join(render(r) for r in res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
