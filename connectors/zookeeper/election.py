"""ZooKeeper for two advisors and one writer: leader election, session safety, state.

Operators run two copies of the advisor against one RM; only the leader may
write to the RM, and a failover must lose nothing. This module holds the
ZooKeeper side (kazoo only): :class:`ZooKeeperConfig`, :func:`connect`, the
error boundary :func:`zk_errors` (these three live in ``zookeeper_client.py``),
and :class:`ZooKeeperHA`, which the daemon drives::

    ha = ZooKeeperHA(config); ha.start()
    each cycle:  if ha.needs_reload: restore(ha.load())
                 act only if ha.may_write()   (checked again before each RM write)
                 ha.save(name, data) for each changed state, after learning
    shutdown:    ha.stop()   (releases leadership at once)

Election uses kazoo's ``Lock`` recipe (what kazoo's ``Election`` wraps):
contenders queue as ephemeral sequential znodes under ``<path>/leader``; the
lowest holds the lock and each other one watches only its predecessor. It
needs no clocks (unlike a lease) and hands over as soon as the holder's znode
goes: at once on ``stop()``, after the session timeout when the holder died.
``Election.run(func)`` holds leadership for one blocking call; the daemon
instead asks each cycle, so the lock is held by a background thread here.

Safety: ``may_write()`` is True only while the session is CONNECTED, we hold
the lock, and the state was re-read since the last gap. kazoo reports
SUSPENDED when no answer came for 2/3 of the session timeout, while the server
expires the session (and hands the lock over) only after the full timeout,
so the old leader stops writing before a new one can start. State writes are
fenced on the leader's lock znode (:class:`NotLeaderError` once it is gone).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import CancelledError, KazooException
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType, KeeperState, WatchedEvent

from yarn_advisor.connectors.errors import (
    ConnectorError,
    NotLeaderError,
    ParseError,
    UnavailableError,
    ZooKeeperAuthError,
)
from yarn_advisor.connectors.zookeeper.client import ZooKeeperConfig, connect, zk_errors
from yarn_advisor.connectors.zookeeper.state import StateStore

__all__ = ["Role", "ZooKeeperConfig", "ZooKeeperHA", "connect", "zk_errors"]

log = logging.getLogger(__name__)

Role = Literal["stopped", "connecting", "follower", "leader", "suspended", "lost"]


class ZooKeeperHA:
    """Leadership, session safety and shared state for one advisor process.

    Thread-safe: kazoo's threads only set flags under ``_mutex``; the daemon
    reads them. ``history`` keeps ``(monotonic time, role)`` transitions.
    """

    def __init__(self, config: ZooKeeperConfig, *,
                 client_factory: Callable[[ZooKeeperConfig], KazooClient] = connect,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._client_factory = client_factory
        self._clock = clock
        self._mutex = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._client: KazooClient | None = None
        self._thread: threading.Thread | None = None
        self._lock: Any = None  # the kazoo Lock currently contending or held
        self._state: str = KazooState.LOST
        self._leader_node: str | None = None  # our lock znode while we lead
        self._verify = False  # re-check (and re-watch) our lock znode
        self._epoch = 0  # bumped whenever leadership or the session ends
        self._needs_reload = True
        self._ever_connected = False
        self.load_errors: dict[str, str] = {}
        self._versions: dict[str, int] = {}
        self._saved: dict[str, bytes] = {}
        self.history: deque[tuple[float, Role]] = deque(maxlen=200)
        self._record_locked()
        self.store: StateStore | None = None

    # --- lifecycle -----------------------------------------------------
    def start(self, *, block: bool = True) -> None:
        """Connect and start contending.

        ``block=True`` raises a connector error if ZooKeeper cannot be reached
        within ``connect_timeout_s`` or refuses our credentials. ``block=False``
        returns at once and keeps connecting in the background (a daemon that
        starts while ZooKeeper is down observes until it is up; ``role`` says
        ``connecting``, ``may_write()`` is False).
        """
        client = self._client_factory(self.config)
        client.add_listener(self._on_session)
        if not block:
            client.start_async()
            self._begin(client)
            return
        try:
            with zk_errors(f"connecting to ZooKeeper at {self.config.hosts}"):
                client.start(timeout=self.config.connect_timeout_s)
                client.ensure_path(self.config.election_path)
        except ConnectorError:
            auth_failed = client.client_state == KeeperState.AUTH_FAILED
            client.stop()
            client.close()
            if auth_failed:
                raise ZooKeeperAuthError(
                    f"ZooKeeper at {self.config.hosts} refused our SASL credentials") from None
            raise
        self._begin(client)

    def _begin(self, client: KazooClient) -> None:
        self._client = client
        self.store = StateStore(client, self.config.base_path,
                                chunk_size=self.config.chunk_size_bytes, guard=zk_errors)
        self._thread = threading.Thread(target=self._contend, name="zk-leader-election",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Give up leadership at once (the peer takes over without waiting for
        a session timeout) and close the session. Idempotent."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._wake.set()
        lock = self._lock
        if lock is not None:
            lock.cancel()
        if self._thread is not None:
            self._thread.join(timeout_s)
        client = self._client
        if client is not None:
            with self._mutex:
                self._leader_node = None
                self._epoch += 1
            try:
                client.stop()  # closes the session: our ephemeral lock znode goes with it
            finally:
                client.close()
        with self._mutex:
            self._state = KazooState.LOST
            self._record_locked()

    @property
    def client(self) -> KazooClient:
        """The started kazoo client (for RM discovery on the same session)."""
        return self._require_client()

    # --- what the daemon asks ------------------------------------------
    @property
    def role(self) -> Role:
        with self._mutex:
            return self._role_locked()

    @property
    def is_leader(self) -> bool:
        """True only while the session is CONNECTED and we hold the lock."""
        with self._mutex:
            return self._state == KazooState.CONNECTED and self._leader_node is not None

    @property
    def needs_reload(self) -> bool:
        """True until :meth:`load` ran after start, a reconnect or a new leadership."""
        with self._mutex:
            return self._needs_reload

    def may_write(self) -> bool:
        """May this advisor act on the RM now? (leader, connected, state fresh)."""
        with self._mutex:
            return (not self._stopping.is_set() and self._state == KazooState.CONNECTED
                    and self._leader_node is not None and not self._needs_reload)

    def confirm_leadership(self, timeout_s: float = 1.0) -> bool:
        """``may_write()`` confirmed by one round trip: our lock znode still exists
        and belongs to our session. For the actuator, right before each RM write:
        a process that was frozen (a VM or GC pause) past its session timeout
        wakes with ``may_write()`` still True until kazoo notices the dead
        connection; this check fails at once then."""
        client = self._require_client()
        with self._mutex:
            node = self._leader_node
        session = client.client_id
        if node is None or session is None or not self.may_write():
            return False
        try:
            stat = client.exists_async(node).get(timeout=timeout_s)
        except (KazooException, KazooTimeoutError):
            return False
        return stat is not None and stat.ephemeralOwner == session[0] and self.may_write()

    def leader_identity(self) -> str | None:
        """Who leads now (the identity of the lowest contender), as ZooKeeper says."""
        client = self._require_client()
        with zk_errors("reading the election"):
            contenders = client.Lock(self.config.election_path).contenders()
        return str(contenders[0]) if contenders else None

    def load(self) -> dict[str, bytes]:
        """Read every saved state (name -> bytes) and clear ``needs_reload``.

        A state that is corrupt or of another format is left out and reported
        in ``load_errors`` (name -> reason): the daemon starts that part fresh,
        and its next ``save`` replaces it. ZooKeeper being unreachable raises
        (``needs_reload`` stays set, so nothing acts on stale state).
        """
        store = self._require_store()
        with self._mutex:
            epoch = self._epoch
        loaded: dict[str, bytes] = {}
        versions: dict[str, int] = {}
        errors: dict[str, str] = {}
        for name in store.names():
            try:
                found = store.get(name)
            except ParseError as exc:
                errors[name] = str(exc)
                head = store.head_version(name)
                if head is not None:
                    versions[name] = head
                log.error("state %r not loaded: %s", name, exc)
                continue
            if found is not None:
                loaded[name], versions[name] = found
        self.load_errors = errors
        with self._mutex:
            self._versions = versions
            self._saved = dict(loaded)
            if self._epoch == epoch and self._state == KazooState.CONNECTED:
                self._needs_reload = False
        return loaded

    def save(self, name: str, data: bytes) -> bool:
        """Save one named state if it changed; fenced on our leadership.

        Returns whether anything was written. A conflict (another writer)
        sets ``needs_reload`` and raises :class:`ConflictError`.
        """
        store = self._require_store()
        with self._mutex:
            fence = self._leader_node
            if fence is None or self._state != KazooState.CONNECTED:
                raise NotLeaderError(f"not saving state {name!r}: not the leader")
            if self._needs_reload:
                raise NotLeaderError(f"not saving state {name!r}: reload the state first")
            if self._saved.get(name) == data:
                return False
            expected = self._versions.get(name)
        try:
            version = store.put(name, data, expected, fence=fence)
        except ConnectorError as exc:
            if exc.reason in ("conflict", "not_leader"):
                with self._mutex:
                    self._needs_reload = True
            raise
        with self._mutex:
            self._versions[name] = version
            self._saved[name] = data
        return True

    # --- kazoo callbacks (never block) ---------------------------------
    def _on_session(self, state: str) -> None:
        with self._mutex:
            self._state = state
            self._ever_connected |= state == KazooState.CONNECTED
            self._epoch += 1  # any load begun before this change is stale
            if state == KazooState.LOST:
                self._leader_node = None
            elif state == KazooState.CONNECTED:
                self._verify = self._leader_node is not None
            self._needs_reload = True
            self._record_locked()
        log.info("ZooKeeper session %s; role %s", state, self.role)
        self._wake.set()

    def _on_lock_node(self, event: WatchedEvent) -> None:
        with self._mutex:
            if event.path != self._leader_node:
                return
            if event.type == EventType.DELETED:
                self._leader_node = None
                self._epoch += 1
                self._needs_reload = True
                self._record_locked()
            else:  # NONE (connection lost, watches reset) or CHANGED: check again
                self._verify = True
        self._wake.set()

    # --- the contender thread ------------------------------------------
    def _contend(self) -> None:
        """Contend, hold while leading, contend again after losing it; until stop()."""
        while not self._stopping.is_set():
            try:
                if self.role not in ("follower", "leader"):
                    self._wake.wait(0.2)
                    self._wake.clear()
                    continue
                if self._acquire():
                    self._hold()
            except CancelledError:
                break
            except (KazooException, KazooTimeoutError) as exc:
                log.warning("leader election: %s: %s; trying again", type(exc).__name__, exc)
                self._stopping.wait(1.0)
        log.info("leader election stopped")

    def _acquire(self) -> bool:
        client = self._require_client()
        self._lock = lock = client.Lock(self.config.election_path, self.config.identity)
        if self._stopping.is_set():
            return False
        got = lock.acquire(blocking=True)  # retries through reconnects; stop() cancels it
        return bool(got) and self._claim(f"{lock.path}/{lock.node}")

    def _claim(self, node: str) -> bool:
        """Lead only if the lock znode exists and belongs to the current session."""
        client = self._require_client()
        with self._mutex:
            epoch = self._epoch
            session = client.client_id
        stat = client.exists(node, watch=self._on_lock_node)
        with self._mutex:
            ours = (stat is not None and session is not None and self._epoch == epoch
                    and stat.ephemeralOwner == session[0]
                    and self._state == KazooState.CONNECTED and not self._stopping.is_set())
            if ours:
                self._leader_node = node
                self._epoch += 1  # a load begun as a follower may predate the last writes
                self._needs_reload = True
                self._verify = False
                self._record_locked()
        if ours:
            log.info("leader now (%s, lock %s)", self.config.identity, node)
        else:
            self._drop_node(node, session)
        return ours

    def _hold(self) -> None:
        client = self._require_client()
        while not self._stopping.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            with self._mutex:
                node, verify, state = self._leader_node, self._verify, self._state
                session = client.client_id
            if node is None:
                return
            if verify and state == KazooState.CONNECTED:
                stat = client.exists(node, watch=self._on_lock_node)
                with self._mutex:
                    if stat is None or session is None or stat.ephemeralOwner != session[0]:
                        self._leader_node = None
                        self._epoch += 1
                        self._needs_reload = True
                        self._record_locked()
                        return
                    self._verify = False

    def _drop_node(self, node: str, session: tuple[int, bytes] | None) -> None:
        client = self._require_client()
        try:
            stat = client.exists(node)
            if stat is not None and session is not None and stat.ephemeralOwner == session[0]:
                client.delete(node)
        except KazooException:
            pass  # gone already, or the session is: the server removes it then

    # --- helpers -------------------------------------------------------
    def _role_locked(self) -> Role:
        if self._stopping.is_set() and self._state == KazooState.LOST:
            return "stopped"
        if self._state == KazooState.SUSPENDED:
            return "suspended"
        if self._state == KazooState.LOST:
            return "lost" if self._ever_connected else "connecting"
        return "leader" if self._leader_node is not None else "follower"

    def _record_locked(self) -> None:
        role = self._role_locked()
        if not self.history or self.history[-1][1] != role:
            self.history.append((self._clock(), role))

    def _require_client(self) -> KazooClient:
        if self._client is None:
            raise UnavailableError("ZooKeeperHA is not started")
        return self._client

    def _require_store(self) -> StateStore:
        if self.store is None:
            raise UnavailableError("ZooKeeperHA is not started")
        return self.store
