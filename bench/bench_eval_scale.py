"""How ``classify-eval`` scales with concurrency (run: python bench/bench_eval_scale.py).

A production trace can hold thousands of tasks running at once, far more than
the traces in ../shared/data. To get there from real data, the 22 gridmix
system traces are overlaid K times (K = 1, 2, 4, 8): every copy is shifted to
start within K seconds of the others, under its own job names, so the tasks
running at any instant grow about K x 22 times over one trace. Prints, per K,
the tasks, the most running at once, and the median wall time of 3 runs of
:func:`yarn_advisor.classifiers.evaluation.evaluate.evaluate_jobs` (fresh model each run) with tasks
per second. Linear scaling shows as a steady tasks/s.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.classifiers.evaluation.evaluate import EvalResult, evaluate_jobs
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier
from yarn_advisor.classifiers.readers.rumen import RumenJob, RumenTask, RumenTrace

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hadoop-gridmix-system-traces"
RUNS = 3
EPOCH = 10**12


def _shift_task(t: RumenTask, by: int) -> RumenTask:
    attempts = tuple(
        replace(a, start_ms=a.start_ms + by, finish_ms=a.finish_ms + by) for a in t.attempts
    )
    return replace(t, start_ms=t.start_ms + by, finish_ms=t.finish_ms + by, attempts=attempts)


def overlaid(traces: list[list[RumenJob]], copies: int) -> list[RumenJob]:
    """Every trace ``copies`` times, all starting within ``copies`` seconds."""
    out = []
    for jobs in traces:
        start = min(t.launch_ms for j in jobs for t in (*j.maps, *j.reduces) if t.launch_ms > 0)
        for k in range(copies):
            by = EPOCH - start + 1000 * k
            for j in jobs:
                out.append(replace(
                    j, job_id=f"{j.job_id}.{k}", name=f"{j.name} copy {k}",
                    maps=tuple(_shift_task(t, by) for t in j.maps),
                    reduces=tuple(_shift_task(t, by) for t in j.reduces),
                ))  # fmt: skip
    return out


def most_running(jobs: list[RumenJob]) -> int:
    edges = sorted(
        (when, step)
        for j in jobs
        for t in (*j.maps, *j.reduces)
        if t.duration_ms is not None
        for when, step in ((t.launch_ms, 1), (t.finish_ms, -1))
    )
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def main() -> None:
    traces = [list(RumenTrace(p)) for p in sorted(DATA.glob("*.json.gz"))]
    print(f"{len(traces)} gridmix traces; {RUNS} runs per row, median wall time")
    print(f"{'copies':>6}{'tasks':>9}{'running':>9}{'median s':>10}{'tasks/s':>10}")
    for copies in (1, 2, 4, 8):
        jobs = overlaid(traces, copies)
        tasks = sum(len(j.maps) + len(j.reduces) for j in jobs)
        walls = []
        for _ in range(RUNS):
            model = NaiveBayesTaskClassifier()
            t0 = time.perf_counter()
            evaluate_jobs(jobs, model, EvalResult(["overlay"], 60.0, model.min_confidence))
            walls.append(time.perf_counter() - t0)
        wall = statistics.median(walls)
        print(f"{copies:>6}{tasks:>9,}{most_running(jobs):>9,}{wall:>10.2f}{tasks / wall:>10,.0f}")


if __name__ == "__main__":
    main()
