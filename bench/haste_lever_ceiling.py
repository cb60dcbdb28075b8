"""What a sidecar's levers can reach on HaSTE's workloads: the lever ceiling.

HaSTE picks a container per heartbeat inside the RM; a sidecar can only write
YARN's levers. This bench searches those levers on the simulated
CapacityScheduler for haste_table2/3/4 and reports the best makespan and mean
JCT each reaches, as a share of the in-RM gain:
``share = (baseline - ceiling) / (baseline - in_rm)``.

Levers searched (each with ``yarn.cluster.max-application-priority`` = 10, so a
priority is in force, not advisory):

- ``static_order``: one application priority per job, fixed from submission
  (iterations of a job share it). Every weak order (priorities with ties) when
  the workload has at most 5 jobs; else every order of the job classes (the
  jobs' names) with every order inside each class, then best-improvement local
  search (move one job anywhere) from FIFO, SJF, LJF (by work: task-seconds x
  dominant share) and the best class order.
- ``dynamic_order``: a hindsight oracle re-prioritising every live app each
  cycle through the priority lever, by remaining work including later
  iterations (SRPT: least first; LRPT: most first), every 30 s (the sidecar's
  cycle) and every 1 s (the NM heartbeat: the lever's own limit).
- RM settings, static: node resources (schedulable vcores and/or memory x f on
  the same hardware: tasks slow down or get killed), the CapacityScheduler's
  maximum-am-resource-percent, node-locality-delay, off-switch assignments per
  heartbeat, and queues: one leaf queue per job (capacity equal or in
  proportion to its work, maximum 100 %, user-limit-factor = jobs), as the
  sidecar could set by scheduler-conf and move each app into at submission.
- ``slowstart`` (not an RM lever: the MapReduce AM's
  ``mapreduce.job.reduce.slowstart.completedmaps``, which an operator can
  only advise at submission): the same value for every job.
- ``combined``: the best static order, then greedily each RM setting that
  improves it, then the order searched again on top (local search from the
  best order when over 5 jobs); ``combined, nodes at real size`` leaves node
  resources out (no CPU over-subscription, which the simulator shares without
  loss); ``combined+slowstart`` adds the best slowstart. The in-RM makespan
  under the same settings is printed beside each (the reference moves too).
  Kills are printed with every best. A run that fails a job (a task killed for
  memory 4 times fails it, as in YARN) or is not done in 3 simulated hours is
  dropped: a failed job ends early, which is no gain.

The simulator is deterministic (seeded): each figure is one run; the bench
checks it by running the baseline twice.

    python bench/haste_lever_ceiling.py [--workload NAME ...] [--budget N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _haste_levers import (
    MAX_PRIORITY,
    SLOWSTARTS,
    Order,
    Transform,
    class_orders,
    lever_on,
    moves,
    remaining_work,
    rm_settings,
    root,
    roots,
    strict,
    weak_orders,
    with_order,
    with_slowstart,
    work,
)

from yarn_advisor.simulator.inrm import run_inrm
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.sidecar import run_sidecar
from yarn_advisor.simulator.simulation import Simulation, SimulationStuck
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("haste_table2", "haste_table3", "haste_table4")
LIVE = frozenset({"NEW", "SUBMITTED", "ACCEPTED", "RUNNING"})


@dataclass(frozen=True)
class Fig:
    makespan_s: float
    mean_jct_s: float
    kills: int = 0

    @staticmethod
    def of(r: Report) -> Fig:
        return Fig(r.makespan_s, r.mean_jct_s, r.kills)


# --- runs -------------------------------------------------------------------------------
HORIZON_MS = 3 * 3600_000  # a run not done in 3 simulated hours (3-7x the baselines) loses
LOST = Fig(float("inf"), float("inf"), -1)


def limited(call: Callable[[], Report]) -> Report | None:
    """``call()``, or None when the simulator stops the run for looping without
    progress (``SimulationStuck``; none is known since a task killed for memory
    fails its attempt and its job after 4, as in YARN: memory x 1.25 on table3
    used to kill and rerun one map without end)."""
    try:
        return call()
    except SimulationStuck:
        return None


def finish(sim: Simulation) -> Fig:
    """Run ``sim`` to its end; ``LOST`` past ``HORIZON_MS`` of simulated time, or
    when a job failed (a failed job ends early: its makespan is no gain)."""
    r = limited(lambda: sim.run(until_ms=HORIZON_MS))
    return Fig.of(r) if r is not None and sim.unfinished <= 0 and not r.jobs_failed else LOST


def bounded(wl: Workload) -> Fig:
    return finish(Simulation(wl))


class Runner:
    """Runs and caches figures; counts runs; a progress line on stderr every 100."""

    def __init__(self, name: str = "") -> None:
        self.cache: dict[Any, Fig] = {}
        self.runs = 0
        self.name = name
        self.started = time.perf_counter()

    def fig(self, key: Any, wl: Workload) -> Fig:
        if key not in self.cache:
            self.runs += 1
            t0 = time.perf_counter()
            self.cache[key] = bounded(wl)
            if time.perf_counter() - t0 > 3:
                print(f"  slow run ({time.perf_counter() - t0:.0f} s): {key} -> "
                      f"{self.cache[key]}", file=sys.stderr, flush=True)
            if self.runs % 100 == 0:
                print(f"  {self.name}: {self.runs} runs, "
                      f"{time.perf_counter() - self.started:.0f} s", file=sys.stderr, flush=True)
        return self.cache[key]


@dataclass
class Best:
    """The best setting by makespan and by mean JCT among those tried."""

    tried: int = 0
    by_makespan: tuple[Fig, str] | None = None
    by_jct: tuple[Fig, str] | None = None

    def add(self, fig: Fig, label: str) -> None:
        self.tried += 1
        if self.by_makespan is None or (fig.makespan_s, fig.mean_jct_s) < \
                (self.by_makespan[0].makespan_s, self.by_makespan[0].mean_jct_s):
            self.by_makespan = (fig, label)
        if self.by_jct is None or (fig.mean_jct_s, fig.makespan_s) < \
                (self.by_jct[0].mean_jct_s, self.by_jct[0].makespan_s):
            self.by_jct = (fig, label)


def label(order: Order) -> str:
    return " > ".join("=".join(b) for b in order)


def search_orders(run: Runner, wl: Workload, tag: str, budget: int,
                  start: Sequence[str] = (), local_only: bool = False
                  ) -> tuple[Best, str, Order]:
    """The static-order search on ``wl``: its best, the method, the best order
    (``local_only``, over 5 jobs: local search from ``start`` alone)."""
    names = roots(wl)
    best = Best()
    found: dict[str, Order] = {}

    def try_order(order: Order) -> Fig:
        fig = run.fig((tag, order), with_order(wl, order))
        best.add(fig, label(order))
        found[label(order)] = order
        return fig

    if len(names) <= 5:
        for order in weak_orders(names):
            try_order(order)
        method = f"all {best.tried} weak orders (priorities with ties)"
    else:
        for order in () if local_only else class_orders(wl):
            try_order(order)
        n_class = best.tried
        w = work(wl)
        starts = [list(start)] if start else []
        if not local_only:
            starts += [names, sorted(names, key=lambda n: w[n]),
                       sorted(names, key=lambda n: -w[n])]
            assert best.by_makespan is not None
            starts.append([b[0] for b in found[best.by_makespan[1]]])
        for s in starts:
            cur, cur_fig = s, try_order(strict(s))
            while best.tried < budget:
                cands = [(try_order(strict(m)), m) for m in moves(cur)]
                fig, m = min(cands, key=lambda x: (x[0].makespan_s, x[0].mean_jct_s))
                if (fig.makespan_s, fig.mean_jct_s) >= (cur_fig.makespan_s, cur_fig.mean_jct_s):
                    break
                cur, cur_fig = m, fig
        method = (f"{n_class} orders of the job classes with every order inside each class, "
                  f"then local search (one-job moves) from FIFO, SJF, LJF and the best: "
                  f"{best.tried} orders") if not local_only else \
            f"local search (one-job moves) from the given order: {best.tried} orders"
    assert best.by_makespan is not None
    return best, method, found[best.by_makespan[1]]


def dynamic(wl: Workload, interval_ms: int, largest_first: bool) -> Fig:
    """The hindsight oracle: every ``interval_ms`` each live app's priority by its
    remaining work (with its later iterations), through the priority lever."""
    wl = lever_on(wl)
    g = wl.cluster.groups[0]
    node = (g.memory_mb, g.vcores)
    later: dict[str, float] = {}  # job id -> work of the iterations after it
    per_job = {j.id: work(replace(wl, jobs=(j,)))[root(j.id)] for j in wl.jobs}
    for j in reversed(wl.jobs):
        nxt = [k for k in wl.jobs if k.after == j.id]
        later[j.id] = sum(per_job[k.id] + later[k.id] for k in nxt)
    sim = Simulation(wl)

    def hook(s: Simulation) -> None:
        live = [a for a in s.apps.values() if a.state in LIVE]
        ranked = sorted(live, key=lambda a: remaining_work(a, s.now, later[a.job.id], node),
                        reverse=largest_first)
        for i, a in enumerate(ranked):
            p = max(0, MAX_PRIORITY - i)
            if a.priority != p:
                s.scheduler.set_priority(a, p)

    sim.every(interval_ms, hook)
    return finish(sim)


# --- one workload -----------------------------------------------------------------------
def share(base: float, inrm: float, x: float) -> float | None:
    gain = base - inrm
    return round((base - x) / gain, 3) if gain > 0.01 * base else None


def one_workload(name: str, budget: int) -> dict[str, Any]:
    started = time.perf_counter()
    wl = load_workload(ROOT / "examples" / "workloads" / f"{name}.yaml")
    run = Runner(name)
    base = Fig.of(Simulation(wl).run())
    deterministic = Fig.of(Simulation(wl).run()) == base
    inrm = Fig.of(run_inrm(wl, wl.paper)[0])
    side = Fig.of(run_sidecar(wl)[0])
    side_on = Fig.of(run_sidecar(lever_on(wl))[0])
    rows: dict[str, dict[str, Any]] = {}

    def row(key: str, best: Best, how: str) -> None:
        assert best.by_makespan is not None and best.by_jct is not None
        (fm, lm), (fj, lj) = best.by_makespan, best.by_jct
        rows[key] = {"how": how, "tried": best.tried,
                     "makespan_s": fm.makespan_s, "kills": fm.kills, "setting": lm,
                     "share_makespan": share(base.makespan_s, inrm.makespan_s, fm.makespan_s),
                     "mean_jct_s": fj.mean_jct_s, "setting_jct": lj,
                     "share_mean_jct": share(base.mean_jct_s, inrm.mean_jct_s, fj.mean_jct_s)}

    orders, method, best_order = search_orders(run, wl, "plain", budget)
    row("static_order", orders, method)
    dyn = Best()
    for ms in (30_000, 1_000):
        for lf in (False, True):
            dyn.add(dynamic(wl, ms, lf), f"{'LRPT' if lf else 'SRPT'} every {ms // 1000} s")
    row("dynamic_order", dyn, "hindsight oracle through the priority lever")
    families = rm_settings(wl)
    for fam, settings in families.items():
        b = Best()
        for lab, tf in settings.items():
            b.add(run.fig(("alone", lab), tf(wl)), lab)
            b.add(run.fig(("order", lab), tf(with_order(wl, best_order))),
                  f"{lab}, order {label(best_order)}")
        row(fam, b, "static setting, alone and with the best static order")
        rows[fam]["each"] = {lab: [vars(run.cache[(k, lab)]) for k in ("alone", "order")]
                             for lab in settings}
    slow = Best()
    for s in SLOWSTARTS:
        lab = f"slowstart {s:g}"
        slow.add(run.fig(("alone", lab), with_slowstart(wl, s)), lab)
        slow.add(run.fig(("order", lab), with_slowstart(with_order(wl, best_order), s)),
                 f"{lab}, order {label(best_order)}")
    row("slowstart (AM config, advisory)", slow, "same value for every job")
    rows["slowstart (AM config, advisory)"]["each"] = {
        f"slowstart {s:g}": [vars(run.cache[(k, f"slowstart {s:g}")]) for k in ("alone", "order")]
        for s in SLOWSTARTS}
    real_size = {k: v for k, v in families.items() if k != "node_resources"}
    _combined(run, wl, best_order, real_size, budget, rows, "combined, nodes at real size")
    _combined(run, wl, best_order, families, budget, rows, "combined")
    chosen = min(SLOWSTARTS, key=lambda s: run.cache[("order", f"slowstart {s:g}")].makespan_s)
    _combined(run, with_slowstart(wl, chosen), best_order, families, budget, rows,
              "combined+slowstart")
    rows["combined+slowstart"]["setting"] += f"; slowstart {chosen:g}"
    return {"workload": name, "deterministic": deterministic, "runs": run.runs + 5,
            "wall_s": round(time.perf_counter() - started, 1),
            "baseline": vars(base), "in_rm": vars(inrm),
            "sidecar": {**vars(side),
                        "share_makespan": share(base.makespan_s, inrm.makespan_s,
                                                side.makespan_s)},
            "sidecar_priority_lever_on": {**vars(side_on), "share_makespan": share(
                base.makespan_s, inrm.makespan_s, side_on.makespan_s)},
            "levers": rows}


def _combined(run: Runner, wl: Workload, order: Order,
              families: Mapping[str, Mapping[str, Transform]], budget: int,
              rows: dict[str, dict[str, Any]], key: str) -> None:
    """Greedy: the best order, each family's best setting kept if it improves the
    makespan, then the order searched again on top (local search over 5 jobs);
    into ``rows[key]``, with the in-RM makespan under the same settings."""
    stack: list[tuple[str, Transform]] = []

    def apply(w: Workload) -> Workload:
        for _, tf in stack:
            w = tf(w)
        return w

    tag = (key, wl.jobs[0].slowstart)
    cur = run.fig((tag, ()), apply(with_order(wl, order)))
    for settings in families.values():
        best: tuple[Fig, str, Transform] | None = None
        for lab, tf in settings.items():
            stack.append((lab, tf))
            fig = run.fig((tag, tuple(x for x, _ in stack)), apply(with_order(wl, order)))
            stack.pop()
            if best is None or fig.makespan_s < best[0].makespan_s:
                best = (fig, lab, tf)
        if best is not None and best[0].makespan_s < cur.makespan_s:
            cur = best[0]
            stack.append((best[1], best[2]))
    labels = [x for x, _ in stack]
    b, _method, _ = search_orders(run, apply(wl), f"{tag}-{labels}", budget,
                                  [x for blk in order for x in blk], local_only=True)
    b.add(cur, label(order))
    base_rows = {"how": "greedy over the families above, then the order searched again"}
    rows[key] = base_rows
    assert b.by_makespan is not None and b.by_jct is not None
    rows[key].update({"tried": b.tried, "makespan_s": b.by_makespan[0].makespan_s,
                      "kills": b.by_makespan[0].kills,
                      "setting": "; ".join([*labels, "order " + b.by_makespan[1]]),
                      "mean_jct_s": b.by_jct[0].mean_jct_s,
                      "in_rm_same_settings_s": _inrm_makespan(apply(wl))})


def _inrm_makespan(wl: Workload) -> float | None:
    """The in-RM makespan on ``wl``, None when it does not end (see ``limited``) or
    fails a job."""
    r = limited(lambda: run_inrm(wl, wl.paper)[0])
    return None if r is None or r.stalled or r.jobs_failed else r.makespan_s


# --- output -----------------------------------------------------------------------------
def fill_shares(r: dict[str, Any]) -> None:
    base, inrm = r["baseline"], r["in_rm"]
    for key in ("combined, nodes at real size", "combined", "combined+slowstart"):
        row = r["levers"][key]
        row["share_makespan"] = share(base["makespan_s"], inrm["makespan_s"], row["makespan_s"])
        row["share_mean_jct"] = share(base["mean_jct_s"], inrm["mean_jct_s"], row["mean_jct_s"])


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f} %"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", action="append", choices=WORKLOADS,
                   help="workload (default: all three)")
    p.add_argument("--budget", type=int, default=900,
                   help="orders tried at most per local search (default 900)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    args = p.parse_args(argv)
    out = []
    for name in args.workload or WORKLOADS:
        r = one_workload(name, args.budget)
        fill_shares(r)
        out.append(r)
        if not args.json:
            _print(r)
    if args.json:  # a run given up (infinite makespan) is null
        print(json.dumps(_finite({"workloads": out}), indent=1))
    return 0


def _finite(x: Any) -> Any:
    if isinstance(x, float) and x == float("inf"):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _print(r: dict[str, Any]) -> None:
    b, i, s, so = r["baseline"], r["in_rm"], r["sidecar"], r["sidecar_priority_lever_on"]
    print(f"{r['workload']}: makespan s / mean JCT s   ({r['runs']} runs, {r['wall_s']} s, "
          f"deterministic: {r['deterministic']})")
    print(f"  baseline {b['makespan_s']:.0f} / {b['mean_jct_s']:.0f}   in-RM "
          f"{i['makespan_s']:.0f} / {i['mean_jct_s']:.0f}   sidecar {s['makespan_s']:.0f} "
          f"({pct(s['share_makespan'])})   sidecar, priority lever on {so['makespan_s']:.0f} "
          f"({pct(so['share_makespan'])})")
    for key, row in r["levers"].items():
        inrm = row.get("in_rm_same_settings_s", "")
        extra = f"  [in-RM, same settings: {inrm if inrm is None else round(inrm)}]" \
            if "in_rm_same_settings_s" in row else ""
        print(f"  {key:<32} {row['makespan_s']:7.0f} ({pct(row['share_makespan']):>6})  "
              f"JCT {row['mean_jct_s']:5.0f} ({pct(row['share_mean_jct']):>6})  "
              f"kills {row['kills']:3}  {row['tried']:4} tried  best: {row['setting']}{extra}")


if __name__ == "__main__":
    raise SystemExit(main())
