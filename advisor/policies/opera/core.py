"""OPERA's algorithms as pure functions (Yang et al., seed 002, section III).

Resources are ``(memory_mb, vcores)`` pairs (:data:`Vec`). Everything here is
the paper's math on plain values; :mod:`~yarn_advisor.advisor.policies.opera` feeds it from
a Snapshot and turns the outcome into recommendations.

* Eq 6 :func:`guaranteed_available`, Eq 7 / Eq 4 :func:`opportunistic_available`.
* Alg 1 (node monitor): :func:`cres` (memory first, threshold ``rho * C``) and
  :func:`relieve_contention` (AGGRESSIVE / NEUTRAL / PRESERVE; under PRESERVE
  BR and BT are multiplied by ``alpha`` at a contention and divided by it
  when no contention was seen for longer than BT since LastReliefTime).
* Alg 2 (task assignment): :func:`assign` = :func:`normal_assign` on GA,
  else :func:`opportunistic_assign` on OA for eligible (short) tasks only.
  Both use the paper's strict ``D_t(r) < X(r)`` for every resource r.
* Alg 3 :func:`node_update_strict`; Alg 4 (reservation queue of at most
  ``eps_r`` + 1 tasks, skip counts vs ``eps_s``) is ``bulk.node_update_multi_bulk``,
  which the tests check against a one-task-at-a-time transcription of Alg 4.

Choices where the paper is silent: ``X < MinTaskDemand`` (Alg 3-4 line 3)
holds when X is below the smallest pending demand in *some* resource; under
PRESERVE, BR and BT never fall below their initial values (else repeated
division drives them to 0 and the block window loses its meaning), BR never
exceeds the node's capacity and BT never exceeds ``bt_cap``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Vec = tuple[float, float]
Contention = Literal["Memory", "CPU", "NONE"]
ReliefPolicy = Literal["AGGRESSIVE", "NEUTRAL", "PRESERVE"]
ZERO: Vec = (0.0, 0.0)


def vadd(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1])


def vsub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1])


def lt(a: Vec, b: Vec) -> bool:
    """``a(r) < b(r)`` for every resource (Alg 2 lines 8 and 16)."""
    return a[0] < b[0] and a[1] < b[1]


def below(x: Vec, m: Vec) -> bool:
    """``x < MinTaskDemand``: x is short of ``m`` in some resource (Alg 3-4 line 3)."""
    return x[0] < m[0] or x[1] < m[1]


def guaranteed_available(capacity: Vec, normal_demand: Vec) -> Vec:
    """Eq 6: ``GA_i = C_i - sum of D_t over the normal tasks on n_i``."""
    return vsub(capacity, normal_demand)


def opportunistic_available(capacity: Vec, usage: Vec, blocked: Vec = ZERO) -> Vec:
    """Eq 7 (``blocked`` = 0) and Eq 4 under PRESERVE: ``C_i - sum TU_t - BR_i``."""
    return (capacity[0] - usage[0] - blocked[0], capacity[1] - usage[1] - blocked[1])


def cres(usage: Vec, capacity: Vec, rho: float) -> Contention:
    """Alg 1 lines 12-17: the contended resource, memory first."""
    if usage[0] > rho * capacity[0]:
        return "Memory"
    if usage[1] > rho * capacity[1]:
        return "CPU"
    return "NONE"


@dataclass(frozen=True, slots=True)
class Block:
    """PRESERVE's blocked resource BR_i, block time BT_i and LastReliefTime."""

    br: Vec
    bt_ms: float
    last_relief: int | None = None


@dataclass(frozen=True, slots=True)
class Relief:
    """What RelieveContention did: ``branch`` names the Alg 1 line that fired."""

    contention: Contention
    kill: bool
    block: Block
    branch: str


