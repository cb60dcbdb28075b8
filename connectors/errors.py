"""The errors a connector may raise; every transport failure is mapped here.

Callers (the daemon's sense step) catch :class:`ConnectorError` and skip the
cycle; nothing below it is allowed to escape as a ``requests`` exception::

    ConnectorError
     ├── UnavailableError      connection refused, DNS failure, reset
     │    └── TimeoutError_    connect or read timeout
     ├── StandbyError          the RM is standby, or no RM is active
     ├── HTTPStatusError       a non-2xx answer (status and body kept)
     │    └── AuthError        401 / 403
     ├── ParseError            garbled, truncated or wrongly shaped body
     ├── ConflictError         a compare-and-set lost (ZooKeeper state version)
     │    └── NotLeaderError   a write fenced on leadership this advisor lost
     └── ZooKeeperAuthError    SASL refused, or a ZooKeeper ACL denies us

ZooKeeper (connectors/zookeeper/election.py) maps onto the same tree: no server or no
quorum, a lost connection or an expired session is UnavailableError; a
corrupt or incompatible stored state is ParseError.
"""

from __future__ import annotations

# nothing the advisor logs, journals or serves carries a URL's secret (one pattern, there)
from yarn_advisor.config.secrets import redact_url as redact_url


class ConnectorError(Exception):
    """Base of every error a connector raises."""

    reason = "error"


class UnavailableError(ConnectorError):
    """The server could not be reached (refused, reset, DNS)."""

    reason = "unavailable"


class TimeoutError_(UnavailableError):
    """The server did not answer within the configured timeout."""

    reason = "timeout"


class StandbyError(ConnectorError):
    """The RM answered as a standby, or no configured RM is active."""

    reason = "standby"


class HTTPStatusError(ConnectorError):
    """The server answered with a non-success status."""

    reason = "http_status"

    def __init__(self, status: int, url: str, body: str = "") -> None:
        url = redact_url(url)
        super().__init__(f"HTTP {status} from {url}: {' '.join(body[:200].split())}")
        self.status = status
        self.url = url
        self.body = body


class AuthError(HTTPStatusError):
    """401 or 403: authentication failed or the caller lacks an ACL."""

    reason = "auth"


class ParseError(ConnectorError):
    """The body is not the JSON shape that endpoint returns."""

    reason = "parse"


class ConflictError(ConnectorError):
    """A compare-and-set lost: the stored version is not the one expected."""

    reason = "conflict"


class NotLeaderError(ConflictError):
    """A write fenced on leadership that this advisor no longer holds."""

    reason = "not_leader"


class ZooKeeperAuthError(ConnectorError):
    """ZooKeeper refused our SASL credentials, or an ACL denies this client."""

    reason = "auth"


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message on one line, bounded (some libraries write paragraphs),
    with any URL's user and password hidden."""
    text = redact_url(" ".join(str(exc).split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."
