"""The real RM's write levers: per kind, one read and one send over its REST API.

:class:`RMLevers` implements ``advisor.act.writer.RMLevers``; the one
read-before-write over it (read, nothing sent if the RM holds the value,
journal, one write, read back) is ``advisor.act.writer.Writer``. A send is
exactly one request (no HTTP retries: a write is never repeated blindly).

Writes carry the CSRF header and the user (:class:`~yarn_advisor.connectors.http.HttpClient`)
and never follow redirects: a 307 means the RM we follow turned standby, so it
raises :class:`~yarn_advisor.connectors.errors.StandbyError`. Values are the
recommendation kinds' payloads (:mod:`yarn_advisor.advisor.model.payloads`);
a value of the wrong type for its kind is a ValueError before anything is sent.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode
from xml.sax.saxutils import escape

from yarn_advisor.advisor.model import mapping_rules as mr
from yarn_advisor.advisor.model.jsonvalue import JsonDict, JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    FINAL_APP_STATES,
    SIGNALS,
    AppState,
    ClusterLabels,
    ConfUpdate,
    ContainerSignal,
    ContainerStatus,
    MappingConf,
    MappingRules,
    NodeLabels,
    NodeResource,
    Payload,
    Priority,
    Queue,
    conf_str,
)
from yarn_advisor.connectors._json import as_int, as_list, as_resources
from yarn_advisor.connectors.errors import (
    HTTPStatusError,
    ParseError,
    StandbyError,
    redact_url,
)
from yarn_advisor.connectors.lean_json import decode_json
from yarn_advisor.connectors.rm.client import BASE, RMClient

SCHEDULER = "scheduler"  # target of global scheduler-conf updates


class RMLevers:
    """The RM's write levers: ``read`` and ``send`` one kind on one target."""

    def __init__(self, rm: RMClient, overcommit_timeout_ms: int = -1,
                 kill_wait_s: float = 30.0) -> None:
        self.rm = rm
        self.overcommit_timeout_ms = overcommit_timeout_ms
        self.kill_wait_s = kill_wait_s

    def ensure_active(self) -> None:
        """Raise StandbyError / UnavailableError unless an active RM answers now."""
        self.rm.cluster_info()

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        """The target's current value in the lever's shape (never writes)."""
        return lever(kind).read(self, target, value)

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        """One write of ``value``; the RM's answer ``{status, body}``."""
        return lever(kind).send(self, target, value)

    # --- HTTP ---------------------------------------------------------------
    def request(self, method: str, path: str, *, json_body: JsonValue = None,
                xml: str | None = None, params: Mapping[str, str] | None = None) -> JsonDict:
        """One write to the active RM; returns ``{status, body}`` of its answer."""
        url = f"{self.rm.active_url}{BASE}{path}"
        headers = {"Content-Type": "application/xml"} if xml is not None else None
        resp = self.rm.http.request(method, url, params=params, data=xml, json_body=json_body,
                                    headers=headers, idempotent=False)
        if 300 <= resp.status_code < 400:
            raise StandbyError(f"{method} {redact_url(url)}: {resp.status_code} "
                               f"(the RM is not active): {resp.text[:200]}")
        text = resp.text.strip()
        body: JsonValue = text[:2000]
        if text[:1] in ("{", "["):
            with contextlib.suppress(ParseError):
                body = decode_json(text, url)
        return {"status": resp.status_code, "body": body}

    def get(self, path: str) -> dict[str, Any]:
        body = self.rm.get(f"{BASE}{path}")
        if not isinstance(body, dict):
            raise ParseError(f"{path}: expected a JSON object, got {type(body).__name__}")
        return body


@dataclass(frozen=True)
class Lever:
    """One kind's read and send (each checks its value's type first)."""

    read: Callable[[RMLevers, str, Payload], Payload | None]
    send: Callable[[RMLevers, str, Payload], JsonValue]


P = TypeVar("P", Priority, Queue, ConfUpdate, NodeLabels, NodeResource, ContainerSignal,
            AppState, ClusterLabels, MappingRules, MappingConf)


def expect(value: Payload, cls: type[P]) -> P:
    """``value`` as ``cls``; ValueError (nothing sent) when it is another kind's."""
    if not isinstance(value, cls):
        raise ValueError(f"expected a {cls.__name__}, got {type(value).__name__}")
    return value


# --- reads ------------------------------------------------------------------
def _app_field(w: RMLevers, app_id: str, field: str) -> Any:
    return w.get(f"/apps/{app_id}/{field}").get(field)


def _node(w: RMLevers, node_id: str) -> dict[str, Any]:
    node = w.get(f"/nodes/{node_id}").get("node")
    if not isinstance(node, dict):
        raise ParseError(f"/nodes/{node_id}: no node object")
    return node


def _read_priority(w: RMLevers, app_id: str, _: Payload) -> Payload:
    return Priority(as_int(_app_field(w, app_id, "priority")))


