"""Two advisors, one writer: the daemon's side of leader election in ZooKeeper (docs/ha.md).

With an ``ha`` section every advisor senses, decides and serves its endpoints
each cycle; only the leader's actuator writes to the RM. The actuator asks
``may_write`` once per cycle (the kill-switch-like ``not_leader`` block) and
``confirm_write`` right before each RM write (one ZooKeeper round trip on the
leader's lock znode). While the session is SUSPENDED or LOST nothing is
written; after a reconnect, or on becoming leader, the state is re-read from
ZooKeeper before anything is written (:class:`HaCoordinator.before_cycle`).

The leader saves its state (:mod:`.state`) after the act step (the
actuator's part: a write the next leader must know of is in ZooKeeper before
this cycle learns) and after the learn step (classifier and policies). Each
advisor journals to its own file, ``journal.<advisor id>.jsonl``; the
actuator part names the writer, its journal and its last applied actions, so
a follower knows where the old leader's record is. A leader killed between
an RM write and that save leaves the write in its journal only: a new leader
that can read that file (a shared ``state_dir``) learns it from there, and
each cycle every advisor reads the rollback lines of the other journals
(a rollback run on the other host holds the target here too).
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.engine.settings import with_overrides
from yarn_advisor.advisor.ha.journals import advisor_id, journal_files, own_journal_path
from yarn_advisor.advisor.ha.state import (
    LAST_ACTIONS,
    Member,
    actuator_part,
    export_parts,
    learn_unsaved_writes,
    restore_parts,
)
from yarn_advisor.advisor.ha.status import HaStatus
from yarn_advisor.config.base import ConfigError
from yarn_advisor.config.schema import AdvisorConfig, Ha
from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.zookeeper.election import ZooKeeperConfig, ZooKeeperHA

log = logging.getLogger("yarn_advisor")

_SESSION = {"leader": "CONNECTED", "follower": "CONNECTED", "suspended": "SUSPENDED"}


def per_advisor_config(cfg: AdvisorConfig) -> AdvisorConfig:
    """With ``ha``: this advisor's own journal and classifier file (two advisors may
    share ``state_dir``; each journals what it did, ZooKeeper holds the shared state)."""
    if cfg.ha is None:
        return cfg
    ident = advisor_id(cfg)
    model = Path(cfg.classifier.checkpoint or Path(cfg.state_dir) / "classifier.json")
    return with_overrides(cfg, {
        "actuator": {"journal_path": str(own_journal_path(cfg))},
        "classifier": {"checkpoint": str(model.with_name(f"{model.stem}.{ident}.json"))},
    })


def zookeeper_config(cfg: AdvisorConfig) -> ZooKeeperConfig:
    """The connector's configuration for ``cfg.ha`` (reads the password file)."""
    ha = _need(cfg)
    zk, auth = ha.zookeeper, ha.zookeeper.auth
    password = ""
    if auth.password_file:
        try:
            password = Path(auth.password_file).read_text().strip()
        except OSError as exc:
            raise ValueError(f"ha.zookeeper.auth.password_file: {exc}") from None
    sasl: dict[str, str] | None = None
    if auth.method == "sasl":
        sasl = {"mechanism": auth.sasl_mechanism, "service": auth.sasl_service}
        if auth.sasl_mechanism == "DIGEST-MD5":
            sasl |= {"username": auth.user or "", "password": password}
        elif auth.principal:
            sasl["principal"] = auth.principal
    return ZooKeeperConfig(
        hosts=zk.hosts, cluster_name=ha.cluster_name, path=zk.path or "",
        session_timeout_s=zk.session_timeout_s, connect_timeout_s=zk.connect_timeout_s,
        digest=f"{auth.user}:{password}" if auth.method == "digest" else "", sasl=sasl,
        identity=f"{advisor_id(cfg)}:{os.getpid()}")


def rm_discovery_config(cfg: AdvisorConfig) -> ZooKeeperConfig:
    """Where the RMs' election lock is read: ``rm.zookeeper.hosts``, else ha's
    ZooKeeper with its credentials (the same connect string also takes ha's auth).
    A problem is a :class:`ConfigError` (one line, no traceback)."""
    hosts, ha = cfg.rm.zookeeper.hosts, cfg.ha
    try:
        if ha is not None and hosts in (None, ha.zookeeper.hosts):
            return zookeeper_config(cfg)
        if hosts is None:
            raise ValueError("needs rm.zookeeper.hosts or ha.zookeeper.hosts")
        return ZooKeeperConfig(hosts=hosts)
    except ValueError as exc:
        raise ConfigError([f"rm.zookeeper: {exc}"]) from None


