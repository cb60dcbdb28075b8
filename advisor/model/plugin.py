"""What the RM plug-in reports about itself (its JMX MBean, rm-plugin's PluginMetrics).

The advisor senses it so it can tell whether the table it publishes is the one the RM
applies (``table_seq`` / ``table_age_ms``), how often the plug-in vetoes by reason, and
how often it falls back to YARN's default and why (docs/plugin.md, *Seeing what it did*).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# the MBean's Fallbacks.<why> (rm-plugin's Verdict), exported at 0 before they happen
FALLBACKS = ("no_table", "expired", "unknown_app", "error")


@dataclass(frozen=True)
class PluginStatus:
    """The plug-in's counters since the RM started it, as the RM's ``/jmx`` serves them.

    ``table_seq`` / ``table_age_ms`` / ``table_version`` are -1 and ``table_leader`` empty
    while the plug-in applies no table; ``table_status`` is its last poll's outcome
    (``ok``, ``withdrawn``, ``unreachable: ...``, ``not_configured``, ...)."""

    table_status: str
    table_seq: int = -1
    table_age_ms: int = -1
    table_version: int = -1
    table_leader: str = ""
    admits: int = 0
    vetoes: Mapping[str, int] = field(default_factory=dict)  # reason -> attempts skipped
    fallbacks: Mapping[str, int] = field(default_factory=dict)  # why -> attempts left to YARN
    polls_ok: int = 0
    polls_failed: int = 0

    @property
    def applying(self) -> bool:
        """A table is in the plug-in's hands now (it may still be past its TTL)."""
        return self.table_seq >= 0

    @property
    def status_class(self) -> str:
        """``table_status`` without its detail (``unreachable: ...`` -> ``unreachable``),
        a bounded label value."""
        return self.table_status.split(":", 1)[0].strip() or "unknown"
