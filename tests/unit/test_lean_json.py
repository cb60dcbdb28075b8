"""The lean decode of nodes, apps and containers (connectors/lean_json.py) gives
exactly what the full decode gives: on every body recorded from the real RM, on
the REST docs' examples, on every shape the tolerant parsers take, and on
generated items with junk values. The full decode is the oracle."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from _data import rest_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.lean_json import LeanDecoder, RawJSON
from yarn_advisor.connectors.rm import parse as parse_rm

FAST_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: recordings are MBs

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "examples" / "recordings"

# endpoint path tail -> (parse function, its lean decoder, the keys it reads, item parser)
KINDS: dict[str, tuple[Callable[[object], tuple[Any, ...]], LeanDecoder, tuple[str, ...],
                       Callable[[Any], Any]]] = {
    "nodes": (parse_rm.parse_nodes, parse_rm.LEAN_NODES, parse_rm.NODE_KEYS, parse_rm._node),
    "apps": (parse_rm.parse_apps, parse_rm.LEAN_APPS, parse_rm.APP_KEYS, parse_rm._app),
    "containers": (parse_rm.parse_containers, parse_rm.LEAN_CONTAINERS,
                   parse_rm.CONTAINER_KEYS, parse_rm._container),
}


def _kind(url: str) -> str | None:
    path = url.split("?")[0].rstrip("/")
    if path.endswith("/ws/v1/cluster/nodes"):
        return "nodes"
    if path.endswith("/ws/v1/cluster/apps"):
        return "apps"
    if path.endswith("/containers"):
        return "containers"
    return None


def recorded_bodies() -> Iterator[tuple[str, str, str]]:
    """(kind, where, body) of every 200 nodes/apps/containers answer recorded from the RM."""
    for path in sorted(RECORDINGS.glob("*/cycle-*.yaml")):
        for item in yaml.load(path.read_text(), Loader=FAST_YAML)["responses"]:
            r = item["response"]
            kind = _kind(r["url"])
            if kind and int(r["status"]) == 200:
                yield kind, f"{path.parent.name}/{path.name} {r['url']}", r["body"]


RECORDED = list(recorded_bodies())
DOCS = {"nodes": "rm__12", "apps": "rm__06", "containers": "rm__10"}


def _outcome(parse: Callable[[object], Any], body: object) -> Any:
    """The parse result, or the ParseError's message."""
    try:
        return parse(body)
    except ParseError as exc:
        return f"ParseError: {exc}"


def _same(kind: str, text: str) -> None:
    parse = KINDS[kind][0]
    try:
        full: Any = json.loads(text)
    except ValueError:
        full = RawJSON("u", text.encode())  # not JSON: the full decode's own error
    assert _outcome(parse, RawJSON("u", text.encode())) == _outcome(parse, full)


def test_the_recordings_hold_every_kind_many_times() -> None:
    kinds = [k for k, _, _ in RECORDED]
    assert all(kinds.count(k) >= 20 for k in KINDS), {k: kinds.count(k) for k in KINDS}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_recorded_body_is_decoded_leanly_and_parses_the_same(kind: str) -> None:
    parse, lean, _, _ = KINDS[kind]
    for _, where, body in (r for r in RECORDED if r[0] == kind):
        assert lean.items(body.encode()) is not None, f"{where}: the real RM's shape fell back"
        assert parse(RawJSON(where, body.encode())) == parse(json.loads(body)), where


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_rest_docs_example_parses_the_same(kind: str) -> None:
    _same(kind, json.dumps(rest_doc(DOCS[kind])))


class _Watching(dict[str, Any]):
    """A dict that notes every key read from it."""

    seen: ClassVar[set[str]] = set()

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        _Watching.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        _Watching.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        _Watching.seen.add(str(key))
        return super().__contains__(key)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_key_list_holds_every_key_its_parser_reads(kind: str) -> None:
    """A key a parser reads but the lean decoder drops would be silently missing."""
    _, _, keys, item_parser = KINDS[kind]
    items = [item for k, _, body in RECORDED if k == kind
             for item in KINDS[kind][1].items(body.encode()) or []]
    plural, singular = WORDS[kind]
    items += rest_doc(DOCS[kind])[plural][singular]
    # and each with only its id, so that the fallbacks for missing fields are read too
    items += [{keys[0]: item[keys[0]]} for item in items]
    _Watching.seen = set()
    for item in items:
        # every key present, so that no branch is skipped for a missing one
        item_parser(_Watching({**dict.fromkeys(keys), **item}))
    assert _Watching.seen <= set(keys), sorted(_Watching.seen - set(keys))
    assert _Watching.seen == set(keys), sorted(set(keys) - _Watching.seen)