def _read_queue(w: RMLevers, app_id: str, _: Payload) -> Payload:
    return Queue(str(_app_field(w, app_id, "queue")))


def _read_app_state(w: RMLevers, app_id: str, _: Payload) -> Payload:
    return AppState(str(_app_field(w, app_id, "state")))


def _read_labels(w: RMLevers, node_id: str, _: Payload) -> Payload:
    labels = _node(w, node_id).get("nodeLabels") or []
    return NodeLabels(tuple(sorted([labels] if isinstance(labels, str) else labels)))


def _read_resource(w: RMLevers, node_id: str, _: Payload) -> Payload:
    return node_total(w, node_id)


def node_total(w: RMLevers, node_id: str) -> NodeResource:
    """A node's total schedulable resource."""
    node = _node(w, node_id)
    total = as_resources(node.get("totalResource"))
    if total.memory_mb == 0:  # versions without totalResource
        mem = as_int(node.get("usedMemoryMB")) + as_int(node.get("availMemoryMB"))
        cpu = as_int(node.get("usedVirtualCores")) + as_int(node.get("availableVirtualCores"))
        return NodeResource(mem, cpu)
    return NodeResource(total.memory_mb, total.vcores)


def scheduler_conf(w: RMLevers) -> dict[str, str]:
    body = w.get("/scheduler-conf")
    return {str(p.get("name")): str(p.get("value", ""))
            for p in as_list(body.get("property"), "property", "/scheduler-conf")}


def conf_key(target: str, key: str) -> str:
    """Full property name of ``key`` for a queue target (or as is, for 'scheduler')."""
    if target == SCHEDULER:
        return key
    path = target if target.startswith("root") else f"root.{target}"
    return f"yarn.scheduler.capacity.{path}.{key}"


def _read_conf(w: RMLevers, target: str, value: Payload) -> Payload:
    conf = scheduler_conf(w)
    return ConfUpdate.of({k: conf.get(conf_key(target, k))
                          for k, _ in expect(value, ConfUpdate).items})


def _read_mapping(w: RMLevers, _t: str, _v: Payload) -> Payload:
    conf = scheduler_conf(w)
    return MappingConf(conf.get(mr.FORMAT_KEY), conf.get(mr.JSON_KEY))


def cluster_labels(w: RMLevers) -> list[str]:
    body = w.get("/get-node-labels")
    items = as_list(body.get("nodeLabelInfo"), "nodeLabelInfo", "/get-node-labels")
    return sorted(str(i.get("name")) for i in items)


def _read_cluster_labels(w: RMLevers, _t: str, _v: Payload) -> Payload:
    return ClusterLabels(tuple(cluster_labels(w)))


def container_ids(container_id: str) -> tuple[str, str]:
    """(application id, attempt id) of a container id (with or without epoch)."""
    parts = container_id.split("_")
    if parts[:1] != ["container"] or len(parts) not in (5, 6):
        raise ValueError(f"not a container id: {container_id!r}")
    ts, seq, attempt = parts[-4], parts[-3], parts[-2]
    return f"application_{ts}_{seq}", f"appattempt_{ts}_{seq}_{int(attempt):06d}"


def _read_container(w: RMLevers, cid: str, _: Payload) -> Payload | None:
    app, attempt = container_ids(cid)
    try:
        body = w.get(f"/apps/{app}/appattempts/{attempt}/containers/{cid}")
    except HTTPStatusError as exc:
        if exc.status == 404:
            return None
        raise
    return ContainerStatus(str(body.get("containerState", "")), str(body.get("nodeId", "")))


# --- sends ------------------------------------------------------------------
def _conf_xml(target: str, value: ConfUpdate) -> str:
    entries = "".join(
        f"<entry><key>{escape(k)}</key>"
        + ("" if v is None else f"<value>{escape(conf_str(v))}</value>") + "</entry>"
        for k, v in value.items)
    if target == SCHEDULER:
        return f"<sched-conf><global-updates>{entries}</global-updates></sched-conf>"
    path = target if target.startswith("root") else f"root.{target}"
    return (f"<sched-conf><update-queue><queue-name>{escape(path)}</queue-name>"
            f"<params>{entries}</params></update-queue></sched-conf>")


def mapping_update(conf: Mapping[str, str], value: Payload) -> ConfUpdate:
    """The global scheduler-conf update that writes ``value`` over ``conf``: the
    advisor's block merged first into the operator's JSON rules, or (rollback) the two
    settings as they were. ValueError (nothing sent) when the operator's rules are
    where merging would drop them."""
    if isinstance(value, MappingConf):
        return ConfUpdate.of({mr.FORMAT_KEY: value.format, mr.JSON_KEY: value.json})
    rules = expect(value, MappingRules)
    why = mr.blocked_by(dict(conf))
    if why:
        raise ValueError(why)
    return ConfUpdate.of({mr.FORMAT_KEY: "json", mr.JSON_KEY: mr.merged(
        conf.get(mr.JSON_KEY), [r.rm_json() for r in rules.rules])})


