"""HTTP plumbing shared by every connector: timeouts, bounded retries, auth, TLS.

All ``requests`` exceptions and non-success statuses are turned into the
errors of :mod:`yarn_advisor.connectors.errors` here, at one boundary. Retries are bounded
(attempts and a deadline), back off exponentially with full jitter, and only
repeat idempotent reads or writes the caller marks as safe to repeat; 4xx
answers other than 429 are never retried. Every exchange can be handed to a
:class:`Recorder`, which is how ``yarn-advisor record`` captures real traffic.
"""

from __future__ import annotations

import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
import urllib3

from yarn_advisor.connectors.deadline import Watchdog, install
from yarn_advisor.connectors.errors import (
    AuthError,
    ConnectorError,
    HTTPStatusError,
    ParseError,
    TimeoutError_,
    UnavailableError,
    one_line,
    redact_url,
)
from yarn_advisor.connectors.kerberos import KerberosLogin, SpnegoAuth  # gssapi: lazily
from yarn_advisor.connectors.lean_json import RawJSON, decode_json

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failed request.

    ``attempts`` counts the first try; the wait before try ``n`` (1-based
    retries) is uniform in ``[0, min(max_delay, base_delay * 2**(n-1))]``
    ("full jitter"), and no retry starts after ``deadline`` seconds.
    """

    attempts: int = 3
    base_delay: float = 0.25
    max_delay: float = 2.0
    deadline: float = 10.0

    def delays(self, rng: Callable[[], float] = random.random) -> list[float]:
        return [
            rng() * min(self.max_delay, self.base_delay * 2 ** (n - 1))
            for n in range(1, self.attempts)
        ]


@dataclass(frozen=True)
class AuthConfig:
    """How to authenticate to the RM web services.

    ``simple``: pseudo auth, ``user.name`` is sent as a query parameter.
    ``kerberos``: SPNEGO (:mod:`yarn_advisor.connectors.kerberos`, the optional
    ``kerberos`` extra), as ``principal`` logged in from ``keytab``, or from the
    ticket cache when ``keytab`` is None.
    ``none``: send nothing (the RM then acts as its static web user).
    """

    method: str = "simple"
    user: str = "yarn-advisor"
    principal: str | None = None
    keytab: str | None = None


class Recorder(Protocol):
    def record(self, method: str, url: str, status: int, content_type: str, body: str) -> None:
        """Keep one request/response exchange."""


@dataclass
class HttpClient:
    """A ``requests`` session with the project's timeouts, retries and auth."""

    timeout: tuple[float, float] = (3.0, 10.0)
    # the whole answer (headers and body) of one request must arrive within this:
    # the read timeout bounds each socket read only, so a trickled body would not end
    total_timeout: float = 30.0
    # one body, decoded, at most this big; and (past INFLATION_FROM) at most this many
    # times the bytes received: an endless body took 1.27 GB, a gzip bomb 2.1 GB
    max_body_bytes: int = 256 << 20
    max_inflation: float = 100.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    auth: AuthConfig = field(default_factory=AuthConfig)
    verify: bool | str = True
    client_cert: str | tuple[str, str] | None = None
    session: requests.Session = field(default_factory=requests.Session)
    recorder: Recorder | None = None
    sleep: Callable[[float], None] = time.sleep
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.session.verify = self.verify
        if self.client_cert:
            self.session.cert = self.client_cert
        self.session.headers["Accept"] = "application/json"
        install(self.session)  # the total timeout covers the headers too
        if self.auth.method == "kerberos":
            self.session.auth = SpnegoAuth(KerberosLogin(self.auth.principal, self.auth.keytab))

    def _params(self, params: Mapping[str, str] | None) -> dict[str, str]:
        merged = dict(params or {})
        if self.auth.method == "simple" and self.auth.user:
            merged.setdefault("user.name", self.auth.user)
        return merged

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        data: str | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool = True,
        allow_redirects: bool = False,
    ) -> requests.Response:
        """Send one request with retries; return a 2xx or 3xx response."""
        hdrs = dict(headers or {})
        shown = redact_url(url)
        if method not in ("GET", "HEAD", "OPTIONS"):
            hdrs.setdefault("X-XSRF-HEADER", "yarn-advisor")
        delays = self.retry.delays() if idempotent else []
        started = time.monotonic()
        for attempt in range(len(delays) + 1):
            sent_at = time.monotonic()
            watchdog = Watchdog(self.total_timeout)
            try:
                with watchdog:
                    resp = self.session.request(
                        method, url, params=self._params(params), data=data, json=json_body,
                        headers=hdrs, timeout=self.timeout, allow_redirects=allow_redirects,
                        # explicit: otherwise REQUESTS_CA_BUNDLE in the environment
                        # silently replaces the configured CA bundle
                        verify=self.verify, stream=True,
                    )
                _read_body(resp, sent_at + self.total_timeout, self.max_body_bytes,
                           self.max_inflation)
            except _TooLarge as exc:  # not retried: the same body would come again
                raise ParseError(f"{method} {shown}: {exc}") from None
            except _TotalTimeout:
                err: ConnectorError = TimeoutError_(
                    f"{method} {shown}: no whole answer within {self.total_timeout:g}s")
            except requests.Timeout as exc:
                err = TimeoutError_(f"{method} {shown}: timed out ({one_line(exc)})")
            except requests.RequestException as exc:
                err = UnavailableError(f"{method} {shown}: {unreachable_why(exc)}")
                if watchdog.fired:  # its headers did not arrive within the total timeout
                    err = TimeoutError_(
                        f"{method} {shown}: no whole answer within {self.total_timeout:g}s")
            else:
                self._record(method, resp)
                if resp.status_code < 400:
                    return resp
                err = _status_error(resp)
                if resp.status_code not in RETRYABLE_STATUS:
                    raise err
            out_of_time = time.monotonic() - started > self.retry.deadline
            if attempt == len(delays) or out_of_time:
                raise err
            self.sleep(delays[attempt])
        raise AssertionError("unreachable")

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        """GET and decode a JSON body; a garbled or empty body is a ParseError."""
        raw = self.get_raw(url, params)
        return decode_json(raw.data, raw.url)

    def get_raw(self, url: str, params: Mapping[str, str] | None = None) -> RawJSON:
        """GET a body to decode later, by the parser that knows its shape."""
        resp = self.request("GET", url, params=params)
        if 300 <= resp.status_code < 400:
            raise HTTPStatusError(resp.status_code, url, resp.headers.get("Location", ""))
        return RawJSON(url, resp.content)

    def _record(self, method: str, resp: requests.Response) -> None:
        if self.recorder is None:
            return
        ctype = resp.headers.get("Content-Type", "").split(";")[0]
        with self._lock:
            self.recorder.record(method, resp.url, resp.status_code, ctype, resp.text)


