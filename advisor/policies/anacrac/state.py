"""ANACRAC's state between cycles: each app's wait (steps 20-27) and the nodes' raw counters.

``node_counters`` (node id -> ``{user, nice, system, stamp, nprocs}`` in
``/proc/stat`` ticks and/or ``{io_ms, io_stamp_ms}``) is where a counters
source puts fresh raw readings when one exists; ``counters`` keeps the
previous readings, for the deltas of Eq 4-8.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.policies.anacrac import core as ac

VERSION = 1


@dataclass(frozen=True)
class State:
    """Waits by app id, the last raw counters by node, fresh ones if a source gave any."""

    waits: Mapping[str, ac.Wait] = field(default_factory=dict)
    counters: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    node_counters: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    updated_at: int = 0

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        return {
            "version": VERSION,
            "updated_at": self.updated_at,
            "waits": {a: {"since": w.since, "containers": w.containers,
                          "memory_mb": w.memory_mb, "boosted_from": w.boosted_from}
                      for a, w in sorted(self.waits.items())},
            "counters": {n: dict(c) for n, c in sorted(self.counters.items())},
            "node_counters": {n: dict(c) for n, c in sorted(self.node_counters.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Inverse of :meth:`to_json`, dropping malformed entries."""
        waits: dict[str, ac.Wait] = {}
        for aid, w in _map(data.get("waits")).items():
            m = _map(w)
            since, cont, mem, boost = (m.get(k) for k in
                                       ("since", "containers", "memory_mb", "boosted_from"))
            if _int(cont) and _int(mem):
                waits[str(aid)] = ac.Wait(since if _int(since) else None, cont, mem,
                                          boost if _int(boost) else None)
        updated = data.get("updated_at")
        return cls(waits, _counters(data.get("counters")), _counters(data.get("node_counters")),
                   updated if _int(updated) else 0)


def _counters(raw: object) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for nid, c in _map(raw).items():
        keep = {str(k): float(v) for k, v in _map(c).items()
                if isinstance(v, int | float) and not isinstance(v, bool)}
        if keep:
            out[str(nid)] = keep
    return out


def _int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _map(raw: object) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}
