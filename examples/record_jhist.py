"""Record real Hadoop 3.4 job history files (``.jhist`` and ``_conf.xml``) for the readers.

Run from the repository root (after ``bash .ci/setup``)::

    .venv/bin/python examples/record_jhist.py --out examples/jhist-mini

It starts the real mini cluster of ``tests/minicluster/yarnmini.py``, runs
two MapReduce SleepJobs, one with the JobHistory written as Hadoop 3's
default binary Avro and one as Avro JSON
(``mapreduce.jobhistory.jhist.format=json``), waits for the
JobHistoryServer to move them to its done directory, and copies that
directory's files (the dated folders kept) to ``--out``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from yarnmini import MiniCluster  # noqa: E402

JOBS = (
    {"queue": "etl", "maps": 4, "reduces": 1, "map_ms": 2000, "reduce_ms": 500,
     "map_mb": 768, "reduce_mb": 512, "map_vcores": 2},
    {"queue": "default", "maps": 2, "reduces": 2, "map_ms": 1000, "reduce_ms": 1000,
     "conf": {"mapreduce.jobhistory.jhist.format": "json"}},
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    cluster = MiniCluster(Path(tempfile.mkdtemp(prefix="yarn-mini-jhist-")))
    cluster.start()
    try:
        ids = []
        for spec in JOBS:
            app = cluster.sleep_job(**spec)  # type: ignore[arg-type]
            if app.wait(timeout=300) != 0:
                raise RuntimeError(f"job {app.app_id} failed")
            ids.append(app.app_id.replace("application_", "job_"))
        done = cluster.history_done_dir
        deadline = time.monotonic() + 120
        while not all(list(done.rglob(f"{i}_conf.xml")) for i in ids):
            if time.monotonic() > deadline:
                raise TimeoutError(f"history of {ids} not in {done}")
            time.sleep(1)
        for path in done.rglob("*"):
            if path.is_file() and not path.name.startswith("."):
                target = args.out / path.relative_to(done)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)
                print(target)
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
