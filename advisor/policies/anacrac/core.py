"""ANACRAC's equations and per-heartbeat checks as pure functions (seed 003).

Eq 1-3 (node and container restriction), Eq 4-8 (CPU and IO usage from
``/proc/stat``-style counters), Eq 9-12 (adaptive container size), the
admission check of a node for an application (steps 8-12 of the algorithm
as the package docstring numbers it) and the waiting-time priority
(steps 20-27).

Threshold semantics: a node that has *reached* a threshold is refused ("...
restrains tasks from being assigned to nodes ... that have reached the
specific threshold value"), so the test is ``usage >= threshold``. Eq 12
keeps K while ``U_at <= R_s`` and grows the container by the increment
above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from yarn_advisor.advisor.policies.anacrac.params import Rule


def node_restriction(in_m: bool) -> int:
    """Eq 1: ``AN_ir = 1`` if node i is in M."""
    return 1 if in_m else 0


def container_restriction(j: int, p: int | None) -> int:
    """Eq 2: ``AC_ijr = 1`` if the j-th container of the app on the node is within P."""
    return 1 if p is None or j <= p else 0


def node_and_container(in_m: bool, j: int, p: int | None) -> int:
    """Eq 3: both restrictions together."""
    return node_restriction(in_m) * container_restriction(j, p)


def cumulative_cpu_time(user: float, nice: float, system: float) -> float:
    """Eq 4: ``CCT = UT + NT + ST`` (``/proc/stat`` ticks)."""
    return user + nice + system


def cpu_usage(cct: float, lct: float, fst: float, lst: float, nprocs: int) -> float | None:
    """Eq 5: ``CU = (CCT - LCT) * 100 / ((FST - LST) * NP)``; None without a time step."""
    if fst <= lst or nprocs <= 0:
        return None
    return (cct - lct) * 100.0 / ((fst - lst) * nprocs)


def disk_delta(ds: float, lds: float) -> float:
    """Eq 6: ``DDS = DS - LDS`` (milliseconds the disk spent doing I/O)."""
    return ds - lds


def time_delta(sdst: float, lsdst: float) -> float:
    """Eq 7: ``DT = SDST - LSDST`` (milliseconds between the two readings)."""
    return sdst - lsdst


def io_usage(dds: float, dt: float) -> float | None:
    """Eq 8: ``IOU = DDS * 100 / DT``; None without a time step."""
    if dt <= 0:
        return None
    return dds * 100.0 / dt


def app_node_usage(container_usages: Sequence[float]) -> float:
    """Eq 9: ``N_jR`` = sum of the app's active containers' usage on node j."""
    return float(sum(container_usages))


def app_total_usage(per_node: Sequence[float]) -> float:
    """Eq 10: ``TR`` = sum of ``N_jR`` over the nodes."""
    return float(sum(per_node))


def app_average_usage(tr: float, m: int) -> float | None:
    """Eq 11: ``U_at = TR / M`` over the app's M measured active containers."""
    return tr / m if m > 0 else None


def adaptive_size(k: int, u_at: float, r_s: float, increment: int) -> int:
    """Eq 12: K while ``U_at <= R_s``, else ``P = K + increment``."""
    return k if u_at <= r_s else k + increment


@dataclass(frozen=True, slots=True)
class NodeLoad:
    """A node's CPU and IO usage in percent (None = not known)."""

    cpu: float | None
    io: float | None


def hot(rule: Rule, load: NodeLoad) -> list[str]:
    """Steps 11-12: the thresholds of ``rule`` that ``load`` has reached."""
    out: list[str] = []
    if rule.job_type in ("CPU", "ALL") and load.cpu is not None and load.cpu >= rule.cpu_threshold:
        out.append("cpu_threshold")
    if rule.job_type in ("IO", "ALL") and load.io is not None and load.io >= rule.io_threshold:
        out.append("io_threshold")
    return out


def admit(rule: Rule | None, in_m: bool, containers_on_node: int, load: NodeLoad) -> int:
    """Steps 7-12 for one (app, node): 0 if admitted, else the refusing step."""
    if rule is None:
        return 0
    if node_restriction(not rule.hosts or in_m) == 0:
        return 8
    if container_restriction(containers_on_node + 1, rule.tasks_maximum) == 0:
        return 10
    if rule.job_type in ("CPU", "ALL") and "cpu_threshold" in hot(rule, load):
        return 11
    if rule.job_type in ("IO", "ALL") and "io_threshold" in hot(rule, load):
        return 12
    return 0


@dataclass(frozen=True, slots=True)
class Wait:
    """Per-app waiting state: since when it waits, what it held, its boost."""

    since: int | None
    containers: int
    memory_mb: int
    boosted_from: int | None = None


@dataclass(frozen=True, slots=True)
class WaitStep:
    """The outcome of steps 20-27 for one app at one heartbeat."""

    wait: Wait
    waited_ms: int
    served: bool
    action: str  # "boost" | "restore" | "keep"


def waiting_step(
    prev: Wait | None,
    waiting: bool,
    containers: int,
    memory_mb: int,
    first_since: int,
    now: int,
    priority: int,
    high: int,
    threshold_ms: int,
) -> WaitStep:
    """Steps 20-27: reset on service, else accumulate; boost at the threshold.

    ``first_since`` is when an app first seen already waiting started to wait.
    """
    served = prev is not None and (containers > prev.containers or memory_mb > prev.memory_mb)
    boosted = prev.boosted_from if prev is not None else None
    if not waiting:
        since = None
    elif prev is None:
        since = first_since
    elif served or prev.since is None:
        since = now
    else:
        since = prev.since
    waited = now - since if since is not None else 0
    action = "keep"
    if boosted is not None and (served or not waiting):
        action, boosted = "restore", None
    elif since is not None and waited >= threshold_ms and priority < high and boosted is None:
        action, boosted = "boost", priority
    elif boosted is not None:
        action = "boost"  # still starving: keep asking for HIGH
    return WaitStep(Wait(since, containers, memory_mb, boosted), waited, served, action)
