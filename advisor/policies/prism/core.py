"""PRISM's phase-level scheduling (seed 004, section 4.1) as pure functions.

The utility of scheduling phase i on machine n is
``U(i, n) = U_fairness(i, n) + a * U_perf(i, n)`` with each part a
before-minus-after difference. The seed defines ``U_fairness`` that way and
leaves the two measures open; our choices:

* fairness measure of job j: its relative distance to the fair share,
  ``|f_j - s_j| / f_j`` with ``s_j`` the dominant share of the cluster the
  job holds (DRF) and ``f_j`` its fair share; scheduling a *new* task adds
  its container to ``s_j`` in proportion to the work it can do now (the
  useful share below: an early shuffle holds resources its job cannot use,
  which serves no one's fair share); a phase transition of a running task
  adds nothing (``U_fairness = 0``);
* performance measure of machine n: its idleness ``mean_r (1 - u_r)^2``
  over memory and vcores (``u_r`` the phase-level utilization clipped to
  [0, 1]), so filling idle resources, the scarcer first, gains the most;
  ``U_perf`` is that gain times the share of the phase's work that can run
  now (1, except a reduce's shuffle started before the job's maps are done:
  the fraction of maps completed, since it can only fetch finished outputs).

The listing's ``CP <- CP U {i}`` in lines 21, 26 and 32 can only mean
removal (``CP \\ {i}``): a phase that is not schedulable on n, or has
``U <= 0``, leaves the candidate set; the chosen one moves to PS. The
candidate set is rebuilt after every pick (lines 5-17 are inside the
repeat loop), so deficits and the top-k change as phases are picked.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass

Vec = tuple[float, float]


def dominant_share(alloc: Vec, cluster: Vec) -> float:
    """DRF share of the cluster held by ``alloc``."""
    return max(alloc[0] / cluster[0] if cluster[0] > 0 else 0.0,
               alloc[1] / cluster[1] if cluster[1] > 0 else 0.0)


def fairness_measure(share: float, fair: float) -> float:
    """``|f_j - s_j| / f_j`` (0 when the job has no fair share)."""
    return abs(fair - share) / fair if fair > 0 else 0.0


def u_fairness(alloc: Vec, add: Vec, fair: float, cluster: Vec) -> float:
    """Fairness measure before minus after adding ``add`` to the job's allocation."""
    before = fairness_measure(dominant_share(alloc, cluster), fair)
    after_alloc = (alloc[0] + add[0], alloc[1] + add[1])
    return before - fairness_measure(dominant_share(after_alloc, cluster), fair)


def idleness(used: Vec, capacity: Vec) -> float:
    """``mean_r (1 - u_r)^2`` with ``u_r = used_r / capacity_r`` clipped to [0, 1]."""
    a = 1.0 - used[0] / capacity[0] if capacity[0] > 0 else 0.0
    b = 1.0 - used[1] / capacity[1] if capacity[1] > 0 else 0.0
    a = 0.0 if a < 0.0 else 1.0 if a > 1.0 else a
    b = 0.0 if b < 0.0 else 1.0 if b > 1.0 else b
    return (a * a + b * b) / 2.0


def u_perf(used: Vec, demand: Vec, capacity: Vec, useful: float) -> float:
    """Idleness before minus after the phase's demand, times its useful share."""
    after = (used[0] + demand[0], used[1] + demand[1])
    return useful * (idleness(used, capacity) - idleness(after, capacity))


def schedulable(used: Vec, demand: Vec, capacity: Vec) -> bool:
    """Line 20: the phase's demand fits the machine's phase-level free capacity."""
    return used[0] + demand[0] <= capacity[0] and used[1] + demand[1] <= capacity[1]


@dataclass(frozen=True, slots=True)
class Phase:
    """A candidate phase: the first phase of a pending task (``alloc`` = its
    container) or the next phase of a running task (``alloc`` = 0,
    ``demand`` = the increase over its current phase)."""

    job: str
    task: str
    task_type: str
    name: str
    demand: Vec
    alloc: Vec
    useful: float = 1.0
    local: bool = False


