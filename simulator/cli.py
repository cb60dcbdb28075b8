"""``yarn-advisor simulate``: a workload or trace on a simulated YARN cluster.

``simulator.cli.register(subparsers)`` adds the subcommand to the main CLI;
``python -m yarn_advisor.simulator.cli simulate ...`` runs it alone.

With ``--json`` it prints one JSON object per line, one per mode, each with
``mode``, ``makespan_s``, ``mean_jct_s``, ``p95_jct_s``, ``utilization``
(memory, vcores: allocated share of the schedulable resource),
``used_utilization``, ``locality_rate``, ``kills`` and ``wasted_container_s``.
Modes: ``baseline`` (the scheduler alone); ``sidecar`` (the advisor's own
daemon beside it, in enforce mode, configured by ``--config``; its line adds
``advisor``: cycles and actions by policy, kind and outcome); ``plugin`` (the
sidecar with precision mode on: the decision table it publishes each cycle is
applied inside the simulated CapacityScheduler by the RM plug-in, see
:mod:`yarn_advisor.simulator.plugin`; its ``advisor`` adds ``plugin``: tables
taken up and vetoes by reason); ``in-rm`` (one paper's algorithm as the RM's
scheduler, :mod:`yarn_advisor.simulator.inrm`: ``--paper``, else the workload's
``paper:``; its parameters from ``--config`` too; its line adds ``paper``);
``all`` runs the four (without a paper, as for a trace: baseline, sidecar and
plugin) and the sidecar and plugin lines add ``recovered``: the share of the
in-RM gain over the baseline each gets, ``(baseline - mode) / (baseline -
in_rm)`` for ``makespan`` and ``mean_jct`` (null when the in-RM mode gains
nothing: less than 1 % of the baseline, where the ratio would only magnify
noise).
Exit status: 0; 1 when a run stalled (jobs left that could never run) or
looped without progress (a clear message naming the workload, the simulated
time and what repeats; the runs before it are printed);
2 for bad input (every problem is printed with its file and line or job).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.classifiers.readers.sources import ReadReport
from yarn_advisor.config.base import ConfigError
from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.inrm import run_inrm
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.progress import ProgressBar
from yarn_advisor.simulator.readers.cluster_from import on_cluster
from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.history import READERS, read_history
from yarn_advisor.simulator.readers.rumen import read_rumen
from yarn_advisor.simulator.readers.sls import read_sls
from yarn_advisor.simulator.readers.swim import SwimModel, read_swim
from yarn_advisor.simulator.schedulers import SCHEDULERS
from yarn_advisor.simulator.sidecar import AdvisorTally, run_sidecar
from yarn_advisor.simulator.simulation import Simulation, SimulationStuck
from yarn_advisor.simulator.spec import PAPERS, NodeGroup, Workload
from yarn_advisor.simulator.timeline import TimelineError, write_timeline
from yarn_advisor.simulator.workload import load_workload

MODES = ("baseline", "sidecar", "plugin", "in-rm")
MIN_GAIN = 0.01  # an in-RM gain below 1 % of the baseline counts as none (share null)


def register(subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    """Add ``simulate`` to the main parser's subcommands."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "simulate", help="what-if runs on a simulated YARN cluster",  # = cli.main.SIMULATE_HELP
        description="Run a workload or a job trace on a discrete-event simulation of a YARN "
                    "cluster (CapacityScheduler, FairScheduler or FifoScheduler).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workload", type=Path, metavar="FILE",
                     help="workload file (YAML/JSON: cluster, scheduler, jobs)")
    src.add_argument("--rumen", type=Path, metavar="TRACE", help="Rumen job trace")
    src.add_argument("--sls", type=Path, metavar="TRACE", help="SLS JSON job trace")
    src.add_argument("--swim", type=Path, metavar="TSV", help="SWIM .tsv job trace")
    src.add_argument("--jhist", type=Path, nargs="+", metavar="DIR_OR_FILE",
                     help="your JobHistory: done directories or .jhist files (with their "
                          "_conf.xml beside them for the memory asked)")
    src.add_argument("--spark-events", type=Path, nargs="+", metavar="PATH",
                     help="your Spark event logs (files or folders)")
    src.add_argument("--tasks", type=Path, nargs="+", metavar="CSV",
                     help="your task CSV (classify-eval's columns; needs --nodes)")
    p.add_argument("--cluster-from", metavar="URL_OR_RECORDING",
                   help="the cluster as it is: nodes, racks, labels and queues read from a "
                        "live RM (read only) or a recording's last cycle")
    p.add_argument("--scheduler", choices=sorted(SCHEDULERS),
                   help="baseline scheduler (default: the workload's own)")
    p.add_argument("--mode", choices=(*MODES, "all"), default="baseline")
    p.add_argument("--config", type=Path, metavar="ADVISOR_YAML",
                   help="advisor configuration for the sidecar mode (and the in-rm "
                        "algorithm's parameters)")
    p.add_argument("--paper", choices=PAPERS,
                   help="the algorithm of the in-rm mode (default: the workload's paper:)")
    p.add_argument("--warm", type=int, default=0, metavar="N",
                   help="sidecar: N unmeasured runs of the same workload first, so the "
                        "classifier knows the jobs as on a cluster it has watched before "
                        "(default 0: every job is new)")
    p.add_argument("--nodes", type=int, metavar="N", help="number of nodes (overrides)")
    p.add_argument("--node-memory-mb", type=int, metavar="M")
    p.add_argument("--node-vcores", type=int, metavar="V")
    p.add_argument("--png", type=Path, metavar="OUT",
                   help="write a timeline of memory allocated per job (needs matplotlib)")
    p.add_argument("--report", action="store_true",
                   help="the what-if report: the baseline, the configuration (the shipped "
                        "defaults without --config) and each policy alone, over --seeds")
    p.add_argument("--seeds", type=int, default=1, metavar="N",
                   help="with --report: seeds per variant (a 95 %% interval from 2 on)")
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="parallel processes for several modes or a report's runs "
                        "(default: one per core; 1: all in this process)")
    p.add_argument("--html", type=Path, metavar="OUT",
                   help="with --report: also write the report as one offline HTML page")
    p.add_argument("--json", action="store_true", help="one JSON object per mode")
    p.add_argument("--jobs", action="store_true", help="with --json: per-job times too")
    p.add_argument("--max-jobs", type=int, default=0, metavar="N",
                   help="only the first N jobs of a SWIM trace")
    p.add_argument("--swim-cluster-nodes", type=int, metavar="N",
                   help="the cluster a SWIM trace was sampled on, whose bytes are scaled "
                        "to --nodes (default: 3000 for FB-2010 files, else 600)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    p.set_defaults(handler=cmd_simulate)
    return p


def _positive(args: argparse.Namespace) -> list[str]:
    bad = []
    for name in ("nodes", "node_memory_mb", "node_vcores", "swim_cluster_nodes"):
        v = getattr(args, name)
        if v is not None and v <= 0:
            bad.append(f"--{name.replace('_', '-')} must be positive, got {v}")
    if args.warm < 0:
        bad.append(f"--warm must be 0 or more, got {args.warm}")
    if args.seeds < 1 or args.seeds > 100:
        bad.append(f"--seeds must be 1 to 100, got {args.seeds}")
    if args.workers < 0:
        bad.append(f"--workers must be 0 (one per core) or more, got {args.workers}")
    if args.html is not None and not args.report:
        bad.append("--html needs --report")
    return bad


def load_input(args: argparse.Namespace) -> Workload:
    """The workload the arguments name (raises WorkloadError)."""
    opts = TraceOptions(nodes=args.nodes or 0,
                        node_memory_mb=args.node_memory_mb or TraceOptions.node_memory_mb,
                        node_vcores=args.node_vcores or TraceOptions.node_vcores,
                        scheduler=args.scheduler or "capacity")
    if args.cluster_from is not None and args.workload is None:
        return on_cluster(_trace(args, opts), args.cluster_from, args.scheduler)
    return _trace(args, opts) if args.workload is None else _workload(args)


def _trace(args: argparse.Namespace, opts: TraceOptions) -> Workload:
    """The workload of the trace or history the arguments name."""
    if args.cluster_from is not None:
        opts = replace(opts, nodes=1)  # the hosts come from the cluster, not the history
    for kind in READERS:
        paths = getattr(args, kind.replace("-", "_"))
        if paths is not None:
            wl, report = read_history(kind, paths, opts)
            _say_read(report)
            return wl
    if args.swim is not None:
        return read_swim(args.swim, opts, SwimModel(raw_cluster_nodes=args.swim_cluster_nodes or 0),
                         max_jobs=args.max_jobs)
    assert args.rumen is not None or args.sls is not None
    return read_rumen(args.rumen, opts) if args.rumen is not None else read_sls(args.sls, opts)


def _workload(args: argparse.Namespace) -> Workload:
    wl = load_workload(args.workload)
    if args.nodes or args.node_memory_mb or args.node_vcores:
        first = wl.cluster.groups[0]
        group = NodeGroup(args.nodes or wl.cluster.node_count,
                          args.node_memory_mb or first.memory_mb,
                          args.node_vcores or first.vcores)
        wl = replace(wl, cluster=replace(wl.cluster, groups=(group,)))
        problems = [f"{args.workload}: job {j.id}: {what} does not fit a "
                    f"<{group.memory_mb} MB, {group.vcores} vcores> node"
                    for j in wl.jobs
                    for what, r in (("am", j.am), ("maps", j.maps and j.maps.request),
                                    ("reduces", j.reduces and j.reduces.request))
                    if r and (r.memory_mb > group.memory_mb or r.vcores > group.vcores)]
        if problems:
            raise WorkloadError(problems)
    return wl


def _say_read(report: ReadReport) -> None:
    """What the history reader read and skipped, on stderr (skipped is not silent)."""
    skipped = ", ".join(f"{n} {kind}" for kind, n in sorted(report.skipped.items()))
    print(f"yarn-advisor simulate: read {report.files} file(s), {report.jobs} job(s), "
          f"{report.tasks} task(s)" + (f"; skipped {skipped}" if skipped else ""),
          file=sys.stderr)
    for line in report.problem_lines():
        print(f"  {line}", file=sys.stderr)


def run_baseline(wl: Workload, scheduler: str | None, progress: bool,
                 sample_ms: int = 0) -> tuple[Report, Simulation]:
    sim = Simulation(wl, scheduler=scheduler, mode="baseline", sample_ms=sample_ms)
    bar = ProgressBar(f"simulate {wl.name} baseline") if progress else None
    try:
        report = sim.run(progress=bar)
    finally:
        if bar is not None:
            bar.close()
    return report, sim


def cmd_simulate(args: argparse.Namespace) -> int:
    problems = _positive(args)
    if problems:
        for msg in problems:
            print(f"yarn-advisor simulate: {msg}", file=sys.stderr)
        return 2
    if args.config is not None:  # checked here, once: each run loads it again by path
        try:
            load_config(args.config)
        except ConfigError as exc:
            print(f"yarn-advisor simulate: {exc}", file=sys.stderr)
            return 2
    try:
        wl = load_input(args)
    except WorkloadError as exc:
        print("yarn-advisor simulate: bad input:", file=sys.stderr)
        for msg in exc.problems:
            print(f"  {msg}", file=sys.stderr)
        return 2
    if args.report:
        return _report(args, wl)
    paper = args.paper or wl.paper
    if args.mode == "in-rm" and not paper:
        where = f"`paper:` in {args.workload}" if args.workload is not None else \
            "`paper:` in a workload file"
        print(f"yarn-advisor simulate: mode {args.mode!r} needs a paper: --paper "
              f"{'|'.join(PAPERS)} or {where}", file=sys.stderr)
        return 2
    show = sys.stderr.isatty() if args.progress is None else args.progress
    # a trace (or a workload without paper:) has no in-RM algorithm: all = the others
    modes = ([m for m in MODES if m != "in-rm" or paper]) if args.mode == "all" \
        else [args.mode]
    runs: list[tuple[Report, Simulation | None]] = []
    lines: list[tuple[Report, dict[str, Any], AdvisorTally | None]] = []
    try:
        _run_modes(args, wl, paper, modes, show, runs, lines)
    except SimulationStuck as exc:
        print(f"yarn-advisor simulate: {exc}", file=sys.stderr)
        return 1
    if args.mode == "all" and not paper:
        _print(args, *lines[1])
        _print(args, *lines[2])
    elif args.mode == "all":
        (base, _, _), side, plug, (inrm, inrm_extra, _) = lines
        for report, extra, tally in (side, plug):
            extra["recovered"] = recovered(base, report, inrm)
            _print(args, report, extra, tally)
        _print(args, inrm, inrm_extra, None)
    if args.png is not None:
        try:
            write_timeline([(f"{wl.name}: {r.scheduler} ({r.mode})", s.metrics.samples,
                             sum(n.total_mem for n in s.nodes)) for r, s in runs
                            if s is not None],
                           args.png, wl.name)
        except TimelineError as exc:
            print(f"yarn-advisor simulate: {exc}", file=sys.stderr)
            return 2
    return 1 if any(r.stalled for r, _ in runs) else 0


def _report(args: argparse.Namespace, wl: Workload) -> int:
    """``--report``: every variant, printed as text or JSON, and the page if asked."""
    from yarn_advisor.simulator.whatif import to_json, to_text, what_if
    from yarn_advisor.simulator.whatif_html import to_html

    report = what_if(wl, args.config, args.scheduler, seeds=args.seeds, workers=args.workers)
    print(json.dumps(to_json(report), sort_keys=True) if args.json else to_text(report),
          flush=True)
    if args.html is not None:
        try:
            args.html.write_text(to_html(report), encoding="utf-8")
        except OSError as exc:
            print(f"yarn-advisor simulate: cannot write {args.html}: {exc}", file=sys.stderr)
            return 2
    return 0


@dataclass(frozen=True)
class ModeRun:
    """One mode of one simulate command, as a worker process gets it (the advisor's
    configuration by path: a loaded one does not pickle)."""

    mode: str
    workload: Workload
    scheduler: str | None
    config: Path | None
    paper: str | None
    warm: int


def run_mode(job: ModeRun, show: bool = False
             ) -> tuple[Report, dict[str, Any], AdvisorTally | None, Simulation]:
    """Run one mode: its report, the extra fields of its line, the advisor's tally."""
    wl, tally = job.workload, None
    extra: dict[str, Any] = {}
    cfg = load_config(job.config) if job.config is not None else None
    if job.mode == "baseline":
        report, sim = run_baseline(wl, job.scheduler, show)
        return report, extra, tally, sim
    bar = ProgressBar(f"simulate {wl.name} {job.mode}") if show else None
    try:
        if job.mode in ("sidecar", "plugin"):
            report, tally, sim = run_sidecar(wl, job.scheduler, cfg, progress=bar,
                                             warm=job.warm, precision=job.mode == "plugin")
            extra = {"advisor": tally.to_json()}
        else:
            assert job.paper is not None  # in-rm is a mode only with a paper
            report, sim = run_inrm(wl, job.paper, cfg, progress=bar)
            extra = {"paper": job.paper}
    finally:
        if bar is not None:
            bar.close()
    return report, extra, tally, sim


def _in_worker(job: ModeRun) -> tuple[Report, dict[str, Any], AdvisorTally | None]:
    report, extra, tally, _ = run_mode(job)
    return report, extra, tally


def _run_modes(args: argparse.Namespace, wl: Workload, paper: str | None, modes: list[str],
               show: bool, runs: list[tuple[Report, Simulation | None]],
               lines: list[tuple[Report, dict[str, Any], AdvisorTally | None]]) -> None:
    """Run each mode, printing the baseline (or a single mode) as soon as it is known.
    Several modes go to parallel processes (one per core, at most one per mode)
    unless a timeline is drawn (it needs each run's simulation here) or
    ``--workers 1``."""
    jobs = [ModeRun(m, wl, args.scheduler, args.config, paper, args.warm) for m in modes]
    workers = min(len(jobs), args.workers or os.cpu_count() or 1)
    if workers > 1 and args.png is None:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for report, extra, tally in pool.map(_in_worker, jobs):
                runs.append((report, None))
                lines.append((report, extra, tally))
                if args.mode != "all" or report.mode == "baseline":
                    _print(args, report, extra, tally)
        return
    for job in jobs:
        report, extra, tally, sim = run_mode(job, show)
        runs.append((report, sim))
        lines.append((report, extra, tally))
        if args.mode != "all" or job.mode == "baseline":
            _print(args, report, extra, tally)


def recovered(base: Report, side: Report, inrm: Report) -> dict[str, float | None]:
    """The share of the in-RM gain over the baseline that the sidecar recovers:
    ``(baseline - sidecar) / (baseline - in_rm)``; None when the in-RM mode gains
    less than ``MIN_GAIN`` of the baseline (no gain to recover)."""
    def share(b: float, s: float, i: float) -> float | None:
        return round((b - s) / (b - i), 4) if b - i > MIN_GAIN * b else None
    return {"makespan": share(base.makespan_s, side.makespan_s, inrm.makespan_s),
            "mean_jct": share(base.mean_jct_s, side.mean_jct_s, inrm.mean_jct_s)}


def _print(args: argparse.Namespace, report: Report, extra: dict[str, Any],
           tally: AdvisorTally | None) -> None:
    if args.json:
        print(json.dumps({**report.to_json(with_jobs=args.jobs), **extra}, sort_keys=True),
              flush=True)
        return
    text = _human(report)
    if tally is not None:
        text += "\n" + _human_tally(tally)
    rec = extra.get("recovered")
    if rec is not None:
        text += "\n  recovers of the in-RM gain: " + ", ".join(
            f"{k.replace('_', ' ')} {'n/a' if v is None else f'{100 * v:.0f} %'}"
            for k, v in rec.items())
    print(text, flush=True)


def _human_tally(t: AdvisorTally) -> str:
    done = ", ".join(f"{k} {n}" for k, n in sorted(t.actions.items())) or "none"
    return f"  advisor: {t.cycles} cycles ({t.skipped} skipped); actions: {done}"


def _human(r: Report) -> str:
    loc = "n/a" if r.locality_rate is None else f"{100 * r.locality_rate:.1f} %"
    lines = [
        f"{r.workload}: {r.scheduler}, mode {r.mode}",
        f"  jobs {r.jobs} (finished {r.jobs_finished}, failed {r.jobs_failed})"
        + ("  STALLED: jobs left that could not run" if r.stalled else ""),
        f"  makespan {r.makespan_s:.1f} s   mean JCT {r.mean_jct_s:.1f} s   "
        f"p95 JCT {r.p95_jct_s:.1f} s",
        f"  allocated memory {100 * r.utilization['memory']:.1f} %  vcores "
        f"{100 * r.utilization['vcores']:.1f} %   used memory "
        f"{100 * r.used_utilization['memory']:.1f} %  CPU "
        f"{100 * r.used_utilization['vcores']:.1f} %",
        f"  map locality {loc}   kills {r.kills}   wasted {r.wasted_container_s:.1f} "
        f"container-s",
        f"  {r.events} events in {r.wall_s:.2f} s",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="yarn-advisor")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
