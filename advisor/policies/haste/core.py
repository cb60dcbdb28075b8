"""HaSTE / HaSTE-A math (Yao et al., IEEE TCC 2021): pure functions, no Snapshot.

Numbering follows the paper. Resources are ``(memory_mb, vcores)`` integer
pairs; the weighted scores convert memory to ``memory_unit_mb`` units (GiB by
default, the unit of the paper's examples) and apply the resource weights
``w = (w_mem, w_cpu)``.

* Eq 1, fitness: ``F = sum_p R[p] * C[p] * w[p]`` where ``C`` is the node's
  *residual* capacity (the section 3.4.1 table recomputes it after each pick).
* Eq 2-3, urgency of the map / reduce requests of a MapReduce job.
  Eq 3 divides by ``O_r * R_r``; with no running reduce the ratio
  ``(O_m R_m + O_r R_r) / (O_r R_r)`` is unbounded, so it is capped at
  ``reduce_ratio_cap`` (and is 0 when the job has no running task at all).
* Fallback urgency for non-MapReduce apps (no job/task counts): Eq 2 with the
  whole app as one "map" phase: ``U = progress * W(allocated)``; it keeps R1
  (more progress, more urgent) and R2 (more held resources, more urgent).
* Eq 4 / Eq 6, preference: min-max normalised fitness, urgency and alignment
  over the candidate set, weighted by ``beta`` (Eq 4 is ``beta = (1, 1, 0)``).
  A component whose max equals its min contributes 0. AM requests always
  come first; ties go to the lower candidate index (callers order candidates
  canonically), which reproduces the paper's <4,4> tie (type I first).
* Eq 5, alignment: ``(I + I_done) / sum_j I_j``; a non-iterative job has
  ``I = 1, I_done = 0``.
* Algorithm 1 (ITA): a two-resource knapsack DP per node maximising
  ``sum w . R``. Its cost is bounded: memory is discretised to a quantum
  (request memory rounded *up*, capacity *down*, so every plan fits) chosen so
  the grid has at most ``max_cells`` cells, and at most ``max_items`` item
  copies enter the DP, so one node costs ``O(max_cells * max_items)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

Vec = tuple[int, int]  # (memory_mb, vcores)


@dataclass(frozen=True, slots=True)
class Weights:
    """Resource weights of Eq 1 and of the weighted sizes ``R`` in Eq 2-3."""

    memory: float = 1.0
    vcores: float = 1.0
    memory_unit_mb: int = 1024

    def size(self, r: Vec) -> float:
        """``w1 * R1 + w2 * R2``: the value of one task (Algorithm 1 line 13)."""
        return self.memory * (r[0] / self.memory_unit_mb) + self.vcores * r[1]


def fitness(r: Vec, c: Vec, w: Weights) -> float:
    """Eq 1: FFD-DotProduct fitness of request ``r`` on residual capacity ``c``."""
    u = w.memory_unit_mb
    return (w.memory * (r[0] / u)) * (c[0] / u) + (w.vcores * r[1]) * c[1]


def fits(r: Vec, c: Vec) -> bool:
    """True when ``r`` fits in ``c`` in every resource."""
    return r[0] <= c[0] and r[1] <= c[1]


class JobCounts(NamedTuple):
    """The Eq 2-3 inputs of one job. Sizes are weighted (``Weights.size``)."""

    maps_total: int  # T_m
    maps_assigned: int  # A_m (running + completed)
    reduces_assigned: int  # A_r
    am_assigned: int  # A_am
    maps_running: int  # O_m
    reduces_running: int  # O_r
    map_size: float  # R_m
    reduce_size: float  # R_r
    am_size: float  # R_am

    @property
    def map_progress(self) -> float:
        """``A_m / T_m`` (0 for a job with no maps)."""
        return self.maps_assigned / self.maps_total if self.maps_total > 0 else 0.0


def map_urgency(j: JobCounts) -> float:
    """Eq 2: ``U_m = A_m/T_m * (A_r R_r + A_am R_am)`` (rules R1, R2)."""
    return j.map_progress * (j.reduces_assigned * j.reduce_size + j.am_assigned * j.am_size)


def reduce_urgency(j: JobCounts, reduce_ratio_cap: float) -> float:
    """Eq 3: ``U_r = U_m * A_m/T_m * (O_m R_m + O_r R_r) / (O_r R_r)`` (rule R3)."""
    held_r = j.reduces_running * j.reduce_size
    held = j.maps_running * j.map_size + held_r
    if held <= 0:
        ratio = 0.0
    elif held_r <= 0:
        ratio = reduce_ratio_cap
    else:
        ratio = min(held / held_r, reduce_ratio_cap)
    return map_urgency(j) * j.map_progress * ratio


def fallback_urgency(progress: float, held_size: float) -> float:
    """Urgency of a non-MapReduce app: Eq 2 with the app as one phase."""
    return max(0.0, min(1.0, progress)) * max(0.0, held_size)


def alignment(total: int, finished: int, sum_total: int) -> float:
    """Eq 5: ``(I + I_done) / sum_j I_j`` (rules R4-R6)."""
    return (total + finished) / sum_total if sum_total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Iteration:
    """Known iterations/stages of an app: ``total`` I and ``finished`` I_done."""

    total: int
    finished: int
    source: str


_TAG = re.compile(r"^(iteration|stage):(\d+)/(\d+)$")


def iteration_from_tags(tags: Sequence[str]) -> Iteration | None:
    """Parse ``iteration:K/N`` or ``stage:K/N`` (this app is step K of N, 1-based).

    ``finished`` is ``K - 1``. Tags are matched case-insensitively (the RM
    lower-cases them); malformed or out-of-range tags are ignored.
    """
    for tag in tags:
        m = _TAG.match(tag.strip().lower())
        if m:
            k, n = int(m.group(2)), int(m.group(3))
            if 1 <= k <= n:
                return Iteration(total=n, finished=k - 1, source=f"tag:{tag}")
    return None


@dataclass(frozen=True, slots=True)
class Candidate:
    """One pending request type a node could serve (``key`` names it)."""

    key: str
    resource: Vec
    urgency: float
    alignment: float
    is_am: bool = False


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate with its Eq 1-6 scores on one capacity."""

    index: int
    fitness: float
    urgency: float
    alignment: float
    n_fitness: float
    n_urgency: float
    n_alignment: float
    preference: float
    is_am: bool

    def sort_key(self) -> tuple[bool, float, int]:
        """Best first: AM requests, then preference, then candidate index."""
        return (not self.is_am, -self.preference, self.index)


