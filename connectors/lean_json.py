"""Lean decoding of the RM's big collections: only the fields the parsers read.

At 10,000 nodes one cycle reads about 90 MB of JSON, most of it fields no
parser looks at (log URLs, HTTP addresses, exit codes, diagnostics). Decoding
all of it into dicts and strings cost more than parsing it (bench/bench_parse.py).
msgspec decodes each item of ``{plural: {singular: [...]}}`` straight into a
dict of the keys its parser reads and skips the rest without building it.

The values of those keys are decoded as they are (``Any``): the parsers get
exactly what a full decode would have given them, and keep their tolerance.
Two exceptions, both for values a parser reads only as a fallback: a key can
be kept *raw* (its JSON text, decoded by :func:`materialized` when a parser
needs it; a container's ``allocatedResources`` list), or decoded as a *lean
object* of its own keys (a node's three ResourceInfo objects, whose nested
``resourceInformations`` are kept raw). At 10k nodes these two save about
0.08 s of the 0.23 s decode.
A body of any other shape (a single item, a bare list, no top-level key),
or one msgspec refuses (``NaN``, invalid UTF-8, deep nesting), gives ``None``;
the caller then decodes it in full, as before, so a body a parser accepted or
rejected is accepted or rejected the same way with the same error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import msgspec
import pydantic_core

from yarn_advisor.advisor.model.gcpause import paused_gc
from yarn_advisor.connectors.errors import ParseError, one_line, redact_url


@dataclass(frozen=True, slots=True)
class RawJSON:
    """A body as fetched, not yet decoded: the parse function that knows its
    shape decodes it (leanly where it can)."""

    url: str
    data: bytes


class LeanDecoder:
    """Decodes ``{plural: {singular: [item, ...]}}`` bodies, or ``{singular: [...]}``
    (what a 3.4 RM sends for containers), and a lone item in place of the list,
    into the item dicts, each with only ``keys``; ``None`` for any body it cannot
    take as one of those."""

    def __init__(self, plural: str, singular: str, keys: Iterable[str],
                 shapes: Mapping[str, Any] | None = None) -> None:
        """``shapes``: for some keys, a type other than ``Any``: :data:`RAW` or a
        :func:`lean_object` (a value of another type makes the body fall back)."""
        item = lean_object(f"{singular}_item", keys, shapes)
        items: Any = list[item] | item | None  # type: ignore[valid-type]
        wrapper = msgspec.defstruct(f"{plural}_wrapper", [(singular, items, None)])
        body = msgspec.defstruct(f"{plural}_body", [
            (plural, wrapper | None | msgspec.UnsetType, msgspec.UNSET),
            (singular, items | msgspec.UnsetType, msgspec.UNSET),
        ])
        self._decoder = msgspec.json.Decoder(body)
        self.plural, self.singular = plural, singular

    def items(self, data: bytes) -> list[dict[str, Any]] | None:
        """The items of ``data``, or ``None`` if it is not that shape or not JSON
        msgspec takes (the caller then decodes it in full)."""
        try:
            with paused_gc():  # decoding builds no reference cycles
                body = self._decoder.decode(data)
        except (msgspec.DecodeError, ValueError, RecursionError):
            return None
        wrapper = getattr(body, self.plural)
        if wrapper is msgspec.UNSET:  # {singular: ...}, or neither key
            items = getattr(body, self.singular)
            if items is msgspec.UNSET:
                return None
        else:
            items = getattr(wrapper, self.singular) if wrapper is not None else None
        if isinstance(items, dict):  # Jersey's one item, not in a list
            # an item with none of the keys may not have been empty: let the full decode say
            return [items] if items else None
        return items or []


RAW: Any = msgspec.Raw
"""The shape of a key kept as its JSON text: see :func:`materialized`."""


def lean_object(name: str, keys: Iterable[str], shapes: Mapping[str, Any] | None = None) -> Any:
    """The shape of a JSON object decoded with only ``keys`` (each ``Any`` unless
    ``shapes`` says otherwise). ``| None`` admits ``null`` too."""
    fields = dict.fromkeys(keys, Any) | dict(shapes or {})
    return TypedDict(name, fields, total=False)  # type: ignore[operator]


def materialized(value: object) -> Any:
    """A value as the full decode gives it: a :data:`RAW` key's JSON text decoded
    (only fallbacks read those, so this is rare); any other value as it is."""
    if type(value) is msgspec.Raw:
        return pydantic_core.from_json(bytes(value))  # valid: msgspec has read it
    return value


def decode_json(text: str | bytes, url: str) -> Any:
    """Decode a whole JSON body; ParseError (one line) if it is not JSON.

    pydantic_core's parser: about a fifth faster than ``json.loads`` on large
    RM bodies, it shares repeated strings, and a deeply nested body is a
    ValueError at its recursion limit, not a RecursionError."""
    try:
        with paused_gc():  # decoding allocates no cycles; skip the collector's walks
            return pydantic_core.from_json(text)
    except ValueError as exc:
        head = text[:120] if isinstance(text, str) else text[:120].decode("utf-8", "replace")
        raise ParseError(f"{redact_url(url)}: body is not JSON ({one_line(exc)}): "
                         f"{head!r}") from exc
