"""The simulated RM's write levers: the same kinds, the same payloads, the same refusals.

:class:`SimLevers` implements ``advisor.act.writer.RMLevers`` (``ensure_active``,
``read``, ``send``) for the simulated RM; the read-before-write over it is the
advisor's own ``advisor.act.writer.Writer``, exactly as over the real RM's
levers, so the sidecar mode exercises the real write path: a lever changes
the simulated RM at the current simulated instant (or is refused, after the
intent is journaled, as the real RM answers a bad request), and its value is
read back.

What the RM would refuse is refused the same way, as the exceptions the real
connector raises: an unknown app, node or container is
``HTTPStatusError(404)``; an invalid scheduler configuration, a move to a
queue that cannot take the app, a priority change under a scheduler without
priorities are ``HTTPStatusError(400)``; a standby RM is ``StandbyError``; a
value the lever cannot send (two partition labels on a node, an unknown
signal, a value of another kind's type) is ``ValueError`` before anything is
sent.

Levers and their effect in the simulation:

- ``set_app_priority`` (app, int): the scheduler re-orders its leaf queue;
  capped by ``yarn.cluster.max-application-priority``;
- ``move_app_queue`` (app, queue): the app and its usage move leaf queue;
- ``update_scheduler_conf`` (``scheduler`` or a queue, {key: value|None}):
  the CapacityScheduler's live map is updated and re-parsed (node-locality
  delay, capacities, maximum capacities, accessible labels and their
  capacities, default label expression, user-limit-factor, AM percent...);
  an invalid result is rejected as a whole;
- ``replace_node_labels`` (node, [label] or []): missing cluster labels are
  added first, then the node moves partition with its containers;
- ``update_node_resource`` (node, {memory_mb, vcores[, overcommit_timeout_ms]}):
  the node's schedulable size changes (its hardware does not: over-committed
  nodes slow their tasks or kill their newest container); with a timeout >= 0
  the RM kills the newest non-AM containers first until the node fits, at once
  with 0, else at the node's first heartbeat past the timeout (a negative one
  keeps the node's earlier deadline; ``Simulation.resize_node``);
- ``signal_container`` (container, GRACEFUL_SHUTDOWN | FORCEFUL_SHUTDOWN |
  OUTPUT_THREAD_DUMP): a shutdown kills the container (its work is lost, its
  task asks again); a thread dump changes nothing;
- ``kill_app`` (app, any): the app is killed now;
- ``add_cluster_labels`` / ``remove_cluster_labels`` (any, [labels]);
- ``set_mapping_rules`` (``scheduler``, the advisor's rule block): merged into
  the CapacityScheduler's ``mapping-rule-json`` as on the real RM
  (``connectors.rm.write.mapping_update``); the scheduler places the
  applications submitted after it (``CapacityScheduler.add_app``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from yarn_advisor.advisor.model import mapping_rules as mr
from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    SIGNALS,
    AppState,
    ClusterLabels,
    ConfUpdate,
    ContainerSignal,
    ContainerStatus,
    MappingConf,
    NodeLabels,
    NodeResource,
    Payload,
    Priority,
    Queue,
    conf_str,
)
from yarn_advisor.connectors.errors import HTTPStatusError, StandbyError
from yarn_advisor.connectors.rm.write import conf_key, expect, mapping_update
from yarn_advisor.simulator.apps import SimApp, SimContainer
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.snapshot import RM_URL

if TYPE_CHECKING:
    from yarn_advisor.simulator.simulation import Simulation

LIVE = frozenset({"NEW", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHING"})


class SimLevers:
    """The simulated RM's write levers: ``read`` and ``send`` one kind on one target."""

    def __init__(self, sim: Simulation, overcommit_timeout_ms: int = -1) -> None:
        """``overcommit_timeout_ms``: the node-resource writes' default, as the
        advisor's ``actuator.overcommit_timeout_ms`` sets it for the real RM's
        levers (-1: never preempt)."""
        self.sim = sim
        self.overcommit_timeout_ms = overcommit_timeout_ms
        self.sent: list[tuple[int, Kind, str, Payload]] = []  # (sim ms, kind, target, value)

    # --- the RMLevers protocol ------------------------------------------------------
    def ensure_active(self) -> None:
        if self.sim.rm.standby:
            raise StandbyError(f"{RM_URL}: the simulated RM is standby")

    def read(self, kind: Kind, target: str, value: Payload) -> Payload | None:
        """The target's current value in the lever's shape (never writes)."""
        self.ensure_active()
        reader = _READS.get(kind)
        if reader is None:
            raise ValueError(f"no RM lever for kind {kind!r}")
        return reader(self, target, value)

    def send(self, kind: Kind, target: str, value: Payload) -> JsonValue:
        """One change of the simulated RM, now; the answer the real RM would give."""
        sender = _SENDS.get(kind)
        if sender is None:
            raise ValueError(f"no RM lever for kind {kind!r}")
        answer = sender(self, target, value)
        self.sent.append((self.sim.now, kind, target, value))
        return answer

    # --- lookups --------------------------------------------------------------------
    def _app(self, app_id: str) -> SimApp:
        app = self.sim.rm.apps.get(app_id)
        if app is None:
            raise HTTPStatusError(404, f"{RM_URL}/ws/v1/cluster/apps/{app_id}",
                                  f"application {app_id} not found")
        return app

    def _node(self, node_id: str) -> SimNode:
        node = self.sim.rm.node_by_id.get(node_id) or self.sim.rm.node_by_host.get(node_id)
        if node is None:
            raise HTTPStatusError(404, f"{RM_URL}/ws/v1/cluster/nodes/{node_id}",
                                  f"node {node_id} not found")
        return node

    def _container(self, cid: str) -> SimContainer | None:
        for app in self.sim.rm.apps.values():
            c = app.containers.get(cid)
            if c is not None:
                return c
        return None

    def refuse(self, path: str, message: str) -> HTTPStatusError:
        return HTTPStatusError(400, f"{RM_URL}/ws/v1/cluster{path}", message)


