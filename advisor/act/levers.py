"""Which RM levers the cluster behind a snapshot can honour at all.

Some writes are accepted by the RM and change nothing: a FairScheduler or
FifoScheduler ignores application priorities, the RM caps every priority at
``yarn.cluster.max-application-priority`` (0 by default, so every priority
write lands as 0), and only the CapacityScheduler has the scheduler-conf
mutation API. The actuator blocks such writes as ``lever_unavailable`` with
the reason (journaled, and logged once per reason), so the advisor says why it
does not act instead of writing values that cannot hold. ``None``: the lever
works, or the snapshot cannot tell (then the write and its read-back decide).
"""

from __future__ import annotations

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.snapshot import Snapshot

CAPACITY = "capacityScheduler"


def unavailable(kind: Kind, snap: Snapshot) -> str | None:
    """Why ``kind`` cannot take effect on the RM that ``snap`` shows (None: it can)."""
    if kind is Kind.SET_APP_PRIORITY:
        if snap.scheduler_type != CAPACITY:
            return (f"the {snap.scheduler_type} does not order applications by priority "
                    "(only the CapacityScheduler does)")
        if snap.max_app_priority == 0:
            return ("yarn.cluster.max-application-priority is 0: the RM caps every "
                    "application priority at 0 (set it to 10 or more to use this lever)")
    if kind is Kind.UPDATE_SCHEDULER_CONF and snap.scheduler_type != CAPACITY:
        return (f"the {snap.scheduler_type} has no scheduler-conf mutation API "
                "(only the CapacityScheduler does)")
    return None
