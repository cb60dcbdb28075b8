"""OPERA's state between cycles: raised nodes, PRESERVE's blocks, reservations, loans.

Immutable; ``to_json``/``from_json`` are its only JSON forms (checkpoints, HA).
``from_json`` is defensive: a state from an older version or a damaged
checkpoint loses its malformed entries rather than failing the policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from yarn_advisor.advisor.model.jsonvalue import JsonDict
from yarn_advisor.advisor.policies.opera import core as oc

VERSION = 1
Reservation = tuple[str, int]  # (request group key, skip count)


@dataclass(frozen=True)
class State:
    """``bases``: node -> capacity before OPERA raised it; ``blocks``: PRESERVE's BR/BT
    where they differ from the initial ones; ``reservations``: node -> reserved tasks;
    ``lent``: node -> (memory MiB, vcores) lent this cycle; ``lent_at``: node -> when
    it last lent (ms; the raise is held ``return_after_s`` after); ``stats``: counts."""

    bases: Mapping[str, oc.Vec] = field(default_factory=dict)
    blocks: Mapping[str, oc.Block] = field(default_factory=dict)
    reservations: Mapping[str, tuple[Reservation, ...]] = field(default_factory=dict)
    lent: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    updated_at: int = 0
    stats: Mapping[str, int] = field(default_factory=dict)
    lent_at: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> JsonDict:
        """The JSON form (checkpoints and HA)."""
        return {
            "version": VERSION,
            "updated_at": self.updated_at,
            "bases": {k: [v[0], v[1]] for k, v in sorted(self.bases.items())},
            "blocks": {
                k: {"br": [b.br[0], b.br[1]], "bt_ms": b.bt_ms, "last_relief": b.last_relief}
                for k, b in sorted(self.blocks.items())
            },
            "reservations": {k: [[key, skip] for key, skip in v]
                             for k, v in sorted(self.reservations.items())},
            "lent": {k: {"memory_mb": v[0], "vcores": v[1]} for k, v in sorted(self.lent.items())},
            "stats": dict(self.stats),
            "lent_at": dict(sorted(self.lent_at.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        """Inverse of :meth:`to_json`, dropping malformed entries."""
        bases = {str(k): v for k, raw in _map(data.get("bases")).items()
                 if (v := _vec(raw)) is not None}
        blocks: dict[str, oc.Block] = {}
        for nid, raw in _map(data.get("blocks")).items():
            b = _map(raw)
            br, bt, last = _vec(b.get("br")), b.get("bt_ms"), b.get("last_relief")
            if br is None or not _number(bt):
                continue
            last_ok = last if isinstance(last, int) and not isinstance(last, bool) else None
            blocks[str(nid)] = oc.Block(br, float(bt), last_ok)
        reservations: dict[str, tuple[Reservation, ...]] = {}
        for nid, raw in _map(data.get("reservations")).items():
            kept = tuple((r[0], r[1]) for r in (raw if isinstance(raw, list | tuple) else ())
                         if isinstance(r, list | tuple) and len(r) == 2
                         and isinstance(r[0], str) and isinstance(r[1], int)
                         and not isinstance(r[1], bool))
            if kept:
                reservations[str(nid)] = kept
        lent = {str(k): (int(v[0]), int(v[1])) for k, raw in _map(data.get("lent")).items()
                if (v := _vec(raw)) is not None}
        updated = data.get("updated_at")
        stats = {str(k): v for k, v in _map(data.get("stats")).items()
                 if isinstance(v, int) and not isinstance(v, bool)}
        lent_at = {str(k): int(v) for k, v in _map(data.get("lent_at")).items() if _number(v)}
        return cls(bases, blocks, reservations, lent,
                   updated if isinstance(updated, int) and not isinstance(updated, bool) else 0,
                   stats, lent_at)


def _number(x: object) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _vec(raw: object) -> oc.Vec | None:
    """A (memory, vcores) pair from ``[m, v]`` or ``{memory_mb, vcores}``."""
    if isinstance(raw, list | tuple) and len(raw) == 2:
        a, b = raw
        if _number(a) and _number(b):
            return (float(a), float(b))
    if isinstance(raw, Mapping):
        return _vec([raw.get("memory_mb"), raw.get("vcores")])
    return None


def _map(raw: object) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}
