"""What every simulated scheduler offers, and the resource calculators.

A scheduler is plain logic over the RM state (:class:`~yarn_advisor.simulator.rm.RMCore`):
the RM calls :meth:`Scheduler.node_update` on each NodeManager heartbeat and
the scheduler answers by calling ``rm.allocate`` / ``rm.reserve``, as YARN's
``AbstractYarnScheduler`` subclasses do on ``NODE_UPDATE``. A paper's
algorithm run "in the RM" is just another :class:`Scheduler`.

Calculators (``yarn.scheduler.capacity.resource-calculator``):
``DefaultResourceCalculator`` compares memory only, so vcores may be
over-allocated on a node (the RM then shows negative available vcores, as the
recorded test cluster does); ``DominantResourceCalculator`` compares both,
and orders by dominant share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from yarn_advisor.simulator.apps import SimApp, SimContainer
    from yarn_advisor.simulator.cluster import SimNode
    from yarn_advisor.simulator.rm import RMCore


class Calculator:
    """Fit and comparison of (memory, vcores) vectors."""

    __slots__ = ("dominant",)

    def __init__(self, dominant: bool) -> None:
        self.dominant = dominant

    @property
    def name(self) -> str:
        return ("org.apache.hadoop.yarn.util.resource.DominantResourceCalculator" if self.dominant
                else "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator")

    def fits(self, mem: int, vc: int, avail_mem: int, avail_vc: int) -> bool:
        if self.dominant:
            return mem <= avail_mem and vc <= avail_vc
        return mem <= avail_mem

    def share(self, mem: float, vc: float, total_mem: float, total_vc: float) -> float:
        """The usage's share of a total (dominant share, or memory share)."""
        m = mem / total_mem if total_mem > 0 else 0.0
        if not self.dominant:
            return m
        v = vc / total_vc if total_vc > 0 else 0.0
        return max(m, v)

    def greater(self, a_mem: float, a_vc: float, b_mem: float, b_vc: float,
                total_mem: float, total_vc: float) -> bool:
        """a > b (``Resources.greaterThan``)."""
        if not self.dominant:
            return a_mem > b_mem
        return self._key(a_mem, a_vc, total_mem, total_vc) > self._key(b_mem, b_vc, total_mem,
                                                                        total_vc)

    def _key(self, mem: float, vc: float, tm: float, tv: float) -> tuple[float, float]:
        m = mem / tm if tm > 0 else 0.0
        v = vc / tv if tv > 0 else 0.0
        return (max(m, v), min(m, v))

    def containers(self, avail_mem: int, avail_vc: int, mem: int, vc: int) -> int:
        """How many (mem, vc) fit in the available vector."""
        by_mem = avail_mem // mem if mem > 0 else 1 << 30
        if not self.dominant:
            return max(0, by_mem)
        by_vc = avail_vc // vc if vc > 0 else 1 << 30
        return max(0, min(by_mem, by_vc))


@dataclass(frozen=True)
class QueueView:
    """One queue as a snapshot shows it (values as the RM's scheduler REST reports)."""

    path: str
    name: str
    parent: str
    is_leaf: bool
    capacity: float
    max_capacity: float
    absolute_capacity: float
    absolute_max_capacity: float
    used_mem: int
    used_vc: int
    used_capacity: float
    absolute_used_capacity: float
    num_apps: int
    num_active: int
    num_pending: int
    num_containers: int
    pending_containers: int
    node_labels: tuple[str, ...]
    children: tuple[str, ...]
    ordering_policy: str
    default_priority: int = 0
    fair_share: tuple[int, int] = (0, 0)
    min_share: tuple[int, int] = (0, 0)
    max_share: tuple[int, int] = (0, 0)


class Scheduler(Protocol):
    """A scheduler plugged into the simulated RM."""

    type_name: str  # as /ws/v1/cluster/scheduler reports it: capacityScheduler, ...

    def attach(self, rm: RMCore) -> None: ...

    def add_app(self, app: SimApp) -> None:
        """Admit an app (raises ValueError for an unknown queue, like a rejected submit)."""

    def app_done(self, app: SimApp) -> None: ...

    def node_update(self, node: SimNode) -> None:
        """One NodeManager heartbeat: allocate or reserve on ``node``."""

    def on_allocate(self, container: SimContainer) -> None: ...

    def on_release(self, container: SimContainer) -> None: ...

    def headroom(self, app: SimApp) -> tuple[int, int]:
        """What the app may still get (the headroom its AM sees)."""

    def move_app(self, app: SimApp, queue: str) -> str:
        """Move to ``queue`` (ValueError if not possible); returns the queue's path."""

    def set_priority(self, app: SimApp, priority: int) -> int:
        """Change the app's priority; returns the value in force (capped)."""

    def conf(self) -> dict[str, str]:
        """The live configuration, as ``GET /scheduler-conf`` lists it."""

    def update_conf(self, updates: Mapping[str, str | None], dry_run: bool = False) -> None:
        """Apply scheduler-conf updates (None unsets); ValueError if refused
        (``dry_run``: only check)."""

    def queues(self) -> list[QueueView]: ...

    def queue_path(self, app: SimApp) -> str: ...
