"""The actuator: the only code that writes to the RM, bounded and journaled.

``Actuator.act(recs, snapshot)`` is the daemon's act step: it takes the
cycle's :class:`~yarn_advisor.advisor.model.recommendation.Recommendation` objects
and returns counts by ``(kind, policy, outcome)``. Advisory kinds are never
sent. Each other recommendation passes the guardrails in this order, the
first that fires blocks it (journaled ``blocked`` with that reason):

kill switch (config, file, SIGUSR1) -> stale snapshot -> RM restarted or failed
over since an earlier cycle and its nodes not all re-registered yet (``rm_resync``,
at most ``RESYNC_S``) -> RM not active in the snapshot -> writes not allowed now
(``may_write``: e.g. not the HA leader)
-> lever unavailable on this RM (``levers.unavailable``: e.g. priorities
capped at 0) -> kill-like not allowed -> scope (queue/app/node allow- and denylists) ->
hold after a rollback -> cooldown -> max actions per target (in a window) ->
max actions per cycle -> minimum change size. Cooldown and the per-target limit
may differ by kind (``actuator.kinds``). A write that returns a target to its
value before the advisor's first change in the window (a node's borrowed
headroom given back, a relief) skips the rate limits: going back is always
allowed.

Then, in dry-run (the default: top-level ``dry_run``, or the policy's own
``dry_run: true``) it is journaled as ``dry_run``. In enforce mode the RM is
checked live once per cycle (active and reachable), and the write goes
through the :class:`~yarn_advisor.advisor.act.journal.Writer`: read, ``intent``
journaled with that previous value, one write, ``result`` journaled with the
RM's answer and the value read back. A write whose answer is lost (timeout)
is never resent: the value is read back once and the outcome is ``applied``
or ``unknown``. The same block of the same target is journaled once per
``QUIET_S`` (always counted). Totals by (kind, policy, outcome) and blocks by
reason are kept in ``totals`` and ``blocked`` for the metrics.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase, Writer, journaled_write, new_id
from yarn_advisor.advisor.act.levers import unavailable
from yarn_advisor.advisor.act.publish import Publisher
from yarn_advisor.advisor.model.decision_table import Decisions
from yarn_advisor.advisor.model.recommendation import Kind, Recommendation, Target, thaw
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import ActuatorSettings, AdvisorConfig
from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.rm.write import SCHEDULER, lever

log = logging.getLogger("yarn_advisor")
ActionKey = tuple[Kind, str, str]  # (kind, policy, outcome)
QUIET_S = 600.0  # the same block of the same target is journaled once per this many seconds
# blocked recommendations journaled one line each per cycle; the others of the cycle are
# summed up in one line per (reason, kind, policy): a dry run on 44,000 apps wrote
# 44,000 fsync'd lines (47 MB) a cycle, now at most this many plus a few summaries
BLOCKED_LINES_PER_CYCLE = 50
# after an RM restart or failover the NodeManagers re-register at their next retry
# (30 s apart by default): the mini cluster's took 20 s, and the advisor wrote in
# every cycle of them on half the nodes. Writes wait for the nodes, this long at most.
RESYNC_S = 120.0


class _Veto(Exception):
    def __init__(self, previous: Any, reason: str = "min_change") -> None:
        self.previous = previous
        self.reason = reason


@dataclass
class _Cycle:
    block: str | None
    count: int = 0
    checked: bool = False
    blocked_lines: int = 0
    overflow: Counter[tuple[str, Kind, str]] = field(default_factory=Counter)


def _always() -> bool:
    return True


@dataclass
class Actuator:
    """Dry-run or enforce recommendations within the configured guardrails."""

    settings: ActuatorSettings
    journal: Journal
    writer: Writer | None = None
    global_dry_run: bool = True
    policy_dry_run: Mapping[str, bool | None] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    # replays and the simulator: "now" is the snapshot's own time, so staleness,
    # cooldowns and windows behave as they would have on the recorded cluster
    snapshot_clock: bool = False
    # False while this advisor may not write (e.g. not the ZooKeeper leader)
    may_write: Callable[[], bool] = _always
    # right before each RM write (one ZooKeeper round trip for the HA leader: a leader
    # frozen past its session timeout may still believe it leads)
    confirm_write: Callable[[], bool] = _always
    halted: bool = False  # the run-time kill switch (SIGUSR1 / SIGUSR2)
    publisher: Publisher | None = None  # precision mode: the decision table (act/publish.py)
    totals: Counter[ActionKey] = field(default_factory=Counter)
    blocked: Counter[str] = field(default_factory=Counter)
    _times: defaultdict[tuple[Kind, str], list[float]] = field(
        default_factory=lambda: defaultdict(list))
    _holds: dict[tuple[Kind, str], float] = field(default_factory=dict)
    _quiet: dict[tuple[Kind, str], tuple[str, float]] = field(default_factory=dict)
    _offset: int = 0
    _said: set[str] = field(default_factory=set)  # lever_unavailable reasons logged
    # (kind, target) -> its value before the advisor's first change in the window:
    # a write back to it (a return, a relief) is never rate-limited
    _origins: dict[tuple[Kind, str], Any] = field(default_factory=dict)
    # (kind, target) -> (policy, time) of the latest write: another policy leaves the
    # target alone for target_window_s (two policies must not flap one app's priority)
    _owners: dict[tuple[Kind, str], tuple[str, float]] = field(default_factory=dict)
    _rm_seen: tuple[int, int] = (0, 0)  # the RM's start time and RUNNING nodes, last cycle
    _resync_since: float | None = None

    def __post_init__(self) -> None:
        entries, self._offset = self.journal.read()
        horizon = self.clock() - max(self.settings.target_window_s, self.settings.cooldown_s)
        for e in entries:  # a restart keeps cooldowns, per-target limits and holds
            self.learn(e, horizon, own=True)

    def enforcing(self, policy: str) -> bool:
        """True when ``policy``'s recommendations are really sent."""
        if self.global_dry_run or self.writer is None:
            return False
        return self.policy_dry_run.get(policy) is not True

    def act(self, recs: Sequence[Recommendation], snapshot: Snapshot,
            table: Decisions | None = None) -> Counter[ActionKey]:
        """The daemon's act step: counts by (kind, policy, outcome); the decision
        table, when precision mode is on, published under the cycle's guardrails."""
        now = snapshot.taken_at / 1000 if self.snapshot_clock else self.clock()
        entries, self._offset = self.journal.read(self._offset)
        for e in entries:  # rollbacks journaled by another process
            self.learn(e, now, own=False)
        cycle = _Cycle(self._cycle_block(snapshot, now))
        counts: Counter[ActionKey] = Counter()
        for rec in recs:
            counts[(rec.kind, rec.policy, self._one(rec, snapshot, now, cycle))] += 1
        for (reason, kind, policy), n in sorted(cycle.overflow.items()):
            self.journal.append(Entry(
                id=new_id(), phase=Phase.BLOCKED, kind=kind, target="*", policy=policy,
                mode="enforce" if self.enforcing(policy) else "dry_run", outcome="blocked",
                reason=reason, count=n,
                summary=f"{n} more {kind.value} recommendation(s) of {policy} blocked by "
                        f"{reason} this cycle (not journaled one by one)"))
        self.totals.update(counts)
        if self.publisher is not None and table is not None:
            self.publisher.cycle(table, snapshot.taken_at, cycle.block,
                                 not self.global_dry_run and self.writer is not None,
                                 self.confirm_write)
        return counts

    # --- one recommendation ---------------------------------------------------
    def _one(self, rec: Recommendation, snap: Snapshot, now: float, cycle: _Cycle) -> str:
        if rec.kind.advisory:
            return "advisory"
        value, previous = thaw(rec.value), thaw(rec.previous)
        base = Entry(id=new_id(), phase=Phase.DRY_RUN, kind=rec.kind, target=rec.target,
                     policy=rec.policy, value=value, rule=rec.explanation.rule,
                     summary=rec.explanation.summary,
                     mode="enforce" if self.enforcing(rec.policy) else "dry_run")
        why = None if cycle.block else unavailable(rec.kind, snap)
        if why:
            if why not in self._said:
                self._said.add(why)
                log.warning("%s recommendations stay advisory: %s", rec.kind.value, why)
            return self._block(base, "lever_unavailable", previous, why, cycle)
        reason = cycle.block or self._guard(rec, previous, snap, now, cycle)
        if reason:
            return self._block(base, reason, previous, cycle=cycle)
        if not self.enforcing(rec.policy):
            self.journal.append(replace(base, outcome="dry_run", previous=previous))
            self._times[(rec.kind, rec.target)].append(now)
            self._moved((rec.kind, rec.target), previous, value)
            self._owners[(rec.kind, rec.target)] = (rec.policy, now)
            cycle.count += 1
            return "dry_run"
        assert self.writer is not None
        if not cycle.checked:
            try:
                self.writer.ensure_active()
            except ConnectorError as exc:
                cycle.block = f"rm_{exc.reason}"
                return self._block(base, cycle.block, previous, str(exc), cycle)
            cycle.checked = True
        return self._enforce(self.writer, base, now, cycle)

    def _enforce(self, writer: Writer, base: Entry, now: float, cycle: _Cycle) -> str:
        def check(previous: Any) -> None:
            if self._too_small(base.kind, previous, base.value):
                raise _Veto(previous)
            if not self.confirm_write():
                raise _Veto(previous, "not_leader")

        try:
            result = journaled_write(writer, self.journal, base, check)
        except _Veto as veto:
            if veto.reason == "not_leader":
                cycle.block = veto.reason
            return self._block(base, veto.reason, veto.previous, cycle=cycle)
        if result.sent:
            self._times[(base.kind, base.target)].append(now)
            self._moved((base.kind, base.target), result.previous, base.value)
            self._owners[(base.kind, base.target)] = (base.policy, now)
            cycle.count += 1
        outcome = result.outcome or "failed"
        if outcome in ("standby", "unavailable"):
            cycle.block = f"rm_{outcome}"
        return outcome

    def _block(self, base: Entry, reason: str, previous: Any, error: str | None = None,
               cycle: _Cycle | None = None) -> str:
        """Count a blocked action; journal it unless it repeats the last block of its
        target, or the cycle's line budget is spent (then it is summed up at the end)."""
        self.blocked[reason] += 1
        key, now = (base.kind, base.target), self.clock()
        sig = f"{reason}:{json.dumps(base.value, sort_keys=True, default=str)}"
        last = self._quiet.get(key)
        if last is None or last[0] != sig or now - last[1] >= QUIET_S:
            self._quiet[key] = (sig, now)
            if cycle is not None and cycle.blocked_lines >= BLOCKED_LINES_PER_CYCLE:
                cycle.overflow[(reason, base.kind, base.policy)] += 1
                return "blocked"
            if cycle is not None:
                cycle.blocked_lines += 1
            self.journal.append(replace(base, phase=Phase.BLOCKED, outcome="blocked",
                                        reason=reason, previous=previous, error=error))
        return "blocked"

    # --- guardrails -------------------------------------------------------------
    def _cycle_block(self, snap: Snapshot, now: float) -> str | None:
        s = self.settings
        if s.kill_switch or self.halted or (s.kill_switch_file
                                            and os.path.exists(s.kill_switch_file)):
            return "kill_switch"
        if now - snap.taken_at / 1000 > s.max_snapshot_age_s:
            return "stale_snapshot"
        if self._resyncing(snap, now):
            return "rm_resync"
        if snap.cluster.ha_state not in ("ACTIVE", ""):
            return "rm_not_active"
        if not self.may_write():
            return "not_leader"
        return None

    def _resyncing(self, snap: Snapshot, now: float) -> bool:
        """True while the RM has restarted (or failed over: another start time) since an
        earlier cycle and fewer nodes are RUNNING than before it, for RESYNC_S at most."""
        started = snap.cluster.started_on
        nodes = sum(n.state == "RUNNING" for n in snap.nodes)
        last_started, expected = self._rm_seen
        if last_started and started and started != last_started:
            self._resync_since = now
        if self._resync_since is not None:
            if nodes < expected and now - self._resync_since < RESYNC_S:
                self._rm_seen = (started, expected)
                return True
            self._resync_since = None
        self._rm_seen = (started, nodes)
        return False

    def _guard(self, rec: Recommendation, previous: Any, snap: Snapshot, now: float,
               cycle: _Cycle) -> str | None:
        s = self.settings
        if rec.kind.irreversible and not s.allow_kill_like:
            return "kill_like_disabled"
        scope = self._scope(rec, snap)
        if scope:
            return scope
        key = (rec.kind, rec.target)
        if self._holds.get(key, 0.0) > now:
            return "rollback_hold"
        times = self._times[key] = [t for t in self._times[key] if t > now - s.target_window_s]
        owner = self._owners.get(key)
        if (owner is not None and owner[0] != rec.policy and now - owner[1] < s.target_window_s
                and rec.kind is not Kind.UPDATE_SCHEDULER_CONF):  # conf: keys differ
            return "policy_conflict"
        if self._restoring(key, thaw(rec.value)):
            return None  # back to what it was before the advisor: never rate-limited
        if times and now - max(times) < s.cooldown_s_for(rec.kind):
            return "cooldown"
        if len(times) >= s.max_actions_per_target_for(rec.kind):
            return "max_per_target"
        if cycle.count >= s.max_actions_per_cycle:
            return "max_per_cycle"
        if previous is not None and self._too_small(rec.kind, previous, thaw(rec.value)):
            return "min_change"
        return None

    def _scope(self, rec: Recommendation, snap: Snapshot) -> str | None:
        """Scope by the kind's target (indexes of the snapshot: no per-call rebuilds)."""
        s, target = self.settings, rec.target
        kind_target = rec.kind.target
        if kind_target is Target.QUEUE:
            ok = not s.queues.allow if target == SCHEDULER else s.queues.admits(*_qnames(target))
            return None if ok else "out_of_scope"
        if kind_target is Target.CLUSTER:
            return None if not s.nodes.allow else "out_of_scope"
        app_id = node_id = None
        if kind_target is Target.APP:
            app_id = target
        elif kind_target is Target.NODE:
            node_id = target
        elif kind_target is Target.CONTAINER:
            c = snap.container_by_id.get(target)
            if c is None:
                return "unknown_target"
            app_id, node_id = c.app_id, c.node_id
        ok = True
        if app_id is not None:
            app = snap.app_by_id.get(app_id)
            if app is None:
                return "unknown_target"
            ok = s.apps.admits(app.id, app.name) and s.queues.admits(*_qnames(app.queue))
            if rec.kind is Kind.MOVE_APP_QUEUE:
                ok = ok and s.queues.admits(*_qnames(str(rec.value)))
        if node_id is not None:
            node = snap.node_by_id.get(node_id)
            if node is None:
                return "unknown_target"
            ok = ok and s.nodes.admits(node.id, node.host)
        return None if ok else "out_of_scope"

    def _too_small(self, kind: Kind, previous: Any, value: Any) -> bool:
        """True if the change is below the minimum size (never for equal values)."""
        s = self.settings
        try:
            if lever(kind).same(previous, value):
                return False
            if kind is Kind.SET_APP_PRIORITY:
                return abs(int(value) - int(previous)) < s.min_priority_delta
            if kind is Kind.UPDATE_NODE_RESOURCE:
                pairs = [(previous[k], value[k]) for k in ("memory_mb", "vcores") if k in value]
            elif kind is Kind.UPDATE_SCHEDULER_CONF:
                pairs = [(previous.get(k), v) for k, v in value.items()]
            else:
                return False
            return all(_relative(p, v) < s.min_change_fraction for p, v in pairs)
        except (TypeError, ValueError, KeyError, AttributeError):
            return False

    # --- history and kill switch --------------------------------------------------
    def learn(self, e: Entry, horizon: float, own: bool) -> None:
        """Take a journaled ``e`` into account: a rollback holds its target; an intent
        of this advisor's own (``own``) newer than ``horizon`` counts for cooldowns,
        per-target limits, the target's origin and owner. Called on the journal at
        start, on lines other processes appended, and by HA for restored or peer
        advisors' entries."""
        key = (e.kind, e.target)
        if e.policy == "rollback" and e.phase in (Phase.INTENT, Phase.RESULT):
            until = e.ts + self.settings.rollback_hold_s
            self._holds[key] = max(self._holds.get(key, 0.0), until)
        elif own and e.phase is Phase.INTENT and e.ts >= horizon:
            self._times[key].append(e.ts)
            self._moved(key, e.previous, e.value)
            self._owners[key] = (e.policy, e.ts)

    def _moved(self, key: tuple[Kind, str], previous: Any, value: Any) -> None:
        """Keep the target's origin: set by its first change, dropped once it is back."""
        origin = self._origins.setdefault(key, previous)
        if origin is not None and value is not None and lever(key[0]).same(origin, value):
            del self._origins[key]

    def _restoring(self, key: tuple[Kind, str], value: Any) -> bool:
        origin = self._origins.get(key)
        return origin is not None and lever(key[0]).same(origin, value)

    def install_signal_handlers(self) -> None:
        """SIGUSR1 engages the run-time kill switch, SIGUSR2 releases it."""

        def engage(signum: int, frame: FrameType | None) -> None:
            self.halted = signum == signal.SIGUSR1

        signal.signal(signal.SIGUSR1, engage)
        signal.signal(signal.SIGUSR2, engage)


