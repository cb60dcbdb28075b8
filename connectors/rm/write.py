"""Writes to the active ResourceManager, each one read-before-write.

Every lever reads the target's current value first. If it already equals the
desired value nothing is sent, so repeating a call whose answer was lost is
harmless. Otherwise ``before_send(previous)`` runs (the actuator journals its
intent there, or vetoes by raising), exactly one request is sent (no HTTP
retries: a write is never repeated blindly) and the value is read back.

Writes carry the CSRF header and the user (:class:`~yarn_advisor.connectors.http.HttpClient`)
and never follow redirects: a 307 means the RM we follow turned standby, so it
raises :class:`~yarn_advisor.connectors.errors.StandbyError`. Values are plain JSON, and
they are the ones the actuator journals (see ``LEVERS``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode
from xml.sax.saxutils import escape

from yarn_advisor.advisor.model.recommendation import Kind
from yarn_advisor.connectors._json import as_int, as_list, as_resources
from yarn_advisor.connectors.errors import (
    ConnectorError,
    HTTPStatusError,
    ParseError,
    StandbyError,
    redact_url,
)
from yarn_advisor.connectors.lean_json import decode_json
from yarn_advisor.connectors.rm.client import BASE, RMClient

FINAL_APP_STATES = frozenset({"FINISHED", "FAILED", "KILLED"})
SIGNALS = frozenset({"OUTPUT_THREAD_DUMP", "GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"})
SCHEDULER = "scheduler"  # target of global scheduler-conf updates


@dataclass(frozen=True)
class WriteOutcome:
    """What one lever call did: ``status`` is ``applied`` or ``noop``."""

    kind: Kind
    target: str
    previous: Any
    status: str
    answer: Any = None
    observed: Any = None


@dataclass(frozen=True)
class Lever:
    read: Callable[[RMWriter, str, Any], Any]
    send: Callable[[RMWriter, str, Any], Any]
    same: Callable[[Any, Any], bool]


class RMWriter:
    """The RM's write levers, behind one ``apply(kind, target, value)``."""

    def __init__(self, rm: RMClient, overcommit_timeout_ms: int = -1,
                 kill_wait_s: float = 30.0) -> None:
        self.rm = rm
        self.overcommit_timeout_ms = overcommit_timeout_ms
        self.kill_wait_s = kill_wait_s

    def ensure_active(self) -> None:
        """Raise StandbyError / UnavailableError unless an active RM answers now."""
        self.rm.cluster_info()

    def read(self, kind: Kind, target: str, value: Any = None) -> Any:
        """The target's current value in the lever's shape (never writes)."""
        return lever(kind).read(self, target, value)

    def apply(self, kind: Kind, target: str, value: Any,
              before_send: Callable[[Any], None] = lambda previous: None) -> WriteOutcome:
        """Read, and unless already there: ``before_send``, one write, read back."""
        lv = lever(kind)
        previous = lv.read(self, target, value)
        if lv.same(previous, value):
            return WriteOutcome(kind, target, previous, "noop")
        before_send(previous)
        answer = lv.send(self, target, value)
        try:  # the answer is what counts; a failed read-back only loses the echo
            observed = lv.read(self, target, value)
        except (ConnectorError, ValueError):
            observed = None
        return WriteOutcome(kind, target, previous, "applied", answer, observed)

    # --- HTTP ---------------------------------------------------------------
    def send(self, method: str, path: str, *, json_body: Any = None, xml: str | None = None,
             params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """One write to the active RM; returns ``{status, body}`` of its answer."""
        url = f"{self.rm.active_url}{BASE}{path}"
        headers = {"Content-Type": "application/xml"} if xml is not None else None
        resp = self.rm.http.request(method, url, params=params, data=xml, json_body=json_body,
                                    headers=headers, idempotent=False)
        if 300 <= resp.status_code < 400:
            raise StandbyError(f"{method} {redact_url(url)}: {resp.status_code} "
                               f"(the RM is not active): {resp.text[:200]}")
        text = resp.text.strip()
        body: Any = text[:2000]
        if text[:1] in ("{", "["):
            with contextlib.suppress(ParseError):
                body = decode_json(text, url)
        return {"status": resp.status_code, "body": body}

    def get(self, path: str) -> dict[str, Any]:
        body = self.rm.get(f"{BASE}{path}")
        if not isinstance(body, dict):
            raise ParseError(f"{path}: expected a JSON object, got {type(body).__name__}")
        return body


# --- reads ------------------------------------------------------------------
def _app_field(w: RMWriter, app_id: str, field: str) -> Any:
    return w.get(f"/apps/{app_id}/{field}").get(field)


def _node(w: RMWriter, node_id: str) -> dict[str, Any]:
    node = w.get(f"/nodes/{node_id}").get("node")
    if not isinstance(node, dict):
        raise ParseError(f"/nodes/{node_id}: no node object")
    return node


def _node_labels(w: RMWriter, node_id: str, _: Any = None) -> list[str]:
    labels = _node(w, node_id).get("nodeLabels") or []
    return sorted([labels] if isinstance(labels, str) else labels)


def _node_total(w: RMWriter, node_id: str, _: Any = None) -> dict[str, int]:
    node = _node(w, node_id)
    total = as_resources(node.get("totalResource"))
    if total.memory_mb == 0:  # versions without totalResource
        mem = as_int(node.get("usedMemoryMB")) + as_int(node.get("availMemoryMB"))
        cpu = as_int(node.get("usedVirtualCores")) + as_int(node.get("availableVirtualCores"))
        return {"memory_mb": mem, "vcores": cpu}
    return {"memory_mb": total.memory_mb, "vcores": total.vcores}


def scheduler_conf(w: RMWriter) -> dict[str, str]:
    body = w.get("/scheduler-conf")
    return {str(p.get("name")): str(p.get("value", ""))
            for p in as_list(body.get("property"), "property", "/scheduler-conf")}


def conf_key(target: str, key: str) -> str:
    """Full property name of ``key`` for a queue target (or as is, for 'scheduler')."""
    if target == SCHEDULER:
        return key
    path = target if target.startswith("root") else f"root.{target}"
    return f"yarn.scheduler.capacity.{path}.{key}"


def _conf_read(w: RMWriter, target: str, value: Any) -> dict[str, str | None]:
    conf = scheduler_conf(w)
    return {k: conf.get(conf_key(target, k)) for k in (value or {})}


def cluster_labels(w: RMWriter, _t: str = "", _v: Any = None) -> list[str]:
    body = w.get("/get-node-labels")
    items = as_list(body.get("nodeLabelInfo"), "nodeLabelInfo", "/get-node-labels")
    return sorted(str(i.get("name")) for i in items)


def container_ids(container_id: str) -> tuple[str, str]:
    """(application id, attempt id) of a container id (with or without epoch)."""
    parts = container_id.split("_")
    if parts[:1] != ["container"] or len(parts) not in (5, 6):
        raise ValueError(f"not a container id: {container_id!r}")
    ts, seq, attempt = parts[-4], parts[-3], parts[-2]
    return f"application_{ts}_{seq}", f"appattempt_{ts}_{seq}_{int(attempt):06d}"


def _container(w: RMWriter, cid: str, _: Any = None) -> dict[str, str] | None:
    app, attempt = container_ids(cid)
    try:
        body = w.get(f"/apps/{app}/appattempts/{attempt}/containers/{cid}")
    except HTTPStatusError as exc:
        if exc.status == 404:
            return None
        raise
    return {"state": str(body.get("containerState", "")), "node": str(body.get("nodeId", ""))}


# --- sends ------------------------------------------------------------------
def _conf_xml(target: str, value: Mapping[str, Any]) -> str:
    def entries(items: Mapping[str, Any]) -> str:
        return "".join(
            f"<entry><key>{escape(k)}</key>"
            + ("" if v is None else f"<value>{escape(conf_str(v))}</value>") + "</entry>"
            for k, v in items.items())

    if target == SCHEDULER:
        return f"<sched-conf><global-updates>{entries(value)}</global-updates></sched-conf>"
    path = target if target.startswith("root") else f"root.{target}"
    return (f"<sched-conf><update-queue><queue-name>{escape(path)}</queue-name>"
            f"<params>{entries(value)}</params></update-queue></sched-conf>")


def _send_labels(w: RMWriter, node_id: str, value: Any) -> Any:
    labels = sorted(value)
    if len(labels) > 1:
        raise ValueError("a node carries at most one partition label")
    missing = [x for x in labels if x not in cluster_labels(w)]
    if missing:  # non-exclusive: other apps may still use the node's idle resources
        w.send("POST", "/add-node-labels", json_body={
            "nodeLabelInfo": [{"name": x, "exclusivity": "false"} for x in missing]})
    answer = w.send("POST", f"/nodes/{node_id}/replace-labels",
                    params={"labels": labels[0]} if labels else None)
    return {**answer, "added_cluster_labels": missing}


def _send_resource(w: RMWriter, node_id: str, value: Any) -> Any:
    now = _node_total(w, node_id)
    body = {"resource": {"memory": int(value.get("memory_mb", now["memory_mb"])),
                         "vCores": int(value.get("vcores", now["vcores"]))},
            "overCommitTimeout": int(value.get("overcommit_timeout_ms",
                                               w.overcommit_timeout_ms))}
    return w.send("POST", f"/nodes/{node_id}/resource", json_body=body)


def _send_signal(w: RMWriter, cid: str, value: Any) -> Any:
    if value not in SIGNALS:
        raise ValueError(f"unknown container signal {value!r}")
    return w.send("POST", f"/containers/{cid}/signal/{value}")


def _send_kill(w: RMWriter, app_id: str, value: Any) -> Any:
    answer = w.send("PUT", f"/apps/{app_id}/state", json_body={"state": "KILLED"})
    deadline = time.monotonic() + w.kill_wait_s
    while answer["status"] == 202 and time.monotonic() < deadline:
        time.sleep(0.5)
        if _app_field(w, app_id, "state") in FINAL_APP_STATES:
            break
    return answer


# --- comparisons --------------------------------------------------------------
def conf_str(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def conf_equal(a: Any, b: Any) -> bool:
    """Same scheduler-conf value (``None`` = unset; numbers compared as numbers)."""
    if a is None or b is None:
        return a is None and b is None
    try:
        return float(conf_str(a)) == float(conf_str(b))
    except ValueError:
        return conf_str(a).strip() == conf_str(b).strip()


def same_queue(a: Any, b: Any) -> bool:
    """Same queue: full paths compared whole, otherwise by leaf name."""
    x, y = str(a), str(b)
    if x.startswith("root.") and y.startswith("root."):
        return x == y
    return x.rsplit(".", 1)[-1] == y.rsplit(".", 1)[-1]


def _same_resource(prev: Any, value: Any) -> bool:
    return all(prev.get(k) == int(value[k]) for k in ("memory_mb", "vcores") if k in value)


LEVERS: dict[Kind, Lever] = {
    Kind.SET_APP_PRIORITY: Lever(
        lambda w, t, v: as_int(_app_field(w, t, "priority")),
        lambda w, t, v: w.send("PUT", f"/apps/{t}/priority", json_body={"priority": int(v)}),
        lambda p, v: p == int(v)),
    Kind.MOVE_APP_QUEUE: Lever(
        lambda w, t, v: str(_app_field(w, t, "queue")),
        lambda w, t, v: w.send("PUT", f"/apps/{t}/queue", json_body={"queue": str(v)}),
        same_queue),
    Kind.UPDATE_SCHEDULER_CONF: Lever(
        _conf_read,
        lambda w, t, v: w.send("PUT", "/scheduler-conf", xml=_conf_xml(t, v)),
        lambda p, v: all(conf_equal(p.get(k), x) for k, x in v.items())),
    Kind.REPLACE_NODE_LABELS: Lever(
        _node_labels, _send_labels, lambda p, v: sorted(p) == sorted(v)),
    Kind.UPDATE_NODE_RESOURCE: Lever(_node_total, _send_resource, _same_resource),
    Kind.SIGNAL_CONTAINER: Lever(
        _container, _send_signal, lambda p, v: p is None or p.get("state") != "RUNNING"),
    Kind.KILL_APP: Lever(
        lambda w, t, v: str(_app_field(w, t, "state")), _send_kill,
        lambda p, v: p in FINAL_APP_STATES),
    Kind.ADD_CLUSTER_LABELS: Lever(
        cluster_labels,
        lambda w, t, v: w.send("POST", "/add-node-labels", json_body={
            "nodeLabelInfo": [{"name": x, "exclusivity": "true"} for x in v]}),
        lambda p, v: set(v) <= set(p)),
    Kind.REMOVE_CLUSTER_LABELS: Lever(
        cluster_labels,
        lambda w, t, v: w.send("POST", "/remove-node-labels?" + urlencode([("labels", x)
                                                                            for x in v])),
        lambda p, v: not set(v) & set(p)),
}


def lever(kind: Kind) -> Lever:
    """The RM lever of ``kind`` (ValueError for an advisory kind, which has none)."""
    try:
        return LEVERS[kind]
    except KeyError:
        raise ValueError(f"no RM lever for kind {kind!r}") from None
