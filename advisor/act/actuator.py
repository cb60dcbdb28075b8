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
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType

from yarn_advisor.advisor.act.journal import Action, Entry, Journal, Phase, new_id
from yarn_advisor.advisor.act.levers import all_unavailable, unavailable
from yarn_advisor.advisor.act.memory import GuardMemory, Key
from yarn_advisor.advisor.act.outcomes import Block, Outcome
from yarn_advisor.advisor.act.publish import Publisher
from yarn_advisor.advisor.act.rollback import DONE, inverse, select
from yarn_advisor.advisor.act.watchdog import Signal, Trip, Watchdog
from yarn_advisor.advisor.act.writer import Veto, Writer, entry_previous, journaled_write
from yarn_advisor.advisor.model.decision_table import Decisions
from yarn_advisor.advisor.model.jsonvalue import JsonValue
from yarn_advisor.advisor.model.kinds import Kind, Target
from yarn_advisor.advisor.model.payloads import (
    ConfUpdate,
    NodeResource,
    Payload,
    Priority,
    Queue,
    holds,
    value_from_json,
)
from yarn_advisor.advisor.model.recommendation import Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import ActuatorSettings, AdvisorConfig
from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.rm.write import SCHEDULER

log = logging.getLogger("yarn_advisor")
ActionKey = tuple[Kind, str, Outcome]  # (kind, policy, outcome)
QUIET_S = 600.0  # the same block of the same target is journaled once per this many seconds
# blocked recommendations journaled one line each per cycle; the others of the cycle are
# summed up in one line per (reason, kind, policy): a dry run on 44,000 apps wrote
# 44,000 fsync'd lines (47 MB) a cycle, now at most this many plus a few summaries
BLOCKED_LINES_PER_CYCLE = 50
# after an RM restart or failover the NodeManagers re-register at their next retry
# (30 s apart by default): the mini cluster's took 20 s, and the advisor wrote in
# every cycle of them on half the nodes. Writes wait for the nodes, this long at most.
RESYNC_S = 120.0
ROLLBACK = "rollback"  # the policy name of rollback's steps in the journal


class _Vetoed(Veto):
    def __init__(self, previous: Payload | None, reason: Block = Block.MIN_CHANGE) -> None:
        self.previous = previous
        self.reason = reason


