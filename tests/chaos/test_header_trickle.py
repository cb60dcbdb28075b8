"""The total timeout covers the status line and the headers, not only the body.

A local HTTP server (a fault a real RM does not make on demand) behind the fault
proxy trickling its answer 8 bytes every 0.3 s: before the fix the headers alone
held the request past ``total_s`` (8.5 s with ``total_s: 4``); now it ends at the
deadline as a timeout."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from chaos_proxy import FaultProxy

from yarn_advisor.connectors.errors import TimeoutError_
from yarn_advisor.connectors.http import HttpClient, RetryPolicy

BODY = json.dumps({"clusterInfo": {"haState": "ACTIVE"}}).encode()


class Answer(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


@pytest.fixture
def trickling() -> Iterator[FaultProxy]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = FaultProxy(f"http://127.0.0.1:{server.server_address[1]}", slow_bytes=8,
                       slow_delay_s=0.3)
    yield proxy
    proxy.close()
    server.shutdown()
    server.server_close()


def client(total_s: float) -> HttpClient:
    return HttpClient(timeout=(1.0, 1.0), total_timeout=total_s,
                      retry=RetryPolicy(attempts=1, deadline=1.0))


def test_trickled_headers_end_at_the_total_timeout(trickling: FaultProxy) -> None:
    http = client(1.5)
    assert http.get_json(trickling.url + "/ws/v1/cluster/info")  # a whole answer passes
    trickling.set("slow")
    started = time.monotonic()
    with pytest.raises(TimeoutError_, match=r"no whole answer within 1\.5s"):
        http.get_json(trickling.url + "/ws/v1/cluster/info")
    assert time.monotonic() - started < 2.5   # the headers alone take about 5 s
    http.session.close()


def test_a_slow_whole_answer_within_the_deadline_passes(trickling: FaultProxy) -> None:
    trickling.slow_bytes, trickling.slow_delay_s = 64, 0.05
    trickling.set("slow")
    http = client(5.0)
    assert http.get_json(trickling.url + "/ws/v1/cluster/info") == {
        "clusterInfo": {"haState": "ACTIVE"}}
    http.session.close()
