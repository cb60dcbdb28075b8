"""The RM's Activities API on the real mini cluster: why the scheduler skipped an app.

A distributed-shell app asks two 4 GiB containers; the NodeManagers have 6 GiB
and 3 GiB, so once the first runs the second cannot be placed anywhere. The
advisor's connector asks the RM to record the app's allocation attempts, reads
them back and parses one real reason (the scheduler's own diagnostic) for a
skipped attempt (the fast loop parses bodies recorded the same way:
``tests/fixtures/rm-activities``).
"""

from __future__ import annotations

import time

import pytest
from test_write_levers import rm_get, rm_kill, wait_for
from yarnmini import MiniCluster

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.wiring import http_client
from yarn_advisor.advisor.model.activities import ALLOCATED
from yarn_advisor.connectors.rm.activities import fetch_app_activities, parse_app_activities
from yarn_advisor.connectors.rm.client import RMClient

pytestmark = pytest.mark.cluster


def test_a_skipped_request_has_the_schedulers_reason(mini_cluster: MiniCluster) -> None:
    app = mini_cluster.distributed_shell(queue="default", containers=2, container_mb=4096,
                                         command="sleep 120", name="activities-probe")
    try:
        wait_for(lambda: rm_get(mini_cluster, f"/apps/{app.app_id}")["app"]
                 .get("runningContainers", 0) >= 2, "the AM and the first 4 GiB container")
        cfg = load_config(None, {"rm": {"urls": [mini_cluster.rm_url]}})
        rm = RMClient(http_client(cfg), [mini_cluster.rm_url])
        body = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # a loaded RM may record nothing in one window
            body = fetch_app_activities(rm, app.app_id, record_s=5)
            if parse_app_activities(body).attempts:
                break
        acts = parse_app_activities(body)
        assert acts.app_id == app.app_id
        skipped = [a for a in acts.attempts if a.state != ALLOCATED]
        assert skipped, body
        reasons = acts.skips()
        assert reasons and all(d for d, _, _ in reasons), reasons
        print(f"\n{acts.summary()}")
    finally:
        rm_kill(mini_cluster, app.app_id)
        app.proc.kill()
