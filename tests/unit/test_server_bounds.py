"""The HTTP endpoints under idle connections: bounded threads, per-connection timeout."""

from __future__ import annotations

import socket
import threading
import time

import requests

from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.observe.server import AdvisorServer

IDLE = 120


def test_idle_connections_take_no_more_than_the_cap_and_healthz_still_answers() -> None:
    """1,019 idle connections took 1,016 threads of a server without a cap or a
    timeout; here ``IDLE`` of them hold at most ``max_connections`` threads, each for
    its timeout, and /healthz answers meanwhile."""
    advisor = Advisor(sensor=None, engine=None, actuator=None)  # type: ignore[arg-type]
    server = AdvisorServer(advisor, "127.0.0.1", 0, 30.0, max_connections=8,
                           connection_timeout_s=2.0).start()
    before = threading.active_count()
    idle: list[socket.socket] = []
    try:
        for _ in range(IDLE):
            s = socket.create_connection(("127.0.0.1", server.port))
            idle.append(s)  # connected, never says anything
        most, waited = 0, time.monotonic()
        while server.httpd.refused < IDLE - 8 and time.monotonic() - waited < 30:
            most = max(most, threading.active_count() - before)
            time.sleep(0.01)  # (a loaded machine accepts slowly)
        assert most <= 8  # one thread per slot at most, never one per connection
        assert server.httpd.refused >= IDLE - 8  # the others closed as soon as accepted
        started, answer = time.monotonic(), None
        while answer is None and time.monotonic() - started < 10:
            try:
                answer = requests.get(f"http://127.0.0.1:{server.port}/healthz", timeout=2)
            except requests.ConnectionError:
                time.sleep(0.1)  # refused while every slot was still taken: try again
        assert answer is not None and answer.status_code == 503  # served: "starting"
        assert answer.json()["status"] == "starting"
        time.sleep(2.5)  # the idle ones that held a slot timed out, their threads ended
        assert threading.active_count() - before <= 1
    finally:
        for s in idle:
            s.close()
        server.close()
