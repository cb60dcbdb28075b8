"""YAML policy sections -> typed Params: unknown keys with their path, all errors at once."""

from __future__ import annotations

import pytest
import yaml

from yarn_advisor.advisor.engine.decide import EngineConfig
from yarn_advisor.advisor.policies import haste, matchmaking
from yarn_advisor.advisor.policies.haste.params import IterationRule
from yarn_advisor.config.base import ConfigError, validate

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
    cfg = EngineConfig.from_policies(yaml.safe_load(GOOD))
    h = cfg.section("haste")
    assert (h.enabled, h.dry_run) == (True, False)
    assert h.params == haste.Params(
        beta=(0.1, 0.3, 0.6),
        max_priority=5,
        memory_weight=2.0,
        iteration_rules=(IterationRule(name_pattern=r"kmeans-(?P<current>\d+)", total=6),),
        max_node_advice=None,
    )
    assert isinstance(h.params, haste.Params) and isinstance(h.params.memory_weight, float)
    assert isinstance(h.params.beta, tuple)  # YAML lists become tuples: the config is immutable
    m = cfg.section("matchmaking")
    assert (m.enabled, m.dry_run, m.params) == (False, None, matchmaking.Params())
    assert cfg.precedence == ("haste", "matchmaking", "opera", "anacrac", "prism")


def test_empty_and_absent_sections_use_defaults() -> None:
    assert EngineConfig.from_policies(None).section("opera").params == \
        EngineConfig.from_policies({}).section("opera").params
    cfg = EngineConfig.from_policies({"haste": None, "prism": {"params": None}})
    assert cfg.section("haste").params == haste.Params()
    assert cfg.section("haste").enabled is True


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
        EngineConfig.from_policies(yaml.safe_load(BAD))
    problems = exc.value.errors
    expected = [
        "policies.haste.enabeld: unknown key (known: dry_run, enabled, params)",
        "policies.haste.params.x: unknown key (known: ",
        "policies.haste.params.beta[1]: must be float, got 'x'",
        "policies.haste.params.max_priority: must be int, got '10'",
        "policies.haste.params.iteration_rules[0].extra: unknown key (known: name_pattern, total)",
        "policies.haste.params.iteration_rules[0].total: must be >= 1",
        "policies.haste.params.iteration_rules[0].name_pattern: invalid regular expression",
        "policies.matchmaking.dry_run: must be bool, got 'yes'",
        "policies.matchmaking.params.rounds: must be >= 1",
        "policies.matchmaking.params.hysteresis: must be < 1",
        "policies.tetris: unknown key (known: anacrac, haste, matchmaking, opera, prism)",
    ]
    for e in expected:
        assert any(p.startswith(e) for p in problems), (e, problems)
    assert len(problems) == len(expected)
    assert str(exc.value).startswith("invalid configuration:")


@pytest.mark.parametrize(
    "raw, problem",
    [
        ({"beta": [0.2, 0.2]}, "policies.haste.params.beta[2]: missing key"),
        ({"beta": 0.2}, "policies.haste.params.beta: must be a list, got 0.2"),
        ({"beta": [0, 0, 0]}, "policies.haste.params.beta: must be three numbers >= 0 with a "
                              "positive sum, got [0.0, 0.0, 0.0]"),
        ({"alignment": 1}, "policies.haste.params.alignment: must be bool, got 1"),
        ({"max_priority": True}, "policies.haste.params.max_priority: must be int, got True"),
        ({"max_node_advice": "all"},
         "policies.haste.params.max_node_advice: must be int, got 'all'"),
        ({"memory_weight": float("inf")},
         "policies.haste.params.memory_weight: must be a finite number"),
        ({"memory_weight": 0, "vcores_weight": 0},
         "policies.haste.params: memory_weight + vcores_weight must be > 0"),
        ([1, 2], "policies.haste.params: must be a mapping, got [1, 2]"),
    ],
)
def test_type_errors(raw: object, problem: str) -> None:
    with pytest.raises(ConfigError) as exc:
        validate(haste.Params, raw, "policies.haste.params")
    assert exc.value.errors == [problem]


def test_a_non_mapping_section_is_reported() -> None:
    with pytest.raises(ConfigError) as exc:
        EngineConfig.from_policies({"haste": [1]})
    assert exc.value.errors == ["policies.haste: must be a mapping, got [1]"]
