"""The actuator's ``Writer`` for the simulated RM: the same levers, the same shapes.

:class:`SimWriter` implements ``yarn_advisor.advisor.act.journal.Writer``
(``ensure_active``, ``read``, ``apply``) with the semantics of
``connectors.rm_write.RMWriter``: every lever reads the target's value in the
lever's JSON shape, sends nothing when it already holds the desired value
(``noop``), otherwise calls ``before_send(previous)`` (the actuator journals
there, or vetoes by raising), changes the simulated RM at the current
simulated instant (or is refused, after the intent is journaled, as the real
RM answers a bad request), and reads the value back. The comparison of previous and
desired values is the real lever's own (``rm_write.LEVERS[kind].same``).

What the RM would refuse is refused the same way, as the exceptions the real
connector raises: an unknown app, node or container is
``HTTPStatusError(404)``; an invalid scheduler configuration, a move to a
queue that cannot take the app, a priority change under a scheduler without
priorities are ``HTTPStatusError(400)``; a standby RM is ``StandbyError``; a
value the lever cannot send (two partition labels on a node, an unknown
signal) is ``ValueError`` before anything is sent.

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
  the RM kills the newest containers after it until the node fits;
- ``signal_container`` (container, GRACEFUL_SHUTDOWN | FORCEFUL_SHUTDOWN |
  OUTPUT_THREAD_DUMP): a shutdown kills the container (its work is lost, its
  task asks again); a thread dump changes nothing;
- ``kill_app`` (app, any): the app is killed now;
- ``add_cluster_labels`` / ``remove_cluster_labels`` (any, [labels]).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from yarn_advisor.advisor.model.recommendation import Kind
from yarn_advisor.connectors.errors import HTTPStatusError, StandbyError
from yarn_advisor.connectors.rm.write import (
    SIGNALS,
    WriteOutcome,
    conf_key,
    conf_str,
    lever,
)
from yarn_advisor.simulator.apps import SimApp, SimContainer
from yarn_advisor.simulator.cluster import SimNode
from yarn_advisor.simulator.snapshot import RM_URL

if TYPE_CHECKING:
    from yarn_advisor.simulator.simulation import Simulation

LIVE = frozenset({"NEW", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHING"})


class SimWriter:
    """The simulated RM's write levers behind one ``apply(kind, target, value)``."""

    def __init__(self, sim: Simulation, overcommit_timeout_ms: int = -1) -> None:
        """``overcommit_timeout_ms``: the node-resource writes' default, as the
        advisor's ``actuator.overcommit_timeout_ms`` sets it for the real RM's
        writer (-1: never preempt)."""
        self.sim = sim
        self.overcommit_timeout_ms = overcommit_timeout_ms
        self.sent: list[tuple[int, str, str, Any]] = []  # (sim ms, kind, target, value)

    # --- the Writer protocol --------------------------------------------------------
    def ensure_active(self) -> None:
        if self.sim.rm.standby:
            raise StandbyError(f"{RM_URL}: the simulated RM is standby")

    def read(self, kind: Kind | str, target: str, value: Any = None) -> Any:
        """The target's current value in the lever's shape (never writes)."""
        self.ensure_active()
        reader = _READS.get(kind)
        if reader is None:
            raise ValueError(f"no RM lever for kind {kind!r}")
        return reader(self, target, value)

    def apply(self, kind: Kind | str, target: str, value: Any,
              before_send: Callable[[Any], None] = lambda previous: None) -> WriteOutcome:
        """Read, and unless already there: ``before_send``, one change, read back."""
        kind = Kind(kind)
        lv = lever(kind)
        previous = self.read(kind, target, value)
        if lv.same(previous, value):
            return WriteOutcome(kind, target, previous, "noop")
        before_send(previous)
        answer = _SENDS[kind](self, target, value)
        self.sent.append((self.sim.now, kind, target, value))
        observed = self.read(kind, target, value)
        return WriteOutcome(kind, target, previous, "applied", answer, observed)

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
def _read_conf(w: SimWriter, target: str, value: Any) -> dict[str, str | None]:
    conf = w.sim.scheduler.conf()
    return {k: conf.get(conf_key(target, k)) for k in (value or {})}


def _read_container(w: SimWriter, cid: str, _: Any) -> dict[str, str] | None:
    c = w._container(cid)
    if c is None or c.state in ("COMPLETE", "EXITED"):
        return None
    return {"state": "RUNNING" if c.state == "RUNNING" else "ALLOCATED", "node": c.node.id}


def _read_app_state(w: SimWriter, app_id: str, _: Any) -> str:
    app = w._app(app_id)
    return "RUNNING" if app.state == "FINISHING" else app.state


