"""ANACRAC's equations (Eq 1-12), threshold edges (50 and 99), rule matching and the
waiting-time step (steps 20-27)."""

from __future__ import annotations

import pytest
from _snapshots import app
from pydantic import ValidationError

from yarn_advisor.advisor.engine.decide import EngineConfig
from yarn_advisor.advisor.policies.anacrac import core as ac
from yarn_advisor.advisor.policies.anacrac.inputs import in_hosts, matches, rule_for
from yarn_advisor.advisor.policies.anacrac.params import Rule
from yarn_advisor.config.base import ConfigError


def _fields(exc: ValidationError) -> set[object]:
    return {e["loc"][0] if e["loc"] else "" for e in exc.errors()}


def test_node_and_container_restriction_eq_1_to_3() -> None:
    assert ac.node_restriction(True) == 1 and ac.node_restriction(False) == 0  # Eq 1
    assert [ac.container_restriction(j, 2) for j in (1, 2, 3)] == [1, 1, 0]  # Eq 2
    assert ac.container_restriction(99, None) == 1
    assert ac.node_and_container(True, 2, 2) == 1  # Eq 3
    assert ac.node_and_container(False, 1, 2) == 0
    assert ac.node_and_container(True, 3, 2) == 0


def test_cpu_usage_eq_4_5() -> None:
    # two /proc/stat readings 100 ticks apart on a 4-processor node
    cct = ac.cumulative_cpu_time(1200, 30, 270)  # Eq 4
    lct = ac.cumulative_cpu_time(1000, 30, 170)
    assert (cct, lct) == (1500, 1200)
    assert ac.cpu_usage(cct, lct, 600, 500, 4) == pytest.approx(75.0)  # Eq 5: 300*100/(100*4)
    assert ac.cpu_usage(cct, lct, 500, 500, 4) is None  # no time step


def test_io_usage_eq_6_8() -> None:
    dds = ac.disk_delta(10_450, 10_000)  # Eq 6: 450 ms busy
    dt = ac.time_delta(2_000, 1_000)  # Eq 7: over 1000 ms
    assert ac.io_usage(dds, dt) == pytest.approx(45.0)  # Eq 8
    assert ac.io_usage(dds, 0) is None


def test_adaptive_sizing_eq_9_12() -> None:
    n1 = ac.app_node_usage([90.0, 70.0])  # Eq 9 (percent of allocation per container)
    n2 = ac.app_node_usage([80.0])
    tr = ac.app_total_usage([n1, n2])  # Eq 10
    assert (n1, n2, tr) == (160.0, 80.0, 240.0)
    u = ac.app_average_usage(tr, 3)  # Eq 11
    assert u == pytest.approx(80.0)
    assert ac.app_average_usage(0.0, 0) is None
    assert ac.adaptive_size(2048, 80.0, 80.0, 512) == 2048  # U_at <= R_s: K
    assert ac.adaptive_size(2048, 80.1, 80.0, 512) == 2560  # else P = K + increment


@pytest.mark.parametrize("value", [50, 99, 75.5])
def test_thresholds_accept_50_to_99(value: float) -> None:
    r = Rule(name="r", app_type="MAPREDUCE", cpu_threshold=value, io_threshold=value)
    assert r.cpu_threshold == value


@pytest.mark.parametrize("value", [49.9, 99.1, 0, 100])
def test_thresholds_reject_outside_50_to_99(value: float) -> None:
    with pytest.raises(ValidationError) as exc:
        Rule(name="r", app_type="MAPREDUCE", cpu_threshold=value, io_threshold=value)
    assert _fields(exc.value) == {"cpu_threshold", "io_threshold"}


@pytest.mark.parametrize("threshold", [50.0, 99.0])
def test_a_node_that_reached_the_threshold_is_refused(threshold: float) -> None:
    r = Rule(name="r", app_type="MAPREDUCE", job_type="ALL", cpu_threshold=threshold,
             io_threshold=threshold)
    below = ac.NodeLoad(threshold - 0.01, threshold - 0.01)
    assert ac.hot(r, below) == [] and ac.admit(r, True, 0, below) == 0
    assert ac.admit(r, True, 0, ac.NodeLoad(threshold, 0.0)) == 11  # step 11: >= refuses
    assert ac.admit(r, True, 0, ac.NodeLoad(0.0, threshold)) == 12  # step 12
    assert ac.hot(r, ac.NodeLoad(threshold, threshold)) == ["cpu_threshold", "io_threshold"]


def test_job_type_selects_the_checked_resource() -> None:
    load = ac.NodeLoad(95.0, 95.0)
    assert ac.hot(Rule(name="c", tag="t", job_type="CPU"), load) == ["cpu_threshold"]
    assert ac.hot(Rule(name="i", tag="t", job_type="IO"), load) == ["io_threshold"]
    assert ac.hot(Rule(name="n", tag="t"), load) == []
    io_unknown = ac.NodeLoad(95.0, None)
    assert ac.hot(Rule(name="u", tag="t", job_type="IO"), io_unknown) == []


