"""The RM's Activities API for one application: fetch (I/O) apart from parse (pure).

``GET /ws/v1/cluster/scheduler/app-activities/{appid}`` (Hadoop 3.3+,
``RMWebServices.getAppActivities``): ``actions=refresh`` asks the RM to record
that application's allocation attempts for ``maxTime`` seconds (it answers
``waiting for display``); ``actions=get`` later returns what was recorded (the
default, both, would start a new recording on the second call too). Recording costs the
scheduler a little per attempt of that application only, for that window, so
the advisor reads it on demand (``explain --activities``), never each cycle.

The body (``AppActivitiesInfo``): ``appActivities`` holds ``applicationId``,
``diagnostic`` and ``allocations``; each allocation (``AppAllocationInfo``: a
node heartbeat) has ``nodeId``, ``timestamp``, ``allocationState``,
``diagnostic`` and ``children``, one per request (``AppRequestAllocationInfo``:
``requestPriority``, ``allocationRequestId``, state, diagnostic), whose
``children`` (``ActivityNodeInfo``) carry the per-node outcome. Lists of one
arrive as the bare object, as elsewhere in the RM's JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from yarn_advisor.advisor.model.activities import AppActivities, Attempt
from yarn_advisor.connectors._json import JSON, as_int, as_list, as_str, obj, require_str, top
from yarn_advisor.connectors.rm.client import RMClient

PATH = "/ws/v1/cluster/scheduler/app-activities/"
ENDPOINT = "app-activities"


def fetch_app_activities(rm: RMClient, app_id: str, record_s: float = 3.0,
                         sleep: Callable[[float], None] = time.sleep) -> Any:
    """Ask the RM to record ``app_id``'s attempts for ``record_s`` seconds, wait that
    long, and return the recorded body (decoded, unparsed)."""
    window = str(max(1, round(record_s)))
    rm.get(PATH + app_id, {"maxTime": window, "actions": "refresh"})  # starts recording
    sleep(record_s)
    return rm.get(PATH + app_id, {"maxTime": window, "actions": "get"})


def parse_app_activities(body: object) -> AppActivities:
    """The typed attempts of an ``app-activities`` body; ParseError on a wrong shape."""
    info = obj(top(body, "appActivities", ENDPOINT), "appActivities", ENDPOINT)
    app_id = require_str(info, "applicationId", "appActivities", ENDPOINT)
    attempts: list[Attempt] = []
    for alloc in as_list(info.get("allocations"), "allocations", ENDPOINT):
        attempts += _attempts(alloc)
    return AppActivities(app_id, as_str(info.get("diagnostic")), tuple(attempts))


def _attempts(alloc: JSON) -> list[Attempt]:
    """One heartbeat's attempts: per request, the deepest diagnostic the RM gave."""
    node = as_str(alloc.get("nodeId"))
    ts = as_int(alloc.get("timestamp"))
    requests = as_list(alloc.get("children"), "allocations.children", ENDPOINT)
    if not requests:
        return [Attempt(node, ts, as_str(alloc.get("allocationState")),
                        as_str(alloc.get("diagnostic")))]
    out = []
    for req in requests:
        prio = req.get("requestPriority")
        rid = req.get("allocationRequestId")
        state = as_str(req.get("allocationState"), as_str(alloc.get("allocationState")))
        diag = as_str(req.get("diagnostic"))
        for leaf in as_list(req.get("children"), "request.children", ENDPOINT):
            diag = diag or as_str(leaf.get("diagnostic"))
            node = node or as_str(leaf.get("nodeId"))
        out.append(Attempt(node, ts, state, diag or as_str(alloc.get("diagnostic")),
                           None if prio is None else as_int(prio),
                           None if rid is None else as_int(rid)))
    return out
