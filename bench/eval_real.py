"""The classifier on every real cluster's trace of ../shared/data, and apart on the generated ones.

Run: ``python bench/eval_real.py [--json] [--set NAME=VALUE ...] [--only NAME ...]``.

Real traces (each alone, a fresh model, prequential as ``yarn-advisor
classify-eval`` does; what each is: ../shared/data/PROVENANCE.md):
``google-clusterdata-2011`` (``--google``), ``alibaba-v2018-dag-tasks``
(``--alibaba``), ``nasa-ipsc-1993-swf`` (``--swf``), ``groupon-sparklint-eventlogs``
and ``spark-eventlogs`` (``--spark-events``), ``hadoop-jhist`` (``--jhist``).
Generated traces: every Rumen trace of the Gridmix and Rumen test sets (and
SLS samples), each alone, as ``bench/eval_rumen.py``'s *original* run.

Each row: the model's short recall / long recall / long tasks called short
(n short, n long); the two baselines tuned to <= 2 % long called short: the
(user, task type) frequency rule (the share of short tasks learned of the
task's user's stage, finished and censored, at least a threshold chosen in
hindsight on the trace itself) and the job-stage oracle (told every job
stage's tasks in advance, calling the purest stages short first); the short
recall ceiling. Then the pooled rows, real and generated, always both. The
last line of ``--json`` holds the pooled figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval_rumen import trace_paths

from yarn_advisor.classifiers.evaluation.cli import parse_settings
from yarn_advisor.classifiers.evaluation.eval_result import (
    TARGET_LCS,
    EvalResult,
    frequency_rule_at,
    pooled,
    stage_oracle_at,
)
from yarn_advisor.classifiers.evaluation.evaluate import evaluate_reader, evaluate_traces
from yarn_advisor.classifiers.readers.alibaba import AlibabaTaskReader
from yarn_advisor.classifiers.readers.google import GoogleTraceReader
from yarn_advisor.classifiers.readers.jhist import JhistReader
from yarn_advisor.classifiers.readers.sources import JobReader
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader
from yarn_advisor.classifiers.readers.swf import SwfReader

DEFAULT_DATA = Path(os.environ.get("YARN_ADVISOR_SHARED")
                    or Path(__file__).resolve().parents[2] / "shared" / "data")
GENERATED = ("hadoop-gridmix-system-traces", "hadoop-gridmix", "hadoop-rumen-testdata",
             "hadoop-sls")


def real_traces(data: Path) -> dict[str, Callable[[], JobReader]]:
    """The real traces of ``data`` that are there, by folder name."""
    found: dict[str, Callable[[], JobReader]] = {}
    if (data / "google-clusterdata-2011" / "task_events").is_dir():
        found["google-clusterdata-2011"] = lambda: GoogleTraceReader(
            [data / "google-clusterdata-2011"])
    alibaba = data / "alibaba-v2018-dag-tasks" / "selected_DAGs.csv"
    if alibaba.exists():
        found["alibaba-v2018-dag-tasks"] = lambda: AlibabaTaskReader([alibaba])
    swf = sorted((data / "nasa-ipsc-1993-swf").glob("*.swf*"))
    if swf:
        found["nasa-ipsc-1993-swf"] = lambda: SwfReader(swf)
    for name in ("groupon-sparklint-eventlogs", "spark-eventlogs"):
        if (data / name).is_dir():
            found[name] = lambda name=name: SparkEventLogReader([data / name])  # type: ignore[misc]
    if (data / "hadoop-jhist").is_dir():
        found["hadoop-jhist"] = lambda: JhistReader([data / "hadoop-jhist"])
    return found


def rumen_traces(data: Path) -> list[Path]:
    """The generated traces: ``eval_rumen.py``'s (every file that reads as a Rumen
    trace with tasks), from the folders of :data:`GENERATED`."""
    return [p for p in trace_paths(data) if p.relative_to(data).parts[0] in GENERATED]


def row(name: str, r: EvalResult, seconds: float | None = None,
        parts: list[EvalResult] | None = None) -> dict[str, Any]:
    """One row; a pooled one (``parts``) sums its traces' baselines, each tuned on its own."""
    fs, fl = _sum(frequency_rule_at(p, TARGET_LCS) for p in parts or [r])
    os_, ol = _sum(stage_oracle_at(p, TARGET_LCS) for p in parts or [r])
    ns, nl = r.n("short"), r.n("long")
    out: dict[str, Any] = {
        "trace": name, "n_short": ns, "n_long": nl,
        "short_recall": r.recall("short"), "long_recall": r.recall("long"),
        "long_called_short": r.long_called_short,
        "frequency_rule": [fs / ns if ns else None, fl / nl if nl else None],
        "job_stage_oracle": [os_ / ns if ns else None, ol / nl if nl else None],
        "ceiling": r.short_recall_ceiling,
        "short_called_long_by": r.short_called_long_by,
    }
    if seconds is not None:
        out["seconds"] = round(seconds, 1)
    return out


def _sum(pairs: Iterable[tuple[int, int]]) -> tuple[int, int]:
    a = b = 0
    for x, y in pairs:
        a, b = a + x, b + y
    return a, b


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def render(rows: list[dict[str, Any]]) -> str:
    head = ("| trace | model: short % / long % / l->s % (n short, n long) | frequency rule "
            "short % / l->s % | job-stage oracle short % / l->s % | ceiling % |")
    lines = [head, "|---|---|---|---|---|"]
    for r in rows:
        bold = "**" if r["trace"].startswith("pooled") else ""
        lines.append(
            f"| {bold}{r['trace']}{bold} | {_pct(r['short_recall'])} / {_pct(r['long_recall'])}"
            f" / {_pct(r['long_called_short'])} ({r['n_short']}, {r['n_long']}) | "
            f"{_pct(r['frequency_rule'][0])} / {_pct(r['frequency_rule'][1])} | "
            f"{_pct(r['job_stage_oracle'][0])} / {_pct(r['job_stage_oracle'][1])} | "
            f"{_pct(r['ceiling'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="only these real traces (folder names); 'none': generated only")
    ap.add_argument("--no-generated", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    params = parse_settings(args.set)
    rows: list[dict[str, Any]] = []
    real: list[EvalResult] = []
    for name, make in real_traces(args.data).items():
        if args.only and name not in args.only:
            continue
        t0 = time.perf_counter()
        result = evaluate_reader(make(), params=params)
        real.append(result)
        rows.append(row(name, result, time.perf_counter() - t0))
    if real:
        rows.append(row("pooled real", pooled(real), parts=real))
    generated: list[EvalResult] = []
    if not args.no_generated:
        for path in rumen_traces(args.data):
            generated.append(evaluate_traces([path], params=params))
        if generated:
            rows.append(row(f"pooled generated ({len(generated)} Rumen traces, each alone)",
                            pooled(generated), parts=generated))
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
