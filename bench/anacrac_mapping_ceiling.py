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
has no RM lever and is not applied.

Reported per table: Fair (the paper's reference), ANACRAC in the RM, the
sidecar at its defaults, the sidecar writing the mapping rules itself
(``set_mapping_rules``: ``bench/anacrac_sidecar_labels.py``'s rules, each
naming its applications), and the mapping-rule ceiling: total time, failed
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


def _tags_of(wl: Workload, app_type: str | None) -> list[str]:
    """The node tags the jobs of ``app_type`` need (their stages' ``fail_off_tag``)."""
    return [s.fail_off_tag for j in wl.jobs if j.app_type == app_type
            for s in (j.maps, j.reduces) if s is not None and s.fail_off_tag]


def with_mapping_rules(wl: Workload) -> tuple[Workload, Any]:
    """The sidecar with the mapping-rule lever: ``bench/anacrac_sidecar_labels.py``'s
    cluster and rules, each rule also naming its applications (``app_names``: the
    jobs of its type, known before submission), so the advisor writes them as JSON
    mapping rules and the RM places them into ``ingest`` at submission. The jobs are
    submitted to ``default`` (mapping rules apply to those only)."""
    rules = [{"name": r.name, "app_type": r.app_type, "hosts": list(r.hosts),
              "tasks_maximum": r.tasks_maximum, "label": LABEL, "target_queue": QUEUE,
              "app_names": sorted({j.name for j in wl.jobs if j.app_type == r.app_type})}
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
    placed, names = placed_at_submission(wl)
    ceiling = Simulation(placed).run()
    cs, mcfg = with_mapping_rules(wl)
    mapped, tally, _ = run_sidecar(cs, None, mcfg)
    out: dict[str, Any] = {"workload": name, "matched_apps": names}
    for mode, r in (("fair", fair), ("in_rm", inrm), ("sidecar", side),
                    ("sidecar_mapping_rules", mapped), ("mapping_ceiling", ceiling)):
        out[mode] = _figures(r)
    out["sidecar_mapping_rules"]["writes"] = [
        {"at_s": t / 1000, "kind": str(k), "target": tgt} for t, k, tgt, _v in tally.sent
        if k.value in ("set_mapping_rules", "replace_node_labels", "move_app_queue")]
    for mode, r in (("sidecar", side), ("sidecar_mapping_rules", mapped),
                    ("mapping_ceiling", ceiling)):
        out[mode]["share_total_time"] = share(fair.makespan_s, r.makespan_s, inrm.makespan_s)
        out[mode]["share_failed_jobs"] = share(lost(fair), lost(r), lost(inrm))
    return out


def render(res: dict[str, Any]) -> str:
    lines = [f"{res['workload']} (matched: {', '.join(res['matched_apps'])}):"]
    for mode in ("fair", "in_rm", "sidecar", "sidecar_mapping_rules", "mapping_ceiling"):
        m = res[mode]
        extra = (f", share of in-RM gain: total time {m['share_total_time']}, "
                 f"failed jobs {m['share_failed_jobs']}" if "share_total_time" in m else "")
        lines.append(f"  {mode:<21} total {m['makespan_s']} s, failed {m['jobs_failed']}, "
                     f"unfinished {m['jobs_unfinished']}, kills {m['kills']}{extra}")
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