def test_admit_steps_in_order() -> None:
    r = Rule(name="r", tag="t", hosts=("h1",), tasks_maximum=2, job_type="CPU")
    cool = ac.NodeLoad(10.0, None)
    assert ac.admit(None, False, 99, ac.NodeLoad(100.0, 100.0)) == 0  # step 3: no rule
    assert ac.admit(r, False, 0, cool) == 8
    assert ac.admit(r, True, 1, cool) == 0  # j = 2 <= P
    assert ac.admit(r, True, 2, cool) == 10  # j = 3 > P
    assert ac.admit(r, True, 0, ac.NodeLoad(80.0, None)) == 11


def test_rule_matching_by_name_type_queue_and_tag() -> None:
    a = app("application_1_0001", name="sqoop-import-orders", queue="root.etl",
            app_type="MAPREDUCE", tags=["team:ingest", "nightly"])
    assert matches(Rule(name="n", app_name=r"^sqoop-"), a)
    assert not matches(Rule(name="n", app_name=r"^spark-"), a)
    assert matches(Rule(name="t", app_type="mapreduce"), a)  # case-insensitive
    assert not matches(Rule(name="t", app_type="SPARK"), a)
    assert matches(Rule(name="q", queue="root.etl"), a) and matches(Rule(name="q", queue="etl"), a)
    assert not matches(Rule(name="q", queue="root.adhoc"), a)
    assert matches(Rule(name="g", tag="nightly"), a) and not matches(Rule(name="g", tag="team"), a)
    assert matches(Rule(name="all", app_name="import", app_type="MAPREDUCE", queue="etl",
                        tag="nightly"), a)
    assert not matches(Rule(name="all", app_name="import", app_type="SPARK"), a)  # every matcher


def test_first_matching_rule_wins() -> None:
    a = app("application_1_0001", name="etl-daily", tags=["x"])
    rules = (Rule(name="other", tag="y"), Rule(name="first", tag="x"),
             Rule(name="second", app_name="etl"))
    found = rule_for(a, rules)
    assert found is not None and found.name == "first"
    assert rule_for(a, (Rule(name="none", tag="z"),)) is None


def test_hosts_by_host_or_node_id() -> None:
    r = Rule(name="r", tag="t", hosts=("h1", "h2:8041"))
    assert in_hosts(r, "h1:8041", "h1") and in_hosts(r, "h2:8041", "h2")
    assert not in_hosts(r, "h2:9999", "h2") and not in_hosts(r, "h3:1", "h3")
    assert in_hosts(Rule(name="any", tag="t"), "h9:1", "h9")


def test_rule_validation_reports_every_problem() -> None:
    with pytest.raises(ValidationError) as exc:
        Rule(name="", app_name="(", tasks_maximum=0, label="bad label", target_queue="q",
             container_memory_increment_mb=-1)
    assert _fields(exc.value) == {"name", "app_name", "tasks_maximum", "label",
                                  "container_memory_increment_mb"}
    with pytest.raises(ValidationError, match="at least one"):
        Rule(name="nomatch")
    with pytest.raises(ValidationError, match="needs a label"):
        Rule(name="q", tag="t", target_queue="root.q")


def test_rules_from_yaml_config() -> None:
    cfg = EngineConfig.from_policies({"anacrac": {"params": {"rules": [
        {"name": "ingest", "app_name": "^sqoop", "hosts": ["h1", "h2"], "tasks_maximum": 2,
         "job_type": "IO", "io_threshold": 99}]}}})
    rule = cfg.section("anacrac").params.rules[0]
    assert rule.hosts == ("h1", "h2") and rule.io_threshold == 99.0
    with pytest.raises(ConfigError) as exc:
        EngineConfig.from_policies({"anacrac": {"params": {"rules": [
            {"name": "x", "tag": "t", "cpu_threshold": 100}, {"name": "x", "tag": "u"}]}}})
    text = "\n".join(exc.value.errors)
    assert "rules[0].cpu_threshold" in text


# --- steps 20-27 -------------------------------------------------------------------


def step(prev: ac.Wait | None, waiting: bool, containers: int, now: int,
         priority: int = 0) -> ac.WaitStep:
    return ac.waiting_step(prev, waiting, containers, containers * 1024, 0, now, priority, 10,
                           60_000)


def test_waiting_time_accumulates_boosts_and_restores() -> None:
    s1 = step(None, True, 1, 10_000)  # first seen waiting since 0
    assert (s1.wait.since, s1.waited_ms, s1.action) == (0, 10_000, "keep")
    s2 = step(s1.wait, True, 1, 59_999)
    assert s2.action == "keep"
    s3 = step(s2.wait, True, 1, 60_000)  # step 24: waited >= W
    assert (s3.action, s3.wait.boosted_from) == ("boost", 0)
    s4 = step(s3.wait, True, 1, 90_000, priority=10)
    assert s4.action == "boost" and s4.wait.boosted_from == 0  # still starving
    s5 = step(s4.wait, True, 2, 95_000, priority=10)  # step 22: got a container
    assert (s5.served, s5.action, s5.wait.since, s5.wait.boosted_from) == (
        True, "restore", 95_000, None)
    s6 = step(s5.wait, False, 2, 100_000)
    assert (s6.wait.since, s6.waited_ms, s6.action) == (None, 0, "keep")


def test_no_boost_when_already_high_and_restore_when_no_longer_waiting() -> None:
    s = step(None, True, 0, 120_000, priority=10)
    assert s.action == "keep"
    boosted = ac.Wait(0, 1, 1024, 3)
    assert step(boosted, False, 1, 130_000).action == "restore"