# --- reads --------------------------------------------------------------------------
def _read_conf(w: SimLevers, target: str, value: Payload) -> Payload:
    conf = w.sim.scheduler.conf()
    return ConfUpdate.of({k: conf.get(conf_key(target, k))
                          for k, _ in expect(value, ConfUpdate).items})


def _read_mapping(w: SimLevers, _t: str, _v: Payload) -> Payload:
    conf = w.sim.scheduler.conf()
    return MappingConf(conf.get(mr.FORMAT_KEY), conf.get(mr.JSON_KEY))


def _send_mapping(w: SimLevers, target: str, value: Payload) -> JsonValue:
    update = mapping_update(w.sim.scheduler.conf(), value)
    return _send_conf(w, "scheduler", update)


def _read_container(w: SimLevers, cid: str, _: Payload) -> Payload | None:
    c = w._container(cid)
    if c is None or c.state in ("COMPLETE", "EXITED"):
        return None
    return ContainerStatus("RUNNING" if c.state == "RUNNING" else "ALLOCATED", c.node.id)


def _read_app_state(w: SimLevers, app_id: str, _: Payload) -> Payload:
    app = w._app(app_id)
    return AppState("RUNNING" if app.state == "FINISHING" else app.state)


def _read_labels(w: SimLevers, target: str, _: Payload) -> Payload:
    label = w._node(target).label
    return NodeLabels((label,) if label else ())


def _read_resource(w: SimLevers, target: str, _: Payload) -> Payload:
    node = w._node(target)
    return NodeResource(node.total_mem, node.total_vc)


def _read_cluster_labels(w: SimLevers, _t: str, _v: Payload) -> Payload:
    return ClusterLabels(tuple(sorted(w.sim.rm.cluster_labels)))


_READS: dict[Kind, Callable[[SimLevers, str, Payload], Payload | None]] = {
    Kind.SET_APP_PRIORITY: lambda w, t, v: Priority(w._app(t).priority),
    Kind.MOVE_APP_QUEUE: lambda w, t, v: Queue(w.sim.scheduler.queue_path(w._app(t))),
    Kind.UPDATE_SCHEDULER_CONF: _read_conf,
    Kind.SET_MAPPING_RULES: _read_mapping,
    Kind.REPLACE_NODE_LABELS: _read_labels,
    Kind.UPDATE_NODE_RESOURCE: _read_resource,
    Kind.SIGNAL_CONTAINER: _read_container,
    Kind.KILL_APP: _read_app_state,
    Kind.ADD_CLUSTER_LABELS: _read_cluster_labels,
    Kind.REMOVE_CLUSTER_LABELS: _read_cluster_labels,
}


# --- sends --------------------------------------------------------------------------
def _live_app(w: SimLevers, app_id: str, what: str) -> SimApp:
    app = w._app(app_id)
    if app.state not in LIVE:
        raise w.refuse(f"/apps/{app_id}/{what}",
                       f"application {app_id} is {app.state}; cannot update its {what}")
    return app


def _send_priority(w: SimLevers, target: str, value: Payload) -> JsonValue:
    prio = expect(value, Priority).value
    app = _live_app(w, target, "priority")
    if w.sim.scheduler.type_name == "fifoScheduler":
        raise w.refuse(f"/apps/{target}/priority", "the scheduler does not support priorities")
    got = w.sim.scheduler.set_priority(app, prio)
    return {"status": 200, "body": {"priority": got}}


