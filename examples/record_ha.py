"""Record what an RM HA pair answers: a dead address, a real standby RM, the active RM.

Run from the repository root (after ``bash .ci/setup``)::

    .venv/bin/python examples/record_ha.py --out examples/recordings/ha-standby

It starts the real mini cluster of ``tests/minicluster/yarnmini.py`` plus a
second ResourceManager that stays STANDBY (RM HA mode, automatic failover
off), runs a MapReduce sleep job, and records with the advisor's own sensor
configured with ``[dead, standby, active]`` RM addresses:

* cycles 1-2: a normal cycle (the advisor probes the dead address, then the
  standby's ``/ws/v1/cluster/info`` with haState STANDBY, then follows the
  active RM);
* cycle 3: only the standby answers (the active one is gone from the
  recording, as after a crash): its info says STANDBY, and a data path asked
  of it answers the real standby's redirect (HTTP 307).

The unit tests of HA-following and of the sensor replay these bodies.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))

from yarnmini import MiniCluster  # noqa: E402

from yarn_advisor.advisor.engine.settings import load_config  # noqa: E402
from yarn_advisor.advisor.loop.wiring import build_sensor, http_client  # noqa: E402
from yarn_advisor.connectors.replay import CycleRecorder  # noqa: E402


def dead_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    cluster = MiniCluster(Path(tempfile.mkdtemp(prefix="yarn-mini-ha-")))
    cluster.start()
    try:
        standby = cluster.start_standby_rm()
        urls = [dead_url(), standby, cluster.rm_url]
        job = cluster.sleep_job(queue="etl", maps=3, reduces=1, map_ms=30000, reduce_ms=5000,
                                map_mb=768, reduce_mb=512)
        time.sleep(25)  # the job's AM and maps are running
        cfg = load_config(None, {"rm": {"urls": urls, "history_url": cluster.jhs_url,
                                        "retry": {"attempts": 1}}})
        recorder = CycleRecorder(args.out)
        sensor = build_sensor(cfg, recorder)
        recorder.write_manifest(
            rm_urls=urls, history_url=cluster.jhs_url, auth_user=cfg.rm.auth.user,
            auth_method=cfg.rm.auth.method, cycles=3, interval_s=5,
            recorded_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            note="examples/record_ha.py: rm_urls = [dead address, real standby RM, active RM]; "
                 "cycles 1-2 full cycles; cycle 3 only the standby answers (info STANDBY, "
                 "a data path 307)")
        for n in (1, 2):
            now = int(time.time() * 1000)
            sensor.sense(now)
            recorder.write_cycle(n, now)
            time.sleep(5)
        http = http_client(cfg, recorder)
        http.get_json(f"{standby}/ws/v1/cluster/info")
        http.request("GET", f"{standby}/ws/v1/cluster/apps")  # the real standby's 307
        recorder.write_cycle(3, int(time.time() * 1000))
        job.wait(timeout=600)
    finally:
        cluster.stop()
    print(f"recorded 3 cycles into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
