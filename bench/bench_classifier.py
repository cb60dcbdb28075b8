"""Benchmark of the short/long task classifier (run: python bench/bench_classifier.py).

1. predictions per second, batched (target >= 100,000/s): 100,000 feature tuples
   drawn from ~2,000 task groups (the realistic case: a cycle's pending tasks
   share few property tuples) and 100,000 all-distinct tuples (worst case),
   also with every job having late running tasks (the overdue rule's extra score);
2. one daemon cycle classifying 100,000 pending MapReduce tasks of 500 jobs
   (50 users, 4 queues) from a Snapshot (target <= 1 s): live-model adapter,
   features, back-off estimate; caches cleared before every run, so each run
   is a cold cycle; and the same cycle's 500 pending request groups;
3. learning: tasks learned per second (each updates its levels up the chain).
Prints the median wall and CPU time of several runs (CPU time is what a loaded
machine distorts least); ``--json`` prints one object with the medians.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yarn_advisor.advisor.model.snapshot import (
    App,
    ClusterInfo,
    ClusterMetrics,
    MRJob,
    ResourceRequest,
    Resources,
    Snapshot,
    Task,
)
from yarn_advisor.classifiers.model.features import LEVEL_NAMES, TaskProps, app_name, features
from yarn_advisor.classifiers.model.live import LiveTaskClassifier
from yarn_advisor.classifiers.model.naive_bayes import JOB_LEVEL, NaiveBayesTaskClassifier

RUNS = 7
N = 100_000
rng = random.Random(42)
STAGES, PROGRESS, DEMAND = ("MAP", "REDUCE"), ("0", "<50", "<100", "100"), ("1024", "2048", "4096")
SIZES = ("m16|r1", "m64|r8", "m256|r32", "m1024|r64")
JOB = LEVEL_NAMES.index(JOB_LEVEL)


def props(app: int) -> TaskProps:
    """A task of application ``app`` (of user app % 50, in queue app % 4), one of
    the application's jobs and shapes."""
    return TaskProps(
        framework="MAPREDUCE", stage=rng.choice(STAGES), queue=f"q{app % 4}",
        user=f"user{app % 50}", app=f"app-{chr(97 + app % 26)}{app}", size=rng.choice(SIZES),
        demand=rng.choice(DEMAND), job=f"job_{app}_{rng.randrange(20)}",
        progress=rng.choice(PROGRESS),
    )  # fmt: skip


def trained_model(apps: int = 500, tasks: int = 200_000) -> tuple[NaiveBayesTaskClassifier, float]:
    """A model that learned ``tasks`` tasks, and the seconds it took."""
    model = NaiveBayesTaskClassifier()
    learned = []
    for i in range(tasks):
        p = props(rng.randrange(apps))
        is_long = rng.random() < (0.6 if p.stage == "REDUCE" else 0.05)
        learned.append((f"t{i}", features(p), 90_000 if is_long else 5_000))
    started = time.process_time()
    for task_id, feats, duration in learned:
        model.learn_finished(task_id, feats, duration)
    seconds = time.process_time() - started
    # then 20,000 more, each predicted before it is learned: the calibrated
    # threshold (and with it the frequency evidence) is what the runs below use
    for i in range(20_000):
        p = props(rng.randrange(apps))
        is_long = rng.random() < (0.6 if p.stage == "REDUCE" else 0.05)
        feats = features(p)
        model.predict_and_note(feats)
        model.learn_finished(f"c{i}", feats, 90_000 if is_long else 5_000)
    return model, seconds