def relieve_contention(
    c: Contention,
    policy: ReliefPolicy,
    block: Block,
    now: int,
    alpha: float,
    floor: Block,
    br_cap: Vec,
    bt_cap_ms: float,
) -> Relief:
    """Alg 1 lines 18-33 (``floor`` holds the initial BR/BT, see the module doc)."""
    if policy == "AGGRESSIVE":
        if c == "Memory":
            return Relief(c, True, block, "aggressive.kill")
        return Relief(c, False, block, "aggressive.none")
    if policy == "NEUTRAL":
        if c != "NONE":
            return Relief(c, True, block, "neutral.kill")
        return Relief(c, False, block, "neutral.none")
    if c != "NONE":
        br = (min(block.br[0] * alpha, br_cap[0]), min(block.br[1] * alpha, br_cap[1]))
        return Relief(c, True, Block(br, min(block.bt_ms * alpha, bt_cap_ms), now), "preserve.kill")
    if block.last_relief is not None and now - block.last_relief > block.bt_ms:
        br = (max(block.br[0] / alpha, floor.br[0]), max(block.br[1] / alpha, floor.br[1]))
        bt = max(block.bt_ms / alpha, floor.bt_ms)
        return Relief(c, False, Block(br, bt, now), "preserve.release")
    return Relief(c, False, block, "preserve.hold")


def monitor(
    usage: Vec | None,
    capacity: Vec,
    has_opportunistic: bool,
    policy: ReliefPolicy,
    block: Block,
    now: int,
    rho: float,
    alpha: float,
    floor: Block,
    bt_cap_ms: float,
) -> Relief:
    """One pass of Alg 1 lines 3-10 on a node (``usage`` None = not measured)."""
    c: Contention = "NONE"
    if has_opportunistic and usage is not None:
        c = cres(usage, capacity, rho)
    return relieve_contention(c, policy, block, now, alpha, floor, capacity, bt_cap_ms)


@dataclass(frozen=True, slots=True)
class Task:
    """One pending task: ``key`` names its request group, ``eligible`` = short."""

    key: str
    demand: Vec
    eligible: bool


@dataclass(slots=True)
class Slot:
    """GA_i and OA_i of one node while its heartbeat is processed; the log of
    what was assigned there (``(task, 'normal' | 'opportunistic')``)."""

    ga: Vec
    oa: Vec
    assigned: list[tuple[Task, str]] = field(default_factory=list)
    lent: Vec = ZERO  # sum of the demands assigned opportunistically


def normal_assign(slot: Slot, t: Task) -> bool:
    """Alg 2 lines 7-13."""
    if lt(t.demand, slot.ga):
        slot.ga = vsub(slot.ga, t.demand)
        slot.oa = vsub(slot.oa, t.demand)
        slot.assigned.append((t, "normal"))
        return True
    return False


def opportunistic_assign(slot: Slot, t: Task) -> bool:
    """Alg 2 lines 14-20: only tasks eligible for opportunistic allocation."""
    if t.eligible and lt(t.demand, slot.oa):
        slot.oa = vsub(slot.oa, t.demand)
        slot.lent = vadd(slot.lent, t.demand)
        slot.assigned.append((t, "opportunistic"))
        return True
    return False


def assign(slot: Slot, t: Task) -> bool:
    """Alg 2 lines 1-6: normal first, then opportunistic."""
    return normal_assign(slot, t) or opportunistic_assign(slot, t)


@dataclass(slots=True)
class Reserved:
    """A task reserved on a node with its skip counter (Alg 4)."""

    task: Task
    skip: int = 0


NextTask = Callable[[], Task | None]


def node_update_strict(
    slot: Slot, reserved: list[Reserved], next_task: NextTask, min_demand: Vec
) -> str:
    """Alg 3 on one heartbeat; ``reserved`` (0 or 1 entries) is updated in place.

    Returns the branch taken (for explanations and tests).
    """
    if below(slot.ga, min_demand) and below(slot.oa, min_demand):
        return "no_resources"
    if reserved:
        if assign(slot, reserved[0].task):
            reserved.clear()
            return "reserved_assigned"
        return "reserved_waits"
    t = next_task()
    if t is None:
        return "queue_empty"
    if assign(slot, t):
        return "queue_assigned"
    reserved.append(Reserved(t, 0))
    return "queue_reserved"
