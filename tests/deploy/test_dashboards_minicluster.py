"""The dashboards on a live advisor: Prometheus scrapes the advisor watching the real
mini cluster (one MapReduce sleep job running), and every query of the cluster
overview and advisor health dashboards returns data. The other dashboards
depend on what the workload makes the policies do; their counts are printed."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml
from conftest import JOB, SCRAPE_S, RunningAdvisor, start_advisor, stop_advisor, tool
from promserver import PrometheusServer
from test_dashboards_prometheus import EARLY_GAPS, PENDING, cycles, evaluate
from yarnmini import MiniCluster

pytestmark = [pytest.mark.deploy, pytest.mark.cluster]
ASSERTED = ("yarn-advisor-cluster.json", "yarn-advisor-health.json")
LIVE_CYCLES = 6
TIMEOUT_S = 180.0


@pytest.fixture(scope="module")
def live(mini_cluster: MiniCluster) -> Iterator[tuple[RunningAdvisor, PrometheusServer]]:
    tool("prometheus")
    workdir = Path(tempfile.mkdtemp(prefix="yarn-advisor-live-"))
    cfg = {"rm": {"urls": [mini_cluster.rm_url], "history_url": mini_cluster.jhs_url},
           "state_dir": str(workdir / "state")}
    (workdir / "advisor.yaml").write_text(yaml.safe_dump(cfg))
    job = mini_cluster.sleep_job(queue="etl", maps=2, reduces=1, map_ms=3000, reduce_ms=1000,
                                 tags="suite:deploy")
    advisor = start_advisor(workdir, ["--config", str(workdir / "advisor.yaml"),
                                      "--interval", "2"])
    server = PrometheusServer(workdir / "prometheus", {JOB: [advisor.address]},
                              scrape_interval_s=SCRAPE_S)
    try:
        with server:
            yield advisor, server
    finally:
        stop_advisor(advisor.proc)
        # the job is not needed any more: kill it (faster than waiting), as an admin would
        requests.put(f"{mini_cluster.rm_url}/ws/v1/cluster/apps/{job.app_id}/state",
                     params={"user.name": "yarn-advisor"}, json={"state": "KILLED"},
                     headers={"X-XSRF-HEADER": "deploy-test"}, timeout=10)
        job.wait(timeout=300)
        shutil.rmtree(workdir, ignore_errors=True)


def test_health_and_cluster_dashboards_return_data_from_the_live_advisor(
        live: tuple[RunningAdvisor, PrometheusServer]) -> None:
    advisor, prom = live
    deadline = time.monotonic() + TIMEOUT_S
    running = 'sum(yarn_advisor_cluster_apps{state="running"}) > 0'
    while cycles(prom) < LIVE_CYCLES or not prom.query(running):
        assert advisor.proc.poll() is None, advisor.log_text()[-3000:]
        assert time.monotonic() < deadline, advisor.log_text()[-3000:]
        time.sleep(0.5)
    results = evaluate(prom, advisor.started_at, ranged=True)
    failures, seen = [], []
    for name, (queries, ev) in sorted(results.items()):
        for pq in queries:
            got = (ev.instant.get(pq.expr, 0), ev.ranged.get(pq.expr, 0))
            seen.append(f"{got} {pq}")
            waived = any(k in pq.expr for k in (*PENDING, *EARLY_GAPS))
            if name in ASSERTED and not waived and not all(got):
                failures.append(f"{pq}: {ev.errors.get(pq.expr, 'no data')} {got}")
    print("\n".join(seen))
    assert not failures, "\n".join(failures)
    ok = prom.query(f'yarn_advisor_connector_up{{job="{JOB}", source="rm"}}')
    assert ok and ok[0]["value"][1] == "1", "the live advisor read the real RM"
