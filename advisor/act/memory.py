"""What the actuator remembers of its writes, per (kind, target): the guardrails' memory.

- ``times``: when the advisor wrote (or would have, in dry-run) in the window:
  cooldowns and the per-target limit read them;
- ``origins``: the value before the advisor's first change in the window; a
  write back to it (a return, a relief) is never rate-limited, and the origin
  is forgotten once the target is back;
- ``owners``: the policy that wrote last, and when: another policy leaves the
  target alone for ``target_window_s`` (two policies must not flap one
  application's priority);
- ``holds``: until when a rolled-back target is left alone;
- ``tripped``: until when a policy the harm watchdog tripped stays in dry-run.

One type with its own JSON form, so HA saves it and a new leader takes it
back whole (:meth:`merge`: it never forgets a write it already knew), and
:meth:`expire` drops what no guardrail can read any more (a daemon that saw
200,000 applications keeps only those of the window).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Payload, holds, previous_from_json

Key = tuple[Kind, str]  # (kind, target)


@dataclass
class GuardMemory:
    """The actuator's memory of its writes (see the module docstring)."""

    times: dict[Key, list[float]] = field(default_factory=dict)
    origins: dict[Key, Payload | None] = field(default_factory=dict)
    owners: dict[Key, tuple[str, float]] = field(default_factory=dict)
    holds: dict[Key, float] = field(default_factory=dict)
    tripped: dict[str, float] = field(default_factory=dict)

    # --- what the guardrails read ---------------------------------------------------
    def recent(self, key: Key, since: float) -> list[float]:
        """The write times of ``key`` after ``since`` (older ones are dropped)."""
        times = [t for t in self.times.get(key, ()) if t > since]
        if times:
            self.times[key] = times
        else:
            self.times.pop(key, None)
        return times

    def held_until(self, key: Key) -> float:
        return self.holds.get(key, 0.0)

    def owner(self, key: Key) -> tuple[str, float] | None:
        return self.owners.get(key)

    def changed(self) -> dict[Key, tuple[str, float]]:
        """Each live change (a target not back at its origin) and the policy that owns it."""
        return {k: self.owners[k] for k in self.origins if k in self.owners}

    def is_tripped(self, policy: str, now: float) -> bool:
        return self.tripped.get(policy, 0.0) > now

    def restoring(self, key: Key, value: Payload) -> bool:
        """True when ``value`` is what ``key`` held before the advisor changed it."""
        origin = self.origins.get(key)
        return origin is not None and holds(key[0], origin, value)

    # --- what changes it --------------------------------------------------------------
    def wrote(self, key: Key, policy: str, previous: Payload | None, value: Payload | None,
              at: float) -> None:
        """A write of ``value`` over ``previous`` by ``policy`` at ``at`` (``value``
        None: a journaled write whose value this version cannot read; its time and
        owner still count)."""
        self.times.setdefault(key, []).append(at)
        self.owners[key] = (policy, at)
        if value is None:
            return
        origin = self.origins.setdefault(key, previous)
        if origin is not None and holds(key[0], origin, value):
            del self.origins[key]  # back where it started: the next change is a new origin

    def hold(self, key: Key, until: float) -> None:
        self.holds[key] = max(self.holds.get(key, 0.0), until)

    def restored(self, key: Key) -> None:
        """``key`` was written back to its origin by a rollback: no live change now."""
        self.origins.pop(key, None)

    def trip(self, policy: str, until: float) -> None:
        self.tripped[policy] = max(self.tripped.get(policy, 0.0), until)

    def expire(self, now: float, window_s: float) -> None:
        """Forget what no guardrail reads any more: writes older than ``window_s``
        (their origin and owner with them) and holds that ended."""
        since = now - window_s
        for key in [k for k, ts in self.times.items() if not any(t > since for t in ts)]:
            del self.times[key]
            self.origins.pop(key, None)
        for key in [k for k, (_, t) in self.owners.items() if t <= since]:
            del self.owners[key]
        # an origin whose times ``recent`` already dropped, and whose owner is gone too
        for key in [k for k in self.origins if k not in self.times and k not in self.owners]:
            del self.origins[key]
        for key in [k for k, until in self.holds.items() if until <= now]:
            del self.holds[key]
        for policy in [p for p, until in self.tripped.items() if until <= now]:
            del self.tripped[policy]

    def merge(self, other: GuardMemory) -> None:
        """Take ``other`` in (a saved state): times united, the later hold and owner,
        an origin only where this memory has none."""
        for key, ts in other.times.items():
            self.times[key] = sorted(set(self.times.get(key, [])) | set(ts))
        for key, until in other.holds.items():
            self.hold(key, until)
        for key, origin in other.origins.items():
            self.origins.setdefault(key, origin)
        for key, (policy, at) in other.owners.items():
            mine = self.owners.get(key)
            if mine is None or at > mine[1]:
                self.owners[key] = (policy, at)
        for policy, until in other.tripped.items():
            self.trip(policy, until)

    # --- JSON, for HA ---------------------------------------------------------------
    def to_json(self) -> dict[str, object]:
        """Rows sorted by (kind, target), so equal memories give equal bytes."""
        return {
            "times": [[k.value, t, sorted(ts)] for (k, t), ts in sorted(self.times.items())
                      if ts],
            "holds": [[k.value, t, until] for (k, t), until in sorted(self.holds.items())],
            "origins": [[k.value, t, None if v is None else v.to_json()]
                        for (k, t), v in sorted(self.origins.items(), key=lambda kv: kv[0])],
            "owners": [[k.value, t, policy, at]
                       for (k, t), (policy, at) in sorted(self.owners.items())],
            "tripped": [[policy, until] for policy, until in sorted(self.tripped.items())],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> GuardMemory:
        """Inverse of :meth:`to_json` (ValueError, TypeError or KeyError if not one).
        A state saved before owners (or trips) were kept has none: they start empty."""
        out = cls()
        for kind, target, times in _rows(data["times"], 3):
            out.times[(Kind(str(kind)), str(target))] = sorted(_num(t) for t in _list(times))
        for kind, target, until in _rows(data["holds"], 3):
            out.holds[(Kind(str(kind)), str(target))] = _num(until)
        for kind, target, value in _rows(data["origins"], 3):
            k = Kind(str(kind))
            out.origins[(k, str(target))] = previous_from_json(k, value)
        for kind, target, policy, at in _rows(data.get("owners", []), 4):
            out.owners[(Kind(str(kind)), str(target))] = (str(policy), _num(at))
        for policy, until in _rows(data.get("tripped", []), 2):
            out.tripped[str(policy)] = _num(until)
        return out


def _num(x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError(f"not a number: {x!r}")
    return float(x)


def _list(x: object) -> list[object]:
    if not isinstance(x, list):
        raise TypeError(f"expected a list, got {type(x).__name__}")
    return x


def _rows(x: object, width: int) -> list[list[object]]:
    rows = [_list(r) for r in _list(x)]
    if any(len(r) != width for r in rows):
        raise ValueError(f"rows of {width} expected")
    return rows
