"""Make the bundled recording: a real mini YARN cluster under a mixed workload.

Run from the repository root (after ``bash .ci/setup``)::

    .venv/bin/python examples/record_mini.py --out examples/recordings/mini-hetero

It starts the real cluster of ``tests/minicluster/yarnmini.py`` (RM with the
CapacityScheduler and queues default/etl/adhoc, NodeManagers of 6 GiB/6
vcores and 3 GiB/3 vcores, JobHistoryServer), submits the workload below,
and runs ``yarn-advisor record`` for ``--cycles`` cycles of ``--interval``
seconds while the jobs run, queue up and finish. The exact workload is
written into the recording's manifest (``note``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from yarnmini import MiniCluster, SubmittedApp  # noqa: E402

from yarn_advisor.advisor.cli.main import main as advisor_main  # noqa: E402

# (delay before submit in s, kind, arguments): several queues, different
# container sizes and map/reduce counts, a distributed-shell app, a job
# submitted while recording, and jobs finishing during the recording.
WORKLOAD: list[tuple[float, str, dict[str, object]]] = [
    (0, "sleep", dict(queue="etl", maps=4, reduces=2, map_ms=20000, reduce_ms=8000,
                      map_mb=768, reduce_mb=1024, tags="team:etl,iteration:1/3")),
    (2, "dshell", dict(queue="adhoc", containers=3, command="sleep 45", container_mb=256,
                       name="adhoc-shell")),
    (4, "sleep", dict(queue="default", maps=6, reduces=1, map_ms=6000, reduce_ms=3000,
                      map_mb=512, reduce_mb=512, tags="team:bi")),
    (25, "sleep", dict(queue="etl", maps=2, reduces=0, map_ms=30000, reduce_ms=0,
                       map_mb=1536, reduce_mb=512, map_vcores=2, priority=5,
                       tags="team:ml")),
    (35, "sleep", dict(queue="default", maps=3, reduces=1, map_ms=4000, reduce_ms=2000,
                       map_mb=384, reduce_mb=384)),
]


# Many short jobs of one kind, submitted one after another while long
# distributed-shell containers keep the nodes busy: the classifier learns that
# these maps are short, so OPERA has short pending work to lend idle reserved
# resources to (what the mini-hetero recording is too short to show).
SHORT_STREAM: list[tuple[float, str, dict[str, object]]] = [
    (0, "dshell", dict(queue="adhoc", containers=2, command="sleep 200", container_mb=1024,
                       name="busy-shell")),
    *((2 + 14 * i, "sleep", dict(queue="default", maps=6, reduces=1, map_ms=3000,
                                 reduce_ms=1000, map_mb=768, reduce_mb=512,
                                 tags=f"stream:{i}"))
      for i in range(10)),
]
WORKLOADS = {"hetero": WORKLOAD, "short-stream": SHORT_STREAM}


def submit(cluster: MiniCluster, kind: str, args: dict[str, object]) -> SubmittedApp:
    if kind == "sleep":
        return cluster.sleep_job(**args)  # type: ignore[arg-type]
    return cluster.distributed_shell(**args)  # type: ignore[arg-type]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cycles", type=int, default=14)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="hetero")
    args = ap.parse_args()
    workload = WORKLOADS[args.workload]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="yarn-mini-record-"))
    cluster = MiniCluster(workdir)
    t0 = time.monotonic()
    cluster.start()
    print(f"cluster up in {time.monotonic() - t0:.1f}s at {cluster.rm_url}", flush=True)
    apps: list[SubmittedApp] = []
    try:
        start = time.monotonic()
        late = [w for w in workload if w[0] >= 10]
        for delay, kind, kw in (w for w in workload if w[0] < 10):
            time.sleep(max(0.0, delay - (time.monotonic() - start)))
            apps.append(submit(cluster, kind, kw))

        def submit_late() -> None:
            for delay, kind, kw in late:
                time.sleep(max(0.0, delay - (time.monotonic() - start)))
                apps.append(submit(cluster, kind, kw))

        late_thread = threading.Thread(target=submit_late)
        late_thread.start()
        note = json.dumps({"workload": workload, "cluster": {
            "nodes": [vars(n) for n in cluster.nodes], "queues": "default 40, etl 40, adhoc 20",
            "hadoop": "3.4.2"}}, default=str)
        rc = advisor_main(["record", "--rm", cluster.rm_url, "--history", cluster.jhs_url,
                           "--out", str(args.out), "--cycles", str(args.cycles),
                           "--interval", str(args.interval), "--note", note])
        late_thread.join()
        print("apps:", [a.app_id for a in apps])
        return rc
    finally:
        for app in apps:
            if app.proc.poll() is None:
                app.proc.kill()
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
