"""The HTTP boundary: timeouts, bounded retries, error mapping, auth, CSRF."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import responses

from yarn_advisor.connectors.errors import (
    AuthError,
    HTTPStatusError,
    ParseError,
    TimeoutError_,
    UnavailableError,
)
from yarn_advisor.connectors.http import AuthConfig, HttpClient, RetryPolicy

URL = "http://rm.test:8088/ws/v1/cluster/info"


def client(**kw: object) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    kw.setdefault("retry", RetryPolicy(attempts=3, base_delay=0.1, max_delay=1.0, deadline=10))
    return HttpClient(sleep=waits.append, **kw), waits  # type: ignore[arg-type]


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A real TCP server that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conns.append(srv.accept()[0])
            except TimeoutError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in conns:
        c.close()
    srv.close()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)


def test_refused_connection_is_unavailable_after_bounded_retries() -> None:
    http, waits = client()
    with pytest.raises(UnavailableError) as info:
        http.get_json(f"http://127.0.0.1:{closed_port()}/ws/v1/cluster/info")
    assert not isinstance(info.value, TimeoutError_)
    assert len(waits) == 2  # 3 attempts -> 2 waits
    assert all(0 <= w <= 1.0 for w in waits)
    # one line an operator acts on, not urllib3's chain of wrapped exceptions
    message = str(info.value)
    assert "connection refused" in message and "\n" not in message
    assert "Max retries" not in message and "NewConnectionError" not in message


def test_an_unknown_host_says_so() -> None:
    http, _ = client()
    with pytest.raises(UnavailableError, match="host name not found"):
        http.get_json("http://no-such-host.invalid:8088/ws/v1/cluster/info")


def test_silent_server_times_out(silent_server: int) -> None:
    http, waits = client(timeout=(0.5, 0.3), retry=RetryPolicy(attempts=2, base_delay=0))
    started = time.monotonic()
    with pytest.raises(TimeoutError_):
        http.get_json(f"http://127.0.0.1:{silent_server}/ws/v1/cluster/info")
    assert time.monotonic() - started < 3
    assert len(waits) == 1


def test_deadline_stops_retrying() -> None:
    http, waits = client(retry=RetryPolicy(attempts=10, base_delay=0.01, deadline=0.0))
    with pytest.raises(UnavailableError):
        http.get_json(f"http://127.0.0.1:{closed_port()}/x")
    assert waits == []


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(attempts=6, base_delay=0.5, max_delay=2.0)
    assert policy.delays(rng=lambda: 1.0) == [0.5, 1.0, 2.0, 2.0, 2.0]
    assert policy.delays(rng=lambda: 0.0) == [0.0] * 5


@responses.activate
def test_5xx_is_retried_then_succeeds() -> None:
    responses.get(URL, status=500, body="boom")
    responses.get(URL, json={"clusterInfo": {"haState": "ACTIVE"}})
    http, waits = client()
    assert http.get_json(URL) == {"clusterInfo": {"haState": "ACTIVE"}}
    assert len(responses.calls) == 2 and len(waits) == 1


@responses.activate
def test_5xx_every_time_raises_http_status_error() -> None:
    responses.get(URL, status=503, body="unavailable")
    http, _ = client()
    with pytest.raises(HTTPStatusError) as info:
        http.get_json(URL)
    assert info.value.status == 503
    assert len(responses.calls) == 3


@responses.activate
@pytest.mark.parametrize("status", [400, 404])
def test_4xx_is_not_retried(status: int) -> None:
    responses.get(URL, status=status, body="no")
    http, waits = client()
    with pytest.raises(HTTPStatusError) as info:
        http.get_json(URL)
    assert info.value.status == status and waits == [] and len(responses.calls) == 1


@responses.activate
@pytest.mark.parametrize("status", [401, 403])
def test_auth_failures_map_to_auth_error(status: int) -> None:
    responses.get(URL, status=status)
    http, _ = client()
    with pytest.raises(AuthError):
        http.get_json(URL)


@responses.activate
@pytest.mark.parametrize("body", ['{"clusterInfo": {"id": 1', "<html>Sorry</html>", ""])
def test_garbled_truncated_or_empty_body_is_parse_error(body: str) -> None:
    responses.get(URL, body=body, content_type="application/json")
    http, _ = client()
    with pytest.raises(ParseError):
        http.get_json(URL)


@responses.activate
def test_non_idempotent_write_is_never_retried_and_carries_csrf_header() -> None:
    responses.put("http://rm.test:8088/ws/v1/cluster/apps/a/priority", status=500)
    http, waits = client()
    with pytest.raises(HTTPStatusError):
        http.request("PUT", "http://rm.test:8088/ws/v1/cluster/apps/a/priority",
                     json_body={"priority": 3}, idempotent=False)
    assert len(responses.calls) == 1 and waits == []
    assert responses.calls[0].request.headers["X-XSRF-HEADER"] == "yarn-advisor"


@responses.activate
def test_simple_auth_sends_user_name_and_none_sends_nothing() -> None:
    responses.get(URL, json={})
    HttpClient(auth=AuthConfig("simple", "svc-advisor")).get_json(URL)
    HttpClient(auth=AuthConfig("none")).get_json(URL)
    assert responses.calls[0].request.url.endswith("?user.name=svc-advisor")
    assert "user.name" not in responses.calls[1].request.url


def test_tls_verification_is_on_by_default() -> None:
    assert HttpClient().session.verify is True
    assert HttpClient(verify="/etc/ca.pem").session.verify == "/etc/ca.pem"


def test_gc_pause_is_counted_across_threads() -> None:
    """Overlapping pauses from several threads: the collector stays paused until
    the last one ends, then comes back (never left disabled)."""
    import gc

    from yarn_advisor.advisor.model.gcpause import paused_gc

    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def worker() -> None:
        with paused_gc():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    with paused_gc():
        t.start()
        inside.wait(5)
    assert not gc.isenabled()  # the worker's pause is still on
    release.set()
    t.join()
    assert gc.isenabled()
    barrier = threading.Barrier(8)

    def churn() -> None:
        barrier.wait()
        for _ in range(2000):
            with paused_gc():
                pass

    threads = [threading.Thread(target=churn) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert gc.isenabled()


@pytest.fixture
def trickling_server() -> Iterator[int]:
    """A real TCP server that answers 200 with a body of one byte every 0.1 s (a
    misbehaving RM or proxy: every socket read succeeds, the answer never ends)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn = srv.accept()[0]
            except TimeoutError:
                continue
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 100000\r\n\r\n{")
                for _ in range(600):
                    if stop.wait(0.1):
                        break
                    conn.sendall(b" ")
            except OSError:
                pass
            finally:
                conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    srv.close()


def test_a_trickled_answer_ends_at_the_total_timeout(trickling_server: int) -> None:
    http, _ = client(timeout=(1.0, 1.0), total_timeout=1.0,
                     retry=RetryPolicy(attempts=1, deadline=1.0))
    started = time.monotonic()
    with pytest.raises(TimeoutError_, match="no whole answer within 1s"):
        http.get_json(f"http://127.0.0.1:{trickling_server}/ws/v1/cluster/apps")
    assert time.monotonic() - started < 3  # each read succeeds; without the total: 60 s


@pytest.mark.parametrize("body", ["[" * 5000 + "]" * 5000, '{"a": ' + "9" * 400 + "}"])
def test_deep_or_huge_json_decodes_or_is_a_parse_error(body: str) -> None:
    from yarn_advisor.connectors.lean_json import decode_json

    try:
        decode_json(body, "u")
    except ParseError as exc:
        assert "recursion" in str(exc)


def _serve_once_forever(answer: bytes, then: bytes | None = None) -> Iterator[int]:
    """A real TCP server on loopback: each connection gets ``answer`` (headers and a
    first part), then ``then`` over and over until the client goes away."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn = srv.accept()[0]
            except TimeoutError:
                continue
            try:
                conn.recv(65536)
                conn.sendall(answer)
                while then is not None and not stop.is_set():
                    conn.sendall(then)
            except OSError:
                pass
            finally:
                conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    srv.close()


@pytest.fixture
def endless_server() -> Iterator[int]:
    """200 and a body that never ends, as fast as loopback carries it."""
    yield from _serve_once_forever(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[",
        b"0," * 32768)


@pytest.fixture
def gzip_bomb_server() -> Iterator[int]:
    """200 with ``Content-Encoding: gzip``: 64 KiB on the wire, 64 MiB inflated."""
    import gzip
    bomb = gzip.compress(b" " * (64 << 20), compresslevel=9)
    yield from _serve_once_forever(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        + f"Content-Length: {len(bomb)}\r\nConnection: close\r\n\r\n".encode() + bomb)


def test_an_endless_body_stops_at_the_size_cap(endless_server: int) -> None:
    """It took the daemon to 1.27 GB; now one read fails at the cap, not retried."""
    http, waits = client(max_body_bytes=4 << 20, total_timeout=20.0,
                         retry=RetryPolicy(attempts=3, deadline=30.0))
    started = time.monotonic()
    with pytest.raises(ParseError, match=r"body over 4 MiB \(rm.body.max_mb\)"):
        http.get_raw(f"http://127.0.0.1:{endless_server}/ws/v1/cluster/apps")
    assert time.monotonic() - started < 10 and waits == []


def test_a_decompression_bomb_stops_at_the_inflation_cap(gzip_bomb_server: int) -> None:
    http, _ = client(max_inflation=100.0, retry=RetryPolicy(attempts=1))
    with pytest.raises(ParseError, match="decompresses to over 100 times"):
        http.get_raw(f"http://127.0.0.1:{gzip_bomb_server}/proxy/application_1_0001/ws")
    small, _ = client(max_body_bytes=8 << 20, max_inflation=10_000.0,
                      retry=RetryPolicy(attempts=1))
    with pytest.raises(ParseError, match="body over 8 MiB"):  # and the size cap, decoded
        small.get_raw(f"http://127.0.0.1:{gzip_bomb_server}/proxy/application_1_0001/ws")

