"""The classifier on every Rumen trace of ../shared/data (run: python bench/eval_rumen.py).

Four runs, each prequential with the model's defaults (as ``yarn-advisor
classify-eval`` does), printed per trace and pooled:

- ``original``: each trace alone, with a fresh model;
- ``renamed``: each trace alone with every job renamed to one name (a
  production cluster whose job names are one anonymized string);
- ``cross``: one model learning across all traces in time order (a daemon
  keeping its checkpoint over days); a job already replayed from an earlier
  trace is skipped (three rumen-testdata traces hold the same four jobs);
- ``cross renamed``: the same with every job renamed.

Columns: short n / recall, long n / recall, long tasks called short (%), the
short recall ceiling (short tasks whose user's stage had any history when
they started) and the job-stage oracle (short recall / long called short of a
rule told each job stage's share of short tasks; see
``classifiers/evaluation/eval_result.py``). Then the figures pooled per run and over
all four, the traces meeting both targets (short recall >= 87 %, long tasks
called short <= 2 %) and those whose ceiling is under 87 %.

``--ablation`` prints instead the pooled figures of each run with one level
(a property given one value for every task) or one rule left out: what each
adds, the table of the model's docstring. ``--calibration`` prints the
reliability of P(short) over all predictions of the four runs (scikit-learn's
``calibration_curve`` and Brier score). ``--set NAME=VALUE`` passes a model
parameter (repeatable); ``--json`` prints one object per trace and run, then
the pooled ones; ``--markdown`` one Markdown table (a row per trace, the four
runs as columns, as in classifiers/README.md); ``--data DIR`` points at another data folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import pairwise, product
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.classifiers.evaluation.eval_result import EvalResult, pooled, stage_oracle_at
from yarn_advisor.classifiers.evaluation.evaluate import evaluate_traces
from yarn_advisor.classifiers.model.budget import Calls
from yarn_advisor.classifiers.model.features import LEVEL_NAMES
from yarn_advisor.classifiers.model.naive_bayes import (
    SHAPE_LEVEL,
    NaiveBayesTaskClassifier,
    Prediction,
)
from yarn_advisor.classifiers.readers.rumen import RumenTrace

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TARGET_SHORT, TARGET_LCS = 0.87, 0.02
RENAMED = "job"  # the one name every job carries in the renamed runs
RUNS = ("original", "renamed", "cross", "cross renamed")
# A plain frequency rule over (user, stage) with censored evidence (issue 14's
# baseline): every level but the user's stage left out, every rule off.
FREQUENCY_RULE: dict[str, Any] = {
    "overdue_factor": 1e9, "max_overdue_share": 1.01, "long_while_maps_wait": False,
    "reduce_support_at_progress": False, "min_support": 1, "relaxed_budget": 0.0}
# (label, model settings, properties left out): one variant of the model
Variant = tuple[str, dict[str, Any], tuple[str, ...]]
# the model's properties, as the ablations name them
LEVELS = {"U": "user", "Q": "queue", "A": "name", "Z": "size", "D": "demand",
          "R": "reduce group", "J": "the job itself", "P": "progress"}


def without_each(levels: str) -> tuple[Variant, ...]:
    """The model with each of ``levels`` left out, one at a time."""
    return tuple((f"without {k} ({LEVELS[k]})", {}, (k,)) for k in levels)


# What each level and rule adds: left out one at a time (see --ablation).
ABLATIONS: tuple[Variant, ...] = (
    ("full model", {}, ()),
    *without_each("UQAZD"),
    ("without Z and D (shape)", {}, ("Z", "D")),
    *without_each("R"),
    ("reduce group discounted (0.3)", {"reduces_correlation": 0.3}, ()),
    *without_each("JP"),
    ("no shape discount (rho 0)", {"shape_correlation": 0.0}, ()),
    ("no overdue rule", {"overdue_factor": 1e9}, ()),
    ("no cluster-overdue rule", {"max_overdue_share": 1.01}, ()),
    ("no maps-waiting rule", {"long_while_maps_wait": False}, ()),
    ("reduces supported by the user", {"reduce_support_at_progress": False}, ()),
    ("min_support 1", {"min_support": 1}, ()),
    ("no relaxed rule (budget 0)", {"relaxed_budget": 0.0}, ()),
    ("relaxed budget 0.02", {"relaxed_budget": 0.02}, ()),
    ("the issue's frequency rule", FREQUENCY_RULE, ("Q", "A", "Z", "R", "D", "J", "P")),
)


def trace_paths(data: Path) -> list[Path]:
    """Every file under ``data`` that reads as a Rumen trace with tasks."""
    out = []
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        if "rest-docs" in path.parts:
            continue
        try:
            jobs = list(RumenTrace(path))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if any(j.maps or j.reduces or j.stage_tasks for j in jobs):
            out.append(path)
    return out


def run_all(paths: Sequence[Path], params: dict[str, Any] | None = None,
            without: Sequence[str] = (), keep_scores: bool = False,
            model_class: type[NaiveBayesTaskClassifier] = NaiveBayesTaskClassifier,
            ) -> Iterator[tuple[str, list[EvalResult]]]:
    """Each of :data:`RUNS` with its per-trace results."""
    options: dict[str, Any] = {"params": params, "without": without, "keep_scores": keep_scores,
                               "model_class": model_class}
    for run in RUNS:
        rename = RENAMED if "renamed" in run else None
        if run.startswith("cross"):
            yield run, evaluate_traces(paths, rename=rename, time_order=True,
                                       **options).per_trace
        else:
            yield run, [evaluate_traces([p], rename=rename, **options) for p in paths]


def _pct(x: float | None) -> str:
    return "    -" if x is None else f"{100 * x:5.1f}"


def meets_targets(r: EvalResult) -> bool:
    short, lcs = r.recall("short"), r.long_called_short
    return (short is None or short >= TARGET_SHORT) and (lcs is None or lcs <= TARGET_LCS)


def row(name: str, r: EvalResult) -> str:
    return (f"{name[:50]:<52}{r.n('short'):>7}{_pct(r.recall('short')):>7}{r.n('long'):>7}"
            f"{_pct(r.recall('long')):>7}{_pct(r.long_called_short):>7}"
            f"{_pct(r.short_recall_ceiling):>7}{_pct(r.oracle_rate('short')):>7}"
            f"{_pct(r.oracle_rate('long')):>7}")


HEADER = (f"{'trace':<52}{'short':>7}{'recall':>7}{'long':>7}{'recall':>7}{'l->s%':>7}"
          f"{'ceil':>7}{'orc s':>7}{'orc l':>7}")


def table(paths: Sequence[Path], data: Path, params: dict[str, Any], as_json: bool) -> None:
    everything = []
    best = [0, 0]  # the best job-stage oracle's (short, long) called short, summed over runs
    for run, results in run_all(paths, params):
        pool = pooled(results)
        everything.extend(results)
        short, long = stage_oracle_at(pool, TARGET_LCS)
        best[0] += short
        best[1] += long
        oracle = {"short_recall": short / max(1, pool.n("short")),
                  "long_called_short": long / max(1, pool.n("long"))}
        if as_json:
            for r in results:
                print(json.dumps({"run": run, **r.to_json()}))
            print(json.dumps({"run": run, "pooled": True, **pool.to_json(),
                              "stage_oracle_at_target": oracle}))
            continue
        print(f"\n== {run} ==\n{HEADER}")
        for r in results:
            print(row(str(Path(r.traces[0]).relative_to(data)), r))
        scored = [r for r in results if r.n("short") + r.n("long")]
        met = sum(meets_targets(r) for r in scored)
        capped = sum((c := r.short_recall_ceiling) is not None and c < TARGET_SHORT
                     for r in scored)
        print(row(f"pooled ({run}, {len(results)} traces)", pool))
        print(f"traces meeting both targets: {met} of {len(scored)} with tasks; "
              f"short recall ceiling under {TARGET_SHORT:.0%}: {capped}")
        print(f"best job-stage oracle within {TARGET_LCS:.0%} long called short: short recall "
              f"{_pct(oracle['short_recall'])} %, long called short "
              f"{_pct(oracle['long_called_short'])} %")
    total = pooled(everything)
    at_target = {"short_recall": best[0] / max(1, total.n("short")),
                 "long_called_short": best[1] / max(1, total.n("long"))}
    if as_json:
        print(json.dumps({"run": "all", "pooled": True, **total.to_json(),
                          "stage_oracle_at_target": at_target}))
    else:
        print(f"\n{HEADER}\n{row('pooled over the four runs', total)}")
        print(f"best job-stage oracle within {TARGET_LCS:.0%} long called short, each run: "
              f"short recall {_pct(at_target['short_recall'])} %, long called short "
              f"{_pct(at_target['long_called_short'])} %")


def ablation(paths: Sequence[Path], params: dict[str, Any], as_json: bool) -> None:
    if not as_json:
        print(f"{'':<34}" + "".join(f"{run:>22}" for run in RUNS))
        print(f"{'':<34}" + "".join(f"{'short %':>11}{'l->s %':>11}" for _ in RUNS))
    for label, extra, without in ABLATIONS:
        figures = {run: pooled(results) for run, results in
                   run_all(paths, {**params, **extra}, without)}
        if as_json:
            print(json.dumps({"ablation": label, **{
                run: {"short_recall": r.recall("short"), "long_called_short":
                      r.long_called_short, "long_called_short_n": r.confusion["long"]["short"]}
                for run, r in figures.items()}}))
            continue
        print(f"{label:<34}" + "".join(
            f"{_pct(r.recall('short')):>11}{_pct(r.long_called_short):>7}"
            f"{'(' + str(r.confusion['long']['short']) + ')':>4}" for r in figures.values()))


def calibration(paths: Sequence[Path], params: dict[str, Any], as_json: bool) -> None:
    """Reliability of P(short): scikit-learn's calibration_curve and Brier score."""
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    scores = [s for _, results in run_all(paths, params, keep_scores=True)
              for r in results for s in r.scores]
    p = [s for s, _ in scores]
    short = [not was_long for _, was_long in scores]
    observed, predicted = calibration_curve(short, p, n_bins=8, strategy="quantile")
    edges = [0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0001]
    bins = []
    for lo, hi in pairwise(edges):
        inside = [k for k, x in zip(short, p, strict=True) if lo <= x < hi]
        bins.append({"from": lo, "to": min(hi, 1.0), "n": len(inside),
                     "share_short": sum(inside) / len(inside) if inside else None})
    brier = brier_score_loss(short, p)
    if as_json:
        print(json.dumps({"brier": brier, "n": len(p), "bins": bins, "quantile_bins": [
            {"mean_p_short": float(m), "share_short": float(o)}
            for m, o in zip(predicted, observed, strict=True)]}))
        return
    print(f"{len(p)} predictions with a P(short) (four runs), Brier score {brier:.4f}")
    print("P(short) in        n   share short")
    for b in bins:
        share = "     -" if b["share_short"] is None else f"{100 * b['share_short']:6.1f}%"
        print(f"[{b['from']:.2f}, {b['to']:.2f})  {b['n']:>6}   {share}")
    print("calibration_curve, 8 quantile bins (mean P(short) -> share short): " + ", ".join(
        f"{m:.3f}->{o:.3f}" for m, o in zip(predicted, observed, strict=True)))