def _send_move(w: SimLevers, target: str, value: Payload) -> JsonValue:
    queue = expect(value, Queue).path
    app = _live_app(w, target, "queue")
    try:
        path = w.sim.scheduler.move_app(app, queue)
    except ValueError as exc:
        raise w.refuse(f"/apps/{target}/queue", str(exc)) from None
    return {"status": 200, "body": {"queue": path}}


def _send_conf(w: SimLevers, target: str, value: Payload) -> JsonValue:
    update = expect(value, ConfUpdate)
    sched = w.sim.scheduler
    updates = {conf_key(target, k): (None if v is None else conf_str(v)) for k, v in update.items}
    if sched.type_name != "capacityScheduler":
        raise w.refuse("/scheduler-conf", "scheduler configuration mutation needs the "
                       "CapacityScheduler with a mutable configuration store")
    try:
        sched.update_conf(updates)
    except ValueError as exc:
        raise w.refuse("/scheduler-conf", str(exc)) from None
    w.sim.rm.topology_changed()
    return {"status": 200, "body": "Configuration change successfully applied."}


def _send_labels(w: SimLevers, target: str, value: Payload) -> JsonValue:
    labels = sorted(expect(value, NodeLabels).labels)
    if len(labels) > 1:
        raise ValueError("a node carries at most one partition label")
    node = w._node(target)
    if w.sim.scheduler.type_name != "capacityScheduler":
        raise w.refuse(f"/nodes/{target}/replace-labels",
                       "node labels need the CapacityScheduler")
    rm = w.sim.rm
    missing = [x for x in labels if x not in rm.cluster_labels]
    rm.cluster_labels.update(missing)
    rm.relabel(node, labels[0] if labels else "")
    return {"status": 200, "body": "", "added_cluster_labels": list(missing)}


def _send_resource(w: SimLevers, target: str, value: Payload) -> JsonValue:
    want = expect(value, NodeResource)
    node = w._node(target)
    mem = node.total_mem if want.memory_mb is None else want.memory_mb
    vc = node.total_vc if want.vcores is None else want.vcores
    if mem < 0 or vc < 0:
        raise w.refuse(f"/nodes/{target}/resource", "resource values must be >= 0")
    timeout = (w.overcommit_timeout_ms if want.overcommit_timeout_ms is None
               else want.overcommit_timeout_ms)
    w.sim.resize_node(node, mem, vc, timeout)
    return {"status": 200, "body": {"resourceInfo": {"memory": mem, "vCores": vc}}}


def _send_signal(w: SimLevers, target: str, value: Payload) -> JsonValue:
    signal = expect(value, ContainerSignal).signal
    if signal not in SIGNALS:
        raise ValueError(f"unknown container signal {signal!r}")
    c = w._container(target)
    if c is None or c.state in ("COMPLETE", "EXITED"):
        raise HTTPStatusError(404, f"{RM_URL}/ws/v1/cluster/containers/{target}",
                              f"container {target} not found")
    if signal != "OUTPUT_THREAD_DUMP":
        w.sim.kill_container(c, f"SIGNAL_{signal}")
    return {"status": 200, "body": ""}


def _send_kill(w: SimLevers, target: str, value: Payload) -> JsonValue:
    expect(value, AppState)
    app = w._app(target)
    if app.state in LIVE:
        w.sim.am.kill_app(app)
    return {"status": 200, "body": {"state": app.state}}


def _send_add_labels(w: SimLevers, target: str, value: Payload) -> JsonValue:
    w.sim.rm.cluster_labels.update(expect(value, ClusterLabels).labels)
    return {"status": 200, "body": ""}


def _send_remove_labels(w: SimLevers, target: str, value: Payload) -> JsonValue:
    gone = set(expect(value, ClusterLabels).labels)
    used = sorted({n.label for n in w.sim.rm.nodes if n.label in gone})
    if used:
        raise w.refuse("/remove-node-labels", f"labels in use by nodes: {', '.join(used)}")
    w.sim.rm.cluster_labels.difference_update(gone)
    return {"status": 200, "body": ""}


_SENDS: dict[Kind, Callable[[SimLevers, str, Payload], JsonValue]] = {
    Kind.SET_APP_PRIORITY: _send_priority,
    Kind.MOVE_APP_QUEUE: _send_move,
    Kind.UPDATE_SCHEDULER_CONF: _send_conf,
    Kind.SET_MAPPING_RULES: _send_mapping,
    Kind.REPLACE_NODE_LABELS: _send_labels,
    Kind.UPDATE_NODE_RESOURCE: _send_resource,
    Kind.SIGNAL_CONTAINER: _send_signal,
    Kind.KILL_APP: _send_kill,
    Kind.ADD_CLUSTER_LABELS: _send_add_labels,
    Kind.REMOVE_CLUSTER_LABELS: _send_remove_labels,
}
