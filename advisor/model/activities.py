"""What the RM's scheduler did with one application's requests (its Activities API).

``/ws/v1/cluster/scheduler/app-activities/{appid}`` records, for a bounded time,
each allocation attempt of the application on a node heartbeat: the node, the
outcome (``ALLOCATED``, ``SKIPPED``, ``REJECTED``, ``RESERVED``) and the
scheduler's diagnostic (``ActivityDiagnosticConstant``: headroom, partition,
locality, node resource). The advisor reads it to say why a lever it pulled (a
priority raised, a label written) changed nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

ALLOCATED = "ALLOCATED"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One request of the app tried on one node at one heartbeat, as the RM recorded it."""

    node_id: str
    ts_ms: int
    state: str
    diagnostic: str
    request_priority: int | None = None
    allocation_request_id: int | None = None


@dataclass(frozen=True, slots=True)
class AppActivities:
    """The recorded attempts of one application; ``diagnostic`` is the RM's note on the
    recording itself (``waiting for display`` right after it was asked to record)."""

    app_id: str
    diagnostic: str
    attempts: tuple[Attempt, ...]

    def skips(self) -> list[tuple[str, int, tuple[str, ...]]]:
        """Each reason an attempt did not allocate, how often, and on which nodes; most
        frequent first."""
        count: Counter[str] = Counter()
        nodes: dict[str, set[str]] = {}
        for a in self.attempts:
            if a.state == ALLOCATED or not a.diagnostic:
                continue
            count[a.diagnostic] += 1
            nodes.setdefault(a.diagnostic, set()).add(a.node_id)
        return [(d, n, tuple(sorted(nodes[d]))) for d, n in count.most_common()]

    def allocated(self) -> int:
        return sum(1 for a in self.attempts if a.state == ALLOCATED)

    def summary(self) -> str:
        """One line per reason, for a person (``explain``)."""
        if not self.attempts:
            return f"no allocation attempt recorded ({self.diagnostic or 'empty'})"
        lines = [f"{len(self.attempts)} attempt(s) recorded, {self.allocated()} allocated"]
        lines += [f"skipped {n}x on {', '.join(hosts)}: {d}" for d, n, hosts in self.skips()]
        return "\n".join(lines)