def _send_mapping(w: RMLevers, _t: str, value: Payload) -> JsonValue:
    return w.request("PUT", "/scheduler-conf",
                     xml=_conf_xml(SCHEDULER, mapping_update(scheduler_conf(w), value)))


def _send_priority(w: RMLevers, app_id: str, value: Payload) -> JsonValue:
    return w.request("PUT", f"/apps/{app_id}/priority",
                     json_body={"priority": expect(value, Priority).value})


def _send_queue(w: RMLevers, app_id: str, value: Payload) -> JsonValue:
    return w.request("PUT", f"/apps/{app_id}/queue", json_body={"queue": expect(value, Queue).path})


def _send_conf(w: RMLevers, target: str, value: Payload) -> JsonValue:
    return w.request("PUT", "/scheduler-conf", xml=_conf_xml(target, expect(value, ConfUpdate)))


def _send_labels(w: RMLevers, node_id: str, value: Payload) -> JsonValue:
    labels = sorted(expect(value, NodeLabels).labels)
    if len(labels) > 1:
        raise ValueError("a node carries at most one partition label")
    missing = [x for x in labels if x not in cluster_labels(w)]
    if missing:  # non-exclusive: other apps may still use the node's idle resources
        w.request("POST", "/add-node-labels", json_body={
            "nodeLabelInfo": [{"name": x, "exclusivity": "false"} for x in missing]})
    answer = w.request("POST", f"/nodes/{node_id}/replace-labels",
                       params={"labels": labels[0]} if labels else None)
    return {**answer, "added_cluster_labels": list(missing)}


def _send_resource(w: RMLevers, node_id: str, value: Payload) -> JsonValue:
    want = expect(value, NodeResource)
    now = node_total(w, node_id) if want.memory_mb is None or want.vcores is None else want
    timeout = want.overcommit_timeout_ms
    body: JsonValue = {
        "resource": {"memory": want.memory_mb if want.memory_mb is not None else now.memory_mb,
                     "vCores": want.vcores if want.vcores is not None else now.vcores},
        "overCommitTimeout": w.overcommit_timeout_ms if timeout is None else timeout}
    return w.request("POST", f"/nodes/{node_id}/resource", json_body=body)


def _send_signal(w: RMLevers, cid: str, value: Payload) -> JsonValue:
    signal = expect(value, ContainerSignal).signal
    if signal not in SIGNALS:
        raise ValueError(f"unknown container signal {signal!r}")
    return w.request("POST", f"/containers/{cid}/signal/{signal}")


def _send_kill(w: RMLevers, app_id: str, value: Payload) -> JsonValue:
    expect(value, AppState)
    answer = w.request("PUT", f"/apps/{app_id}/state", json_body={"state": "KILLED"})
    deadline = time.monotonic() + w.kill_wait_s
    while answer["status"] == 202 and time.monotonic() < deadline:
        time.sleep(0.5)
        if _app_field(w, app_id, "state") in FINAL_APP_STATES:
            break
    return answer


def _send_add_labels(w: RMLevers, _t: str, value: Payload) -> JsonValue:
    return w.request("POST", "/add-node-labels", json_body={"nodeLabelInfo": [
        {"name": x, "exclusivity": "true"} for x in expect(value, ClusterLabels).labels]})


def _send_remove_labels(w: RMLevers, _t: str, value: Payload) -> JsonValue:
    labels = expect(value, ClusterLabels).labels
    return w.request("POST", "/remove-node-labels?" + urlencode([("labels", x) for x in labels]))


LEVERS: dict[Kind, Lever] = {
    Kind.SET_APP_PRIORITY: Lever(_read_priority, _send_priority),
    Kind.MOVE_APP_QUEUE: Lever(_read_queue, _send_queue),
    Kind.UPDATE_SCHEDULER_CONF: Lever(_read_conf, _send_conf),
    Kind.REPLACE_NODE_LABELS: Lever(_read_labels, _send_labels),
    Kind.UPDATE_NODE_RESOURCE: Lever(_read_resource, _send_resource),
    Kind.SIGNAL_CONTAINER: Lever(_read_container, _send_signal),
    Kind.KILL_APP: Lever(_read_app_state, _send_kill),
    Kind.ADD_CLUSTER_LABELS: Lever(_read_cluster_labels, _send_add_labels),
    Kind.REMOVE_CLUSTER_LABELS: Lever(_read_cluster_labels, _send_remove_labels),
    Kind.SET_MAPPING_RULES: Lever(_read_mapping, _send_mapping),
}


def lever(kind: Kind) -> Lever:
    """The RM lever of ``kind`` (ValueError for an advisory kind, which has none)."""
    try:
        return LEVERS[kind]
    except KeyError:
        raise ValueError(f"no RM lever for kind {kind!r}") from None