def normaliser(values: Sequence[float]) -> tuple[float, float]:
    """``(min, span)`` for min-max normalisation; span 0 means 'flat'."""
    lo, hi = min(values), max(values)
    return lo, hi - lo


def norm(x: float, lo: float, span: float) -> float:
    """Min-max normalised ``x`` (0 when the set is flat)."""
    return (x - lo) / span if span > 0 else 0.0


def preference(nf: float, nu: float, na: float, beta: tuple[float, float, float]) -> float:
    """Eq 6 (Eq 4 when ``beta = (1, 1, 0)``)."""
    return beta[0] * nf + (beta[1] * nu + beta[2] * na)


def score(
    capacity: Vec,
    candidates: Sequence[Candidate],
    w: Weights,
    beta: tuple[float, float, float],
    require_fit: bool = True,
) -> list[Scored]:
    """Score the candidates on ``capacity``, best first (RTA, section 3.4.3).

    Only candidates that fit are scored (and normalised together) unless
    ``require_fit`` is False.
    """
    idx = [i for i, c in enumerate(candidates) if not require_fit or fits(c.resource, capacity)]
    if not idx:
        return []
    f = {i: fitness(candidates[i].resource, capacity, w) for i in idx}
    f_lo, f_sp = normaliser(list(f.values()))
    u_lo, u_sp = normaliser([candidates[i].urgency for i in idx])
    a_lo, a_sp = normaliser([candidates[i].alignment for i in idx])
    out = []
    for i in idx:
        c = candidates[i]
        nf, nu, na = (
            norm(f[i], f_lo, f_sp),
            norm(c.urgency, u_lo, u_sp),
            norm(c.alignment, a_lo, a_sp),
        )
        out.append(
            Scored(
                i, f[i], c.urgency, c.alignment, nf, nu, na, preference(nf, nu, na, beta), c.is_am
            )
        )
    out.sort(key=Scored.sort_key)
    return out


