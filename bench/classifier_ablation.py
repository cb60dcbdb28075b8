"""What each level, discount and rule of the classifier adds, on the real traces first.

Run: ``python bench/classifier_ablation.py [--json] [--only TRACE ...]
[--variant LABEL ...] [--generated] [--data DIR]``.

Each variant is the model with one property given one value for every task
(``without``: what its level adds) or one rule or discount changed; each trace
is replayed alone with a fresh model, as ``bench/eval_real.py`` does. A row:
short recall % and long tasks called short % per real trace, then pooled over
the real traces; ``--generated`` adds, apart, the pooled figures over the
generated Gridmix/Rumen traces (each alone), never mixed with the real ones.
``--json`` prints one object per variant. A variant that helps on no real
trace is one the model should not keep (the model's docstring has the table).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval_real import DEFAULT_DATA, real_traces, rumen_traces
from eval_rumen import FREQUENCY_RULE, Variant, without_each

from yarn_advisor.classifiers.evaluation.eval_result import EvalResult, pooled
from yarn_advisor.classifiers.evaluation.evaluate import evaluate_reader, evaluate_traces

VARIANTS: tuple[Variant, ...] = (
    ("full model", {}, ()),
    *without_each("UQAZDRJP"),
    ("no shape discount (rho 0)", {"shape_correlation": 0.0}, ()),
    ("reduce group discounted (0.3)", {"reduces_correlation": 0.3}, ()),
    ("frequency evidence on", {"evidence": True}, ()),
    ("frequency evidence on, prior 1", {"evidence": True, "evidence_prior": 1.0}, ()),
    ("calibration aim 1", {"calibration_aim": 1.0}, ()),
    ("calibration floor 0.5", {"calibration_floor": 0.5}, ()),
    ("calibration floor 0", {"calibration_floor": 0.0}, ()),
    ("no stage share (stage_share 0)", {"stage_share": 0.0}, ()),
    ("stage share 0.1", {"stage_share": 0.1}, ()),
    ("no stage share, floor 0.5 (before)", {"stage_share": 0.0, "calibration_floor": 0.5}, ()),
    ("not calibrated (min_confidence 0.9)", {"calibrate": False}, ()),
    ("no overdue rule", {"overdue_factor": 1e9}, ()),
    ("cluster-overdue rule on (0.2)", {"max_overdue_share": 0.2}, ()),
    ("no maps-waiting rule", {"long_while_maps_wait": False}, ()),
    ("min_support 1", {"min_support": 1}, ()),
    ("no relaxed rule (budget 0)", {"relaxed_budget": 0.0}, ()),
    ("the frequency rule alone (online)", FREQUENCY_RULE,
     ("Q", "A", "Z", "R", "D", "J", "P")),
)


def figures(r: EvalResult) -> dict[str, Any]:
    return {"short_recall": r.recall("short"), "long_called_short": r.long_called_short,
            "long_recall": r.recall("long"), "n_short": r.n("short"), "n_long": r.n("long")}


def run_variant(data: Path, settings: dict[str, Any], without: tuple[str, ...],
                only: list[str], generated: bool) -> dict[str, Any]:
    """The variant's figures per real trace, pooled real and (``generated``) pooled generated."""
    out: dict[str, Any] = {}
    real = []
    for name, make in real_traces(data).items():
        if only and name not in only:
            continue
        r = evaluate_reader(make(), params=settings, without=without)
        real.append(r)
        out[name] = figures(r)
    if real:
        out["pooled real"] = figures(pooled(real))
    if generated:
        gen = [evaluate_traces([p], params=settings, without=without)
               for p in rumen_traces(data)]
        if gen:
            out["pooled generated"] = figures(pooled(gen))
    return out


def _cell(f: dict[str, Any]) -> str:
    s, lcs = f["short_recall"], f["long_called_short"]
    return (f"{'-' if s is None else f'{100 * s:.1f}'} "
            f"{'-' if lcs is None else f'{100 * lcs:.1f}'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--only", action="append", default=[], metavar="TRACE",
                    help="only these real traces (folder names)")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL",
                    help="only the variants whose label starts with this")
    ap.add_argument("--generated", action="store_true",
                    help="also the pooled generated Gridmix/Rumen traces")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no data folder {args.data} (--data DIR)", file=sys.stderr)
        return 2
    chosen = [v for v in VARIANTS if not args.variant
              or any(v[0].startswith(p) for p in args.variant)]
    if not chosen:
        print("no variant matches --variant; labels: "
              + "; ".join(v[0] for v in VARIANTS), file=sys.stderr)
        return 2
    header = False
    for label, settings, without in chosen:
        result = run_variant(args.data, settings, without, args.only, args.generated)
        if args.json:
            print(json.dumps({"variant": label, **result}), flush=True)
            continue
        if not header:
            print(f"{'(short % / long called short %)':<38}"
                  + "".join(f"{k[:24]:>26}" for k in result))
            header = True
        print(f"{label:<38}" + "".join(f"{_cell(f):>26}" for f in result.values()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
