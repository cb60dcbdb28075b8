"""ResourceManager REST connector: find the active RM, fetch its endpoints.

Fetching and parsing are separate: :class:`RMClient` returns decoded JSON
bodies, and the big collections (nodes, apps, containers) as fetched, for their
parser to decode only what it reads (:mod:`yarn_advisor.connectors.lean_json`).
The pure ``parse_*`` functions (:mod:`yarn_advisor.connectors.rm.parse`, public
as ``connectors.rm.parse_*``) turn them into model objects.

RM HA: given several RM web addresses the client probes
``/ws/v1/cluster/info`` (which a standby answers itself, without redirect)
and follows the one whose ``haState`` is ACTIVE. A 307 from a standby, or a
connection failure, makes it re-resolve once and retry; if no RM is active
it raises :class:`~yarn_advisor.connectors.errors.StandbyError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from yarn_advisor.connectors.errors import (
    AuthError,
    ConnectorError,
    HTTPStatusError,
    ParseError,
    StandbyError,
    UnavailableError,
    redact_url,
)
from yarn_advisor.connectors.http import HttpClient
from yarn_advisor.connectors.lean_json import RawJSON

__all__ = ["RMClient"]

_T = TypeVar("_T")

BASE = "/ws/v1/cluster"
LIVE_APP_STATES = "NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING"
DONE_APP_STATES = "FINISHED,FAILED,KILLED"


class RMClient:
    """Reads (and, through the actuator, writes) one logical RM, HA-aware."""

    def __init__(self, http: HttpClient, urls: Sequence[str]) -> None:
        if not urls:
            raise ValueError("at least one RM address is needed")
        self.http = http
        self.urls = [u.rstrip("/") for u in urls]
        self._active: str | None = None

    @property
    def active_url(self) -> str:
        """The active RM's base URL (resolving it when unknown)."""
        if self._active is None:
            self._active, _ = self.resolve()
        return self._active

    @property
    def followed(self) -> str | None:
        """The RM this client follows now, without probing (None: not known, as after
        a failover it could not resolve); the sensor compares it across a cycle."""
        return self._active

    def resolve(self) -> tuple[str, Any]:
        """Probe every configured RM; return (url, info body) of the active one.

        With none active, the error says why: if every RM failed the same way
        (all standby, all timing out, all garbled) that kind is raised,
        otherwise :class:`UnavailableError`.
        """
        seen: list[str] = []
        kinds: set[type[ConnectorError]] = set()
        for url in self.urls:
            shown = redact_url(url)
            try:
                body = self.http.get_json(f"{url}{BASE}/info")
                state = str(body["clusterInfo"].get("haState", "ACTIVE"))
            except ConnectorError as exc:
                seen.append(f"{shown}: {exc}")
                kinds.add(type(exc))
                continue
            except (KeyError, TypeError, AttributeError) as exc:
                seen.append(f"{shown}: unexpected /cluster/info body ({exc!r})")
                kinds.add(ParseError)
                continue
            if state == "ACTIVE":
                self._active = url
                return url, body
            seen.append(f"{shown}: {state}")
            kinds.add(StandbyError)
        self._active = None
        only = kinds.pop() if len(kinds) == 1 else UnavailableError
        why = "; ".join(seen)
        if only is StandbyError:
            raise StandbyError("no active ResourceManager: " + why)
        if only is AuthError:  # every RM refused our credentials: say so, it is not an outage
            raise AuthError(401, "every ResourceManager", "authentication refused: " + why)
        if issubclass(only, HTTPStatusError):
            only = UnavailableError
        raise only("no active ResourceManager reachable: " + why)

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        """GET and decode a path on the active RM, re-resolving once after a failover."""
        return self._on_active(self.http.get_json, path, params)

    def get_raw(self, path: str, params: Mapping[str, str] | None = None) -> RawJSON:
        """GET a path on the active RM, left for its parse function to decode."""
        return self._on_active(self.http.get_raw, path, params)

    def _on_active(self, read: Callable[[str, Mapping[str, str] | None], _T], path: str,
                   params: Mapping[str, str] | None) -> _T:
        """``read`` the path on the active RM, re-resolving once after a failover."""
        for retry in (False, True):
            url = self.active_url
            try:
                return read(f"{url}{path}", params)
            except HTTPStatusError as exc:
                if exc.status != 307 or retry:
                    raise
            except UnavailableError:
                if retry or len(self.urls) == 1:
                    raise
            self._active = None
        raise AssertionError("unreachable")

    # --- reads (bodies for the parse_* functions; the big collections raw) ---
    def cluster_info(self) -> Any:
        """Info of the RM we follow; re-resolves if it is no longer active."""
        body = self.get(f"{BASE}/info")
        try:
            state = body["clusterInfo"].get("haState", "ACTIVE")
        except (KeyError, TypeError, AttributeError) as exc:
            raise ParseError(f"/cluster/info: unexpected body: {exc}") from exc
        if state != "ACTIVE":
            self._active = None
            _, body = self.resolve()
        return body

    def cluster_metrics(self) -> Any:
        return self.get(f"{BASE}/metrics")

    def scheduler(self) -> Any:
        return self.get(f"{BASE}/scheduler")

    def nodes(self) -> RawJSON:
        return self.get_raw(f"{BASE}/nodes")

    def live_apps(self) -> RawJSON:
        return self.get_raw(f"{BASE}/apps", {"states": LIVE_APP_STATES})

    def finished_apps(self, since_ms: int) -> RawJSON:
        return self.get_raw(
            f"{BASE}/apps", {"states": DONE_APP_STATES, "finishedTimeBegin": str(since_ms)}
        )

    def app_attempts(self, app_id: str) -> Any:
        return self.get(f"{BASE}/apps/{app_id}/appattempts")

    def containers(self, app_id: str, attempt_id: str) -> RawJSON:
        return self.get_raw(f"{BASE}/apps/{app_id}/appattempts/{attempt_id}/containers")

    def scheduler_conf(self) -> Any:
        """The CapacityScheduler's live configuration (mutable store, admin only)."""
        return self.get(f"{BASE}/scheduler-conf")

    def conf(self, name: str) -> Any:
        """One RM configuration property from ``/conf`` (JSON)."""
        return self.get("/conf", {"name": name})

    def jmx(self, query: str) -> Any:
        return self.get("/jmx", {"qry": query})

    def proxy(self, app_id: str, path: str) -> Any:
        """GET through the RM web proxy to an application master."""
        return self.get(f"/proxy/{app_id}{path}")