def rta_fill(
    capacity: Vec,
    candidates: Sequence[Candidate],
    counts: Sequence[int],
    w: Weights,
    beta: tuple[float, float, float],
) -> list[int]:
    """RTA on one node: pick the best fitting candidate, shrink, repeat.

    ``counts`` bounds how many tasks each candidate has. Returns the picked
    candidate indices in order. Scores are recomputed after every pick on the
    new residual capacity (section 3.4.1); urgencies are held fixed.
    """
    left = list(counts)
    cap = capacity
    picked: list[int] = []
    while True:
        pool = [i for i in range(len(candidates)) if left[i] > 0]
        ranked = score(cap, [candidates[i] for i in pool], w, beta)
        if not ranked:
            return picked
        best = pool[ranked[0].index]
        picked.append(best)
        left[best] -= 1
        r = candidates[best].resource
        cap = (cap[0] - r[0], cap[1] - r[1])


@dataclass(frozen=True, slots=True)
class ItaPlan:
    """Algorithm 1's choice for one node: copies taken of each item."""

    taken: tuple[int, ...]
    value: float
    memory_quantum_mb: int
    cells: int


def ita_knapsack(
    capacity: Vec,
    items: Sequence[tuple[Vec, int]],
    w: Weights,
    quantum_mb: int = 1,
    max_cells: int = 8192,
    max_items: int = 64,
) -> ItaPlan:
    """Algorithm 1 AssignTask for one node: 2-D bounded knapsack by DP.

    ``items`` are ``(resource, count)``; earlier items win ties. The value of
    a copy is ``w . R`` (line 13). Returns the number of copies taken of each
    item. Cost bound: see the module docstring.
    """
    cpu_cap = min(max(0, capacity[1]), max(1, max_cells // 2 - 1))
    mem_q = max(1, quantum_mb)
    while (capacity[0] // mem_q + 1) * (cpu_cap + 1) > max_cells and capacity[0] // mem_q > 0:
        mem_q *= 2
    mem_cap = max(0, capacity[0] // mem_q)
    copies: list[tuple[int, int, int, float]] = []  # (item, mem cells, cpu, value)
    for i, (r, count) in enumerate(items):
        qm = -(-r[0] // mem_q)
        if qm > mem_cap or r[1] > cpu_cap or (qm == 0 and r[1] == 0):
            continue
        fit_n = min(mem_cap // qm if qm else count, cpu_cap // r[1] if r[1] else count)
        for _ in range(min(count, fit_n, max_items - len(copies))):
            copies.append((i, qm, r[1], w.size(r)))
    opt = np.zeros((mem_cap + 1, cpu_cap + 1))
    took = np.zeros((len(copies), mem_cap + 1, cpu_cap + 1), dtype=bool)
    for n, (_, qm, qc, v) in enumerate(copies):
        cand = np.full_like(opt, -math.inf)
        cand[qm:, qc:] = opt[: mem_cap + 1 - qm, : cpu_cap + 1 - qc] + v
        better = cand > opt
        took[n] = better
        opt = np.where(better, cand, opt)
    taken = [0] * len(items)
    a, b = mem_cap, cpu_cap
    for n in range(len(copies) - 1, -1, -1):
        if took[n, a, b]:
            i, qm, qc, _ = copies[n]
            taken[i] += 1
            a, b = a - qm, b - qc
    return ItaPlan(tuple(taken), float(opt[mem_cap, cpu_cap]), mem_q, (mem_cap + 1) * (cpu_cap + 1))
