"""A TCP fault proxy on loopback, between the advisor and a real server.

Bytes are relayed unchanged in ``pass`` mode; the other modes make the faults a
real server does not make on demand. The mode is read at every chunk, so a
change applies at once, to kept-alive connections too:

- ``reset``: a request is answered by a TCP reset (RST), nothing forwarded;
- ``reset_mid``: the request reaches the server, half of the first chunk of its
  answer reaches the client, then a reset (a partial body);
- ``slow``: the answer trickles, ``slow_bytes`` every ``slow_delay_s`` seconds;
- ``blackhole``: the request is swallowed and the connection held open, silent.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
import urllib.parse
from collections import Counter

MODES = ("pass", "reset", "reset_mid", "slow", "blackhole")


def _shut(sock: socket.socket) -> None:
    """Shut down and close (a shutdown wakes a thread blocked reading it)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def _reset(sock: socket.socket) -> None:
    """Close with SO_LINGER 0: the peer gets a RST, not a FIN. The read side is shut
    first: it wakes a thread blocked reading the socket, which would otherwise keep it
    open past close()."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class FaultProxy:
    """Listen on 127.0.0.1 (a free port); relay to ``upstream`` (``http://host:port``)."""

    def __init__(self, upstream: str, slow_bytes: int = 16, slow_delay_s: float = 0.5) -> None:
        u = urllib.parse.urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.mode = "pass"
        self.slow_bytes, self.slow_delay_s = slow_bytes, slow_delay_s
        self.faults: Counter[str] = Counter()  # mode -> requests it hit
        self._closed = threading.Event()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True, name="fault-proxy").start()

    def set(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {MODES}")
        self.mode = mode

    def close(self) -> None:
        self._closed.set()
        self._server.close()
        with self._lock:
            for s in list(self._open):
                _shut(s)

    # --- relaying ---------------------------------------------------------
    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._open.update(socks)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream, timeout=10)
        except OSError:
            _reset(client)
            return
        upstream.settimeout(None)
        self._track(client, upstream)
        threading.Thread(target=self._answers, args=(upstream, client), daemon=True).start()
        try:
            while not self._closed.is_set():
                data = client.recv(65536)
                if not data:
                    break
                mode = self.mode
                if mode != "pass":
                    self.faults[mode] += 1
                if mode == "reset":
                    _reset(client)
                    break
                if mode == "blackhole":
                    self._closed.wait(120)
                    break
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            _shut(upstream)

    def _answers(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while not self._closed.is_set():
                data = upstream.recv(65536)
                if not data:
                    break
                mode = self.mode
                if mode == "reset_mid":
                    client.sendall(data[: max(1, len(data) // 2)])
                    _reset(client)
                    break
                if mode == "slow":
                    for i in range(0, len(data), self.slow_bytes):
                        client.sendall(data[i:i + self.slow_bytes])
                        time.sleep(self.slow_delay_s)
                    continue
                client.sendall(data)
        except OSError:
            pass
        finally:
            _shut(client)
