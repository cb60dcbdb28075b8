"""A watchdog for one request's whole answer, status line and headers included.

``requests`` reads the status line and the headers before a body can be streamed,
and its read timeout bounds each socket read only: headers trickled a few bytes
every ``read_s`` held one request for 8.5 s with ``total_s: 4`` (and far longer at
a byte a read). The connection pools of a session given to :func:`install` note, per
thread, the connection a request is using until its headers are in; a
:class:`Watchdog` shuts that connection's socket at the deadline, which ends the
blocked read at once (the caller reports a timeout). The body has its own deadline
(``connectors.http``)."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

import requests
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_in_use: dict[int, Any] = {}  # thread id -> the connection reading its answer's headers
_lock = threading.Lock()


def _tracked(conn: Any, call: Any) -> Any:
    ident = threading.get_ident()
    with _lock:
        _in_use[ident] = conn
    try:
        return call()
    finally:
        with _lock:
            _in_use.pop(ident, None)


class TrackedHTTPConnectionPool(HTTPConnectionPool):
    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        parent = super()._make_request
        return _tracked(conn, lambda: parent(conn, *args, **kwargs))


class TrackedHTTPSConnectionPool(HTTPSConnectionPool):
    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        parent = super()._make_request
        return _tracked(conn, lambda: parent(conn, *args, **kwargs))


def install(session: requests.Session) -> None:
    """Make the session's pools note the connection of each request (see above)."""
    for prefix in ("http://", "https://"):
        adapter = session.get_adapter(prefix)
        manager = getattr(adapter, "poolmanager", None)
        if manager is not None:
            manager.pool_classes_by_scheme = {"http": TrackedHTTPConnectionPool,
                                              "https": TrackedHTTPSConnectionPool}


class Watchdog:
    """Within ``with``, shut the current thread's connection after ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._ident = threading.get_ident()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def _fire(self) -> None:
        with _lock:
            sock = getattr(_in_use.get(self._ident), "sock", None)
        if sock is None:
            return
        self.fired = True
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
