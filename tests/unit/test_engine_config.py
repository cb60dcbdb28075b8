"""YAML policy sections -> typed Params: unknown keys with their path, all errors at once."""

from __future__ import annotations

import pytest
import yaml
from yarn_advisor.advisor.engine import EngineConfig, config_from_dict
from yarn_advisor.advisor.policies import ConfigError, build_params, haste, matchmaking
from yarn_advisor.advisor.policies.haste_inputs import IterationRule

GOOD = """
haste:
  enabled: true
  dry_run: false
  params:
    beta: [0.1, 0.3, 0.6]
    max_priority: 5
    memory_weight: 2          # an int is accepted for a float
    iteration_rules:
      - {name_pattern: "kmeans-(?P<current>\\\\d+)", total: 6}
    max_node_advice: null
matchmaking:
  enabled: false
"""


def test_a_valid_section_builds_typed_params() -> None:
    cfg = config_from_dict(yaml.safe_load(GOOD))
    h = cfg.section("haste")
    assert (h.enabled, h.dry_run) == (True, False)
    assert h.params == haste.Params(
        beta=(0.1, 0.3, 0.6),
        max_priority=5,
        memory_weight=2.0,
        iteration_rules=(IterationRule(r"kmeans-(?P<current>\d+)", 6),),
        max_node_advice=None,
    )
    assert isinstance(h.params.memory_weight, float)
    m = cfg.section("matchmaking")
    assert (m.enabled, m.dry_run, m.params) == (False, None, matchmaking.Params())
    assert cfg.precedence == ("haste", "matchmaking", "opera", "anacrac", "prism")


def test_empty_and_absent_sections_use_defaults() -> None:
    assert config_from_dict(None) == EngineConfig()
    cfg = config_from_dict({"haste": None})
    assert cfg.section("haste").params == haste.Params()


BAD = """
haste:
  enabeld: true
  params:
    beta: [0.1, "x", 0.6]
    max_priority: "10"
    x: 1
    iteration_rules:
      - {name_pattern: "(", total: 0, extra: 1}
matchmaking:
  dry_run: "yes"
  params:
    rounds: 0
    hysteresis: 2.0
tetris: {}
"""


def test_every_problem_is_reported_with_its_path() -> None:
    with pytest.raises(ConfigError) as exc:
        config_from_dict(yaml.safe_load(BAD))
    problems = exc.value.problems
    expected = [
        "policies.haste: unknown key 'enabeld'",
        "policies.haste.params: unknown key 'x'",
        "policies.haste.params.beta[1]: expected float, got str",
        "policies.haste.params.max_priority: expected int, got str",
        "policies.haste.params.iteration_rules[0]: unknown key 'extra'",
        "policies.matchmaking.dry_run: expected bool or null, got str",
        "policies.matchmaking.params.rounds: must be >= 1, got 0",
        "policies.matchmaking.params.hysteresis: must be in [0, 1), got 2.0",
        "policies: unknown policy 'tetris'",
    ]
    for e in expected:
        assert any(p.startswith(e) for p in problems), (e, problems)
    assert str(exc.value).startswith("invalid configuration:")


def test_validation_errors_of_nested_params_get_their_path() -> None:
    with pytest.raises(ConfigError) as exc:
        build_params(
            haste.Params,
            {"iteration_rules": [{"name_pattern": "(", "total": 0}]},
            "policies.haste.params",
        )
    assert sorted(exc.value.problems) == [
        "policies.haste.params.iteration_rules[0].name_pattern: invalid regular expression: "
        "missing ), unterminated subpattern at position 0",
        "policies.haste.params.iteration_rules[0].total: must be >= 1, got 0",
    ]


@pytest.mark.parametrize(
    "raw, problem",
    [
        ({"beta": [0.2, 0.2]}, "policies.haste.params.beta: expected a list of 3 items, got 2"),
        ({"beta": 0.2}, "policies.haste.params.beta: expected a list, got float"),
        ({"alignment": 1}, "policies.haste.params.alignment: expected bool, got int"),
        ({"max_priority": True}, "policies.haste.params.max_priority: expected int, got bool"),
        (
            {"max_node_advice": "all"},
            "policies.haste.params.max_node_advice: expected int, got str",
        ),
        ([1, 2], "policies.haste.params: expected a mapping, got list"),
    ],
)
def test_type_errors(raw: object, problem: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_params(haste.Params, raw, "policies.haste.params")
    assert exc.value.problems == (problem,)


def test_unknown_precedence_and_non_mapping_sections() -> None:
    with pytest.raises(ConfigError) as exc:
        config_from_dict({"haste": [1]}, precedence=("haste", "nope"))
    assert exc.value.problems == (
        "policies.haste: expected a mapping, got list",
        "precedence: unknown policy 'nope'",
    )
