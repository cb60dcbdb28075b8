"""The RM plug-in's shared test vectors: the advisor's own serialization of a table of
every decision kind, and tables its reader refuses, written by the Python side and read by
the jar's JUnit tests (rm-plugin/src/test/resources/decision-table/). Both sides must agree
on every file; regenerate them with YARN_ADVISOR_WRITE_VECTORS=1 after a format change."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_decision_table import full_table
from yarn_advisor.advisor.model.decision_table import DecisionTable, TableError

VECTORS = Path(__file__).resolve().parents[2] / "rm-plugin" / "src" / "test" / "resources" / \
    "decision-table"
APP = "application_1700000000000_0007"
Doc = dict[str, Any]


def _req(i: int) -> Callable[[Doc], dict[str, Any]]:
    return lambda d: d["apps"][APP]["requests"][i]


# (name, the path or words the refusal names, how the valid table is spoiled)
INVALID: list[tuple[str, str, Callable[[Doc], object]]] = [
    ("version_2", "$.version", lambda d: d.update(version=2)),
    ("other_format", "$.format", lambda d: d.update(format="other")),
    ("unknown_top_key", "unknown key 'extra'", lambda d: d.update(extra=1)),
    ("no_leader", "missing key 'leader'", lambda d: d.pop("leader")),
    ("ttl_zero", "$.ttl_ms", lambda d: d.update(ttl_ms=0)),
    ("seq_string", "$.seq", lambda d: d.update(seq="42")),
    ("seq_fraction", "$.seq", lambda d: d.update(seq=42.5)),
    ("seq_bool", "$.seq", lambda d: d.update(seq=True)),
    ("unknown_reason", "requests[0].hold.reason",
     lambda d: _req(0)(d).update(hold={"reason": "haste.nope"})),
    ("unknown_request_key", "unknown key 'surprise'", lambda d: _req(3)(d).update(surprise=True)),
    ("alignment_over_one", "fit.min_alignment",
     lambda d: _req(2)(d)["fit"].update(min_alignment=1.5)),
    ("negative_skips", "local_only.max_skips",
     lambda d: _req(1)(d)["local_only"].update(max_skips=-1)),
    ("negative_cap", "cap.max_per_node",
     lambda d: d["rules"][0]["requests"][0]["cap"].update(max_per_node=-1)),
    ("empty_match", "names no attribute", lambda d: d["rules"][0].update(match={})),
    ("negative_lent_room", "lent room", lambda d: d["nodes"]["h4:8041"].update(vcores=-1)),
    ("unranked_middle", "$.unranked", lambda d: d.update(unranked="middle")),
    ("apps_a_list", "$.apps", lambda d: d.update(apps=[])),
    ("empty_leader", "$.leader", lambda d: d.update(leader="")),
]


def vectors() -> dict[str, str]:
    """File name -> text, as the Python side writes them."""
    table = full_table()
    cases = []
    for name, where, spoil in INVALID:
        doc = copy.deepcopy(table.to_json())
        spoil(doc)
        cases.append({"name": name, "where": where, "doc": doc})
    return {
        "valid.json": json.dumps(table.to_json(), indent=2, sort_keys=True) + "\n",
        "invalid.json": json.dumps(cases, indent=2, sort_keys=True) + "\n",
    }


def test_vectors_are_the_python_sides_own() -> None:
    """The committed files are what this side serializes now (else the jar is tested against
    an old format)."""
    want = vectors()
    if os.environ.get("YARN_ADVISOR_WRITE_VECTORS") == "1":
        VECTORS.mkdir(parents=True, exist_ok=True)
        for name, text in want.items():
            (VECTORS / name).write_text(text)
    for name, text in want.items():
        path = VECTORS / name
        assert path.exists(), f"{path} missing: run with YARN_ADVISOR_WRITE_VECTORS=1"
        assert path.read_text() == text, f"{path} is stale: run with YARN_ADVISOR_WRITE_VECTORS=1"


def test_valid_vector_reads_back_to_the_table() -> None:
    assert DecisionTable.loads((VECTORS / "valid.json").read_text()) == full_table()


@pytest.mark.parametrize(("name", "where"), [(n, w) for n, w, _ in INVALID])
def test_python_reader_refuses_every_invalid_vector(name: str, where: str) -> None:
    case = next(c for c in json.loads((VECTORS / "invalid.json").read_text())
                if c["name"] == name)
    with pytest.raises(TableError) as err:
        DecisionTable.from_json(case["doc"])
    assert where in str(err.value)
