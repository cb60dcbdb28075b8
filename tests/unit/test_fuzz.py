"""Fuzzing: whatever outside data the advisor reads, it answers with a result or its own
clear error, never another exception.

Every target starts from real data (the Hadoop REST doc examples, the recorded cycles,
the bundled traces and histories) and hypothesis mutates it: a value anywhere in a JSON
body replaced by junk (huge or negative numbers, NaN, strings, containers, deep
nesting), a key removed, a file's bytes cut, flipped or inserted. The number of examples
per target is ``YARN_ADVISOR_FUZZ_EXAMPLES`` (60 in CI; raise it for a longer run).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from _data import DATA, rest_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yarn_advisor.advisor.act.journal import Journal
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.classifiers.readers.jhist import JhistReader
from yarn_advisor.classifiers.readers.rumen import read_trace
from yarn_advisor.classifiers.readers.sources import SourceError
from yarn_advisor.classifiers.readers.spark import SparkEventLogReader
from yarn_advisor.classifiers.readers.tasks_csv import TaskCsvReader
from yarn_advisor.config.base import ConfigError
from yarn_advisor.connectors import jmx, mapreduce, rm
from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.replay import RecordingError, open_recording

FAST_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: recordings are MBs

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = yaml.safe_load((ROOT / "config" / "defaults.yaml").read_text())  # read once
EXAMPLES = int(os.environ.get("YARN_ADVISOR_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

def _deep() -> Any:
    deep: Any = 0
    for _ in range(400):
        deep = [deep]
    return deep


junk = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from([10**400, -(10**400), 2**63]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["1e999", "NaN", "-1", "9" * 400, "", "true"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                          max_size=2),
    st.builds(_deep),
)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def mutated(body: Any) -> st.SearchStrategy[Any]:
    """``body`` with one to three of its values replaced by junk or removed."""
    paths = [p for p in _paths(body) if p]

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        out = copy.deepcopy(body)
        if not paths:
            return draw(junk)
        for path in draw(st.lists(st.sampled_from(paths), min_size=1, max_size=3)):
            parent = out
            try:
                for key in path[:-1]:
                    parent = parent[key]
                parent[path[-1]]
            except (KeyError, IndexError, TypeError):
                continue
            if not isinstance(parent, dict | list):
                continue
            if isinstance(parent, dict) and draw(st.booleans()):
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(junk)
        return out

    return build()


def _parses_or_parse_error(parse: Callable[[Any], object], body: Any) -> None:
    with contextlib.suppress(ParseError):
        parse(body)


PARSERS: list[tuple[str, Callable[[Any], object]]] = [
    ("rm__01", rm.parse_cluster_info), ("rm__02", rm.parse_cluster_metrics),
    ("rm__03", rm.parse_scheduler), ("rm__05", rm.parse_scheduler),
    ("rm__12", rm.parse_nodes), ("rm__06", rm.parse_apps),
    ("rm__09", rm.parse_app_attempts), ("rm__10", rm.parse_containers),
    ("mram__02", mapreduce.parse_jobs),
    ("mram__07", lambda b: mapreduce.parse_tasks(b, "job_1326381300833_2_2")),
    ("mram__10", lambda b: mapreduce.parse_task_attempts(b, "task_1326381300833_2_2_m_0")),
]


@pytest.mark.parametrize(("doc", "parse"), PARSERS, ids=[d for d, _ in PARSERS])
def test_rm_and_am_parsers(doc: str, parse: Callable[[Any], object]) -> None:
    body = rest_doc(doc)

    @FUZZ
    @given(mutated(body))
    def check(b: Any) -> None:
        _parses_or_parse_error(parse, b)

    check()


def _recorded_bodies(fragment: str) -> Any:
    cycle = ROOT / "examples" / "recordings" / "mini-hetero" / "cycle-0020.yaml"
    for item in yaml.load(cycle.read_text(), Loader=FAST_YAML)["responses"]:
        if fragment in item["response"]["url"]:
            return json.loads(item["response"]["body"])
    raise LookupError(fragment)


@pytest.mark.parametrize("fragment", ["NodeManager", "QueueMetrics"])
def test_jmx_parser_on_recorded_beans(fragment: str) -> None:
    body = _recorded_bodies(fragment)

    @FUZZ
    @given(mutated(body))
    def check(b: Any) -> None:
        try:
            beans = jmx.parse_beans(b)
            jmx.container_usage(beans)
            jmx.queue_metrics(beans)
        except ParseError:
            pass

    check()


def _mangle(data: bytes, draw: st.DrawFn) -> bytes:
    """Cut, flip or insert bytes."""
    how = draw(st.sampled_from(["cut", "flip", "insert"]))
    at = draw(st.integers(0, max(0, len(data) - 1)))
    if how == "cut":
        return data[:at]
    if how == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]


@FUZZ
@given(st.data())
def test_replay_loader(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    src = ROOT / "examples" / "recordings" / "ha-standby"
    dst = tmp_path_factory.mktemp("rec")
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    victim = data.draw(st.sampled_from(sorted(dst.iterdir())))
    victim.write_bytes(_mangle(victim.read_bytes(), data.draw))
    with contextlib.suppress(RecordingError):
        open_recording(dst)


@FUZZ
@given(st.data())
def test_journal_reader(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    path = tmp_path_factory.mktemp("j") / "journal.jsonl"
    line = (b'{"id": "a", "phase": "intent", "kind": "set_app_priority", "target": "app_1", '
            b'"policy": "haste", "value": 5, "previous": 0, "ts": 1.0}\n')
    path.write_bytes(_mangle(line * 3, data.draw))
    j = Journal(path)
    j.entries()
    j.actions()


@FUZZ
@given(st.data())
def test_config_loader(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    defaults = copy.deepcopy(DEFAULTS)
    defaults["policies"] = {"haste": {"params": {"beta": [0.2, 0.2, 0.6]}}}
    doc = data.draw(mutated(defaults))
    f = tmp_path_factory.mktemp("c") / "advisor.yaml"
    try:
        f.write_text(yaml.safe_dump(doc))
    except (yaml.YAMLError, RecursionError):
        return  # not representable as YAML (a generator limit, not a loader input)
    with contextlib.suppress(ConfigError):
        load_config(f)


@FUZZ
@given(st.data())
def test_config_loader_on_mangled_bytes(tmp_path_factory: pytest.TempPathFactory,
                                        data: st.DataObject) -> None:
    f = tmp_path_factory.mktemp("c") / "advisor.yaml"
    f.write_bytes(_mangle((ROOT / "examples" / "anacrac-rules.yaml").read_bytes(), data.draw))
    with contextlib.suppress(ConfigError):
        load_config(f)


def _trace_file(name: str) -> Path:
    return {"rumen": ROOT / "examples" / "traces" / "trace_1m.json.gz",
            "jhist": next((DATA / "hadoop-jhist").glob("*.jhist")),
            "spark": next(p for p in sorted((DATA / "spark-eventlogs").iterdir())
                          if p.is_file())}[name]


@pytest.mark.parametrize("kind", ["rumen", "jhist", "spark", "csv"])
def test_trace_readers(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    if kind == "csv":
        raw = (b"job_id,job_name,user,queue,task_type,start_ms,finish_ms,memory_mb,vcores,"
               b"status\njob_1,wc,u,q,MAP,1000,9000,1024,1,SUCCEEDED\n"
               b"job_1,wc,u,q,REDUCE,2000,90000,2048,1,KILLED\n")
        suffix = ".csv"
    else:
        src = _trace_file(kind)
        import gzip

        raw = gzip.decompress(src.read_bytes()) if src.suffix == ".gz" else src.read_bytes()
        suffix = ".json" if kind == "rumen" else src.suffix

    @FUZZ
    @given(st.data())
    def check(data: st.DataObject) -> None:
        f = tmp_path_factory.mktemp(kind) / f"input{suffix}"
        f.write_bytes(_mangle(raw, data.draw))
        try:
            if kind == "rumen":
                read_trace(f)
            else:
                reader = {"jhist": JhistReader, "spark": SparkEventLogReader,
                          "csv": TaskCsvReader}[kind]([f])
                list(reader)
        except SourceError:
            pass

    check()
