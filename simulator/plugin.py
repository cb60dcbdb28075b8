"""The RM plug-in of precision mode, simulated: the decision table applied at each attempt.

What the jar will do in the ResourceManager (docs/decision-table.md), on the
simulated CapacityScheduler:

* the table arrives as a real one does: the advisor publishes it once per
  cycle (the sidecar's actuator, with this object as one of its sinks), and
  the plug-in's poller picks it up at its next poll, every ``poll_ms`` (1 s);
  a withdrawal is seen at the next poll too; a table older than its TTL is
  ignored (YARN's default);
* :meth:`SimPlugin.precheck` is ``precheckNode``: called for each (app,
  request priority, node) attempt after the queue's and the user's limits let
  the app try the node, before its headroom and delay-scheduling checks; a
  veto skips that priority on that node (``PRIORITY_SKIPPED``) without
  counting a missed scheduling opportunity, and the node is offered to the
  app's next priority and to the next apps; it never forces a placement;
* :meth:`SimPlugin.rank` is the leaf queues' ``OrderingPolicy``: ranked apps
  by rank, unranked ones first or last, ties in FIFO order.

The plug-in sits beside the sidecar: every lever the advisor writes from
outside still applies. Vetoes are counted by reason (``vetoes``), as the jar
reports them through JMX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from yarn_advisor.advisor.model.decision_table import (
    DecisionTable,
    Fit,
    LocalOnly,
    Reason,
    RequestDecision,
    Rule,
    Unranked,
)

if TYPE_CHECKING:
    from yarn_advisor.simulator.apps import SimApp
    from yarn_advisor.simulator.cluster import SimNode
    from yarn_advisor.simulator.simulation import Simulation

POLL_MS = 1000
LIVE = frozenset({"ALLOCATED", "RUNNING"})


class _Compiled:
    """One table, indexed for the attempt's lookups (the jar's in-memory copy)."""

    def __init__(self, table: DecisionTable) -> None:
        d = table.decisions
        self.table = table
        self.by_app: dict[str, tuple[RequestDecision, ...]] = {
            a: e.requests for a, e in d.apps.items() if e.requests}
        self.ranks: dict[str, int] = {a: e.rank for a, e in d.apps.items() if e.rank is not None}
        self.unranked_first = d.unranked is Unranked.FIRST
        self.rules = d.rules
        self.lending = d.nodes
        self.rule_of: dict[str, tuple[RequestDecision, ...]] = {}  # app id -> its rules'

    def decisions(self, app: SimApp) -> tuple[RequestDecision, ...]:
        own = self.by_app.get(app.id, ())
        if not self.rules:
            return own
        ruled = self.rule_of.get(app.id)
        if ruled is None:
            ruled = self.rule_of[app.id] = tuple(
                q for r in self.rules if _matches(r, app) for q in r.requests)
        return own + ruled if own else ruled


def _matches(rule: Rule, app: SimApp) -> bool:
    m = rule.match
    if m.application_type is not None and \
            m.application_type.lower() != app.job.app_type.lower():
        return False
    if m.queue is not None and m.queue.rsplit(".", 1)[-1] != app.queue.rsplit(".", 1)[-1]:
        return False
    return m.tag is None or m.tag.lower() in (t.lower() for t in app.tags)


@dataclass
class SimPlugin:
    """The plug-in's poller and hooks (see the module docstring)."""

    sim: Simulation
    poll_ms: int = POLL_MS
    vetoes: dict[str, int] = field(default_factory=dict)  # reason -> attempts skipped
    # (app id, priority, decision) -> attempts skipped in a row (max_skips), cleared when
    # the request gets a container (the jar keeps it in each allocator instance)
    skipped: dict[tuple[str, int, str], int] = field(default_factory=dict)
    published: int = 0  # tables the advisor published
    polls_applied: int = 0  # tables the poller took up (the scheduler asked for them)
    _active: _Compiled | None = None
    _next: tuple[int, DecisionTable | None] | None = None  # (visible from, table)

    # --- the poller (a TableSink of the advisor's publisher) --------------------------
    def publish(self, table: DecisionTable) -> None:
        self.published += 1
        self._next = (self._next_poll(), table)

    def withdraw(self, reason: str) -> None:
        self._next = (self._next_poll(), None)

    def _next_poll(self) -> int:
        now = self.sim.now
        return (now // self.poll_ms + 1) * self.poll_ms

    def current(self) -> _Compiled | None:
        """The table the scheduler thread reads now (None: YARN's default)."""
        now = self.sim.now
        if self._next is not None and now >= self._next[0]:
            table = self._next[1]
            self._active = None if table is None else _Compiled(table)
            self._next = None
            self.polls_applied += table is not None
        active = self._active
        if active is not None and active.table.expired(self.sim.cluster_ts + now):
            self._active = active = None
        return active

    # --- precheckNode --------------------------------------------------------------------
    def precheck(self, app: SimApp, priority: int, node: SimNode) -> bool:
        """False: skip this request priority of ``app`` on ``node``."""
        t = self.current()
        if t is None:
            return True
        reason = None
        for q in t.decisions(app):
            if q.priority is None or q.priority == priority:
                reason = self._veto(q, app, priority, node)
                if reason is not None:
                    break
        if reason is None and t.lending:
            reason = _lent(t, app, priority, node)
        if reason is None:
            return True
        self.vetoes[reason] = self.vetoes.get(reason, 0) + 1
        return False

    def allocated(self, app: SimApp, priority: int) -> None:
        """The allocator's ``allocate``: the request got a container; its skip counts
        start again."""
        if self.skipped:
            for kind in ("local_only", "fit"):
                self.skipped.pop((app.id, priority, kind), None)

    def _veto(self, q: RequestDecision, app: SimApp, priority: int,
              node: SimNode) -> str | None:
        reason = _veto(q, app, priority, node)
        if reason is not None:
            return reason
        lo = q.local_only
        if lo is not None and _nonlocal(lo, app, priority, node) and \
                self._skip(lo.max_skips, (app.id, priority, "local_only")):
            return lo.reason.value
        fit = q.fit
        if fit is not None and _misfit(fit, app, priority, node) and \
                self._skip(fit.max_skips, (app.id, priority, "fit")):
            return fit.reason.value
        return None

    def _skip(self, max_skips: int | None, key: tuple[str, int, str]) -> bool:
        """Whether a decision with ``max_skips`` may skip this attempt (and count it)."""
        if max_skips is None:
            return True
        n = self.skipped.get(key, 0)
        if n >= max_skips:
            return False
        self.skipped[key] = n + 1
        return True

    # --- the OrderingPolicy ----------------------------------------------------------------
    def rank(self, app: SimApp) -> tuple[int, int]:
        """Sort key of ``app`` in its leaf queue (before YARN's FIFO key)."""
        t = self.current()
        if t is None:
            return (0, 0)
        r = t.ranks.get(app.id)
        if r is None:
            return (0, 0) if t.unranked_first else (2, 0)
        return (1, r)

    def order_version(self) -> object:
        """Changes whenever the order may change (the queues re-sort then)."""
        t = self.current()
        return None if t is None else t.table.seq


def _veto(q: RequestDecision, app: SimApp, priority: int, node: SimNode) -> str | None:
    if q.hold is not None and _held(q.hold.while_pending, app):
        return q.hold.reason.value
    if q.allow is not None and node.id not in q.allow.nodes:
        return q.allow.reason.value
    if q.veto:
        r = q.veto.get(node.id)
        if r is not None:
            return r.value
    if q.cap is not None and sum(1 for c in node.containers.values()
                                 if c.app is app and not c.is_am
                                 and c.state in LIVE) >= q.cap.max_per_node:
        return q.cap.reason.value
    return None


def _nonlocal(lo: LocalOnly, app: SimApp, priority: int, node: SimNode) -> bool:
    """The attempt is one ``local_only`` skips: the request has locations, none on
    this node's host, and the node is not excepted."""
    ask = app.asks.get(priority)
    return ask is not None and ask.unique_locations() > 1 and \
        ask.host_count(node.host) == 0 and node.id not in lo.except_nodes


def _misfit(fit: Fit, app: SimApp, priority: int, node: SimNode) -> bool:
    """The attempt is one ``fit`` skips: the request's alignment with the node's
    unallocated resource (both over the node's total) is under the minimum; a node
    with nothing unallocated in a dimension is left to YARN's own fit check."""
    ask = app.asks.get(priority)
    tm, tv = node.total_mem, node.total_vc
    if ask is None or tm <= 0 or tv <= 0:
        return False
    cm, cv = node.free_mem / tm, node.free_vc / tv
    rm, rv = ask.mem / tm, ask.vc / tv
    if cm <= 0 or cv <= 0 or (rm <= 0 and rv <= 0):
        return False
    cos = (rm * cm + rv * cv) / (math.hypot(rm, rv) * math.hypot(cm, cv))
    return cos < fit.min_alignment


def _held(while_pending: tuple[int, ...], app: SimApp) -> bool:
    """Always without priorities; else while the app asks at one of them."""
    if not while_pending:
        return True
    for p in while_pending:
        ask = app.asks.get(p)
        if ask is not None and ask.count > 0:
            return True
    return False


def _lent(t: _Compiled, app: SimApp, priority: int, node: SimNode) -> str | None:
    lend = t.lending.get(node.id)
    if lend is None or (not lend.memory_mb and not lend.vcores):
        return None
    ask = app.asks.get(priority)
    if ask is None:
        return None
    into = (lend.memory_mb > 0 and node.alloc_mem + ask.mem > node.total_mem - lend.memory_mb) or \
        (lend.vcores > 0 and node.alloc_vc + ask.vc > node.total_vc - lend.vcores)
    if not into:
        return None
    for b in lend.borrowers:
        if b.app == app.id and (b.priority is None or b.priority == priority):
            return None
    return Reason.OPERA_LENT.value