_READS: dict[str, Callable[[SimWriter, str, Any], Any]] = {
    "set_app_priority": lambda w, t, v: w._app(t).priority,
    "move_app_queue": lambda w, t, v: w.sim.scheduler.queue_path(w._app(t)),
    "update_scheduler_conf": _read_conf,
    "replace_node_labels": lambda w, t, v: [w._node(t).label] if w._node(t).label else [],
    "update_node_resource": lambda w, t, v: {"memory_mb": w._node(t).total_mem,
                                             "vcores": w._node(t).total_vc},
    "signal_container": _read_container,
    "kill_app": _read_app_state,
    "add_cluster_labels": lambda w, t, v: sorted(w.sim.rm.cluster_labels),
    "remove_cluster_labels": lambda w, t, v: sorted(w.sim.rm.cluster_labels),
}


# --- sends --------------------------------------------------------------------------
def _live_app(w: SimWriter, app_id: str, what: str) -> SimApp:
    app = w._app(app_id)
    if app.state not in LIVE:
        raise w.refuse(f"/apps/{app_id}/{what}",
                       f"application {app_id} is {app.state}; cannot update its {what}")
    return app


def _send_priority(w: SimWriter, target: str, value: Any) -> Any:
    app = _live_app(w, target, "priority")
    prio = int(value)
    if w.sim.scheduler.type_name == "fifoScheduler":
        raise w.refuse(f"/apps/{target}/priority", "the scheduler does not support priorities")
    got = w.sim.scheduler.set_priority(app, prio)
    return {"status": 200, "body": {"priority": got}}


def _send_move(w: SimWriter, target: str, value: Any) -> Any:
    app = _live_app(w, target, "queue")
    try:
        path = w.sim.scheduler.move_app(app, str(value))
    except ValueError as exc:
        raise w.refuse(f"/apps/{target}/queue", str(exc)) from None
    return {"status": 200, "body": {"queue": path}}


def _send_conf(w: SimWriter, target: str, value: Any) -> Any:
    if not isinstance(value, Mapping):
        raise ValueError("update_scheduler_conf needs a mapping of settings")
    sched = w.sim.scheduler
    updates = {conf_key(target, str(k)): (None if v is None else conf_str(v))
               for k, v in value.items()}
    if sched.type_name != "capacityScheduler":
        raise w.refuse("/scheduler-conf", "scheduler configuration mutation needs the "
                       "CapacityScheduler with a mutable configuration store")
    try:
        sched.update_conf(updates)
    except ValueError as exc:
        raise w.refuse("/scheduler-conf", str(exc)) from None
    w.sim.rm.topology_changed()
    return {"status": 200, "body": "Configuration change successfully applied."}


def _send_labels(w: SimWriter, target: str, value: Any) -> Any:
    labels = sorted(value)
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
    return {"status": 200, "body": "", "added_cluster_labels": missing}


def _send_resource(w: SimWriter, target: str, value: Any) -> Any:
    node = w._node(target)
    mem = int(value.get("memory_mb", node.total_mem))
    vc = int(value.get("vcores", node.total_vc))
    if mem < 0 or vc < 0:
        raise w.refuse(f"/nodes/{target}/resource", "resource values must be >= 0")
    timeout = int(value.get("overcommit_timeout_ms", w.overcommit_timeout_ms))
    w.sim.resize_node(node, mem, vc, timeout)
    return {"status": 200, "body": {"resourceInfo": {"memory": mem, "vCores": vc}}}


def _send_signal(w: SimWriter, target: str, value: Any) -> Any:
    if value not in SIGNALS:
        raise ValueError(f"unknown container signal {value!r}")
    c = w._container(target)
    if c is None or c.state in ("COMPLETE", "EXITED"):
        raise HTTPStatusError(404, f"{RM_URL}/ws/v1/cluster/containers/{target}",
                              f"container {target} not found")
    if value != "OUTPUT_THREAD_DUMP":
        w.sim.kill_container(c, f"SIGNAL_{value}")
    return {"status": 200, "body": ""}


def _send_kill(w: SimWriter, target: str, value: Any) -> Any:
    app = w._app(target)
    if app.state in LIVE:
        w.sim.am.kill_app(app)
    return {"status": 200, "body": {"state": app.state}}


def _send_add_labels(w: SimWriter, target: str, value: Any) -> Any:
    w.sim.rm.cluster_labels.update(str(x) for x in value)
    return {"status": 200, "body": ""}


def _send_remove_labels(w: SimWriter, target: str, value: Any) -> Any:
    used = sorted({n.label for n in w.sim.rm.nodes if n.label in set(value)})
    if used:
        raise w.refuse("/remove-node-labels", f"labels in use by nodes: {', '.join(used)}")
    w.sim.rm.cluster_labels.difference_update(str(x) for x in value)
    return {"status": 200, "body": ""}


_SENDS: dict[str, Callable[..., Any]] = {
    "set_app_priority": _send_priority,
    "move_app_queue": _send_move,
    "update_scheduler_conf": _send_conf,
    "replace_node_labels": _send_labels,
    "update_node_resource": _send_resource,
    "signal_container": _send_signal,
    "kill_app": _send_kill,
    "add_cluster_labels": _send_add_labels,
    "remove_cluster_labels": _send_remove_labels,
}