_APP, _SHAPE = LEVEL_NAMES.index("F,S,Q,U,A"), LEVEL_NAMES.index(SHAPE_LEVEL)
NEW_SHAPE_FROM = 0.75  # P(short) from which a new shape called long is counted


class NewShapeCounter(NaiveBayesTaskClassifier):
    """The model, naming a task called long at P(short) >= 0.75 for low
    confidence whose shape is new by how many shapes of its application were
    known, and whether they were all >= 95 % short (how much a consistency
    prior over a user's shapes could change)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.shapes: dict[str, set[str]] = {}  # application feature -> its shapes learned

    def learn(self, feats: Sequence[str], is_long: bool) -> None:
        super().learn(feats, is_long)
        self.shapes.setdefault(feats[_APP], set()).add(feats[_SHAPE])

    def predict(self, feats: Sequence[str], calls: Calls | None = None) -> Prediction:
        pred = super().predict(feats, calls)
        if (pred.reason != "low-confidence" or (pred.p_short or 0.0) < NEW_SHAPE_FROM
                or feats[_SHAPE] in self.counts):
            return pred
        known = [self.counts[s] for s in self.shapes.get(feats[_APP], ())]
        agree = "all >= 95 % short" if all(r[3] >= 0.95 * r[2] for r in known) else "mixed"
        n = min(len(known), 3)
        return replace(pred, reason=f"new shape after {n}{'+' if n == 3 else ''} ({agree})")


def new_shapes(paths: Sequence[Path], params: dict[str, Any], as_json: bool) -> None:
    """Tasks called long at P(short) >= 0.75 for low confidence, of a new
    shape, by the number of its application's shapes known (four runs)."""
    total: dict[str, list[int]] = {}
    for _, results in run_all(paths, params, model_class=NewShapeCounter):
        for r in results:
            for rule, (short, long) in r.called_long_by.items():
                if rule.startswith("new shape"):
                    both = total.setdefault(rule, [0, 0])
                    both[0] += short
                    both[1] += long
    if as_json:
        print(json.dumps({rule: {"short": s, "long": n} for rule, (s, n) in sorted(total.items())}))
        return
    print(f"{'called long (low confidence, P >= 0.75), four runs':<52}{'short':>8}{'long':>8}")
    for rule, (s, n) in sorted(total.items()):
        print(f"{rule:<52}{s:>8}{n:>8}")


