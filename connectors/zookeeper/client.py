"""The ZooKeeper client side shared by the HA and RM-discovery connectors.

:class:`ZooKeeperConfig` (where and how to connect), :func:`connect` (a kazoo
client with auth, ACLs and bounded reconnects) and :func:`zk_errors`, the one
boundary where kazoo's exceptions become :mod:`~yarn_advisor.connectors.errors`
types. Public names are re-exported by :mod:`yarn_advisor.connectors.zookeeper.election`.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    OperationTimeoutError,
    SessionExpiredError,
    ZookeeperError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry
from kazoo.security import make_acl, make_digest_acl

from yarn_advisor.connectors.errors import (
    ConnectorError,
    TimeoutError_,
    UnavailableError,
    ZooKeeperAuthError,
)
from yarn_advisor.connectors.zookeeper.state import DEFAULT_CHUNK_SIZE


@dataclass(frozen=True)
class ZooKeeperConfig:
    """Where and how the advisor meets its peer in ZooKeeper.

    ``hosts`` is a connect string (``zk1:2181,zk2:2181``); ``path`` defaults to
    ``/yarn-advisor/<cluster_name>``. ``digest`` (``user:password``)
    authenticates and makes every znode we create readable and writable by
    that user only. ``sasl`` is passed to kazoo as ``sasl_options`` (for
    Kerberos: ``{"mechanism": "GSSAPI", "service": "zookeeper", "principal":
    ...}``; needs the ``pure-sasl`` and ``gssapi`` packages, the ``kerberos``
    extra); our znodes then get the ACL ``sasl:<username or principal>``.
    """

    hosts: str
    cluster_name: str = "default"
    path: str = ""
    session_timeout_s: float = 10.0
    connect_timeout_s: float = 15.0
    digest: str = ""
    sasl: Mapping[str, str] | None = None
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    chunk_size_bytes: int = DEFAULT_CHUNK_SIZE

    def __post_init__(self) -> None:
        problems = []
        if not self.hosts.strip():
            problems.append("hosts: empty connect string")
        if self.path and (not self.path.startswith("/") or self.path.endswith("/")):
            problems.append(f"path: {self.path!r} must be absolute, without a trailing /")
        if not 0.4 <= self.session_timeout_s <= 600:
            problems.append(f"session_timeout_s: {self.session_timeout_s} not in [0.4, 600]")
        if self.connect_timeout_s <= 0:
            problems.append("connect_timeout_s: must be > 0")
        if self.digest and ":" not in self.digest:
            problems.append("digest: expected user:password")
        if not 1024 <= self.chunk_size_bytes <= 1_000_000:
            problems.append("chunk_size_bytes: not in [1024, 1000000] (jute.maxbuffer)")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def base_path(self) -> str:
        return self.path or f"/yarn-advisor/{self.cluster_name}"

    @property
    def election_path(self) -> str:
        return f"{self.base_path}/leader"


def connect(config: ZooKeeperConfig) -> KazooClient:
    """A kazoo client for ``config`` (not started): auth, ACLs, bounded reconnects."""
    auth_data, acl = None, None
    if config.digest:
        user, password = config.digest.split(":", 1)
        auth_data = [("digest", config.digest)]
        acl = [make_digest_acl(user, password, all=True)]
    elif config.sasl:
        sasl_id = config.sasl.get("username") or config.sasl.get("principal")
        acl = [make_acl("sasl", sasl_id, all=True)] if sasl_id else None
    return KazooClient(
        hosts=config.hosts,
        timeout=config.session_timeout_s,
        # reconnect quickly once a server is back (kazoo's default backoff grows to an hour)
        connection_retry=KazooRetry(max_tries=-1, delay=0.05, backoff=2, max_delay=1.0,
                                    max_jitter=0.1),
        auth_data=auth_data,
        default_acl=acl,
        sasl_options=dict(config.sasl) if config.sasl else None,
        read_only=False,
    )


@contextmanager
def zk_errors(what: str) -> Iterator[None]:
    """The one boundary where kazoo's exceptions become the connector errors."""
    try:
        yield
    except ConnectorError:
        raise
    except (NoAuthError, AuthFailedError) as exc:
        raise ZooKeeperAuthError(f"{what}: ZooKeeper denied access ({type(exc).__name__}): "
                                 "check the digest/SASL credentials and the znode ACLs") from None
    except (KazooTimeoutError, OperationTimeoutError) as exc:
        raise TimeoutError_(f"{what}: ZooKeeper did not answer in time ({exc})") from None
    except SessionExpiredError:
        raise UnavailableError(f"{what}: ZooKeeper session expired") from None
    except ConnectionLoss:
        raise UnavailableError(f"{what}: connection to ZooKeeper lost") from None
    except (ZookeeperError, KazooException) as exc:
        raise ConnectorError(f"{what}: ZooKeeper error {type(exc).__name__}: {exc}") from None