class _TotalTimeout(Exception):
    """The answer did not arrive whole within the total timeout."""


class _TooLarge(Exception):
    """The body passed a size or decompression bound."""


INFLATION_FROM = 1 << 20  # bodies smaller than this, decoded, are not checked for inflation


def _read_body(resp: requests.Response, deadline: float, max_bytes: int = 256 << 20,
               max_inflation: float = 100.0) -> None:
    """Read the body of a streamed response, one socket read at a time, giving up
    at ``deadline``, or past ``max_bytes`` decoded, or when (past ``INFLATION_FROM``)
    it decodes to more than ``max_inflation`` times what was received; then it is
    there for ``resp.text`` as if not streamed. urllib3 decodes at most the amount
    asked per read, so a bomb is stopped after one bounded step past the limit."""
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            if time.monotonic() > deadline:
                raise _TotalTimeout
            chunk = resp.raw.read1(1 << 16, decode_content=True)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise _TooLarge(f"body over {max_bytes / (1 << 20):g} MiB (rm.body.max_mb)")
            received = resp.raw.tell()
            if size > INFLATION_FROM and size > max_inflation * max(received, 1):
                raise _TooLarge(f"body decompresses to over {max_inflation:g} times its "
                                f"{received} bytes (rm.body.max_inflation)")
            chunks.append(chunk)
    except (_TotalTimeout, _TooLarge):
        resp.close()
        raise
    except (OSError, urllib3.exceptions.HTTPError) as exc:  # reset, cut short, timed out
        resp.close()
        if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
            raise requests.Timeout(str(exc)) from exc
        raise requests.ConnectionError(str(exc)) from exc
    # requests keeps a read body in these two attributes (what .content does)
    resp._content = b"".join(chunks)
    resp._content_consumed = True  # type: ignore[attr-defined]


def _status_error(resp: requests.Response) -> HTTPStatusError:
    cls = AuthError if resp.status_code in (401, 403) else HTTPStatusError
    return cls(resp.status_code, resp.url, resp.text)


def unreachable_why(exc: BaseException) -> str:
    """Why a request never got an answer, in words an operator acts on: the root cause
    found in requests' and urllib3's wrapped exceptions, not their whole chain."""
    causes: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if any(e is c for c in causes):
            continue
        causes.append(e)
        todo += [x for x in (e.__cause__, e.__context__, getattr(e, "reason", None), *e.args)
                 if isinstance(x, BaseException)]
    text = " ".join(str(c) for c in causes)

    def seen(kind: type[BaseException], *words: str) -> bool:
        return any(isinstance(c, kind) for c in causes) or any(w in text for w in words)

    if seen(ConnectionRefusedError, "Connection refused"):
        return "connection refused (is the service up on that host and port?)"
    if seen(socket.gaierror, "Name or service not known", "name resolution"):
        return "host name not found (check the URL's host)"
    if seen(ssl.SSLError, "SSLError", "CERTIFICATE_VERIFY_FAILED"):
        tls = next((c for c in causes if isinstance(c, ssl.SSLError)), None)
        what = getattr(tls, "verify_message", None) or getattr(tls, "reason", None) or "error"
        return (f"TLS failed: {str(what).lower().replace('_', ' ')} (check the CA bundle, "
                "the certificate and the URL's scheme)")
    if seen(ConnectionResetError, "Connection reset"):
        return "connection reset by the peer"
    return f"{type(exc).__name__}: {one_line(exc, 200)}"