@dataclass
class _Cycle:
    block: Block | None
    count: int = 0
    checked: bool = False
    blocked_lines: int = 0
    overflow: Counter[tuple[Block, Kind, str]] = field(default_factory=Counter)


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
    blocked: Counter[Block] = field(default_factory=Counter)
    memory: GuardMemory = field(default_factory=GuardMemory)
    watchdog: Watchdog | None = None  # enforce mode's harm watchdog (act/watchdog.py)
    trips: Counter[tuple[str, Signal]] = field(default_factory=Counter)
    _now: float = 0.0  # the current cycle's time (a tripped policy is checked against it)
    _quiet: dict[Key, tuple[str, float]] = field(default_factory=dict)
    _offset: int = 0
    _said: dict[Kind, str] = field(default_factory=dict)  # unavailable levers, said once
    _rm_seen: tuple[int, int] = (0, 0)  # the RM's start time and RUNNING nodes, last cycle
    _resync_since: float | None = None

    def __post_init__(self) -> None:
        entries, self._offset = self.journal.read()
        self._now = self.clock()
        horizon = self._now - self.window_s
        for e in entries:  # a restart keeps cooldowns, per-target limits and holds
            self.learn(e, horizon, own=True)

    @property
    def window_s(self) -> float:
        """How far back the guardrails look."""
        return max(self.settings.target_window_s, self.settings.cooldown_s)

    def enforcing(self, policy: str) -> bool:
        """True when ``policy``'s recommendations are really sent."""
        if self.global_dry_run or self.writer is None:
            return False
        return self.policy_dry_run.get(policy) is not True and \
            not self.memory.is_tripped(policy, self._now)

    def act(self, recs: Sequence[Recommendation], snapshot: Snapshot,
            table: Decisions | None = None) -> Counter[ActionKey]:
        """The daemon's act step: counts by (kind, policy, outcome); the decision
        table, when precision mode is on, published under the cycle's guardrails."""
        now = snapshot.taken_at / 1000 if self.snapshot_clock else self.clock()
        self._now = now
        entries, self._offset = self.journal.read(self._offset)
        for e in entries:  # rollbacks journaled by another process
            self.learn(e, now, own=False)
        self.memory.expire(now, self.window_s)
        self._quiet = {k: v for k, v in self._quiet.items() if now - v[1] < QUIET_S}
        self.say_unavailable(snapshot)
        cycle = _Cycle(self._cycle_block(snapshot, now))
        if cycle.block is None:
            self._watch(snapshot, now)
        counts: Counter[ActionKey] = Counter()
        for rec in recs:
            counts[(rec.kind, rec.policy, self._one(rec, snapshot, now, cycle))] += 1
        for (reason, kind, policy), n in sorted(cycle.overflow.items()):
            self.journal.append(Entry(
                id=new_id(), phase=Phase.BLOCKED, kind=kind, target="*", policy=policy,
                mode="enforce" if self.enforcing(policy) else "dry_run",
                outcome=Outcome.BLOCKED, reason=reason, count=n,
                summary=f"{n} more {kind.value} recommendation(s) of {policy} blocked by "
                        f"{reason} this cycle (not journaled one by one)"))
        self.totals.update(counts)
        if self.publisher is not None and table is not None:
            self.publisher.cycle(table, snapshot.taken_at, cycle.block,
                                 not self.global_dry_run and self.writer is not None,
                                 self.confirm_write)
        return counts

    # --- one recommendation ---------------------------------------------------
    def _one(self, rec: Recommendation, snap: Snapshot, now: float, cycle: _Cycle) -> Outcome:
        if rec.kind.advisory:
            return Outcome.ADVISORY
        base = Entry(id=new_id(), phase=Phase.DRY_RUN, kind=rec.kind, target=rec.target,
                     policy=rec.policy, value=rec.value.to_json(), rule=rec.explanation.rule,
                     summary=rec.explanation.summary,
                     mode="enforce" if self.enforcing(rec.policy) else "dry_run")
        why = None if cycle.block else unavailable(rec.kind, snap)
        if why:
            return self._block(base, Block.LEVER_UNAVAILABLE, rec.previous, why, cycle)
        reason = cycle.block or self._guard(rec, snap, now, cycle)
        if reason:
            return self._block(base, reason, rec.previous, cycle=cycle)
        if not self.enforcing(rec.policy):
            self.journal.append(replace(base, outcome=Outcome.DRY_RUN,
                                        previous=_json(rec.previous)))
            self.memory.wrote((rec.kind, rec.target), rec.policy, rec.previous, rec.value, now)
            cycle.count += 1
            return Outcome.DRY_RUN
        assert self.writer is not None
        if not cycle.checked:
            try:
                self.writer.ensure_active()
            except ConnectorError as exc:
                cycle.block = Block.of_rm(exc)
                return self._block(base, cycle.block, rec.previous, str(exc), cycle)
            cycle.checked = True
        return self._enforce(self.writer, base, rec.value, now, cycle)

    def _enforce(self, writer: Writer, base: Entry, value: Payload, now: float,
                 cycle: _Cycle) -> Outcome:
        def check(previous: Payload | None) -> None:
            if self._too_small(base.kind, previous, value):
                raise _Vetoed(previous)
            if not self.confirm_write():
                raise _Vetoed(previous, Block.NOT_LEADER)

        try:
            result = journaled_write(writer, self.journal, base, value, check)
        except _Vetoed as veto:
            if veto.reason is Block.NOT_LEADER:
                cycle.block = veto.reason
            return self._block(base, veto.reason, veto.previous, cycle=cycle)
        outcome = Outcome(result.outcome or Outcome.FAILED)
        if self.watchdog is not None:
            self.watchdog.wrote(base.policy, outcome, now)
        if result.sent:
            self.memory.wrote((base.kind, base.target), base.policy, entry_previous(result),
                              value, now)
            cycle.count += 1
        ends = Block.of_outcome(outcome)
        if ends is not None:
            cycle.block = ends
        return outcome

    def _block(self, base: Entry, reason: Block, previous: Payload | None,
               error: str | None = None, cycle: _Cycle | None = None) -> Outcome:
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
                return Outcome.BLOCKED
            if cycle is not None:
                cycle.blocked_lines += 1
            self.journal.append(replace(base, phase=Phase.BLOCKED, outcome=Outcome.BLOCKED,
                                        reason=reason, previous=_json(previous), error=error))
        return Outcome.BLOCKED

    def say_unavailable(self, snap: Snapshot) -> None:
        """Log each lever the RM cannot honour once per process (the first cycle that
        sees it, whether or not a policy asked for it yet), and once more if it comes
        back (e.g. after ``yarn rmadmin -refreshClusterMaxPriority``)."""
        now = all_unavailable(snap)
        for kind, why in now.items():
            if self._said.get(kind) != why:
                self._said[kind] = why
                log.warning("%s recommendations stay advisory: %s", kind.value, why)
        for kind in [k for k in self._said if k not in now]:
            del self._said[kind]
            log.info("%s recommendations can take effect again: the RM honours them",
                     kind.value)

    # --- guardrails -------------------------------------------------------------
    def _cycle_block(self, snap: Snapshot, now: float) -> Block | None:
        s = self.settings
        if s.kill_switch or self.halted or (s.kill_switch_file
                                            and os.path.exists(s.kill_switch_file)):
            return Block.KILL_SWITCH
        if now - snap.taken_at / 1000 > s.max_snapshot_age_s:
            return Block.STALE_SNAPSHOT
        if self._resyncing(snap, now):
            return Block.RM_RESYNC
        if snap.cluster.ha_state not in ("ACTIVE", ""):
            return Block.RM_NOT_ACTIVE
        if not self.may_write():
            return Block.NOT_LEADER
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

    def _guard(self, rec: Recommendation, snap: Snapshot, now: float,
               cycle: _Cycle) -> Block | None:
        s = self.settings
        if rec.kind.irreversible and not s.allow_kill_like:
            return Block.KILL_LIKE_DISABLED
        scope = self._scope(rec, snap)
        if scope:
            return scope
        key = (rec.kind, rec.target)
        if self.memory.held_until(key) > now:
            return Block.ROLLBACK_HOLD
        times = self.memory.recent(key, now - s.target_window_s)
        owner = self.memory.owner(key)
        if (owner is not None and owner[0] != rec.policy and now - owner[1] < s.target_window_s
                and rec.kind is not Kind.UPDATE_SCHEDULER_CONF):  # conf: keys differ
            return Block.POLICY_CONFLICT
        if self.memory.restoring(key, rec.value):
            return None  # back to what it was before the advisor: never rate-limited
        if times and now - max(times) < s.cooldown_s_for(rec.kind):
            return Block.COOLDOWN
        if len(times) >= s.max_actions_per_target_for(rec.kind):
            return Block.MAX_PER_TARGET
        if cycle.count >= s.max_actions_per_cycle:
            return Block.MAX_PER_CYCLE
        if rec.previous is not None and self._too_small(rec.kind, rec.previous, rec.value):
            return Block.MIN_CHANGE
        return None

    def _scope(self, rec: Recommendation, snap: Snapshot) -> Block | None:
        """Scope by the kind's target (indexes of the snapshot: no per-call rebuilds)."""
        s, target = self.settings, rec.target
        kind_target = rec.kind.target
        if kind_target is Target.QUEUE:
            ok = not s.queues.allow if target == SCHEDULER else s.queues.admits(*_qnames(target))
            return None if ok else Block.OUT_OF_SCOPE
        if kind_target is Target.CLUSTER:
            return None if not s.nodes.allow else Block.OUT_OF_SCOPE
        app_id = node_id = None
        if kind_target is Target.APP:
            app_id = target
        elif kind_target is Target.NODE:
            node_id = target
        elif kind_target is Target.CONTAINER:
            c = snap.container_by_id.get(target)
            if c is None:
                return Block.UNKNOWN_TARGET
            app_id, node_id = c.app_id, c.node_id
        ok = True
        if app_id is not None:
            app = snap.app_by_id.get(app_id)
            if app is None:
                return Block.UNKNOWN_TARGET
            ok = s.apps.admits(app.id, app.name) and s.queues.admits(*_qnames(app.queue))
            if isinstance(rec.value, Queue):
                ok = ok and s.queues.admits(*_qnames(rec.value.path))
        if node_id is not None:
            node = snap.node_by_id.get(node_id)
            if node is None:
                return Block.UNKNOWN_TARGET
            ok = ok and s.nodes.admits(node.id, node.host)
        return None if ok else Block.OUT_OF_SCOPE

    def _too_small(self, kind: Kind, previous: Payload | None, value: Payload) -> bool:
        """True if the change is below the minimum size (never for equal values)."""
        s = self.settings
        if previous is None or holds(kind, previous, value):
            return False
        if isinstance(value, Priority) and isinstance(previous, Priority):
            return abs(value.value - previous.value) < s.min_priority_delta
        pairs: list[tuple[object, object]]
        if isinstance(value, NodeResource) and isinstance(previous, NodeResource):
            pairs = [(p, v) for p, v in ((previous.memory_mb, value.memory_mb),
                                         (previous.vcores, value.vcores)) if v is not None]
        elif isinstance(value, ConfUpdate) and isinstance(previous, ConfUpdate):
            have = previous.settings
            pairs = [(have.get(k), v) for k, v in value.items]
        else:
            return False
        return all(_relative(p, v) < s.min_change_fraction for p, v in pairs)

    # --- history and kill switch --------------------------------------------------
    def learn(self, e: Entry, horizon: float, own: bool) -> None:
        """Take a journaled ``e`` into account: a rollback holds its target; an intent
        of this advisor's own (``own``) newer than ``horizon`` counts for cooldowns,
        per-target limits, the target's origin and owner. Called on the journal at
        start, on lines other processes appended, and by HA for restored or peer
        advisors' entries."""
        key = (e.kind, e.target)
        if e.phase is Phase.TRIPPED:  # a restart or a new leader keeps the policy in dry-run
            self.memory.trip(e.policy, e.ts + self.settings.watchdog.hold_s)
        elif e.policy == ROLLBACK and e.phase in (Phase.INTENT, Phase.RESULT):
            self.memory.hold(key, e.ts + self.settings.rollback_hold_s)
        elif own and e.phase is Phase.INTENT and e.ts >= horizon:
            try:
                value: Payload | None = value_from_json(e.kind, e.value)
            except ValueError:
                value = None  # another version's shape: its time and owner still count
            self.memory.wrote(key, e.policy, entry_previous(e), value, e.ts)

    # --- the harm watchdog ------------------------------------------------------------
    def _watch(self, snap: Snapshot, now: float) -> None:
        """Enforce mode, a cycle that may write: count harm; trip each policy past a
        threshold (dry-run for ``hold_s``, journaled, logged, counted) and roll back its
        live changes through :meth:`rollback`."""
        if self.watchdog is None or not self.watchdog.settings.enabled or \
                self.global_dry_run or self.writer is None:
            return
        for trip in self.watchdog.observe(snap, now, self.memory.changed(),
                                          self.memory.origins):
            if self.enforcing(trip.policy):
                self._trip(trip, now)

    def tripped_policies(self) -> list[str]:
        """The policies the harm watchdog holds in dry-run now."""
        return sorted(p for p in self.memory.tripped if self.memory.is_tripped(p, self._now))

    def _trip(self, trip: Trip, now: float) -> None:
        hold = self.settings.watchdog.hold_s
        self.memory.trip(trip.policy, now + hold)
        self.trips[(trip.policy, trip.signal)] += 1
        live = self.memory.changed()
        oldest: dict[Key, Action] = {}  # newest first: the last seen is the first change
        for a in select(self.journal.actions()):
            if a.policy == trip.policy and live.get((a.kind, a.target), ("",))[0] == a.policy:
                oldest[(a.kind, a.target)] = a
        mine = list(oldest.values())  # one write per target, back to before the policy
        self.journal.append(Entry(
            id=new_id(), phase=Phase.TRIPPED, kind=trip.kind, target=trip.target,
            policy=trip.policy, outcome="tripped", reason=trip.signal.value, count=trip.count,
            summary=f"{trip.summary}: {trip.policy} is in dry-run for {hold:.0f} s and its "
                    f"{len(mine)} live change(s) are rolled back"))
        log.warning("watchdog: %s; %s goes to dry-run for %.0f s, rolling back %d live "
                    "change(s)", trip.summary, trip.policy, hold, len(mine))
        for step in self.rollback(mine):
            if step.outcome in DONE:
                self.memory.restored((step.kind, step.target))

    # --- rollback -------------------------------------------------------------------
    def rollback(self, actions: Sequence[Action], dry_run: bool = False) -> list[Entry]:
        """Undo ``actions`` in order (``yarn-advisor rollback``); returns one entry per step.

        Rollback's own rules, not the guardrails': it is the operator's command, so
        the kill switch, ``dry_run`` settings, scope and rate limits do not stop it
        (only ``dry_run`` here does: then each step is journaled as it would be sent).
        Each step is an ordinary journaled write of policy ``rollback`` with
        ``rollback_of``, through the one read-before-write, so a target that already
        holds its old value gets nothing. A kill-like action, or one journaled
        without its previous value, cannot be undone (journaled, with the reason);
        an action's steps stop at the first that does not land. Each restored target
        is held for ``rollback_hold_s``, here and in the daemon that reads the journal.
        """
        out: list[Entry] = []
        for action in actions:
            mode = "dry_run" if dry_run else "enforce"
            why = (Outcome.IRREVERSIBLE if action.kind.irreversible else
                   Outcome.NO_PREVIOUS_VALUE if action.previous is None else None)
            try:
                steps = [] if why else inverse(action)
            except ValueError:
                why, steps = Outcome.NO_PREVIOUS_VALUE, []
            if why:
                out.append(self.journal.append(Entry(
                    id=new_id(), phase=Phase.BLOCKED, kind=action.kind, target=action.target,
                    policy=ROLLBACK, mode=mode, value=action.value, outcome=why, reason=why,
                    rollback_of=action.id)))
                continue
            for kind, target, value in steps:
                step = Entry(id=new_id(), phase=Phase.DRY_RUN, kind=kind, target=target,
                             policy=ROLLBACK, mode=mode, value=value.to_json(),
                             summary=f"rollback of {action.id}", rollback_of=action.id)
                if dry_run or self.writer is None:
                    out.append(self.journal.append(replace(step, outcome=Outcome.DRY_RUN,
                                                           previous=action.value)))
                    continue
                result = journaled_write(self.writer, self.journal, step, value)
                self.learn(result, 0.0, own=False)
                out.append(replace(result, value=step.value))
                if result.outcome not in DONE:
                    break
        return out

    def install_signal_handlers(self) -> None:
        """SIGUSR1 engages the run-time kill switch, SIGUSR2 releases it."""

        def engage(signum: int, frame: FrameType | None) -> None:
            self.halted = signum == signal.SIGUSR1

        signal.signal(signal.SIGUSR1, engage)
        signal.signal(signal.SIGUSR2, engage)


def _json(p: Payload | None) -> JsonValue:
    return None if p is None else p.to_json()


def _qnames(queue: str) -> tuple[str, str, str]:
    """A queue as scope patterns may name it: as given, full path, leaf name."""
    full = queue if queue == "root" or queue.startswith("root.") else f"root.{queue}"
    return queue, full, queue.rsplit(".", 1)[-1]


def _relative(previous: object, value: object) -> float:
    """Relative change of a number (1.0 when not both numeric, or from zero)."""
    try:
        if not isinstance(previous, int | float | str) or not isinstance(value, int | float | str):
            raise TypeError
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
                    policy_dry_run(cfg), snapshot_clock=snapshot_clock,
                    watchdog=Watchdog(cfg.actuator.watchdog))


def open_journal(cfg: AdvisorConfig) -> Journal:
    """The journal ``cfg`` describes (its path and rotation)."""
    a = cfg.actuator
    return Journal(journal_path(cfg), int(a.journal_max_mb * (1 << 20)), a.journal_keep)


def policy_dry_run(cfg: AdvisorConfig) -> dict[str, bool | None]:
    """Each policy's own ``dry_run`` (None: the top-level setting decides)."""
    return {name: sec.dry_run for name, sec in cfg.policies.sections().items()}
