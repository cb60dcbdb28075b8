"""The what-if report: what each policy alone, and the configuration as a whole,
would have bought on one workload (``simulate --report``).

Variants: the baseline (the scheduler alone), the configuration as given (the
shipped defaults without ``--config``) in enforce mode, and each policy alone
(enabled and enforcing, every other policy off). Each variant runs once per
seed; a seed changes what the simulation draws (HDFS block placement, a
workload file's jitter), so the figures carry a 95 % confidence interval over
the seeds (Student's t; none with one seed). Runs are independent and go to
parallel processes (``workers``).

Figures per run: makespan, mean and p95 job completion time, per-queue and
per-user mean wait (submission to the AM's container), allocated and used
utilization, kills, failed jobs, wasted container-seconds, and the advisor's
actions by kind and outcome. :func:`to_text` and :func:`to_json` render it;
``whatif_html.to_html`` makes the offline page.
"""

from __future__ import annotations

import math
import os
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.engine.settings import load_config, with_overrides
from yarn_advisor.advisor.policies import POLICIES
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.spec import Workload

TIMELINE_POINTS = 200  # allocation samples kept per run for the page
FIGURES = ("makespan_s", "mean_jct_s", "p95_jct_s", "alloc_memory", "used_memory", "kills",
           "jobs_failed", "wasted_container_s")
# two-sided 95 % Student t by degrees of freedom (more: the normal's 1.96)
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


@dataclass(frozen=True)
class Variant:
    """One configuration of the what-if: ``policies`` None is the baseline (no
    advisor), ``()`` the configuration as given, else only these policies, enforcing."""

    name: str
    policies: tuple[str, ...] | None


def variants(config_given: bool, names: Sequence[str] = tuple(POLICIES)) -> tuple[Variant, ...]:
    """The baseline, the configuration (``defaults`` unless one was given), each policy."""
    return (Variant("baseline", None), Variant("config" if config_given else "defaults", ()),
            *(Variant(f"{p} alone", (p,)) for p in names))


@dataclass(frozen=True)
class RunSpec:
    """One run, as sent to a worker process (the configuration by path: a loaded
    configuration's class is built at load time and does not pickle)."""

    workload: Workload
    variant: Variant
    seed: int
    scheduler: str | None
    config_path: str | None


@dataclass(frozen=True)
class RunResult:
    """One run's figures (plain data: it comes back from a worker process)."""

    variant: str
    seed: int
    figures: dict[str, float]
    queue_wait_s: dict[str, float]
    user_wait_s: dict[str, float]
    jct_s: tuple[float, ...]
    actions: dict[str, dict[str, int]]  # kind -> outcome -> count
    timeline: tuple[tuple[float, float], ...]  # (s since the first submission, memory share)


@dataclass(frozen=True)
class Stat:
    mean: float
    ci95: float | None  # half-width; None with one seed

    def to_json(self) -> dict[str, float | None]:
        return {"mean": round(self.mean, 4),
                "ci95": None if self.ci95 is None else round(self.ci95, 4)}


@dataclass(frozen=True)
class VariantSummary:
    variant: str
    runs: tuple[RunResult, ...]
    figures: dict[str, Stat]
    queue_wait_s: dict[str, Stat]
    user_wait_s: dict[str, Stat]
    actions: dict[str, dict[str, float]]  # mean per run


@dataclass(frozen=True)
class WhatIf:
    workload: str
    seeds: tuple[int, ...]
    variants: tuple[VariantSummary, ...] = field(default=())


def policy_config(base: AdvisorConfig, variant: Variant) -> AdvisorConfig:
    """``base`` with only ``variant``'s policies on, each enforcing (``()``: as is)."""
    if not variant.policies:
        return base
    return with_overrides(base, {"policies": {
        p: {"enabled": p in variant.policies, "dry_run": False} for p in POLICIES}})


