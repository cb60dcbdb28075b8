"""Recommendations: typed payloads per kind, JSON-safe, stable, round-trippable."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import pytest
from _snapshots import J
from hypothesis import given
from hypothesis import strategies as st

from yarn_advisor.advisor.model.jsonvalue import FrozenJson, freeze, thaw
from yarn_advisor.advisor.model.kinds import Kind, Target
from yarn_advisor.advisor.model.payloads import (
    PREVIOUS_TYPES,
    VALUE_TYPES,
    Advice,
    AppState,
    ClusterLabels,
    ConfUpdate,
    ContainerSignal,
    ContainerSize,
    ContainerStatus,
    MappingConf,
    MappingRules,
    NodeLabels,
    NodeResource,
    Payload,
    PlacementRule,
    Priority,
    Queue,
    previous_from_json,
    value_from_json,
)
from yarn_advisor.advisor.model.recommendation import Conflict, Explanation, Recommendation


def _rec(**over: Any) -> Recommendation:
    base: dict[str, Any] = {
        "kind": Kind.SET_APP_PRIORITY,
        "target": "application_1_0001",
        "value": Priority(7),
        "policy": "haste",
        "explanation": Explanation(
            "haste.rta.preference_rank",
            "app: rank 2/3 -> priority 7",
            inputs={"queue": "root.a", "request": {"vcores": 1, "memory_mb": 1024}},
            scores={"preference": 0.5},
            thresholds={"beta": (0.2, 0.2, 0.6)},
        ),
        "previous": Priority(0),
    }
    base.update(over)
    return Recommendation(**base)


def test_to_dict_has_the_interface_keys_in_a_fixed_order() -> None:
    d = J(_rec().to_dict())
    assert list(d) == ["policy", "kind", "target", "value", "previous", "explanation"]
    assert list(d["explanation"]) == [
        "rule",
        "summary",
        "inputs",
        "scores",
        "thresholds",
        "conflicts",
    ]
    assert d["kind"] == "set_app_priority"
    assert d["explanation"]["thresholds"] == {"beta": [0.2, 0.2, 0.6]}
    assert list(d["explanation"]["inputs"]["request"]) == ["memory_mb", "vcores"]  # sorted


def test_round_trip_through_json() -> None:
    rec = _rec(value=ConfUpdate.of({"yarn.x": 3, "a": "b"}), kind="update_scheduler_conf",
               target="scheduler", previous=ConfUpdate.of({"yarn.x": None, "a": "c"}))
    again = Recommendation.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert again == rec
    assert again.kind is Kind.UPDATE_SCHEDULER_CONF
    assert json.dumps(again.to_dict()) == json.dumps(rec.to_dict())


def test_numpy_scalars_and_tuples_in_advice_are_canonicalised() -> None:
    advice = Advice.of({"n": np.int64(5), "t": (np.float64(0.5), "x")})
    assert advice.fields == {"n": 5, "t": (0.5, "x")} and type(advice.fields["n"]) is int
    assert advice.to_json() == {"n": 5, "t": [0.5, "x"]}


def test_a_value_of_another_kinds_type_is_refused() -> None:
    with pytest.raises(TypeError, match="value must be a Priority"):
        _rec(value=Queue("root.a"))
    with pytest.raises(TypeError, match="value must be a Priority"):
        _rec(value=7)
    with pytest.raises(TypeError, match="previous must be a ContainerStatus"):
        _rec(kind=Kind.SIGNAL_CONTAINER, value=ContainerSignal("GRACEFUL_SHUTDOWN"),
             previous=ContainerSignal("GRACEFUL_SHUTDOWN"))


SAMPLES: dict[Kind, tuple[Payload, Payload]] = {
    Kind.SET_APP_PRIORITY: (Priority(5), Priority(0)),
    Kind.MOVE_APP_QUEUE: (Queue("root.a.b"), Queue("default")),
    Kind.UPDATE_SCHEDULER_CONF: (ConfUpdate.of({"k": 2, "b": True, "u": None}),
                                 ConfUpdate.of({"k": "1", "b": None, "u": "x"})),
    Kind.REPLACE_NODE_LABELS: (NodeLabels(("gpu",)), NodeLabels(())),
    Kind.UPDATE_NODE_RESOURCE: (NodeResource(8192, 8, 0), NodeResource(6144, 6)),
    Kind.SIGNAL_CONTAINER: (ContainerSignal("GRACEFUL_SHUTDOWN"),
                            ContainerStatus("RUNNING", "h1:8041")),
    Kind.KILL_APP: (AppState("KILLED"), AppState("RUNNING")),
    Kind.ADD_CLUSTER_LABELS: (ClusterLabels(("a", "b")), ClusterLabels(("a",))),
    Kind.REMOVE_CLUSTER_LABELS: (ClusterLabels(("b",)), ClusterLabels(("a", "b"))),
    Kind.ADVISE_CONTAINER_SIZE: (ContainerSize(2048, 2), ContainerSize(1024, 1)),
    Kind.ADVISE_APP_CONFIG: (Advice.of({"x": [1, {"y": None}]}), Advice.of({})),
    Kind.SET_MAPPING_RULES: (MappingRules((PlacementRule("r", "application", "a", "root.q"),)),
                             MappingConf("json", '{"rules": []}')),
}


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_has_a_payload_type_and_its_json_reads_back(kind: Kind) -> None:
    value, previous = SAMPLES[kind]
    assert type(value) is VALUE_TYPES[kind] and type(previous) is PREVIOUS_TYPES[kind]
    assert value_from_json(kind, json.loads(json.dumps(value.to_json()))) == value
    assert previous_from_json(kind, json.loads(json.dumps(previous.to_json()))) == previous
    assert previous_from_json(kind, None) is None


@pytest.mark.parametrize(("kind", "bad"), [
    (Kind.SET_APP_PRIORITY, {"not": "a priority"}), (Kind.MOVE_APP_QUEUE, 3),
    (Kind.UPDATE_SCHEDULER_CONF, {"k": [1]}), (Kind.REPLACE_NODE_LABELS, "gpu"),
    (Kind.UPDATE_NODE_RESOURCE, [8192]), (Kind.ADVISE_CONTAINER_SIZE, {"memory_mb": 1}),
])
def test_json_that_is_not_the_kinds_value_is_refused(kind: Kind, bad: object) -> None:
    with pytest.raises(ValueError, match=kind.value):
        value_from_json(kind, bad)


@pytest.mark.parametrize(
    "bad, err",
    [
        (math.nan, ValueError),
        (math.inf, ValueError),
        ({1: "x"}, TypeError),
        ({"a": {2, 3}}, TypeError),
        (object(), TypeError),
    ],
)
def test_non_json_advice_is_rejected(bad: object, err: type[Exception]) -> None:
    with pytest.raises(err):
        Advice.of({"v": bad})


def test_validation_of_fields() -> None:
    with pytest.raises(ValueError):
        _rec(kind="reboot_cluster")
    with pytest.raises(ValueError):
        _rec(target="")
    with pytest.raises(ValueError):
        Explanation("r", "two\nlines")
    with pytest.raises(ValueError):
        Explanation("", "x")


def test_from_dict_rejects_unknown_and_missing_keys() -> None:
    d = J(_rec().to_dict())
    with pytest.raises(ValueError, match="unknown key 'extra'"):
        Recommendation.from_dict({**d, "extra": 1})
    with pytest.raises(ValueError, match="missing key 'target'"):
        Recommendation.from_dict({k: v for k, v in d.items() if k != "target"})
    with pytest.raises(ValueError, match="unknown kind"):
        Recommendation.from_dict({**d, "kind": "nope"})
    e = d["explanation"]
    assert isinstance(e, dict)
    with pytest.raises(ValueError, match="explanation: unknown key 'why'"):
        Recommendation.from_dict({**d, "explanation": {**e, "why": "?"}})
    with pytest.raises(ValueError, match="not a Priority"):
        Recommendation.from_dict({**d, "value": "high"})


def test_frozen_and_key() -> None:
    rec = _rec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.value = Priority(3)  # type: ignore[misc]
    assert rec.key == ("set_app_priority", "application_1_0001")
    assert Kind.ADVISE_APP_CONFIG.advisory and not Kind.SET_APP_PRIORITY.advisory


def test_one_list_of_kinds_and_levers() -> None:
    """Every kind that is not advisory has exactly one RM lever, and every lever a kind."""
    from yarn_advisor.connectors.rm.write import LEVERS, lever

    assert set(LEVERS) == {k for k in Kind if not k.advisory}
    assert {k for k in Kind if k.irreversible} == {Kind.SIGNAL_CONTAINER, Kind.KILL_APP}
    assert Kind.KILL_APP.target is Target.APP and Kind.SIGNAL_CONTAINER.target is Target.CONTAINER
    with pytest.raises(ValueError, match="no RM lever"):
        lever(Kind.ADVISE_CONTAINER_SIZE)


def test_conflicts_are_serialised() -> None:
    e = Explanation("r", "s", conflicts=(Conflict("b", Priority(1), "x", "y"),))
    assert J(e.to_dict())["conflicts"] == [
        {"policy": "b", "rule": "x", "summary": "y", "value": 1}]
    assert Explanation.from_dict(e.to_dict(), Kind.SET_APP_PRIORITY) == e
    with pytest.raises(TypeError):
        Explanation("r", "s", conflicts=({"policy": "b"},))  # type: ignore[arg-type]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_any_json_advice_round_trips(value: object) -> None:
    rec = _rec(kind=Kind.ADVISE_APP_CONFIG, value=Advice.of({"v": value}), previous=None)
    assert Recommendation.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    assert isinstance(rec.value, Advice)
    assert freeze(rec.value.fields) is rec.value.fields
    assert thaw(rec.value.fields) == {"v": json.loads(json.dumps(value))}


def test_frozen_payloads_are_read_only_and_shared_for_free() -> None:
    shared = freeze({"b": [1, 2], "a": {"y": 1, "x": 2}})
    assert isinstance(shared, FrozenJson)
    assert shared["b"] == (1, 2) and json.loads(json.dumps(shared)) == thaw(shared)
    assert json.dumps(thaw(shared)) == '{"a": {"x": 2, "y": 1}, "b": [1, 2]}'
    with pytest.raises(TypeError):
        J(shared)["c"] = 1
    with pytest.raises(TypeError):
        J(shared).update({"c": 1})
    e1 = Explanation("r", "s", thresholds=J(shared))
    e2 = Explanation("r", "s", thresholds={"t": shared})
    assert e1.thresholds is shared and e2.thresholds["t"] is shared
    assert e1 == Explanation("r", "s", thresholds={"a": {"x": 2, "y": 1}, "b": [1, 2]})


def test_to_dict_returns_plain_containers() -> None:
    d = J(_rec(kind=Kind.ADVISE_APP_CONFIG, value=Advice.of({"a": [1]}), previous=None).to_dict())
    assert type(d["value"]) is dict and d["value"] == {"a": [1]}
    assert type(J(d)["explanation"]["inputs"]) is dict
