"""ANACRAC through the CapacityScheduler's JSON mapping rules (``set_mapping_rules``).

The merge with the operator's own rules, the refusals, placement at submission
in the simulated RM, and rollback restoring the operator's settings verbatim,
each through the advisor's own writer and journal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _simbuild import job, maps, workload

from yarn_advisor.advisor.act.actuator import Actuator
from yarn_advisor.advisor.act.journal import Entry, Journal, Phase
from yarn_advisor.advisor.act.writer import Writer, journaled_write
from yarn_advisor.advisor.model import mapping_rules as mr
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    ConfUpdate,
    MappingConf,
    MappingRules,
    PlacementRule,
    holds,
    value_from_json,
)
from yarn_advisor.advisor.policies.anacrac import Params, advise
from yarn_advisor.advisor.policies.anacrac.state import State
from yarn_advisor.config.schema import ActuatorSettings
from yarn_advisor.connectors.rm.write import mapping_update
from yarn_advisor.simulator.levers import SimLevers
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.snapshot import snapshot
from yarn_advisor.simulator.spec import QueueSpec, SchedulerSpec

# an operator's own rule set, as an operator would type it (spacing, a catch-all last)
OPERATOR = ('{\n  "rules": [\n    {"type": "user", "matches": "etl", "policy": "custom",'
            ' "customPlacement": "root.default"},\n    {"type": "user", "matches": "*",'
            ' "policy": "specified", "fallbackResult": "placeDefault"}\n  ]\n}\n')
RULES = MappingRules((PlacementRule("sftp", "application", "sftp-download", "root.ingest"),))


def test_the_advisors_block_goes_first_and_the_operators_rules_stay_in_order() -> None:
    update = mapping_update({mr.FORMAT_KEY: "json", mr.JSON_KEY: OPERATOR}, RULES).settings
    assert update[mr.FORMAT_KEY] == "json"
    rules = json.loads(str(update[mr.JSON_KEY]))["rules"]
    assert rules[0] == RULES.rules[0].rm_json()
    assert rules[1:] == json.loads(OPERATOR)["rules"]
    # writing another block replaces the advisor's, never the operator's
    again = mr.merged(str(update[mr.JSON_KEY]), [])
    assert json.loads(again)["rules"] == json.loads(OPERATOR)["rules"]
    held = MappingConf("json", str(update[mr.JSON_KEY]))
    assert holds(Kind.SET_MAPPING_RULES, held, RULES)
    assert not holds(Kind.SET_MAPPING_RULES, MappingConf("legacy", held.json), RULES)
    assert not holds(Kind.SET_MAPPING_RULES, MappingConf("json", OPERATOR), RULES)


@pytest.mark.parametrize("conf, words", [
    ({mr.LEGACY_KEYS[0]: "u:etl:default"}, "legacy format"),
    ({mr.JSON_FILE_KEY: "/etc/rules.json"}, "mapping-rule-json-file"),
])
def test_rules_merging_would_drop_are_refused(conf: dict[str, str], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        mapping_update(conf, RULES)


def test_bad_operator_json_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="is not JSON"):
        mapping_update({mr.FORMAT_KEY: "json", mr.JSON_KEY: "{rules: ["}, RULES)


def test_the_journal_form_reads_back() -> None:
    assert value_from_json(Kind.SET_MAPPING_RULES, RULES.to_json()) == RULES
    # a rollback's step holds the settings as they were
    was = MappingConf(None, None)
    assert value_from_json(Kind.SET_MAPPING_RULES, was.to_json()) == was
    with pytest.raises(ValueError, match="placement rule"):
        value_from_json(Kind.SET_MAPPING_RULES, {"rules": [{"name": "x", "type": "tag",
                                                            "matches": "a", "queue": "q"}]})


def test_the_policy_emits_the_rule_set_of_its_named_applications() -> None:
    params = Params.model_validate({"rules": [
        {"name": "sftp", "app_names": ["sftp-download"], "hosts": ["node0002"],
         "label": "ext", "target_queue": "root.ingest"},
        {"name": "typed", "app_type": "MAPREDUCE", "label": "ext", "target_queue": "ingest"}]})
    sim = Simulation(workload([job("a", maps([1]))]), scheduler="capacity")
    recs = [r for r in advise(snapshot(sim), State(), params).recommendations
            if r.kind is Kind.SET_MAPPING_RULES]
    assert [(r.target, r.value) for r in recs] == [("scheduler", RULES)]
    with pytest.raises(ValueError, match="target_queue"):
        Params.model_validate({"rules": [{"name": "x", "app_names": ["a"]}]})


def _write(levers: SimLevers, journal: Journal, kind: Kind, value: object) -> Entry:
    base = Entry(id=f"w{len(journal.actions())}", phase=Phase.INTENT, kind=kind,
                 target="scheduler", policy="anacrac", value=value)  # type: ignore[arg-type]
    return journaled_write(Writer(levers), journal, base, value_from_json(kind, value))


def test_placed_at_submission_on_the_label_then_rolled_back_verbatim(tmp_path: Path) -> None:
    # node0002 carries the exclusive label ext, reached only by queue ingest (its
    # default label); "sftp-download" is submitted to default at 2 s: the rule places
    # it into ingest, so its AM (first container) and its maps run on node0002.
    sched = SchedulerSpec(queues=(QueueSpec("default", 50), QueueSpec("ingest", 50)),
                          maximum_am_resource_percent=1.0)
    jobs = [job("sftp-download", maps([5] * 3), submit_s=2), job("other", maps([5]), submit_s=2)]
    sim = Simulation(workload(jobs, nodes=2, scheduler=sched), scheduler="capacity")
    sim.run(until_ms=1000)
    levers, journal = SimLevers(sim), Journal(tmp_path / "journal.jsonl")
    w = Writer(levers)
    w.apply(Kind.REPLACE_NODE_LABELS, "node0002:45454", value_from_json(
        Kind.REPLACE_NODE_LABELS, ["ext"]))
    w.apply(Kind.UPDATE_SCHEDULER_CONF, "ingest", ConfUpdate.of({
        "accessible-node-labels": "ext", "accessible-node-labels.ext.capacity": 100,
        "default-node-label-expression": "ext"}))
    w.apply(Kind.UPDATE_SCHEDULER_CONF, "scheduler",
            ConfUpdate.of({mr.FORMAT_KEY: "json", mr.JSON_KEY: OPERATOR}))
    before = levers.read(Kind.SET_MAPPING_RULES, "scheduler", RULES)
    assert before == MappingConf("json", OPERATOR)
    result = _write(levers, journal, Kind.SET_MAPPING_RULES, RULES.to_json())
    assert (result.outcome, result.previous) == ("applied", {"format": "json", "json": OPERATOR})
    sim.run()
    app = sim.app_of_job["sftp-download"]
    assert app.state == "FINISHED" and app.queue == "ingest"
    am = app.am_task.container  # the first container
    assert am is not None and am.node.host == "node0002"
    assert {t.container.node.host for t in app.maps if t.container} == {"node0002"}
    assert sim.app_of_job["other"].queue == "default"
    actuator = Actuator(ActuatorSettings(), journal, Writer(levers), global_dry_run=False)
    mine = [a for a in journal.actions() if a.kind is Kind.SET_MAPPING_RULES]
    steps = actuator.rollback(mine)
    assert [s.outcome for s in steps] == ["applied"]
    after = levers.read(Kind.SET_MAPPING_RULES, "scheduler", RULES)
    assert isinstance(after, MappingConf) and after.json == OPERATOR  # byte for byte