def markdown(paths: Sequence[Path], data: Path, params: dict[str, Any]) -> None:
    """One Markdown row per trace: short recall / long recall / long called short, per run."""
    runs = {run: results for run, results in run_all(paths, params)}
    cells = " | ".join(f"{run}: short % / long % / l->s % (n short, n long)" for run in RUNS)
    print(f"| trace | {cells} | ceiling % | oracle short % / l->s % |\n|---|"
          + "---|" * (len(RUNS) + 2))

    def oracle(r: EvalResult) -> str:
        return f"{_pct(r.oracle_rate('short')).strip()} / {_pct(r.oracle_rate('long')).strip()}"


    def cell(r: EvalResult) -> str:
        if not r.n("short") + r.n("long"):
            return "-"
        return (f"{_pct(r.recall('short')).strip()} / {_pct(r.recall('long')).strip()} / "
                f"{_pct(r.long_called_short).strip()} ({r.n('short')}, {r.n('long')})")

    by_trace: dict[str, dict[str, EvalResult]] = {}
    for run, results in runs.items():
        for r in results:
            by_trace.setdefault(str(Path(r.traces[0]).relative_to(data)), {})[run] = r
    for name, per_run in sorted(by_trace.items()):
        first = per_run[RUNS[0]]
        print(f"| {name} | " + " | ".join(cell(per_run[run]) if run in per_run else "-"
                                          for run in RUNS)
              + f" | {_pct(first.short_recall_ceiling).strip()} | {oracle(first)} |")
    pools = {run: pooled(results) for run, results in runs.items()}
    every = pooled([r for rs in runs.values() for r in rs])
    print("| **pooled** | " + " | ".join(cell(pools[run]) for run in RUNS) + " | "
          f"{_pct(every.short_recall_ceiling).strip()} | {oracle(every)} |")
    print(f"\nPooled over the four runs: {cell(every)}")


