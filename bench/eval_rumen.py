"""The classifier on every Rumen trace of ../shared/data (run: python bench/eval_rumen.py).

Each trace is evaluated on its own with a fresh model, as ``yarn-advisor
classify-eval --rumen TRACE`` does (prequential, defaults of the model), and
one line per trace is printed: short n / recall, long n / recall, the share of
long tasks called short, the cold starts (short tasks predicted with no
history of their application stage) and the short recall without them, and
the short recall ceiling (the share of short tasks whose application stage
had any history when they started: no rule that needs that history can do
better); then the figures pooled over all traces, the number of traces
meeting both targets (short recall >= 87 %, long tasks called short <= 2 %)
and the number whose ceiling is under the short-recall target.

``--data DIR`` points at another data folder; ``--json`` prints one object
per trace (the ``classify-eval --json`` form) instead of the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.classifiers.evaluate import CLASSES, EvalResult, evaluate_traces

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TARGET_SHORT, TARGET_LCS = 0.87, 0.02


def evaluated_traces(data: Path) -> Iterator[tuple[Path, EvalResult]]:
    """Every file under ``data`` read as a Rumen trace, with its evaluation;
    files with no task (other formats read as no job) are left out."""
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        if "rest-docs" in path.parts:
            continue
        try:
            result = evaluate_traces([path])
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if result.n("short") + result.n("long") + result.skipped:
            yield path, result


def _pct(x: float | None) -> str:
    return "    -" if x is None else f"{100 * x:5.1f}"


def meets_targets(r: EvalResult) -> bool:
    short, lcs = r.recall("short"), r.long_called_short
    return (short is None or short >= TARGET_SHORT) and (lcs is None or lcs <= TARGET_LCS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    pooled = EvalResult([], 60.0, 0.0)
    met = capped = 0
    if not args.json:
        print(f"{'trace':<58}{'short n':>8}{'recall':>7}{'long n':>7}{'recall':>7}"
              f"{'l->s %':>7}{'cold':>6}{'warm':>6}{'ceil':>6}")
    for path, r in evaluated_traces(args.data):
        pooled.traces.append(str(path))
        met += meets_targets(r)
        ceiling = r.short_recall_ceiling
        capped += ceiling is not None and ceiling < TARGET_SHORT
        for a in CLASSES:
            pooled.cold[a] += r.cold[a]
            pooled.first_seen[a] += r.first_seen[a]
            for p in CLASSES:
                pooled.confusion[a][p] += r.confusion[a][p]
        if args.json:
            print(json.dumps(r.to_json()))
            continue
        name = str(path.relative_to(args.data))
        print(f"{name:<58}{r.n('short'):>8}{_pct(r.recall('short')):>7}{r.n('long'):>7}"
              f"{_pct(r.recall('long')):>7}{_pct(r.long_called_short):>7}"
              f"{r.cold['short']:>6}{_pct(r.warm_recall('short')):>6}{_pct(ceiling):>6}")
    if not args.json:
        print(f"{'pooled over ' + str(len(pooled.traces)) + ' traces':<58}{pooled.n('short'):>8}"
              f"{_pct(pooled.recall('short')):>7}{pooled.n('long'):>7}"
              f"{_pct(pooled.recall('long')):>7}{_pct(pooled.long_called_short):>7}"
              f"{pooled.cold['short']:>6}{_pct(pooled.warm_recall('short')):>6}"
              f"{_pct(pooled.short_recall_ceiling):>6}")
        print(f"traces meeting both targets: {met} of {len(pooled.traces)}; "
              f"short recall ceiling under {TARGET_SHORT:.0%}: {capped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
