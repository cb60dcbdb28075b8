"""PRISM's phase profiles: what a task uses in each phase, learned from the
Snapshot's running tasks and their containers' NM measurements.

Phases: maps MAP then MERGE (the spill merge; Hadoop calls it SORT), reduces
SHUFFLE, MERGE (Hadoop's SORT) and REDUCE. A task without a reported phase
gets it from its progress, which Hadoop splits the same way (a map with
reduces: 2/3 map, 1/3 sort; a reduce: thirds copy / sort / reduce).

Learning: the NM reports lifetime averages per container, so a cycle's
observation is the average over the *new* samples since the last cycle
(``(avg * n - avg0 * n0) / (n - n0)``), attributed to the phase the task is
in now; a container seen for the first time counts only while its task is
in its first phase. A cycle's k observations of a key (mean x) are folded
in as ``n' = min(n + k, window)``, ``mean' = mean + (x - mean) * k / n'``:
the running mean until ``window`` observations, then an exponential
average. Profiles are kept per ``(app, task type, phase)`` and, as
fallbacks for new apps, per ``(app name, type, phase)`` and
``(*, type, phase)``. Keys are ``"<app id>|<TYPE>|<PHASE>"``,
``"name:<app name>|..."`` and ``"*|..."``; values ``[n, memory_mb,
vcores]``. CPU is read as vcores = cores in use (percent of one core / 100).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from yarn_advisor.advisor.model.snapshot import Task

MAP_PHASES = ("MAP", "MERGE")
REDUCE_PHASES = ("SHUFFLE", "MERGE", "REDUCE")
_ALIASES = {"SORT": "MERGE", "COPY": "SHUFFLE", "MERGE": "MERGE", "MAP": "MAP",
            "SHUFFLE": "SHUFFLE", "REDUCE": "REDUCE"}

Vec = tuple[float, float]
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
Key = tuple[str, str, str]  # (app id, task type, phase)


def phase_of(task: Task, map_only: bool = False) -> str:
    """The task's phase in PRISM's names (see the module doc)."""
    p = _ALIASES.get(task.phase.upper(), "")
    if task.type == "MAP":
        if map_only:
            return "MAP"
        if p in MAP_PHASES:
            return p
        return "MAP" if task.progress < 200.0 / 3 else "MERGE"
    if p in REDUCE_PHASES:
        return p
    if task.progress < 100.0 / 3:
        return "SHUFFLE"
    return "MERGE" if task.progress < 200.0 / 3 else "REDUCE"


def next_phase(task_type: str, phase: str, map_only: bool = False) -> str | None:
    """The phase after ``phase`` (None at the last one)."""
    if task_type == "MAP":
        seq: tuple[str, ...] = ("MAP",) if map_only else MAP_PHASES
    else:
        seq = REDUCE_PHASES
    i = seq.index(phase) if phase in seq else len(seq)
    return seq[i + 1] if i + 1 < len(seq) else None


def _keys(app_id: str, name: str, task_type: str, phase: str) -> tuple[str, str, str]:
    return (f"{app_id}|{task_type}|{phase}", f"name:{name}|{task_type}|{phase}",
            f"*|{task_type}|{phase}")


@dataclass
class Profiles:
    """Phase profiles (columnar: key, n, memory_mb, vcores) and the per-container
    sample counters they learn from."""

    keys: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    table: FloatArray = field(default_factory=lambda: np.zeros((0, 3)))  # n, mem, cpu
    window: int = 20
    sample_ids: dict[str, int] = field(default_factory=dict)  # container -> row below
    samples: FloatArray = field(default_factory=lambda: np.zeros((0, 3)))  # n, mem, cpu

    @classmethod
    def from_json(cls, profiles: object, samples: object) -> Profiles:
        """Profiles and samples from their columnar JSON forms (:meth:`to_json`,
        :meth:`samples_json`); a malformed table reads as empty."""
        out = cls()
        got = _columns(profiles, "keys", ("n", "memory_mb", "vcores"))
        if got is not None:
            out.keys, out.table = got
            out.index = {k: i for i, k in enumerate(out.keys)}
        got = _columns(samples, "ids", ("n", "memory_mb", "vcores"))
        if got is not None:
            ids, out.samples = got
            out.sample_ids = {c: i for i, c in enumerate(ids)}
        return out

    def copy(self, window: int) -> Profiles:
        """A copy to learn into (the state it came from stays as it was)."""
        return Profiles(list(self.keys), dict(self.index), self.table.copy(), window,
                        dict(self.sample_ids), self.samples.copy())

    def keep_samples(self, ids: Sequence[str], usage: FloatArray) -> None:
        """Remember this cycle's per-container counters ``(n, mem, cpu)`` (those with
        samples) to take the next cycle's deltas from."""
        keep = usage[:, 0] > 0
        kept = [c for c, k in zip(ids, keep.tolist(), strict=True) if k]
        self.sample_ids = {c: i for i, c in enumerate(kept)}
        self.samples = np.ascontiguousarray(usage[keep])

    def get(self, key: str) -> list[float] | None:
        """``[n, memory_mb, vcores]`` of ``key`` (None if unknown)."""
        i = self.index.get(key)
        return None if i is None else [float(x) for x in self.table[i]]

    def _row(self, key: str, new: list[str]) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.keys) + len(new)
            new.append(key)
        return i

    def _grow(self, new: list[str]) -> None:
        if new:
            self.keys += new
            self.table = np.concatenate([self.table, np.zeros((len(new), 3))])

    def fold(self, rows: IntArray, k: FloatArray, mem: FloatArray, cpu: FloatArray) -> None:
        """Fold ``k`` observations of mean (mem, cpu) into ``rows`` (see the module doc)."""
        t = self.table
        n2 = np.minimum(t[rows, 0] + k, float(self.window))
        w = np.minimum(1.0, k / n2)
        t[rows, 1] += (mem - t[rows, 1]) * w
        t[rows, 2] += (cpu - t[rows, 2]) * w
        t[rows, 0] = n2

    def rows_of(self, keys: Sequence[Key], names: Mapping[str, str], create: bool
                ) -> tuple[IntArray, IntArray, IntArray]:
        """Table rows of each key at the app, name and ``*`` levels (-1: unknown)."""
        new: list[str] = []
        out = np.full((3, len(keys)), -1, dtype=np.int64)
        for j, (app_id, ttype, phase) in enumerate(keys):
            for lvl, key in enumerate(_keys(app_id, names.get(app_id, ""), ttype, phase)):
                out[lvl, j] = self._row(key, new) if create else self.index.get(key, -1)
        self._grow(new)
        return out[0], out[1], out[2]

    def learn(self, keys: Sequence[Key], names: Mapping[str, str], key_of: IntArray,
              ids: Sequence[str], usage: FloatArray, first: BoolArray) -> None:
        """One cycle of observations: ``usage`` rows (samples, mem, cpu) of the
        containers ``ids`` whose tasks are in phase ``keys[key_of[i]]``."""
        if not len(ids):
            return
        prev = np.array([self.sample_ids.get(c, -1) for c in ids], dtype=np.int64)
        n, mem, cpu = usage[:, 0], usage[:, 1], usage[:, 2]
        known = prev >= 0
        p = self.samples[np.where(known, prev, 0)] if len(self.samples) else np.zeros((len(ids), 3))
        dn = n - p[:, 0]
        ok_delta = known & (dn > 0)
        safe = np.where(ok_delta, dn, 1.0)
        obs_m = np.maximum(np.where(ok_delta, (mem * n - p[:, 1] * p[:, 0]) / safe, mem), 0.0)
        obs_c = np.maximum(np.where(ok_delta, (cpu * n - p[:, 2] * p[:, 0]) / safe, cpu), 0.0)
        use = (ok_delta | (~known & first)) & (n > 0)
        if not use.any():
            return
        kk = key_of[use]
        cnt = np.bincount(kk, minlength=len(keys)).astype(np.float64)
        sm = np.bincount(kk, obs_m[use], minlength=len(keys))
        sc = np.bincount(kk, obs_c[use], minlength=len(keys))
        hit = np.flatnonzero(cnt)
        levels = self.rows_of([keys[i] for i in hit.tolist()], names, create=True)
        size = len(self.keys)
        for rows in levels:  # app, name and * levels, each aggregated over its keys
            k = np.bincount(rows, cnt[hit], minlength=size).astype(np.float64)
            m = np.bincount(rows, sm[hit], minlength=size)
            c = np.bincount(rows, sc[hit], minlength=size)
            r = np.flatnonzero(k)
            self.fold(r, k[r], m[r] / k[r], c[r] / k[r])

    def expected_rows(self, keys: Sequence[Key], names: Mapping[str, str]
                      ) -> tuple[FloatArray, BoolArray]:
        """Per key the (mem, cpu) profile of its first known level, and whether any is."""
        vals = np.zeros((len(keys), 2))
        has = np.zeros(len(keys), dtype=np.bool_)
        for rows in reversed(self.rows_of(keys, names, create=False)):  # app level wins
            ok = rows >= 0
            ok[ok] = self.table[rows[ok], 0] > 0
            vals[ok] = self.table[rows[ok], 1:3]
            has |= ok
        return vals, has

    def expected(self, app_id: str, name: str, task_type: str, phase: str
                 ) -> tuple[Vec, str] | None:
        """The profile of ``(app, type, phase)`` or its fallbacks, with its key."""
        for key in _keys(app_id, name, task_type, phase):
            i = self.index.get(key)
            if i is not None and self.table[i, 0] > 0:
                return (float(self.table[i, 1]), float(self.table[i, 2])), key
        return None

    def prune(self, live_apps: set[str], max_entries: int = 20_000) -> None:
        """Drop the app-level profiles of apps gone; bound the table's size."""
        keep = np.array([k.startswith(("name:", "*|")) or k.split("|", 1)[0] in live_apps
                         for k in self.keys], dtype=np.bool_)
        if keep.sum() > max_entries:
            order = np.argsort(-self.table[:, 0] * keep, kind="stable")[:max_entries]
            keep = np.zeros(len(self.keys), dtype=np.bool_)
            keep[order] = True
        if not keep.all():
            self.keys = [k for k, ok in zip(self.keys, keep.tolist(), strict=True) if ok]
            self.table = self.table[keep]
            self.index = {k: i for i, k in enumerate(self.keys)}

    def to_json(self) -> dict[str, Any]:
        """Columnar: ``{keys, n, memory_mb, vcores}``."""
        return {"keys": list(self.keys), "n": self.table[:, 0].tolist(),
                "memory_mb": self.table[:, 1].tolist(), "vcores": self.table[:, 2].tolist()}

    def samples_json(self) -> dict[str, Any]:
        """Columnar: ``{ids, n, memory_mb, vcores}``."""
        ids = sorted(self.sample_ids, key=self.sample_ids.__getitem__)
        return {"ids": ids, "n": self.samples[:, 0].tolist(),
                "memory_mb": self.samples[:, 1].tolist(),
                "vcores": self.samples[:, 2].tolist()}


def _columns(raw: object, id_key: str, cols: tuple[str, ...]
             ) -> tuple[list[str], FloatArray] | None:
    """A columnar JSON table ``{id_key: [...], col: [...], ...}`` as (ids, n x k array)."""
    if not isinstance(raw, Mapping):
        return None
    ids = raw.get(id_key)
    data = [raw.get(c) for c in cols]
    if not isinstance(ids, list) or not all(isinstance(d, list) and len(d) == len(ids)
                                            for d in data):
        return None
    try:
        arr = np.array(data, dtype=np.float64).T.reshape(len(ids), len(cols))
    except (TypeError, ValueError):
        return None
    return [str(i) for i in ids], np.ascontiguousarray(arr)