Cells = dict[tuple[str, str], tuple[int, int, int, int]]  # (run, trace) -> s->s, s, l->s, l


def cells(paths: Sequence[Path], params: dict[str, Any], without: Sequence[str] = ()) -> Cells:
    """Each run's and trace's short called short, short, long called short, long."""
    out: Cells = {}
    for run, results in run_all(paths, params, without):
        for r in results:
            c = r.confusion
            out[run, r.traces[0]] = (c["short"]["short"], r.n("short"), c["long"]["short"],
                                     r.n("long"))
    return out


def _rates(cs: Cells, keep: Any) -> tuple[float, dict[str, float]]:
    """Short recall over the kept cells, and each run's share of long called short."""
    kept = [(k, v) for k, v in cs.items() if keep(k[1])]
    short = sum(v[0] for _, v in kept) / max(1, sum(v[1] for _, v in kept))
    lcs = {run: sum(v[2] for k, v in kept if k[0] == run)
           / max(1, sum(v[3] for k, v in kept if k[0] == run)) for run in RUNS}
    return short, lcs


def admissible(cs: Cells, base: Cells, keep: Any) -> bool:
    """Long called short <= 2 % in each run (or no more than with the defaults,
    where they are above), and no (run, trace) whose long recall is >= 98 %
    with the defaults calls more long tasks short."""
    limit = _rates(base, keep)[1]
    if any(x > max(TARGET_LCS, limit[run]) for run, x in _rates(cs, keep)[1].items()):
        return False
    return not any(keep(k[1]) and b[3] and b[2] <= TARGET_LCS * b[3] and cs[k][2] > b[2]
                   for k, b in base.items())


