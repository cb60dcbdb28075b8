"""``yarn-advisor classify-eval``: the task classifier on an operator's history.

``classifiers.cli.register(subparsers)`` adds the subcommand to the main CLI.
The history is one of: Rumen traces (``--rumen``), JobHistory ``.jhist``
files or done directories (``--jhist``), Spark event logs (``--spark-events``),
a task CSV (``--tasks``, columns in :mod:`~yarn_advisor.classifiers.readers.tasks_csv`),
or the real clusters' public traces: Google 2011 (``--google``), Alibaba 2018
DAG tasks (``--alibaba``), Standard Workload Format logs (``--swf``).
``--rename-jobs`` evaluates the history as if every job carried one name
(what a production cluster with anonymized job names looks like);
several ``--rumen`` traces are learned across, in the order given or, with
``--time-order``, in the order of their first task (a daemon over days),
and the figures of each trace are printed too. ``--set NAME=VALUE`` passes a
parameter of the model (``shape_correlation``, ``alpha``, ``overdue_factor``...).
Exit status: 0; 1 when something could not be read whole (a truncated
trace or file, a garbled record: the figures of what was read are printed,
and the reader's counts under ``read``); 2 on bad arguments or an input
that is not of the format at all (a CSV without a required column).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from yarn_advisor.classifiers.evaluation.eval_result import (
    CLASSES,
    ORACLE_SHARE,
    EvalResult,
    frequency_rule_at,
    stage_oracle_at,
)
from yarn_advisor.classifiers.evaluation.evaluate import evaluate_reader, evaluate_traces
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier
from yarn_advisor.classifiers.readers.alibaba import AlibabaTaskReader
from yarn_advisor.classifiers.readers.google import GoogleTraceReader
from yarn_advisor.classifiers.readers.jhist import JhistReader
from yarn_advisor.classifiers.readers.sources import JobReader, SourceError
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader
from yarn_advisor.classifiers.readers.swf import SwfReader
from yarn_advisor.classifiers.readers.tasks_csv import TaskCsvReader

TARGET_LONG_CALLED_SHORT = 0.02
# Model parameters --set may change (the rest have their own options).
SETTABLE = {"alpha": float, "shape_correlation": float, "reduces_correlation": float,
            "overdue_factor": float, "max_overdue_share": float, "long_while_maps_wait": bool,
            "reduce_support_at_progress": bool, "relaxed_confidence": float,
            "relaxed_budget": float, "calibrate": bool, "long_budget": float,
            "calibration_aim": float, "calibration_floor": float, "stage_share": float,
            "evidence": bool,
            "evidence_prior": float}


def register(subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    """Add ``classify-eval`` to the main parser's subcommands."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "classify-eval",
        help="prequential evaluation of the short/long task classifier on a job history",
        description=(
            "Replay a job history in time order: each task is predicted at its start "
            "from what was known before, and learned when it finishes (or, if long, "
            "once it runs past the threshold)."
        ),
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--rumen",
        action="append",
        metavar="TRACE",
        help="Rumen job trace (.json or .json.gz); repeat to learn across traces in order",
    )
    source.add_argument(
        "--jhist",
        action="extend",
        nargs="+",
        metavar="PATH",
        help="JobHistory .jhist files, or done directories (walked; each job's "
        "_conf.xml beside it gives its memory); all read as one history",
    )
    source.add_argument(
        "--spark-events",
        action="extend",
        nargs="+",
        metavar="PATH",
        help="Spark event logs, rolling eventlog_v2_* folders, or folders of them; "
        "one application is one job, a stage one stage",
    )
    source.add_argument(
        "--tasks",
        action="extend",
        nargs="+",
        metavar="CSV",
        help="task CSV with the header columns job_id, job_name, user, queue, task_type, "
        "start_ms, finish_ms, memory_mb, vcores, status (one row per task)",
    )
    source.add_argument(
        "--google",
        action="extend",
        nargs="+",
        metavar="DIR",
        help="Google cluster trace 2011 folders (task_events/ and job_events/ part files); "
        "a task is one run of a Borg task",
    )
    source.add_argument(
        "--alibaba",
        action="extend",
        nargs="+",
        metavar="CSV",
        help="Alibaba cluster-trace-v2018 batch_task CSV (with or without its header); "
        "a task is one DAG task (a group of instances)",
    )
    source.add_argument(
        "--swf",
        action="extend",
        nargs="+",
        metavar="FILE",
        help="Standard Workload Format logs (Parallel Workloads Archive); a job is one task",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a task shorter than this is short (default 60)",
    )
    p.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        metavar="P",
        help="P(short) needed to call a task short (default: the model's, 0.9)",
    )
    p.add_argument(
        "--min-support",
        type=int,
        default=None,
        metavar="N",
        help="tasks of an application stage learned before one is called short "
        "(default: the model's, 3)",
    )
    p.add_argument(
        "--cycle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="classify only at cycle boundaries, as the daemon does "
        "(default 0: at each task's start)",
    )
    p.add_argument(
        "--rename-jobs",
        nargs="?",
        const="job",
        default=None,
        metavar="NAME",
        help="evaluate as if every job were named NAME (default 'job'): a cluster "
        "whose job names say nothing",
    )
    p.add_argument(
        "--time-order",
        action="store_true",
        help="learn several --rumen traces in the order of their first task",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a model parameter: " + ", ".join(SETTABLE),
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_classify_eval)
    return p