@dataclass(frozen=True, slots=True)
class Scored:
    """A phase with its utility and the two parts."""

    phase: Phase
    utility: float
    u_fairness: float
    u_perf: float


def utility(phase: Phase, used: Vec, capacity: Vec, alloc: Vec, fair: float, cluster: Vec,
            a: float) -> Scored:
    """``U(i, n) = U_fairness(i, n) + a * U_perf(i, n)``."""
    add = (phase.alloc[0] * phase.useful, phase.alloc[1] * phase.useful)
    uf = u_fairness(alloc, add, fair, cluster) if add != (0.0, 0.0) else 0.0
    up = u_perf(used, phase.demand, capacity, phase.useful)
    return Scored(phase, uf + a * up, uf, up)


class Deficits:
    """Jobs by deficit ``f_j - s_j`` (highest first) with lazy updates."""

    def __init__(self, alloc: dict[str, Vec], fair: float, cluster: Vec,
                 jobs: Iterable[str]) -> None:
        self.alloc, self.fair, self.cluster = alloc, fair, cluster
        self._heap = [(-self.deficit(j), j) for j in jobs]
        heapq.heapify(self._heap)

    def alloc_of(self, job: str) -> Vec:
        return self.alloc.get(job, (0.0, 0.0))

    def deficit(self, job: str) -> float:
        return self.fair - dominant_share(self.alloc.get(job, (0.0, 0.0)), self.cluster)

    def add(self, job: str, amount: Vec) -> None:
        a = self.alloc.get(job, (0.0, 0.0))
        self.alloc[job] = (a[0] + amount[0], a[1] + amount[1])
        heapq.heappush(self._heap, (-self.deficit(job), job))

    def top(self, k: int, alive: Callable[[str], bool]) -> list[str]:
        """The ``k`` jobs with the highest deficit for which ``alive`` holds.

        A job found not alive is dropped for good (its pending work only shrinks).
        """
        out: list[str] = []
        popped: list[tuple[float, str]] = []
        seen: set[str] = set()
        while self._heap and len(out) < k:
            d, j = heapq.heappop(self._heap)
            if j in seen or -d != self.deficit(j):
                continue  # a stale entry (the job's deficit changed since)
            seen.add(j)
            if alive(j):
                out.append(j)
                popped.append((d, j))
        for item in popped:
            heapq.heappush(self._heap, item)
        return out


Candidates = Callable[[Vec], list[Phase]]


def schedule_machine(
    capacity: Vec,
    used: Vec,
    candidates: Candidates,
    commit: Callable[[Phase], None],
    alloc_of: Callable[[str], Vec],
    fair: float,
    cluster: Vec,
    a: float,
    max_phases: int,
) -> tuple[list[Scored], Vec]:
    """Lines 1-37 on one machine: (PS with scores in pick order, final utilization).

    ``candidates(used)`` rebuilds CP (lines 6-17); ``commit`` takes the picked
    phase out of the pools (and adds its container to its job's allocation).
    """
    ps: list[Scored] = []
    while len(ps) < max_phases:
        best: Scored | None = None
        for ph in candidates(used):
            if not schedulable(used, ph.demand, capacity):
                continue  # line 20-22: leaves CP
            s = utility(ph, used, capacity, alloc_of(ph.job), fair, cluster, a)
            if s.utility <= 0:
                continue  # lines 25-27: leaves CP
            if best is None or (s.utility, ph.local) > (best.utility, best.phase.local):
                best = s
        if best is None:
            break  # line 36: CP is empty
        ps.append(best)  # lines 30-31
        used = (used[0] + best.phase.demand[0], used[1] + best.phase.demand[1])  # line 33
        commit(best.phase)
    return ps, used