def _qnames(queue: str) -> tuple[str, str, str]:
    """A queue as scope patterns may name it: as given, full path, leaf name."""
    full = queue if queue == "root" or queue.startswith("root.") else f"root.{queue}"
    return queue, full, queue.rsplit(".", 1)[-1]


def _relative(previous: Any, value: Any) -> float:
    """Relative change of a number (1.0 when not both numeric, or from zero)."""
    try:
        p, v = float(previous), float(value)
    except (TypeError, ValueError):
        return 0.0 if str(previous) == str(value) else 1.0
    return abs(v - p) / abs(p) if p else (0.0 if v == p else 1.0)


def journal_path(cfg: AdvisorConfig) -> Path:
    """Where the journal lives: ``actuator.journal_path``, else in ``state_dir``."""
    return Path(cfg.actuator.journal_path or Path(cfg.state_dir) / "journal.jsonl")


def build_actuator(cfg: AdvisorConfig, writer: Writer | None = None,
                   snapshot_clock: bool = False) -> Actuator:
    """The actuator ``cfg`` describes; without a ``writer`` it can only dry-run."""
    return Actuator(cfg.actuator, open_journal(cfg), writer, cfg.dry_run,
                    policy_dry_run(cfg), snapshot_clock=snapshot_clock)


def open_journal(cfg: AdvisorConfig) -> Journal:
    """The journal ``cfg`` describes (its path and rotation)."""
    a = cfg.actuator
    return Journal(journal_path(cfg), int(a.journal_max_mb * (1 << 20)), a.journal_keep)


def policy_dry_run(cfg: AdvisorConfig) -> dict[str, bool | None]:
    """Each policy's own ``dry_run`` (None: the top-level setting decides)."""
    return {name: sec.dry_run for name, sec in cfg.policies.sections().items()}