def loto(paths: Sequence[Path], data: Path, params: dict[str, Any],
         grid: dict[str, list[Any]], as_json: bool, base_without: Sequence[str] = ()) -> None:
    """Leave one trace out: for each trace, the grid setting with the best short
    recall over the *other* traces (four runs) among the admissible ones, and
    what that setting gives on the held-out trace, against the defaults
    (``base_without``: the defaults with these levels left out, e.g. the
    model before a level was added)."""
    names = list(grid)
    settings = [dict(zip(names, values, strict=True)) for values in product(*grid.values())]
    base = cells(paths, params, base_without)
    table = [(setting, cells(paths, {**params, **setting})) for setting in settings]
    pooled_best = max((t for t in table if admissible(t[1], base, lambda _: True)),
                      key=lambda t: _rates(t[1], lambda _: True)[0], default=None)
    held: Cells = {}
    rows = []
    for trace in sorted({k[1] for k in base}):
        others = lambda name, held_out=trace: name != held_out  # noqa: E731
        ok = [t for t in table if admissible(t[1], base, others)]
        setting, chosen = max(ok, key=lambda t: _rates(t[1], others)[0], default=({}, base))
        mine = {k: v for k, v in chosen.items() if k[1] == trace}
        held.update(mine)
        rows.append((trace, setting, mine))
    total_base = _rates(base, lambda _: True)
    total_held = _rates(held, lambda _: True)
    if as_json:
        print(json.dumps({"grid": grid, "pooled_best": pooled_best and pooled_best[0],
                          "defaults": {"short_recall": total_base[0], "lcs": total_base[1]},
                          "loto": {"short_recall": total_held[0], "lcs": total_held[1]},
                          "per_trace": [{"trace": t, "setting": st, "cells": {
                              k[0]: v for k, v in m.items()}} for t, st, m in rows]}))
        return
    if pooled_best is not None:
        print(f"best admissible setting on all traces: {pooled_best[0]}: short recall "
              f"{_pct(_rates(pooled_best[1], lambda _: True)[0])} %")
    print(f"{'held-out trace':<52}{'chosen on the others':<44}{'defaults':>16}{'chosen':>16}")
    for trace, setting, mine in rows:
        b = {k: v for k, v in base.items() if k[1] == trace}
        fig = [f"{_pct(_rates(x, lambda _: True)[0])}/{sum(v[2] for v in x.values()):>3}"
               for x in (b, mine)]
        label = ", ".join(f"{k}={v:g}" for k, v in setting.items())
        print(f"{str(Path(trace).relative_to(data))[:50]:<52}{label:<44}{fig[0]:>16}{fig[1]:>16}")
    for label, (short, lcs) in (("defaults", total_base), ("leave-one-trace-out", total_held)):
        print(f"{label:<22} short recall {_pct(short)} %, long called short % per run: "
              + ", ".join(f"{run} {_pct(x).strip()}" for run, x in lcs.items()))


def parse_grid(values: Sequence[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for item in values:
        name, _, options = item.partition("=")
        out[name] = [parse_set([f"{name}={v}"])[name] for v in options.split(",")]
    return out


def parse_set(values: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in values:
        name, _, value = item.partition("=")
        out[name] = value == "true" if value in ("true", "false") else float(value)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--calibration", action="store_true")
    ap.add_argument("--new-shapes", action="store_true",
                    help="new shapes called long, by the application's shapes known")
    ap.add_argument("--markdown", action="store_true", help="one Markdown row per trace")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--loto", action="append", default=[], metavar="NAME=V1,V2,...",
                    help="leave one trace out over this grid of parameters (repeatable)")
    ap.add_argument("--loto-base-without", default="", metavar="LETTERS",
                    help="--loto: compare with the defaults less these levels (e.g. R)")
    args = ap.parse_args()
    paths = trace_paths(args.data)
    params = parse_set(args.set)
    if args.loto:
        loto(paths, args.data, params, parse_grid(args.loto), args.json,
             tuple(args.loto_base_without))
    elif args.ablation:
        ablation(paths, params, args.json)
    elif args.new_shapes:
        new_shapes(paths, params, args.json)
    elif args.calibration:
        calibration(paths, params, args.json)
    elif args.markdown:
        markdown(paths, args.data, params)
    else:
        table(paths, args.data, params, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