SHAPES = [
    '{"%(p)s": null}', '{"%(p)s": {}}', '{"%(p)s": {"%(s)s": null}}', '{"%(p)s": {"%(s)s": []}}',
    '{"%(p)s": {"%(s)s": {}}}', '{"%(p)s": []}', '{"%(s)s": %(item)s}', '{"%(s)s": [%(item)s]}',
    '{"%(p)s": {"%(s)s": %(item)s}}', '{"%(p)s": {"other": 1}}', '{"x": 1}', "[]", "null", "",
    "{", '{"%(p)s": {"%(s)s": [1]}}', '{"%(p)s": {"%(s)s": [%(item)s]}, "%(s)s": 3}',
    '{"%(p)s": {"%(s)s": [{"id": NaN}]}}', '{"%(p)s": {"%(s)s": [%(item)s, %(item)s]}}',
]
ITEMS = {
    "nodes": '{"id": "n1:45454", "totalResource": {"memory": 1024, "vCores": 2}}',
    "apps": '{"id": "application_1_0001", "allocatedMB": "-1"}',
    "containers": '{"containerId": "container_1_0001_01_000001", "allocatedMB": "512"}',
}
WORDS = {"nodes": ("nodes", "node"), "apps": ("apps", "app"),
         "containers": ("containers", "container")}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_shape_parses_or_fails_the_same(kind: str, shape: str) -> None:
    p, s = WORDS[kind]
    _same(kind, shape % {"p": p, "s": s, "item": ITEMS[kind]})


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.sampled_from(["12", "-3", "1e3", "1.5", " 7", "RUNNING", "0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["memory", "vCores", "priority", "key", "value", "executionType",
                         "resourceInformations", "resourceInformation", "name"]),
        inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_generated_items_parse_the_same(kind: str, data: st.DataObject) -> None:
    keys = KINDS[kind][2]
    item = data.draw(st.dictionaries(st.sampled_from([*keys, "logUrl", "diagnostics"]),
                                     JSON_VALUES, max_size=len(keys) + 2))
    item.setdefault(keys[0], json.loads(ITEMS[kind])[keys[0]])
    p, s = WORDS[kind]
    _same(kind, json.dumps({p: {s: [item]}}))


# values only a fallback reads, which the lean decode keeps as JSON text or as a lean object
FALLBACKS = {
    "nodes": '{"id": "n1:45454", "totalResource": {"resourceInformations": {"resourceInformation":'
             ' [{"name": "memory-mb", "value": 2048}, {"name": "vcores", "value": "3"}]}},'
             ' "usedResource": {"vCores": 1, "resourceInformations": 7},'
             ' "availableResource": null}',
    "containers": '{"containerId": "container_1_0001_01_000002", "allocatedResources":'
                  ' [{"key": "memory-mb", "value": "1536"}, {"key": "vcores", "value": 2}]}',
}


@pytest.mark.parametrize("kind", sorted(FALLBACKS))
def test_values_kept_raw_are_read_as_the_full_decode_reads_them(kind: str) -> None:
    p, s = WORDS[kind]
    body = json.dumps({p: {s: [json.loads(FALLBACKS[kind])]}})
    assert KINDS[kind][1].items(body.encode()) is not None, "took the full decode"
    parsed = KINDS[kind][0](RawJSON("u", body.encode()))
    assert parsed == KINDS[kind][0](json.loads(body))
    resources = parsed[0].total if kind == "nodes" else parsed[0].allocated
    assert (resources.memory_mb, resources.vcores) == ((2048, 3) if kind == "nodes" else (1536, 2))
