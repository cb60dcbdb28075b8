"""Which RM levers the cluster behind a snapshot can honour at all.

Some writes are accepted by the RM and change nothing: a FairScheduler or
FifoScheduler ignores application priorities, the RM caps every priority at
``yarn.cluster.max-application-priority`` (0 by default, so every priority
write lands as 0), and only the CapacityScheduler has the scheduler-conf
mutation API. The actuator blocks such writes as ``lever_unavailable`` with
the reason (journaled), and says once per lever and process which levers the
RM cannot honour, so the advisor says why it does not act instead of writing
values that cannot hold. ``None``: the lever works, or the snapshot cannot
tell (then the write and its read-back decide).

The maximum priority needs no RM restart: ``yarn rmadmin
-refreshClusterMaxPriority`` reloads it from the RM's yarn-site.xml
(``AdminService.refreshClusterMaxPriority``). The RM's ``/conf`` keeps
showing the value it started with, so the advisor is told the new one in
``sense.rm_conf_values``.
"""

from __future__ import annotations

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.snapshot import Snapshot

CAPACITY = "capacityScheduler"
# the levers some RMs cannot honour (every other kind works on any RM)
LEVERS = (Kind.SET_APP_PRIORITY, Kind.UPDATE_SCHEDULER_CONF)
REFRESH_MAX_PRIORITY = (
    "set it to 10 or more in the RM's yarn-site.xml and run `yarn rmadmin "
    "-refreshClusterMaxPriority`: no RM restart; the RM's /conf still shows the value it "
    "started with, so also give the new one to the advisor in sense.rm_conf_values")


def unavailable(kind: Kind, snap: Snapshot) -> str | None:
    """Why ``kind`` cannot take effect on the RM that ``snap`` shows (None: it can)."""
    if kind is Kind.SET_APP_PRIORITY:
        if snap.scheduler_type != CAPACITY:
            return (f"the {snap.scheduler_type} does not order applications by priority "
                    "(only the CapacityScheduler does)")
        if snap.max_app_priority == 0:
            return ("yarn.cluster.max-application-priority is 0: the RM caps every "
                    f"application priority at 0 ({REFRESH_MAX_PRIORITY})")
    if kind in (Kind.UPDATE_SCHEDULER_CONF, Kind.SET_MAPPING_RULES) \
            and snap.scheduler_type != CAPACITY:
        return (f"the {snap.scheduler_type} has no scheduler-conf mutation API "
                "(only the CapacityScheduler does)")
    return None


def all_unavailable(snap: Snapshot) -> dict[Kind, str]:
    """Every lever the RM behind ``snap`` cannot honour, with the reason."""
    out = {k: unavailable(k, snap) for k in LEVERS}
    return {k: why for k, why in out.items() if why}
