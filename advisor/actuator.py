"""The actuator: the only code that writes to the RM, bounded and journaled.

``Actuator.act(recs, snapshot)`` is the daemon's act step: it takes the
cycle's recommendations (``Recommendation.to_dict()`` dicts) and returns
counts by ``(kind, policy, outcome)``. Advisory kinds are never sent. Each
other recommendation passes the guardrails in this order, the first that
fires blocks it (journaled ``blocked`` with that reason):

kill switch (config, file, SIGUSR1) -> stale snapshot -> RM not active in the
snapshot -> unknown kind -> kill-like not allowed -> scope (queue/app/node
allow- and denylists) -> hold after a rollback -> cooldown -> max actions per
target (in a window) -> max actions per cycle -> minimum change size.

Then, in dry-run (the default: top-level ``dry_run``, or the policy's own
``dry_run: true``) it is journaled as ``dry_run``. In enforce mode the RM is
checked live once per cycle (active and reachable), and the write goes
through :class:`~yarn_advisor.connectors.rm_write.RMWriter`: read, ``intent`` journaled with
that previous value, one write, ``result`` journaled with the RM's answer and
the value read back. A write whose answer is lost (timeout) is never resent:
the value is read back once and the outcome is ``applied`` or ``unknown``.
The same block of the same target is journaled once per ``QUIET_S`` (always
counted). Totals by (kind, policy, outcome) and blocks by reason are kept in
``totals`` and ``blocked`` for the metrics.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from yarn_advisor.advisor.journal import Journal, Record, Writer, journaled_write, new_id
from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.config.schema import ActuatorSettings, AdvisorConfig
from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.rm import RMClient
from yarn_advisor.connectors.rm_write import IRREVERSIBLE, SCHEDULER, RMWriter, lever

ACTUATABLE = frozenset({"set_app_priority", "move_app_queue", "update_scheduler_conf",
                        "replace_node_labels", "update_node_resource", "signal_container",
                        "kill_app"})
APP_KINDS = frozenset({"set_app_priority", "move_app_queue", "kill_app"})
NODE_KINDS = frozenset({"replace_node_labels", "update_node_resource"})
Counts = dict[tuple[str, str, str], int]
QUIET_S = 600.0  # the same block of the same target is journaled once per this many seconds


class _Veto(Exception):
    def __init__(self, previous: Any) -> None:
        self.previous = previous


@dataclass
class _Cycle:
    block: str | None
    count: int = 0
    checked: bool = False


@dataclass
class Actuator:
    """Dry-run or enforce recommendations within the configured guardrails."""

    settings: ActuatorSettings
    journal: Journal
    writer: Writer | None = None
    global_dry_run: bool = True
    policy_dry_run: Mapping[str, bool | None] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    # replays: "now" is the replayed snapshot's own time, so staleness,
    # cooldowns and windows behave as they would have on the recorded cluster
    snapshot_clock: bool = False
    halted: bool = False  # the run-time kill switch (SIGUSR1 / SIGUSR2)
    totals: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    blocked: Counter[str] = field(default_factory=Counter)
    _times: defaultdict[tuple[str, str], list[float]] = field(
        default_factory=lambda: defaultdict(list))
    _holds: dict[tuple[str, str], float] = field(default_factory=dict)
    _quiet: dict[tuple[str, str], tuple[str, float]] = field(default_factory=dict)
    _offset: int = 0

    def __post_init__(self) -> None:
        records, self._offset = self.journal.read()
        horizon = self.clock() - max(self.settings.target_window_s, self.settings.cooldown_s)
        for rec in records:  # a restart keeps cooldowns, per-target limits and holds
            self._learn(rec, horizon, own=True)

    def enforcing(self, policy: str) -> bool:
        """True when ``policy``'s recommendations are really sent."""
        if self.global_dry_run or self.writer is None:
            return False
        return self.policy_dry_run.get(policy) is not True

    def act(self, recs: list[dict[str, Any]], snapshot: Snapshot) -> Counts:
        """The daemon's act step: counts by (kind, policy, outcome)."""
        now = snapshot.taken_at / 1000 if self.snapshot_clock else self.clock()
        records, self._offset = self.journal.read(self._offset)
        for rec in records:  # rollbacks journaled by another process
            self._learn(rec, now, own=False)
        cycle = _Cycle(self._cycle_block(snapshot, now))
        counts: Counter[tuple[str, str, str]] = Counter()
        for rec in recs:
            outcome = self._one(rec, snapshot, now, cycle)
            counts[(str(rec.get("kind")), str(rec.get("policy")), outcome)] += 1
        self.totals.update(counts)
        return dict(counts)

    # --- one recommendation ---------------------------------------------------
    def _one(self, rec: Mapping[str, Any], snap: Snapshot, now: float, cycle: _Cycle) -> str:
        kind, target, policy = str(rec.get("kind")), str(rec.get("target")), str(rec.get("policy"))
        if kind.startswith("advise_"):
            return "advisory"
        value, previous = rec.get("value"), rec.get("previous")
        expl = rec.get("explanation")
        expl = expl if isinstance(expl, Mapping) else {}
        base: Record = {"id": new_id(), "kind": kind, "target": target, "policy": policy,
                        "value": value, "rule": expl.get("rule"), "summary": expl.get("summary"),
                        "mode": "enforce" if self.enforcing(policy) else "dry_run"}
        reason = cycle.block or self._guard(kind, target, value, previous, snap, now, cycle)
        if reason:
            return self._block(base, reason, previous)
        if not self.enforcing(policy):
            self.journal.append({**base, "phase": "dry_run", "outcome": "dry_run",
                                 "previous": previous})
            self._times[(kind, target)].append(now)
            cycle.count += 1
            return "dry_run"
        assert self.writer is not None
        if not cycle.checked:
            try:
                self.writer.ensure_active()
            except ConnectorError as exc:
                cycle.block = f"rm_{exc.reason}"
                return self._block(base, cycle.block, previous, str(exc))
            cycle.checked = True
        return self._enforce(self.writer, base, now, cycle)

    def _enforce(self, writer: Writer, base: Record, now: float, cycle: _Cycle) -> str:
        kind, target, value = base["kind"], base["target"], base["value"]

        def check(previous: Any) -> None:
            if self._too_small(kind, previous, value):
                raise _Veto(previous)

        try:
            outcome, result = journaled_write(writer, self.journal, base, check)
        except _Veto as veto:
            return self._block(base, "min_change", veto.previous)
        if result["sent"]:
            self._times[(kind, target)].append(now)
            cycle.count += 1
        if outcome in ("standby", "unavailable"):
            cycle.block = f"rm_{outcome}"
        return outcome

    def _block(self, base: Record, reason: str, previous: Any, error: str | None = None) -> str:
        """Count a blocked action; journal it unless it repeats the last block of its target."""
        self.blocked[reason] += 1
        key, now = (base["kind"], base["target"]), self.clock()
        sig = f"{reason}:{json.dumps(base['value'], sort_keys=True, default=str)}"
        last = self._quiet.get(key)
        if last is None or last[0] != sig or now - last[1] >= QUIET_S:
            self._quiet[key] = (sig, now)
            self.journal.append({**base, "phase": "blocked", "outcome": "blocked",
                                 "reason": reason, "previous": previous,
                                 **({"error": error} if error else {})})
        return "blocked"

    # --- guardrails -------------------------------------------------------------
    def _cycle_block(self, snap: Snapshot, now: float) -> str | None:
        s = self.settings
        if s.kill_switch or self.halted or (s.kill_switch_file
                                            and os.path.exists(s.kill_switch_file)):
            return "kill_switch"
        if now - snap.taken_at / 1000 > s.max_snapshot_age_s:
            return "stale_snapshot"
        if snap.cluster.ha_state not in ("ACTIVE", ""):
            return "rm_not_active"
        return None

    def _guard(self, kind: str, target: str, value: Any, previous: Any, snap: Snapshot,
               now: float, cycle: _Cycle) -> str | None:
        s = self.settings
        if kind not in ACTUATABLE:
            return "unknown_kind"
        if kind in IRREVERSIBLE and not s.allow_kill_like:
            return "kill_like_disabled"
        scope = self._scope(kind, target, value, snap)
        if scope:
            return scope
        key = (kind, target)
        if self._holds.get(key, 0.0) > now:
            return "rollback_hold"
        times = self._times[key] = [t for t in self._times[key] if t > now - s.target_window_s]
        if times and now - max(times) < s.cooldown_s:
            return "cooldown"
        if len(times) >= s.max_actions_per_target:
            return "max_per_target"
        if cycle.count >= s.max_actions_per_cycle:
            return "max_per_cycle"
        if previous is not None and self._too_small(kind, previous, value):
            return "min_change"
        return None

    def _scope(self, kind: str, target: str, value: Any, snap: Snapshot) -> str | None:
        s = self.settings
        apps = {a.id: a for a in snap.apps}
        nodes = {n.id: n for n in snap.nodes}
        app_id, node_id = (target, None) if kind in APP_KINDS else (None, target)
        if kind == "update_scheduler_conf":
            ok = not s.queues.allow if target == SCHEDULER else s.queues.admits(*_qnames(target))
            return None if ok else "out_of_scope"
        if kind == "signal_container":
            c = next((c for c in snap.containers if c.id == target), None)
            if c is None:
                return "unknown_target"
            app_id, node_id = c.app_id, c.node_id
        ok = True
        if app_id is not None:
            app = apps.get(app_id)
            if app is None:
                return "unknown_target"
            ok = s.apps.admits(app.id, app.name) and s.queues.admits(*_qnames(app.queue))
            if kind == "move_app_queue":
                ok = ok and s.queues.admits(*_qnames(str(value)))
        if node_id is not None:
            node = nodes.get(node_id)
            if node is None:
                return "unknown_target"
            ok = ok and s.nodes.admits(node.id, node.host)
        return None if ok else "out_of_scope"

    def _too_small(self, kind: str, previous: Any, value: Any) -> bool:
        """True if the change is below the minimum size (never for equal values)."""
        s = self.settings
        try:
            if lever(kind).same(previous, value):
                return False
            if kind == "set_app_priority":
                return abs(int(value) - int(previous)) < s.min_priority_delta
            if kind == "update_node_resource":
                pairs = [(previous[k], value[k]) for k in ("memory_mb", "vcores") if k in value]
            elif kind == "update_scheduler_conf":
                pairs = [(previous.get(k), v) for k, v in value.items()]
            else:
                return False
            return all(_relative(p, v) < s.min_change_fraction for p, v in pairs)
        except (TypeError, ValueError, KeyError, AttributeError):
            return False

    # --- history and kill switch --------------------------------------------------
    def _learn(self, rec: Record, horizon: float, own: bool) -> None:
        key, ts = (str(rec.get("kind")), str(rec.get("target"))), float(rec.get("ts", 0.0))
        if rec.get("policy") == "rollback" and rec.get("phase") in ("intent", "result"):
            until = ts + self.settings.rollback_hold_s
            self._holds[key] = max(self._holds.get(key, 0.0), until)
        elif own and rec.get("phase") == "intent" and ts >= horizon:
            self._times[key].append(ts)

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
    return Path(cfg.actuator.journal_path or Path(cfg.state_dir) / "journal.jsonl")


def build_actuator(cfg: AdvisorConfig, rm: RMClient | None, replay: bool = False) -> Actuator:
    """The actuator for ``cfg``; with ``rm`` None it can only dry-run; ``replay``
    takes the time from each replayed snapshot."""
    s = cfg.actuator
    writer = RMWriter(rm, s.overcommit_timeout_ms) if rm is not None else None
    per_policy = {name: sec.get("dry_run") for name, sec in cfg.policies.items()
                  if isinstance(sec, Mapping)}
    return Actuator(s, Journal(journal_path(cfg)), writer, cfg.dry_run, per_policy,
                    snapshot_clock=replay)
