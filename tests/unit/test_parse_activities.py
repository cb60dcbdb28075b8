"""The Activities API's bodies, as the mini cluster's RM answered them
(``tests/fixtures/rm-activities``, see its PROVENANCE.md): parsed into typed
attempts, the scheduler's reasons summed per node, and ``fetch`` asking the RM to
record first and reading after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.rm.activities import PATH, fetch_app_activities, parse_app_activities

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rm-activities"


def body(name: str) -> Any:
    return json.loads((FIXTURES / f"app-activities-{name}.json").read_text())


def test_a_skipped_request_carries_the_node_level_reason() -> None:
    acts = parse_app_activities(body("skipped"))
    assert acts.app_id == "application_1796354080981_0003"
    assert len(acts.attempts) == 21 and acts.allocated() == 0
    reasons = acts.skips()
    top, count, nodes = reasons[0]
    assert top.startswith("Node does not have sufficient resource for request")
    assert "required=<memory:1536" in top
    assert count >= 1 and set(nodes) <= {"127.0.0.2:40883", "127.0.0.3:46213"}
    assert {a.request_priority for a in acts.attempts} == {20}
    assert "skipped" in acts.summary() and "127.0.0.3:46213" in acts.summary()


def test_a_rejection_without_requests_keeps_the_apps_reason() -> None:
    acts = parse_app_activities(body("rejected"))
    assert {a.state for a in acts.attempts} == {"REJECTED"}
    assert acts.skips() == [("Queue hits max-capacity limit", 8, ("127.0.0.2:40883",))]


def test_one_allocation_as_a_bare_object_parses_too() -> None:
    raw = body("rejected")
    raw["appActivities"]["allocations"] = raw["appActivities"]["allocations"][0]
    assert len(parse_app_activities(raw).attempts) == 1


@pytest.mark.parametrize("bad, words", [
    ([], "expected a JSON object"),
    ({"apps": {}}, "appActivities"),
    ({"appActivities": {"diagnostic": "x"}}, "applicationId"),
])
def test_a_wrong_shape_is_a_parse_error(bad: object, words: str) -> None:
    with pytest.raises(ParseError, match=words):
        parse_app_activities(bad)


class _Reads:
    """Answers each GET with the next recorded body, keeping what was asked."""

    def __init__(self, *bodies: Any) -> None:
        self.bodies, self.asked = list(bodies), []  # type: list[Any], list[Any]

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        self.asked.append((path, params))
        return self.bodies.pop(0)


def test_fetch_starts_a_recording_then_reads_it() -> None:
    waiting = body("waiting")
    assert parse_app_activities(waiting).summary().endswith("(waiting for display)")
    rm = _Reads(waiting, body("rejected"))
    slept: list[float] = []
    got = fetch_app_activities(rm, "application_1796354080981_0005", 3,  # type: ignore[arg-type]
                               sleep=slept.append)
    assert got == body("rejected") and slept == [3]
    app = PATH + "application_1796354080981_0005"
    assert rm.asked == [(app, {"maxTime": "3", "actions": "refresh"}),
                        (app, {"maxTime": "3", "actions": "get"})]


def test_explain_asks_only_for_an_application() -> None:
    from yarn_advisor.advisor.cli.explain import activities
    from yarn_advisor.advisor.engine.settings import load_config
    cfg = load_config()
    assert activities(cfg, "node1:8041", 5) == "--activities needs an application id"
    assert "(0, 60]" in str(activities(cfg, "application_1_0001", 600))
    assert activities(cfg, "application_1_0001", None) is None
