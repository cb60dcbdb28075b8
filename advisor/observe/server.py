"""The advisor's HTTP endpoints: /metrics, /healthz, /livez, /recommendations, /decision-table.

A small threaded ``http.server`` (no framework): Prometheus text from the
advisor's private registry; ``/healthz`` (readiness) turns 503 when the latest
cycle was skipped or is older than three intervals; ``/livez`` (liveness) turns
503 only when the loop itself has stalled (no cycle started for ``LIVE_AFTER``
intervals, at least ``LIVE_MIN_S`` seconds), so an RM outage makes the advisor
unready but never gets it restarted; the latest recommendations as JSON;
precision mode's decision table for the RM plug-in's poller
(docs/decision-table.md: 200 with an ``ETag`` of its seq, 304 for a matching
``If-None-Match``, 404 with the reason when there is none to apply).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry

from yarn_advisor.advisor.act.publish import latest
from yarn_advisor.advisor.ha.status import ALONE, HaCollector
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.model.plugin import PluginStatus
from yarn_advisor.advisor.observe.metrics import AdvisorCollector, BuildInfo
from yarn_advisor.config.schema import AdvisorConfig, Server

log = logging.getLogger("yarn_advisor")
LIVE_AFTER = 10  # intervals without a new cycle before /livez says the loop has stalled
LIVE_MIN_S = 300.0  # ... and never sooner than this (a slow RM makes long cycles)


class BoundedHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server with at most ``max_connections`` connections served at
    once: a connection past that is closed as soon as it is accepted (its thread
    never starts), so idle or slow clients cannot take every thread and file
    descriptor. A client that goes away mid-answer costs one DEBUG line, not a
    traceback on stderr."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog: a burst of scrapes waits, not SYN-retries

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 max_connections: int) -> None:
        super().__init__(address, handler)
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self.refused = 0  # connections closed because every slot was taken

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.refused += 1
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)  # starts its thread
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        log.debug("HTTP client %s: %s: %s", client_address, type(exc).__name__, exc)


class AdvisorServer:
    """Serves one Advisor's state on ``host:port`` in a background thread.

    ``config``: the effective configuration, whose fingerprint
    ``yarn_advisor_build_info`` shows (``unknown`` without it).
    """

    def __init__(self, advisor: Advisor, host: str, port: int, interval_s: float,
                 config: AdvisorConfig | None = None, *,
                 max_connections: int | None = None,
                 connection_timeout_s: float | None = None) -> None:
        self.advisor = advisor
        self.interval_s = interval_s
        self.started_at = time.time()
        self.registry = CollectorRegistry()
        actuator = advisor.actuator
        self.registry.register(AdvisorCollector(
            lambda: advisor.latest, advisor.totals, lambda: actuator.blocked,
            lambda policy: "enforce" if actuator.enforcing(policy) else "dry_run",
            BuildInfo.of(config), trips=lambda: actuator.trips,
            tripped=lambda: actuator.tripped_policies()))
        self.registry.register(HaCollector(
            lambda: ALONE if advisor.ha is None else advisor.ha.status()))
        limits = config.server if config is not None else Server()
        self.httpd = BoundedHTTPServer(
            (host, port), self._handler(connection_timeout_s or limits.connection_timeout_s),
            max_connections or limits.max_connections)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self) -> AdvisorServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def health(self) -> tuple[int, dict[str, Any]]:
        latest = self.advisor.latest
        role = "alone" if self.advisor.ha is None else self.advisor.ha.status().role
        if latest is None:
            return 503, {"status": "starting", "role": role}
        age = time.time() - latest.started_at
        body = {"status": latest.outcome, "cycle": latest.number, "age_s": round(age, 1),
                "reason": latest.reason, "role": role}
        stale = self.interval_s > 0 and age > 3 * self.interval_s
        if stale:
            body["status"] = "stale"
        if latest.snapshot is not None and latest.snapshot.plugin is not None:
            body["plugin"] = self.plugin(latest.snapshot.plugin)
        return (200 if latest.outcome == "ok" and not stale else 503), body

    def plugin(self, p: PluginStatus) -> dict[str, Any]:
        """What the RM plug-in applies (its MBean, read this cycle) beside what this advisor
        published: informative only, the plug-in fails open whatever it says."""
        publisher = self.advisor.actuator.publisher
        return {"table_status": p.table_status, "table_seq": p.table_seq,
                "table_age_s": round(p.table_age_ms / 1000, 1) if p.applying else None,
                "table_leader": p.table_leader,
                "published_seq": None if publisher is None or publisher.withdrawn
                else publisher.seq,
                "vetoes": sum(p.vetoes.values()), "fallbacks": dict(p.fallbacks)}

    def liveness(self) -> tuple[int, dict[str, Any]]:
        """200 while cycles keep starting (whatever their outcome), 503 once the loop
        has stalled; a run of one cycle (interval 0) is always live."""
        latest = self.advisor.latest
        since = latest.started_at if latest is not None else self.started_at
        age = time.time() - since
        limit = max(LIVE_AFTER * self.interval_s, LIVE_MIN_S)
        stalled = self.interval_s > 0 and age > limit
        body = {"status": "stalled" if stalled else "alive", "age_s": round(age, 1),
                "cycle": latest.number if latest is not None else None}
        return (503 if stalled else 200), body

    def recommendations(self) -> dict[str, Any]:
        latest = self.advisor.latest
        if latest is None:
            return {"cycle": None, "recommendations": []}
        taken = latest.snapshot.taken_at if latest.snapshot else None
        return {"cycle": latest.number, "taken_at": taken,
                "recommendations": [r.to_dict() for r in latest.recommendations]}

    def decision_table(self, etag: str | None) -> tuple[int, bytes, dict[str, str]]:
        """(status, JSON body, headers) of ``/decision-table``."""
        sink = latest(self.advisor.actuator.publisher)
        if sink is None:
            table, reason = None, "disabled"
        else:
            table, reason = sink.current(int(time.time() * 1000))
        if table is None:
            body = {"error": "no decision table to apply: the plug-in does what YARN does",
                    "reason": reason}
            return 404, json.dumps(body, sort_keys=True).encode() + b"\n", {}
        tag = f'"{table.leader}-{table.seq}"'
        if etag is not None and etag.strip() == tag:
            return 304, b"", {"ETag": tag}
        return 200, table.dumps().encode(), {"ETag": tag}

    def _handler(self, timeout_s: float) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = timeout_s  # each socket read and write (StreamRequestHandler.setup)

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if path == "/metrics":
                    self._send(200, CONTENT_TYPE_LATEST, generate_latest(server.registry))
                elif path in ("/healthz", "/health"):
                    status, body = server.health()
                    self._json(status, body)
                elif path == "/livez":
                    status, body = server.liveness()
                    self._json(status, body)
                elif path == "/recommendations":
                    self._json(200, server.recommendations())
                elif path == "/decision-table":
                    status, data, headers = server.decision_table(
                        self.headers.get("If-None-Match"))
                    self._send(status, "application/json", data, headers)
                else:
                    self._json(404, {"error": f"no such path {path}",
                                     "paths": ["/metrics", "/healthz", "/livez",
                                                "/recommendations", "/decision-table"]})

            def _json(self, status: int, body: Any) -> None:
                self._send(status, "application/json",
                           json.dumps(body, sort_keys=True).encode() + b"\n")

            def _send(self, status: int, ctype: str, data: bytes,
                      headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