def run_one(spec: RunSpec) -> RunResult:
    """One variant on one seed (the worker's entry point)."""
    from yarn_advisor.simulator.sidecar import run_sidecar  # the advisor: only when asked

    wl = replace(spec.workload, seed=spec.seed)
    actions: dict[str, dict[str, int]] = {}
    if spec.variant.policies is None:
        sim = Simulation(wl, scheduler=spec.scheduler, mode="baseline")
        report = sim.run()
    else:
        base = load_config(Path(spec.config_path) if spec.config_path else None)
        report, tally, sim = run_sidecar(wl, spec.scheduler, policy_config(base, spec.variant))
        for key, n in tally.actions.items():
            _, kind, outcome = key.split(" ", 2)
            by = actions.setdefault(kind, {})
            by[outcome] = by.get(outcome, 0) + n
    total_mb = sum(n.total_mem for n in sim.nodes) or 1
    return _result(spec, report, actions, _timeline(sim, total_mb))


def _result(spec: RunSpec, r: Report, actions: dict[str, dict[str, int]],
            timeline: tuple[tuple[float, float], ...]) -> RunResult:
    waits: dict[str, dict[str, list[float]]] = {"queue": defaultdict(list),
                                                "user": defaultdict(list)}
    jcts = []
    for t in r.job_times.values():
        # start 0 is "not started", except for a job submitted at 0 that ran
        if t["start_s"] or (t["submit_s"] == 0 and t["state"] == "FINISHED"):
            wait = t["start_s"] - t["submit_s"]
            waits["queue"][t["queue"]].append(wait)
            waits["user"][t["user"] or "(none)"].append(wait)
        if t["state"] == "FINISHED":
            jcts.append(t["finish_s"] - t["submit_s"])
    figures = {"makespan_s": r.makespan_s, "mean_jct_s": r.mean_jct_s, "p95_jct_s": r.p95_jct_s,
               "alloc_memory": r.utilization["memory"],
               "used_memory": r.used_utilization["memory"], "kills": float(r.kills),
               "jobs_failed": float(r.jobs_failed), "wasted_container_s": r.wasted_container_s}
    return RunResult(spec.variant.name, spec.seed, figures,
                     {q: statistics.fmean(w) for q, w in waits["queue"].items()},
                     {u: statistics.fmean(w) for u, w in waits["user"].items()},
                     tuple(sorted(jcts)), actions, timeline)


