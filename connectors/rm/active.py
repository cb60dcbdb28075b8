"""Which ResourceManager is active, as the RMs' own election in ZooKeeper says.

With automatic failover (the embedded ``ActiveStandbyElector``), the active RM
holds the ephemeral znode
``<yarn.resourcemanager.ha.automatic-failover.zk-base-path>/<cluster-id>/ActiveStandbyElectorLock``
(base path ``/yarn-leader-election`` by default). Its content is the protobuf
``ActiveRMInfoProto`` (yarn_server_resourcemanager_service_protos.proto:
``optional string clusterId = 1; optional string rmId = 2;``), decoded here
with a few lines of wire-format reading instead of the Java classes. The
persistent ``ActiveBreadCrumb`` beside it names the *last* active RM (kept for
fencing), so it is not read. The Curator-based elector
(``yarn.resourcemanager.ha.curator-leader-elector.enabled``) is not covered.

:class:`ZooKeeperRMClient` is the RM client of ``rm.discovery: zookeeper``: it
resolves the active RM from the lock (one ZooKeeper read, one
``/cluster/info`` to confirm), and probes every URL when ZooKeeper cannot say.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import NoNodeError

from yarn_advisor.connectors.errors import (
    ConnectorError,
    ParseError,
    StandbyError,
    UnavailableError,
    redact_url,
)
from yarn_advisor.connectors.http import HttpClient
from yarn_advisor.connectors.rm.client import BASE, RMClient
from yarn_advisor.connectors.zookeeper.client import ZooKeeperConfig, connect, zk_errors

log = logging.getLogger(__name__)

DEFAULT_BASE_PATH = "/yarn-leader-election"
LOCK_NAME = "ActiveStandbyElectorLock"


@dataclass(frozen=True)
class ActiveRMInfo:
    """The content of the RM election lock: the cluster and the active RM's id."""

    cluster_id: str
    rm_id: str


def lock_path(cluster_id: str, base_path: str = DEFAULT_BASE_PATH) -> str:
    return f"{base_path.rstrip('/')}/{cluster_id}/{LOCK_NAME}"


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ParseError("ActiveRMInfoProto: truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def parse_active_rm_info(data: bytes) -> ActiveRMInfo:
    """Decode ``ActiveRMInfoProto`` bytes (unknown fields are skipped, as protobuf does)."""
    fields: dict[int, str] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise ParseError("ActiveRMInfoProto: truncated field")
            if number in (1, 2):
                try:
                    fields[number] = data[pos:pos + size].decode("utf-8")
                except UnicodeDecodeError:
                    raise ParseError(f"ActiveRMInfoProto: field {number} is not UTF-8") from None
            pos += size
        else:
            raise ParseError(f"ActiveRMInfoProto: unsupported wire type {wire}")
        if pos > len(data):
            raise ParseError("ActiveRMInfoProto: truncated field")
    if not fields.get(2):
        raise ParseError("ActiveRMInfoProto without an rmId")
    return ActiveRMInfo(cluster_id=fields.get(1, ""), rm_id=fields[2])


def read_active_rm(client: Any, cluster_id: str,
                   base_path: str = DEFAULT_BASE_PATH) -> ActiveRMInfo:
    """Read the lock on a started kazoo client; :class:`StandbyError` if no RM holds it."""
    path = lock_path(cluster_id, base_path)
    with zk_errors(f"reading {path}"):
        try:
            data, _ = client.get(path)
        except NoNodeError:
            raise StandbyError(f"no ResourceManager of cluster {cluster_id!r} is active "
                               f"({path} does not exist)") from None
    info = parse_active_rm_info(data)
    if info.cluster_id and info.cluster_id != cluster_id:
        raise ParseError(f"{path} names cluster {info.cluster_id!r}, not {cluster_id!r}")
    return info


def active_rm_url(client: Any, cluster_id: str, rm_urls: Mapping[str, str],
                  base_path: str = DEFAULT_BASE_PATH) -> str:
    """The web URL of the active RM, from its id and the ``rm id -> URL`` map
    (``yarn.resourcemanager.webapp.address.<rm-id>``)."""
    info = read_active_rm(client, cluster_id, base_path)
    try:
        return rm_urls[info.rm_id]
    except KeyError:
        raise StandbyError(f"the active ResourceManager is {info.rm_id!r}, which has no "
                           f"configured URL (known: {sorted(rm_urls)})") from None


class ZooKeeperRMClient(RMClient):
    """An :class:`RMClient` that asks the RMs' own election which RM is active
    instead of probing every URL in turn.

    ZooKeeper unreachable, no lock, a garbled lock, an rm id without a URL, or
    an RM that does not confirm it is ACTIVE: it logs the reason in one line
    and probes every URL as :class:`RMClient` does. The ZooKeeper session is
    opened in the background on first use and waited for at most
    ``connect_wait_s``, so a ZooKeeper that is down costs a cycle no more.
    """

    def __init__(self, http: HttpClient, urls: Sequence[str], rm_ids: Mapping[str, str],
                 cluster_id: str, zookeeper: ZooKeeperConfig,
                 base_path: str = DEFAULT_BASE_PATH, connect_wait_s: float = 3.0) -> None:
        super().__init__(http, urls)
        self.rm_ids = {rm_id: url.rstrip("/") for rm_id, url in rm_ids.items()}
        self.cluster_id, self.base_path, self.zookeeper = cluster_id, base_path, zookeeper
        self.connect_wait_s = min(connect_wait_s, zookeeper.connect_timeout_s)
        self.discovered = 0  # resolutions the lock answered (confirmed by the RM)
        self.fallbacks = 0  # resolutions that had to probe
        self.last_reason = ""  # why the last fallback probed
        self._client: Any = None
        self._lock = threading.Lock()

    def resolve(self) -> tuple[str, Any]:
        try:
            url, body = self._from_lock()
        except ConnectorError as exc:
            self._fell_back(str(exc))
        except (KeyError, TypeError, AttributeError) as exc:
            self._fell_back(f"unexpected /cluster/info body ({exc!r})")
        else:
            self._active = url
            self.discovered += 1
            return url, body
        return super().resolve()

    def _from_lock(self) -> tuple[str, Any]:
        url = active_rm_url(self._zk(), self.cluster_id, self.rm_ids, self.base_path)
        body = self.http.get_json(f"{url}{BASE}/info")
        state = str(body["clusterInfo"].get("haState", "ACTIVE"))
        if state != "ACTIVE":
            raise StandbyError(f"the lock names {redact_url(url)}, which says {state}")
        return url, body

    def _fell_back(self, reason: str) -> None:
        reason = " ".join(reason.split())  # one line, whatever the error said
        self.fallbacks += 1
        level = logging.WARNING if reason != self.last_reason else logging.DEBUG
        log.log(level, "active RM not found through ZooKeeper (%s); probing every RM", reason)
        self.last_reason = reason

    def _zk(self) -> Any:
        """The started kazoo client; UnavailableError while it is not connected."""
        with self._lock:
            if self._client is None:
                client = connect(self.zookeeper)
                with zk_errors(f"connecting to ZooKeeper at {self.zookeeper.hosts}"):
                    started = client.start_async()
                self._client = client
                started.wait(self.connect_wait_s)
            client = self._client
        if not client.connected:
            raise UnavailableError(f"no ZooKeeper session with {self.zookeeper.hosts} "
                                   f"(state {client.state})")
        return client

    def close(self) -> None:
        """End the ZooKeeper session (the RM client stays usable: it probes)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.stop()
            client.close()
