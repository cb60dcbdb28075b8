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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import NoNodeError

from yarn_advisor.connectors.errors import ParseError, StandbyError
from yarn_advisor.connectors.zookeeper_client import zk_errors

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