def cmd_classify_eval(args: argparse.Namespace) -> int:
    if args.threshold <= 0:
        print("classify-eval: --threshold must be > 0", file=sys.stderr)
        return 2
    if args.min_confidence is not None and not 0.0 <= args.min_confidence <= 1.0:
        print("classify-eval: --min-confidence must be within [0, 1]", file=sys.stderr)
        return 2
    if args.min_support is not None and args.min_support < 1:
        print("classify-eval: --min-support must be >= 1", file=sys.stderr)
        return 2
    try:
        params = parse_settings(args.set)
    except ValueError as exc:
        print(f"classify-eval: {exc}", file=sys.stderr)
        return 2
    settings: dict[str, Any] = {
        "threshold_s": args.threshold,
        "min_confidence": args.min_confidence,
        "min_support": args.min_support,
        "cycle_ms": max(1, round(args.cycle * 1000)),
        "rename": args.rename_jobs,
        "params": params,
    }
    reader: JobReader | None = (
        JhistReader(args.jhist) if args.jhist
        else SparkEventLogReader(args.spark_events) if args.spark_events
        else TaskCsvReader(args.tasks) if args.tasks
        else GoogleTraceReader(args.google) if args.google
        else AlibabaTaskReader(args.alibaba) if args.alibaba
        else SwfReader(args.swf) if args.swf
        else None
    )  # fmt: skip
    try:
        if reader is None:
            result = evaluate_traces(args.rumen, time_order=args.time_order, **settings)
        else:
            result = evaluate_reader(reader, **settings)
    except SourceError as exc:
        print(f"classify-eval: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(render(result))
    for problem in result.problems:
        print(f"classify-eval: {problem}", file=sys.stderr)
    return 1 if result.problems else 0


def parse_settings(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs as model parameters; ValueError names a bad one."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        kind = SETTABLE.get(name)
        if not sep or kind is None:
            raise ValueError(f"--set {item!r}: expected NAME=VALUE, NAME one of "
                             + ", ".join(SETTABLE))
        if kind is bool:
            if value not in ("true", "false"):
                raise ValueError(f"--set {item!r}: expected true or false")
            out[name] = value == "true"
            continue
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(f"--set {item!r}: not a number") from None
    try:
        NaiveBayesTaskClassifier(**out)
    except ValueError as exc:
        raise ValueError(f"--set: {exc}") from None
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render(result: EvalResult) -> str:
    """The human report: confusion matrix, per-class n and recall, bounds, and
    with several traces one line per trace."""
    lines = [
        f"trace(s): {', '.join(result.traces)}",
        f"threshold {result.threshold_s:g} s, min confidence {result.min_confidence:g}, "
        f"min support {result.min_support}, "
        f"cycle {result.cycle_ms / 1000:g} s",
    ]
    if result.rename is not None:
        lines.append(f"every job renamed to {result.rename!r}")
    lines += ["", f"{'actual / predicted':<20}{'short':>10}{'long':>10}{'n':>10}{'recall':>10}"]
    for cls in CLASSES:
        row = result.confusion[cls]
        lines.append(
            f"{cls:<20}{row['short']:>10}{row['long']:>10}{result.n(cls):>10}"
            f"{_pct(result.recall(cls)):>10}"
        )
    lcs = result.long_called_short
    verdict = "" if lcs is None else (" (ok)" if lcs <= TARGET_LONG_CALLED_SHORT else " (> 2%)")
    lines += ["", f"long tasks called short: {_pct(lcs)}{verdict}"]
    cold = result.cold
    lines.append(
        f"cold starts (no history of their user's stage): short {cold['short']}, "
        f"long {cold['long']}; short recall without them {_pct(result.warm_recall('short'))}"
    )
    first = result.first_seen
    lines.append(
        f"first of their user's stage (nothing learned of it yet): short {first['short']}, "
        f"long {first['long']}; short recall ceiling {_pct(result.short_recall_ceiling)}"
    )
    lines.append(
        f"job-stage oracle (stages >= {ORACLE_SHARE:.0%} short called short): short recall "
        f"{_pct(result.oracle_rate('short'))}, long called short {_pct(result.oracle_rate('long'))}"
    )
    o_short, o_long = stage_oracle_at(result, TARGET_LONG_CALLED_SHORT)
    f_short, f_long = frequency_rule_at(result, TARGET_LONG_CALLED_SHORT)
    n_short, n_long = result.n("short"), result.n("long")
    lines.append(
        f"baselines at <= {TARGET_LONG_CALLED_SHORT:.0%} long called short: (user, task type) "
        f"frequency rule short recall {_pct(f_short / n_short if n_short else None)}, "
        f"long called short {_pct(f_long / n_long if n_long else None)}; job-stage oracle "
        f"{_pct(o_short / n_short if n_short else None)}, "
        f"{_pct(o_long / n_long if n_long else None)}"
    )
    if result.called_short_by:
        said = ", ".join(f"{k} {s + n} ({n} long)" for k, (s, n) in
                         sorted(result.called_short_by.items()))
        lines.append(f"tasks called short, by rule: {said}")
    if result.short_called_long_by:
        why = ", ".join(f"{k} {v}" for k, v in sorted(result.short_called_long_by.items()))
        lines.append(f"short tasks called long, by rule: {why}")
    if result.skipped:
        lines.append(f"tasks skipped (no start/finish time): {result.skipped}")
    if result.unresolved:
        lines.append(f"tasks failed or killed before the threshold (not scored): "
                     f"{result.unresolved}")
    if result.censored:
        lines.append(f"tasks running at the trace's end before the threshold (not scored): "
                     f"{result.censored}")
    if result.repeated_jobs:
        lines.append(f"jobs already replayed from an earlier trace (skipped): "
                     f"{result.repeated_jobs}")
    if result.read is not None:
        lines.append(_render_read(result.read))
    if result.per_trace:
        lines += ["", f"{'per trace':<50}{'short':>7}{'recall':>8}{'long':>7}{'recall':>8}"
                      f"{'ceiling':>9}"]
        lines += [f"{r.traces[0][-50:]:<50}{r.n('short'):>7}{_pct(r.recall('short')):>8}"
                  f"{r.n('long'):>7}{_pct(r.recall('long')):>8}{_pct(r.short_recall_ceiling):>9}"
                  for r in result.per_trace]
    return "\n".join(lines)


def _render_read(read: dict[str, Any]) -> str:
    """One line: what the reader read, skipped (damage) and ignored."""
    line = (f"read ({read['reader']}): {read['files']} file(s), {read['jobs']} job(s), "
            f"{read['tasks']} task(s)")
    for label in ("skipped", "ignored"):
        if read[label]:
            line += f"; {label}: " + ", ".join(f"{k} {v}" for k, v in read[label].items())
    return line
