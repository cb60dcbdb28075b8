"""The app fields the harm watchdog reads, parsed from app bodies recorded from the real
RM (examples/recordings): the running AM attempt's number (its container id, in
``amContainerLogs``), the node it runs on (``masterNodeId``) and the preempted
containers (``numAMContainerPreempted`` + ``numNonAMContainerPreempted``)."""

from __future__ import annotations

import json

from test_lean_json import RECORDED

from yarn_advisor.connectors.lean_json import RawJSON
from yarn_advisor.connectors.rm import parse as parse_rm


def test_recorded_apps_carry_their_am_attempt_node_and_preemptions() -> None:
    seen = 0
    for kind, where, body in RECORDED:
        if kind != "apps":
            continue
        raw = {a["id"]: a for a in (json.loads(body)["apps"] or {}).get("app", [])}
        for app in parse_rm.parse_apps(RawJSON(where, body.encode())):
            r = raw[app.id]
            logs = r.get("amContainerLogs", "")
            am = next((p for p in logs.split("/") if p.startswith("container_")), "")
            assert app.am_attempt == (int(am.split("_")[-2]) if am else 0), where
            assert app.am_node_id == r.get("masterNodeId", ""), where
            assert app.preempted_containers == (r["numAMContainerPreempted"]
                                                + r["numNonAMContainerPreempted"]), where
            seen += app.am_attempt > 0 and bool(app.am_node_id)
    assert seen >= 20  # the recordings' running apps, each with its first AM attempt


def test_an_app_without_an_am_yet_has_attempt_zero() -> None:
    assert parse_rm._am_attempt("") == 0
    assert parse_rm._am_attempt("http://h:8042/node/containerlogs/junk/u") == 0
    assert parse_rm._am_attempt(
        "http://h:8042/node/containerlogs/container_e17_1_0001_03_000001/u") == 3
