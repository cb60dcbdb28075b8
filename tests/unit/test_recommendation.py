"""advisor.recommendation: JSON-safe, stable, round-trippable recommendations."""

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

from yarn_advisor.advisor.model.recommendation import (
    Explanation,
    FrozenJson,
    Kind,
    Recommendation,
    Target,
    freeze,
    thaw,
)


def _rec(**over: Any) -> Recommendation:
    base: dict[str, Any] = {
        "kind": Kind.SET_APP_PRIORITY,
        "target": "application_1_0001",
        "value": 7,
        "policy": "haste",
        "explanation": Explanation(
            "haste.rta.preference_rank",
            "app: rank 2/3 -> priority 7",
            inputs={"queue": "root.a", "request": {"vcores": 1, "memory_mb": 1024}},
            scores={"preference": 0.5},
            thresholds={"beta": (0.2, 0.2, 0.6)},
        ),
        "previous": 0,
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
    rec = _rec(value={"yarn.x": 3, "a": [1, 2]}, kind="update_scheduler_conf", target="scheduler")
    again = Recommendation.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert again == rec
    assert again.kind is Kind.UPDATE_SCHEDULER_CONF
    assert json.dumps(again.to_dict()) == json.dumps(rec.to_dict())


def test_numpy_scalars_and_tuples_are_canonicalised() -> None:
    rec = _rec(value=np.int64(5), previous=(np.float64(0.5), "x"))
    assert rec.value == 5 and type(rec.value) is int
    assert rec.previous == (0.5, "x")


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
def test_non_json_values_are_rejected(bad: object, err: type[Exception]) -> None:
    with pytest.raises(err):
        _rec(value=bad)


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


def test_frozen_and_key() -> None:
    rec = _rec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.value = 3  # type: ignore[misc]
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
    e = Explanation("r", "s", conflicts=({"policy": "b", "value": 1, "rule": "x", "summary": "y"},))
    assert Explanation.from_dict(e.to_dict()) == e


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
def test_any_json_value_round_trips(value: object) -> None:
    rec = _rec(value=value)
    assert Recommendation.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    assert freeze(rec.value) is rec.value or not isinstance(rec.value, dict)
    assert thaw(rec.value) == json.loads(json.dumps(value))


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
    d = J(_rec(value={"a": [1]}).to_dict())
    assert type(d["value"]) is dict and d["value"] == {"a": [1]}
    assert type(J(d)["explanation"]["inputs"]) is dict
