"""The connectors' JSON decoder (``http.decode_json``): msgspec first, pydantic_core's
parser for what msgspec refuses. Whatever the body, the answer is the value the
previous decoder (pydantic_core alone) gave, or a one-line ParseError; never another
exception."""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.http import decode_json

URL = "http://user:secret@rm:8088/ws/v1/cluster/apps"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=30,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, and the same types (1 is not 1.0 here)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _previous(text: str) -> Any:
    """What the decoder gave before msgspec: pydantic_core alone, or ValueError."""
    return pydantic_core.from_json(text)


@settings(max_examples=200, deadline=None)
@given(json_values, st.booleans())
def test_well_formed_json_decodes_to_what_json_loads_gives(value: Any, indent: bool) -> None:
    text = json.dumps(value, indent=2 if indent else None, ensure_ascii=False)
    got = decode_json(text, URL)
    assert _same(got, json.loads(text))
    assert _same(got, _previous(text))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.data())
def test_damaged_json_is_the_previous_value_or_a_parse_error(value: Any,
                                                             data: st.DataObject) -> None:
    text = json.dumps(value)
    at = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.sampled_from(["", "NaN", "Infinity", "-Infinity", "1e999", "[", "}",
                                      ",", '"', "\\", "\\ud800", "\x00", "9" * 30, "<html>"]))
    cut = data.draw(st.integers(0, 3))
    damaged = text[:at] + junk + text[at + cut:]
    try:
        expected = _previous(damaged)
    except ValueError:
        with pytest.raises(ParseError, match="body is not JSON"):
            decode_json(damaged, URL)
    else:
        assert _same(decode_json(damaged, URL), expected)


@pytest.mark.parametrize(("text", "check"), [
    ('{"a": NaN}', lambda v: math.isnan(v["a"])),  # Java writers emit bare NaN
    ('{"a": Infinity, "b": -Infinity}', lambda v: v == {"a": math.inf, "b": -math.inf}),
    ('{"a": 1e999}', lambda v: v == {"a": math.inf}),
    ('{"a": ' + "9" * 400 + "}", lambda v: v == {"a": int("9" * 400)}),  # an int, exactly
    ('{"a": -123456789012345678901234567890}',
     lambda v: v == {"a": -123456789012345678901234567890}),
    ('{"a": "caf\\u00e9 \\u2603"}', lambda v: v == {"a": "café ☃"}),
])
def test_tokens_and_numbers_msgspec_refuses_or_widens_decode_as_before(text: str,
                                                                       check: Any) -> None:
    got = decode_json(text, URL)
    assert check(got)
    assert _same(got, _previous(text))


@pytest.mark.parametrize("text", ["", "   ", "<html><body>502 Bad Gateway</body></html>",
                                  '{"apps": {"app": [', '{"a": 1} trailing', "\ufeff{}x",
                                  '{"a": "\\ud800"}', "[" * 5000 + "]" * 5000,
                                  '{"a":' * 3000 + "1" + "}" * 3000])
def test_garbage_empty_and_deep_bodies_are_one_line_parse_errors(text: str) -> None:
    with pytest.raises(ParseError) as err:
        decode_json(text, URL)
    message = str(err.value)
    assert "\n" not in message and "secret" not in message  # one line, password hidden
    assert message.startswith("http://") and "body is not JSON" in message
    if text.startswith("[[[") or text.startswith('{"a":{'):
        assert "recursion" in message