def _timeline(sim: Simulation, total_mb: int) -> tuple[tuple[float, float], ...]:
    samples = sim.metrics.samples
    if not samples:
        return ()
    t0 = sim.metrics.started_ms or samples[0].t_ms
    step = max(1, len(samples) // TIMELINE_POINTS)
    return tuple((round((s.t_ms - t0) / 1000, 3), round(s.alloc_mem / total_mb, 4))
                 for s in samples[::step])


def what_if(wl: Workload, config_path: Path | None = None, scheduler: str | None = None,
            seeds: int = 1, workers: int = 0,
            only: Sequence[Variant] | None = None,
            runner: Callable[[RunSpec], RunResult] = run_one) -> WhatIf:
    """Every variant on ``seeds`` seeds (the workload's own seed first), in ``workers``
    processes (0: one per core; 1: in this process)."""
    chosen = tuple(only) if only is not None else variants(config_path is not None)
    seed_list = tuple(wl.seed + i for i in range(max(1, seeds)))
    specs = [RunSpec(wl, v, s, scheduler, str(config_path) if config_path else None)
             for v in chosen for s in seed_list]
    n = workers or os.cpu_count() or 1
    if n == 1 or len(specs) == 1:
        results = [runner(s) for s in specs]
    else:
        with ProcessPoolExecutor(max_workers=min(n, len(specs))) as pool:
            results = list(pool.map(runner, specs))
    return WhatIf(wl.name, seed_list, tuple(
        summarize(v.name, [r for r in results if r.variant == v.name]) for v in chosen))


def summarize(name: str, runs: Sequence[RunResult]) -> VariantSummary:
    """Means and 95 % intervals of one variant's runs."""
    def per_key(maps: list[dict[str, float]]) -> dict[str, Stat]:
        keys = sorted({k for m in maps for k in m})
        return {k: stat([m[k] for m in maps if k in m]) for k in keys}

    actions: dict[str, dict[str, float]] = {}
    for r in runs:
        for kind, by in r.actions.items():
            for outcome, count in by.items():
                row = actions.setdefault(kind, {})
                row[outcome] = row.get(outcome, 0.0) + count / len(runs)
    return VariantSummary(name, tuple(runs), per_key([r.figures for r in runs]),
                          per_key([r.queue_wait_s for r in runs]),
                          per_key([r.user_wait_s for r in runs]), actions)


def stat(values: Sequence[float]) -> Stat:
    """Mean and the half-width of its 95 % confidence interval (Student's t)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Stat(mean, None)
    df = len(values) - 1
    t = next((T95[k] for k in sorted(T95) if k >= df), 1.96)
    return Stat(mean, t * statistics.stdev(values) / math.sqrt(len(values)))


def to_json(w: WhatIf) -> dict[str, Any]:
    """The report as one JSON object."""
    return {"workload": w.workload, "seeds": list(w.seeds), "variants": [
        {"variant": v.variant,
         **{k: s.to_json() for k, s in v.figures.items()},
         "queue_wait_s": {q: s.to_json() for q, s in v.queue_wait_s.items()},
         "user_wait_s": {u: s.to_json() for u, s in v.user_wait_s.items()},
         "actions": {k: {o: round(n, 2) for o, n in sorted(by.items())}
                     for k, by in sorted(v.actions.items())}}
        for v in w.variants]}


def _cell(s: Stat | None, fmt: str, scale: float = 1.0) -> str:
    if s is None:
        return "-"
    text = format(s.mean * scale, fmt)
    return text if s.ci95 is None else f"{text}±{format(s.ci95 * scale, fmt)}"


def to_text(w: WhatIf, top_users: int = 10) -> str:
    """The report as the terminal shows it."""
    seeds = f"{len(w.seeds)} seed{'s' if len(w.seeds) > 1 else ''}"
    head = f"{'variant':<18}{'makespan s':>14}{'mean JCT s':>14}{'p95 JCT s':>14}" \
           f"{'alloc mem':>11}{'used mem':>10}{'kills':>8}{'failed':>8}{'wasted c-s':>12}"
    lines = [f"what-if on {w.workload} ({seeds}; ± is a 95 % interval over seeds)", head]
    for v in w.variants:
        f = v.figures.get
        lines.append(
            f"{v.variant:<18}{_cell(f('makespan_s'), '.1f'):>14}"
            f"{_cell(f('mean_jct_s'), '.1f'):>14}{_cell(f('p95_jct_s'), '.1f'):>14}"
            f"{_cell(f('alloc_memory'), '.1f', 100):>10}%{_cell(f('used_memory'), '.1f', 100):>9}%"
            f"{_cell(f('kills'), '.0f'):>8}{_cell(f('jobs_failed'), '.0f'):>8}"
            f"{_cell(f('wasted_container_s'), '.0f'):>12}")
    for v in w.variants:
        acts = ", ".join(f"{kind} " + "/".join(f"{o} {n:g}" for o, n in sorted(by.items()))
                         for kind, by in sorted(v.actions.items()))
        if v.variant != "baseline":
            lines.append(f"  actions of {v.variant}: {acts or 'none'}")
    lines += _waits("queue", [(v.variant, v.queue_wait_s) for v in w.variants], None)
    lines += _waits("user", [(v.variant, v.user_wait_s) for v in w.variants], top_users)
    return "\n".join(lines)


def _waits(what: str, rows: list[tuple[str, dict[str, Stat]]], top: int | None) -> list[str]:
    """Mean wait per queue (or user) and variant; users: the ``top`` longest at baseline."""
    base = rows[0][1]
    keys = sorted(base, key=lambda k: (-base[k].mean, k)) if top else sorted(base)
    shown = keys[:top] if top else keys
    if not shown:
        return []
    out = [f"mean wait (s) by {what}" + (f", the {len(shown)} longest at baseline of "
                                         f"{len(keys)}" if top and len(keys) > len(shown)
                                         else ""),
           f"  {what:<16}" + "".join(f"{name[:14]:>16}" for name, _ in rows)]
    for k in shown:
        out.append(f"  {k[:16]:<16}" + "".join(f"{_cell(waits.get(k), '.1f'):>16}"
                                               for _, waits in rows))
    return out
