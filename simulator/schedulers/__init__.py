"""The simulated RM's schedulers: YARN's three baselines, by name.

``SCHEDULERS`` is the registry (an explicit dict, no discovery); a paper's
algorithm run inside the RM is registered the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from yarn_advisor.simulator.schedulers.base import Scheduler
from yarn_advisor.simulator.schedulers.capacity import CapacityScheduler
from yarn_advisor.simulator.schedulers.fair import FairScheduler
from yarn_advisor.simulator.schedulers.fifo import FifoScheduler
from yarn_advisor.simulator.spec import SchedulerSpec

SCHEDULERS: dict[str, Callable[[SchedulerSpec], Scheduler]] = {
    "capacity": CapacityScheduler,
    "fair": FairScheduler,
    "fifo": FifoScheduler,
}


def make_scheduler(name: str, spec: SchedulerSpec) -> Scheduler:
    try:
        factory = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"unknown scheduler {name!r} (one of {', '.join(SCHEDULERS)})") from None
    return factory(spec)


__all__ = ["SCHEDULERS", "CapacityScheduler", "FairScheduler", "FifoScheduler", "Scheduler",
           "make_scheduler"]
