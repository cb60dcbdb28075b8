"""Every advisor's journal in one read: what ``rollback`` and ``explain`` see.

With ``ha`` each advisor journals to its own file in ``state_dir``,
``journal.<advisor id>.jsonl`` (:func:`own_journal_path`).
After a failover the actions an operator wants to undo are spread over the
journals of the old leader and the new one; a rollback run on either host
must see them all. :class:`AdvisorJournals` reads every journal of the state
directory (``journal.jsonl`` and each ``journal.*.jsonl``, their rotated files
too), merged in time order, and appends to this host's own journal (the one
its daemon reads, so the daemon on this host learns the rollback hold).
Without ``ha`` and without other journals it is the plain journal.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path

from yarn_advisor.advisor.act.actuator import journal_path
from yarn_advisor.advisor.act.journal import Entry, Journal
from yarn_advisor.config.schema import AdvisorConfig


@dataclass
class AdvisorJournals(Journal):
    """Appends to ``path``; reads ``path`` and ``others`` merged by time."""

    others: tuple[Journal, ...] = ()
    # entry id -> the journal file it was read from (which advisor did it)
    source: dict[str, Path] = field(default_factory=dict, repr=False)

    @property
    def paths(self) -> list[Path]:
        return [self.path, *(j.path for j in self.others)]

    def where(self) -> str:
        """The journals read, for messages (``a.jsonl``, or ``dir/{a.jsonl, b.jsonl}``)."""
        names = [p.name for p in self.paths]
        return str(self.path) if len(names) == 1 else \
            f"{self.path.parent}/{{{', '.join(names)}}}"

    def entries(self) -> list[Entry]:
        """Every readable entry of every journal, oldest first (a stable sort on ``ts``:
        one file's order is kept). Unreadable lines of any journal count here."""
        merged: list[tuple[Entry, Path]] = [(e, self.path) for e in super().entries()]
        for journal in self.others:
            journal.unreadable = 0
            merged += [(e, journal.path) for e in journal.entries()]
            self.unreadable += journal.unreadable
        merged.sort(key=lambda pair: pair[0].ts)
        self.source = {e.id: p for e, p in merged}
        return [e for e, _ in merged]


def every_journal(cfg: AdvisorConfig) -> AdvisorJournals:
    """The journals of every advisor sharing ``cfg``'s state directory; new lines go to
    this advisor's own (``journal.<advisor id>.jsonl`` with ``ha``, else ``journal.jsonl``)."""
    a = cfg.actuator
    size, keep = int(a.journal_max_mb * (1 << 20)), a.journal_keep
    own = own_journal_path(cfg)
    others = tuple(j for j in (Journal(p, size, keep) for p in journal_files(journal_path(cfg))
                               if p != own) if j.segments())
    return AdvisorJournals(own, size, keep, others=others)


def advisor_id(cfg: AdvisorConfig) -> str:
    """This advisor's name: ``ha.advisor_id``, else ``<hostname>-<server port>``."""
    if cfg.ha is None:
        raise ValueError("no ha section")
    return cfg.ha.advisor_id or f"{socket.gethostname()}-{cfg.server.port}"


def own_journal_path(cfg: AdvisorConfig) -> Path:
    """This advisor's journal: ``journal.<advisor id>.jsonl`` with ``ha``, else the plain one."""
    base = journal_path(cfg)
    return base if cfg.ha is None else base.with_name(f"{base.stem}.{advisor_id(cfg)}.jsonl")


def journal_files(base: Path) -> list[Path]:
    """``base`` (``journal.jsonl``) and every advisor's ``journal.<id>.jsonl`` beside it."""
    return list(dict.fromkeys([base, *sorted(base.parent.glob(f"{base.stem}.*.jsonl"))]))