class HaCoordinator:
    """Gates the actuator on leadership and moves the state through ZooKeeper."""

    def __init__(self, zk: ZooKeeperHA, ident: str) -> None:
        self.zk = zk
        self.ident = ident
        self.problems: dict[str, str] = {}  # parts not taken at the last load, and why
        self._sizes: dict[str, int] = {}
        self._checkpoint_at: float | None = None
        self._last: deque[Entry] = deque(maxlen=LAST_ACTIONS)
        self._offset = 0
        self._journal = ""
        self._peers: dict[Path, Journal] = {}  # the other advisors' journals, read on
        self._peer_offsets: dict[Path, int] = {}

    def attach(self, advisor: Member) -> None:
        """Make ``advisor``'s actuator ask ZooKeeper before it writes (the caller hooks
        this coordinator around the advisor's cycles)."""
        advisor.actuator.may_write = self.zk.may_write
        advisor.actuator.confirm_write = self.zk.confirm_leadership
        self._journal = str(advisor.actuator.journal.path)
        self._track(advisor)

    # --- around each cycle (CycleHooks) ------------------------------------
    def before_cycle(self, advisor: Member) -> None:
        """A leader whose state is not fresh (new leadership, reconnect) re-reads it."""
        self._learn_peer_rollbacks(advisor)
        if not (self.zk.is_leader and self.zk.needs_reload):
            return
        try:
            parts = self.zk.load()
        except ConnectorError as exc:
            log.warning("HA: state not re-read (%s); not writing this cycle", exc)
            return
        self.problems = dict(self.zk.load_errors) | restore_parts(advisor, parts)
        if "actuator" not in self.problems:
            unsaved = learn_unsaved_writes(advisor, parts.get("actuator"))
            if unsaved:
                log.warning("HA: %d write(s) of the old leader were journaled after its last "
                            "save; learned from its journal", unsaved)
        for name, why in sorted(self.problems.items()):
            log.error("HA: saved state %r not used (%s); that part starts fresh", name, why)
        self._sizes = {n: len(b) for n, b in parts.items() if n not in self.problems}
        self._checkpoint_at = time.time()
        log.info("HA: leader %s took the saved state (%s)", self.ident,
                 ", ".join(f"{n} {s} B" for n, s in sorted(self._sizes.items())) or "none yet")

    def after_act(self, advisor: Member) -> None:
        """The actuator's part first: the next leader must know of this cycle's writes."""
        self._track(advisor)
        if self.zk.may_write():
            self._save({"actuator": actuator_part(advisor, self._writer(), self._last)})

    def after_cycle(self, advisor: Member) -> None:
        if self.zk.may_write():
            self._save(export_parts(advisor, self._writer(), self._last))

    def status(self) -> HaStatus:
        role = self.zk.role
        return HaStatus(role, _SESSION.get(role, "LOST"),
                        sum(self._sizes.values()), self._checkpoint_at)

    def stop(self) -> None:
        """Leave the election at once (the peer takes over without a session timeout)."""
        self.zk.stop()

    # --- helpers -----------------------------------------------------------
    def _save(self, parts: dict[str, bytes]) -> None:
        for name, data in parts.items():
            try:
                self.zk.save(name, data)
            except ConnectorError as exc:
                log.warning("HA: state %r not saved: %s", name, exc)
                return
            self._sizes[name] = len(data)
        self._checkpoint_at = time.time()

    def _track(self, advisor: Member) -> None:
        """Keep the last applied (or possibly applied) writes of this advisor's journal."""
        entries, self._offset = advisor.actuator.journal.read(self._offset)
        self._last.extend(e for e in entries if e.phase is Phase.INTENT)

    def _learn_peer_rollbacks(self, advisor: Member) -> None:
        """A rollback run on another advisor's host is journaled in that advisor's file
        (:mod:`.journals`): hold its targets here too (``rollback_hold_s``), as the
        actuator does for a rollback in its own journal."""
        own = advisor.actuator.journal.path
        suffix = f".{self.ident}{own.suffix}"
        if not own.name.endswith(suffix):
            return
        base = own.with_name(own.name[:-len(suffix)] + own.suffix)
        for path in journal_files(base):
            if path != own and path not in self._peers and path.exists():
                self._peers[path], self._peer_offsets[path] = Journal(path), 0
        now = time.time()
        for path, journal in self._peers.items():
            entries, self._peer_offsets[path] = journal.read(self._peer_offsets[path])
            for e in entries:
                if e.policy == "rollback":
                    advisor.actuator.learn(e, now, own=False)

    def _writer(self) -> dict[str, Any]:
        return {"advisor": self.ident, "identity": self.zk.config.identity,
                "journal": self._journal}


def start_ha(cfg: AdvisorConfig, advisor: Member) -> HaCoordinator:
    """Join the election for ``cfg.ha`` (in the background: a ZooKeeper that is down
    only keeps this advisor observing) and gate ``advisor`` on it."""
    try:
        zk = ZooKeeperHA(zookeeper_config(cfg))
    except ValueError as exc:
        raise ConfigError([f"ha.zookeeper: {exc}"]) from None
    coordinator = HaCoordinator(zk, advisor_id(cfg))
    coordinator.attach(advisor)
    zk.start(block=False)
    log.info("HA: advisor %s contending for leadership at %s%s", coordinator.ident,
             zk.config.hosts, zk.config.base_path)
    return coordinator


def _need(cfg: AdvisorConfig) -> Ha:
    if cfg.ha is None:
        raise ValueError("no ha section")
    return cfg.ha
