"""One app on one node: YARN's ``RegularContainerAllocator``, with delay scheduling.

Ported from hadoop-yarn-server-resourcemanager 3.4.2
``scheduler.capacity.allocator.RegularContainerAllocator``:

- scheduler keys (container priorities) are tried most urgent first; a key
  that cannot use this node at all (another partition) is skipped without
  counting a scheduling opportunity;
- every other try counts one *missed scheduling opportunity* for that key
  (``addSchedulingOpportunity``), reset by a node-local or rack-local
  allocation (``doAllocation``, rack-locality-full-reset true);
- node-local: any ask on this host is taken at once;
- rack-local: once missed > min(#nodes, ``node-locality-delay``);
- off-switch: at once if the key asks only for ``*``; else once missed >
  min(#nodes, node-locality-delay + ``rack-locality-additional-delay``) when
  that is set (> -1), else once missed > min(#nodes, pending x
  localityWaitFactor) with localityWaitFactor = min((unique asks - 1) /
  #nodes, 1) (``canAssign``, ``getLocalityWaitFactor``);
- a host the app's AM blacklisted is skipped (``checkIfNodeBlackListed``),
  without counting a scheduling opportunity;
- with an app placement allocator plugged in (precision mode's ``precheck``),
  a key it refuses on this node is skipped first (``precheckNode`` in
  ``preCheckForNodeCandidateSet``: ``PRIORITY_SKIPPED``, before the headroom
  check, without counting a scheduling opportunity);
- an ask that fits the node's total but not its free room reserves the node
  (``shouldAllocOrReserveNewContainer``: while pending > reserved; the
  starvation term of re-reservations is left out); one that does not fit the
  total skips the node.

The outcome tells the leaf queue what to do next, as ``CSAssignment`` does.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Protocol

from yarn_advisor.simulator.apps import NODE_LOCAL, OFF_SWITCH, RACK_LOCAL, Ask, SimApp

if TYPE_CHECKING:
    from yarn_advisor.simulator.cluster import SimNode
    from yarn_advisor.simulator.rm import RMCore


class Outcome(Enum):
    ALLOCATED = "allocated"
    RESERVED = "reserved"
    APP_SKIPPED = "app_skipped"  # try the next app (locality delay, no fit)
    QUEUE_LIMIT = "queue_limit"  # the queue's headroom is exhausted
    PRIORITY_SKIPPED = "priority_skipped"


class Precheck(Protocol):
    """``AppPlacementAllocator.precheckNode`` of a plugged-in allocator."""

    def precheck(self, app: SimApp, priority: int, node: SimNode) -> bool: ...


class Locality:
    """The delay settings of one queue (CapacityScheduler) or none (FIFO)."""

    __slots__ = ("delay", "node_delay", "rack_additional")

    def __init__(self, node_delay: int, rack_additional: int, delay: bool = True) -> None:
        self.node_delay = node_delay
        self.rack_additional = rack_additional
        self.delay = delay


def partition_ok(app_label: str, node: SimNode) -> bool:
    """Exclusive partitions: an app runs only on nodes of its label expression."""
    return app_label == node.label


def try_app_on_node(rm: RMCore, app: SimApp, node: SimNode, app_label: str,
                    headroom: tuple[int, int] | None, loc: Locality,
                    plugin: Precheck | None = None) -> Outcome:
    """``RegularContainerAllocator.assignContainers`` for one node."""
    if not partition_ok(app_label, node):
        return Outcome.APP_SKIPPED
    for priority in app.pending_priorities():
        if plugin is not None and not plugin.precheck(app, priority, node):
            continue
        ask = app.asks[priority]
        if headroom is not None and not rm.calc.fits(ask.mem, ask.vc, headroom[0], headroom[1]):
            return Outcome.QUEUE_LIMIT
        if node.host in app.blacklisted:  # checkIfNodeBlackListed, before the opportunity
            return Outcome.APP_SKIPPED
        app.missed[priority] = app.missed.get(priority, 0) + 1
        out = _on_node(rm, app, ask, node, loc)
        if out is Outcome.PRIORITY_SKIPPED:
            app.missed[priority] -= 1
            continue
        return out
    return Outcome.APP_SKIPPED


def _on_node(rm: RMCore, app: SimApp, ask: Ask, node: SimNode, loc: Locality) -> Outcome:
    n_nodes = rm.running_nodes
    missed = app.missed.get(ask.priority, 0)
    if ask.host_count(node.host) > 0:
        out = _assign(rm, app, ask, node, NODE_LOCAL)
        if out is not None:
            return out
    if ask.rack_count(node.rack) > 0 and (not loc.delay or
                                          missed > min(n_nodes, loc.node_delay)):
        out = _assign(rm, app, ask, node, RACK_LOCAL)
        if out is not None:
            return out
    if ask.count <= 0:
        return Outcome.PRIORITY_SKIPPED
    if _can_off_switch(ask, missed, n_nodes, loc):
        out = _assign(rm, app, ask, node, OFF_SWITCH)
        if out is not None:
            return out
    return Outcome.APP_SKIPPED


def _can_off_switch(ask: Ask, missed: int, n_nodes: int, loc: Locality) -> bool:
    unique = ask.unique_locations()
    if not loc.delay or unique == 1:
        return True
    if loc.rack_additional > -1:
        return missed > min(n_nodes, loc.node_delay + loc.rack_additional)
    wait_factor = min(max(unique - 1, 0) / n_nodes, 1.0) if n_nodes else 1.0
    return min(n_nodes, ask.count * wait_factor) < missed


def _assign(rm: RMCore, app: SimApp, ask: Ask, node: SimNode, locality: str) -> Outcome | None:
    """Allocate, reserve, or None (skip this locality level)."""
    calc = rm.calc
    if not calc.fits(ask.mem, ask.vc, node.total_mem, node.total_vc):
        return None
    reserved = app.reservations.get(ask.priority, 0)
    if calc.fits(ask.mem, ask.vc, node.free_mem, node.free_vc):
        if reserved >= ask.count and reserved > 0:
            # continuous reservation looking: take this node, give up a reservation
            rm.unreserve_one(app, ask.priority)
        rm.allocate(app, ask, node, locality)
        return Outcome.ALLOCATED
    if ask.count - reserved > 0 and node.reserved is None:
        rm.reserve(app, ask, node, locality)
        return Outcome.RESERVED
    return None


def fulfil_reservation(rm: RMCore, node: SimNode) -> bool:
    """A reserved node's heartbeat: allocate the reserved ask if it now fits;
    drop the reservation if the app no longer needs it. Returns True when the
    reservation still holds the node (nothing else may be scheduled on it)."""
    res = node.reserved
    if res is None:
        return False
    app = res.app
    ask = app.asks.get(res.priority)
    if app.is_done or ask is None or ask.count == 0:
        rm.unreserve(node)
        return True
    if rm.calc.fits(ask.mem, ask.vc, node.free_mem, node.free_vc):
        rm.unreserve(node)
        rm.allocate(app, ask, node, res.locality, from_reservation=True)
    return True
