"""How fast the history readers read (run: python bench/bench_readers.py [--json]).

The real files (../shared/data/hadoop-jhist, spark-eventlogs, and the Hadoop
3.4 recording in examples/jhist-mini) are small, so each reader is
timed on a folder holding ``--copies`` copies of its biggest real file (the
Hadoop 2 Sleep job .jhist, JSON; the Hadoop 3.4 binary .jhist; the largest
Spark log; a task CSV made from the tasks of the largest Rumen trace of the
shared data): a done directory of that many files, walked and read whole.
Prints, per reader, files, tasks, the median wall time of ``--runs`` runs and
tasks/s; and the ``classify-eval`` figures (short/long n and recall) on each
real file alone and on each folder of real files as one history. With
``--codec-jars CP`` (lz4-java and snappy-java), the Spark log is also
compressed as Spark writes it (tests/readers/SparkCodecs.java) and read as
lz4 and snappy (pure-Python decoding).
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from yarn_advisor.classifiers.evaluation.evaluate import evaluate_reader  # noqa: E402
from yarn_advisor.classifiers.readers.jhist import JhistReader  # noqa: E402
from yarn_advisor.classifiers.readers.records import TraceJob  # noqa: E402
from yarn_advisor.classifiers.readers.rumen import RumenTrace  # noqa: E402
from yarn_advisor.classifiers.readers.sources import JobReader  # noqa: E402
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader  # noqa: E402
from yarn_advisor.classifiers.readers.tasks_csv import COLUMNS, TaskCsvReader  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
RECORDED = ROOT / "examples" / "jhist-mini"


def _timed(make: Callable[[], JobReader], runs: int) -> dict[str, Any]:
    walls, tasks, files = [], 0, 0
    for _ in range(runs):
        reader = make()
        t0 = time.perf_counter()
        jobs: list[TraceJob] = list(reader)
        walls.append(time.perf_counter() - t0)
        tasks, files = reader.report.tasks, reader.report.files
        assert reader.report.damaged == 0, reader.report.problems
        del jobs
    wall = statistics.median(walls)
    return {"files": files, "tasks": tasks, "median_s": round(wall, 4),
            "tasks_per_s": round(tasks / wall), "files_per_s": round(files / wall)}


def _copies(original: Path, folder: Path, n: int) -> Path:
    folder.mkdir(parents=True)
    for i in range(n):
        sub = folder / f"{i // 1000:06d}"  # done directories hold 1000-odd files per folder
        sub.mkdir(exist_ok=True)
        shutil.copy(original, sub / f"{i:06d}-{original.name}")
    return folder


def _csv_of(trace: Path, out: Path) -> Path:
    with out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for job in RumenTrace(trace):
            for t in (*job.maps, *job.reduces):
                if t.duration_ms is not None and t.type in ("MAP", "REDUCE"):
                    w.writerow([job.job_id, job.name, job.user, job.queue, t.type, t.launch_ms,
                                t.finish_ms, job.memory_mb(t.type), "", "SUCCEEDED"])
    return out


def _figures(readers: Iterable[tuple[str, JobReader]]) -> list[dict[str, Any]]:
    out = []
    for name, reader in readers:
        r = evaluate_reader(reader)
        out.append({"input": name, "tasks_read": reader.report.tasks,
                    "short": r.to_json()["short"], "long": r.to_json()["long"],
                    "unresolved": r.unresolved, "problems": len(r.problems)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--codec-jars", default="", metavar="CP",
                    help="classpath of lz4-java and snappy-java: also time Spark's codecs")
    args = ap.parse_args()
    jhist = sorted((DATA / "hadoop-jhist").glob("*.jhist"), key=lambda p: p.stat().st_size)
    spark = sorted((DATA / "spark-eventlogs").iterdir(), key=lambda p: p.stat().st_size)
    binary = next(RECORDED.rglob("job_*_0001-*.jhist"))
    traces = sorted((DATA / "hadoop-gridmix-system-traces").glob("*.json.gz"),
                    key=lambda p: sum(len(j.maps) + len(j.reduces) for j in RumenTrace(p)))
    speed: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-readers-") as tmp:
        work = Path(tmp)
        cases: list[tuple[str, Path, Callable[[Path], JobReader]]] = [
            ("jhist_json", jhist[-1], lambda p: JhistReader([p])),
            ("jhist_binary", binary, lambda p: JhistReader([p])),
            ("spark", spark[-1], lambda p: SparkEventLogReader([p])),
        ]
        for name, original, make in cases:
            folder = _copies(original, work / name, args.copies)
            speed[name] = {"file": original.name, "bytes": original.stat().st_size,
                           **_timed(lambda f=folder, m=make: m(f), args.runs)}  # type: ignore[misc]
        if args.codec_jars:
            lz4, snappy = work / f"{spark[-1].name}.lz4", work / f"{spark[-1].name}.snappy"
            subprocess.run(["java", "-cp", args.codec_jars,
                            str(ROOT / "tests" / "readers" / "SparkCodecs.java"),
                            str(spark[-1]), str(lz4), str(snappy)], check=True, timeout=120)
            for codec, packed in (("spark_lz4", lz4), ("spark_snappy", snappy)):
                folder = _copies(packed, work / codec, args.copies)
                speed[codec] = {"file": packed.name, "bytes": packed.stat().st_size,
                                **_timed(lambda f=folder: SparkEventLogReader([f]), args.runs)}  # type: ignore[misc]
        big = _csv_of(traces[-1], work / "tasks.csv")
        rows = big.read_text().splitlines()
        with (work / "many.csv").open("w") as fh:  # the trace's rows, --copies / 20 times
            fh.write(rows[0] + "\n")
            for k in range(max(1, args.copies // 20)):
                fh.writelines(r.replace(",", f"-{k},", 1) + "\n" for r in rows[1:])
        speed["tasks_csv"] = {"file": f"{traces[-1].name} as CSV",
                              **_timed(lambda: TaskCsvReader([work / "many.csv"]), args.runs)}
    figures = _figures([
        *((p.name, JhistReader([p])) for p in jhist),
        ("hadoop-jhist/ (one history)", JhistReader([DATA / "hadoop-jhist"])),
        *((p.name, JhistReader([p])) for p in sorted(RECORDED.rglob("*.jhist"))),
        *((p.name, SparkEventLogReader([p])) for p in spark),
        ("spark-eventlogs/ (one history)", SparkEventLogReader([DATA / "spark-eventlogs"])),
    ])
    result = {"copies": args.copies, "runs": args.runs, "speed": speed, "classify_eval": figures}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"reading speed: folders of {args.copies} copies of each reader's biggest real file, "
          f"median of {args.runs} runs")
    for name, s in speed.items():
        print(f"  {name:<13} {s['files']:>6} files {s['tasks']:>7} tasks  {s['median_s']:>7.3f} s"
              f"  {s['tasks_per_s']:>8} tasks/s  {s['files_per_s']:>6} files/s  ({s['file']})")
    print("classify-eval (threshold 60 s) on each real input:")
    for f in figures:
        print(f"  {f['input'][:60]:<60} tasks {f['tasks_read']:>3}  short n {f['short']['n']:>3} "
              f"recall {f['short']['recall']}  long n {f['long']['n']:>2} recall "
              f"{f['long']['recall']}  unresolved {f['unresolved']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
