"""What one cycle of the real sensor fetches from a synthetic cluster of a given size.

The required bodies (info, metrics, scheduler, nodes, live apps) and each app's
containers are the synthetic ones of ``bench_parse``; each app's attempt list
is made from its id; the NodeManager JMX, RM JMX, scheduler-conf, /conf and
MapReduce AM bodies are the recorded mini cluster's (``mini-hetero``), served
for whichever node or app the sensor asks (a busier node's JMX body would be
larger). The sensor runs with the default limits (500 apps' containers, 200
NodeManagers, 200 MapReduce jobs, 2,000 task attempts), so this counts what a
cycle costs the RM and the network at that size.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import responses
import yaml

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.wiring import build_sensor

RECORDED = (Path(__file__).resolve().parents[1] / "examples" / "recordings" / "mini-hetero"
            / "cycle-0020.yaml")
RM = "http://rm.bench:8088"


def _recorded() -> dict[str, str]:
    """Recorded bodies by a short name of their path."""
    out: dict[str, str] = {}
    for item in yaml.safe_load(RECORDED.read_text())["responses"]:
        url, body = item["response"]["url"], item["response"]["body"]
        for name, pattern in (("nm_jmx", r"NodeManager"), ("rm_jmx", r"QueueMetrics"),
                              ("sched_conf", r"/scheduler-conf"), ("conf", r"/conf\?"),
                              ("mr_jobs", r"/mapreduce/jobs\?"), ("mr_tasks", r"/tasks\?"),
                              ("mr_attempts", r"/attempts\?"),
                              ("attempts", r"/appattempts\?")):
            if re.search(pattern, url) and name not in out:
                out[name] = body
    return out


def sensor_fetch(bodies: dict[str, bytes], n_nodes: int) -> dict[str, Any]:
    """Requests and megabytes one sensor cycle fetches (and how long it took here)."""
    recorded = _recorded()
    containers = json.loads(bodies["containers"])["containers"]["container"]
    by_app: dict[str, list[Any]] = {}
    for c in containers:
        app = "application_" + "_".join(c["containerId"].split("_")[2:4])
        by_app.setdefault(app, []).append(c)
    fetched = {"requests": 0, "bytes": 0}

    def serve(body: Callable[[Any], str]) -> Callable[[Any], tuple[int, dict[str, str], str]]:
        def callback(request: Any) -> tuple[int, dict[str, str], str]:
            text = body(request)
            fetched["requests"] += 1
            fetched["bytes"] += len(text.encode())
            return 200, {"Content-Type": "application/json"}, text
        return callback

    def app_of(request: Any) -> str:
        found = re.search(r"/apps/(application_\d+_\d+)/", request.url)
        return found.group(1) if found else ""

    def attempts(request: Any) -> str:
        app = app_of(request)
        attempt = "appattempt_" + app.removeprefix("application_") + "_000001"
        body = json.loads(recorded["attempts"])
        body["appAttempts"]["appAttempt"][0]["appAttemptId"] = attempt
        body["appAttempts"]["appAttempt"][0]["id"] = 1
        return json.dumps(body)

    routes: list[tuple[str, Callable[[Any], str]]] = [
        (r"/ws/v1/cluster/info", lambda r: bodies["cluster_info"].decode()),
        (r"/ws/v1/cluster/metrics", lambda r: bodies["cluster_metrics"].decode()),
        (r"/ws/v1/cluster/scheduler-conf", lambda r: recorded["sched_conf"]),
        (r"/ws/v1/cluster/scheduler\b", lambda r: bodies["scheduler"].decode()),
        (r"/ws/v1/cluster/nodes", lambda r: bodies["nodes"].decode()),
        (r"/ws/v1/cluster/apps/[^/]+/appattempts/[^/]+/containers",
         lambda r: json.dumps({"container": by_app.get(app_of(r), [])})),
        (r"/ws/v1/cluster/apps/[^/]+/appattempts", attempts),
        (r"/ws/v1/cluster/apps\?", lambda r: bodies["apps"].decode()),
        (r"/jmx\?qry=Hadoop%3Aservice%3DResourceManager", lambda r: recorded["rm_jmx"]),
        (r"/jmx\?qry=Hadoop%3Aservice%3DNodeManager", lambda r: recorded["nm_jmx"]),
        (r"/conf\?", lambda r: recorded["conf"]),
        (r"/mapreduce/jobs/[^/]+/tasks/[^/]+/attempts", lambda r: recorded["mr_attempts"]),
        (r"/mapreduce/jobs/[^/]+/tasks", lambda r: recorded["mr_tasks"]),
        (r"/mapreduce/jobs\?", lambda r: recorded["mr_jobs"]),
    ]
    cfg = load_config(None, {"rm": {"urls": [RM]}})
    sensor = build_sensor(cfg)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        for pattern, body in routes:
            mock.add_callback("GET", re.compile(r"https?://[^/]+(/[^?]*)?" + pattern),
                              serve(body))
        started = time.perf_counter()
        snap = sensor.sense(int(time.time() * 1000))
        took = time.perf_counter() - started
    assert len(snap.nodes) == n_nodes, (len(snap.nodes), n_nodes)
    return {"sensor_requests": fetched["requests"],
            "sensor_mb": round(fetched["bytes"] / 1e6, 2),
            "sensor_wall_s_mocked": round(took, 3),
            "sensor_sources_ok": sorted(k for k, ok in snap.sources.items() if ok)}