def timed(fn: Callable[[], object]) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each run (CPU time is robust to a loaded machine)."""
    wall, cpu = [], []
    for _ in range(RUNS):
        features.cache_clear()
        app_name.cache_clear()
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return wall, cpu


FIGURES: dict[str, dict[str, float]] = {}


def report(label: str, runs: tuple[list[float], list[float]], per: int) -> None:
    wall, cpu = (statistics.median(r) for r in runs)
    FIGURES[label] = {"wall_s": wall, "cpu_s": cpu, "per_s_cpu": per / cpu, "n": per}
    if not AS_JSON:
        print(f"{label:<50} median wall {wall * 1000:7.1f} ms ({per / wall:>9,.0f}/s)"
              f"  cpu {cpu * 1000:7.1f} ms ({per / cpu:>9,.0f}/s)")  # fmt: skip


def pending_snapshot(jobs: int = 500) -> Snapshot:
    apps, mrjobs, tasks = [], [], []
    for j in range(jobs):
        app_id, job_id = f"application_1_{j:04d}", f"job_1_{j:04d}"
        rr = (ResourceRequest(20, "*", Resources(2048, 1), N // jobs, True, ""),)
        user, queue = f"user{j % 50}", f"root.q{j % 4}"
        apps.append(App(app_id, f"etl-{chr(97 + j % 26)}{j % 50} 2024-05-01", user, queue,
                        "MAPREDUCE", ("etl",), "RUNNING", "UNDEFINED", 0, 0.3, 1, 0, 1,
                        Resources(), Resources(), 1, "", "", rr))  # fmt: skip
        mrjobs.append(MRJob(job_id, app_id, "etl", user, queue, "RUNNING", 1, 0,
                            maps_total=N // jobs, maps_completed=rng.randrange(N // jobs),
                            reduces_total=1, reduces_completed=0))  # fmt: skip
        for t in range(N // jobs):
            tasks.append(Task(f"task_1_{j:04d}_m_{t:06d}", job_id, app_id, "MAP", "SCHEDULED",
                              0.0, 0, 0, 0))  # fmt: skip
    info = ClusterInfo(1, "STARTED", "ACTIVE", "3.4.1", "3.4.1", 1)
    metrics = ClusterMetrics(*([0] * 6), Resources(), Resources(), Resources(), Resources(),
                             *([0] * 8))  # fmt: skip
    return Snapshot(2, "http://rm:8088", info, metrics, (), (), tuple(apps), (),
                    jobs=tuple(mrjobs), tasks=tuple(tasks))  # fmt: skip


AS_JSON = False


def main() -> None:
    global AS_JSON
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    AS_JSON = ap.parse_args().json
    model, learn_s = trained_model()
    FIGURES["learn 200k tasks"] = {"cpu_s": learn_s, "per_s_cpu": 200_000 / learn_s,
                                   "n": 200_000}
    FIGURES["calibrated threshold"] = {"value": model.confidence()}
    if not AS_JSON:
        print(f"model: {len(model.counts):,} features learned from 200,000 tasks in "
              f"{learn_s:.2f} s CPU ({200_000 / learn_s:,.0f} tasks/s); calibrated "
              f"threshold {model.confidence():.3f}; {RUNS} runs each\n")
    kinds = list({props(rng.randrange(1000)) for _ in range(2_000)})
    grouped_props = [rng.choice(kinds) for _ in range(N)]
    grouped = [features(p) for p in grouped_props]
    if not AS_JSON:
        print(f"grouped batch: {len(set(grouped)):,} distinct tuples in {N:,}")
    distinct = [features(replace(kinds[i % len(kinds)], job=f"job_new_{i}")) for i in range(N)]
    for i in range(0, N, 2):  # half of them of known jobs
        distinct[i] = grouped[i]
    report("predict_many, 100k tasks in task groups", timed(lambda: model.predict_many(grouped)), N)
    report("predict_many, 100k distinct tuples", timed(lambda: model.predict_many(distinct)), N)
    report("predict one by one, 100k distinct tuples",
           timed(lambda: [model.predict(f) for f in distinct]), N)  # fmt: skip
    # worst case of the overdue rule: every job has late running tasks, so each
    # tuple with P(short) >= min_confidence is scored again with them counted long
    late = {f[JOB]: 3 for f in distinct}
    model.note_running(late, 0.0)
    report("predict_many, 100k distinct, every job 3 late",
           timed(lambda: model.predict_many(distinct)), N)  # fmt: skip
    model.note_running({}, 0.0)
    report("features() + predict_many, 100k TaskProps",
           timed(lambda: model.predict_many(features(p) for p in grouped_props)), N)  # fmt: skip

    snap = pending_snapshot()
    live = LiveTaskClassifier(model)
    if not AS_JSON:
        print()
    report("cycle: classify 100k pending tasks from a Snapshot",
           timed(lambda: live.classify_tasks(snap, live.pending_tasks(snap))), N)  # fmt: skip
    report("cycle: classify_pending_groups (500 requests)",
           timed(lambda: live.classify_pending_groups(snap)), 500)  # fmt: skip
    if AS_JSON:
        print(json.dumps({"runs": RUNS, "figures": FIGURES}))


if __name__ == "__main__":
    main()
