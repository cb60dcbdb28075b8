"""Shared coercion helpers for the pure parse modules.

The YARN daemons serialise JSON with Jersey's "natural" notation, and the
shape drifts between Hadoop versions: a one-element list may arrive as the bare
object, an empty collection as ``{}``, ``null`` or nothing at all, and some DAOs
render every number as a string. These helpers absorb that drift so the parse
functions stay short. Only a wrong *kind* of value where a collection or a
required field must be raises :class:`~yarn_advisor.connectors.errors.ParseError`.

Helpers are called once or twice per field of every item, so they keep a fast
path for the common, well-typed case.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from yarn_advisor.advisor.model.snapshot import ZERO, Resources
from yarn_advisor.connectors.errors import ParseError
from yarn_advisor.connectors.lean_json import materialized

JSON = dict[str, Any]


def top(body: object, key: str, endpoint: str) -> Any:
    """``body[key]`` of a decoded body; ParseError if body is not an object or lacks key."""
    if not isinstance(body, dict):
        raise ParseError(f"{endpoint}: body is {type(body).__name__}, expected a JSON object")
    if key not in body:
        keys = ", ".join(sorted(body)[:5]) or "none"
        raise ParseError(f"{endpoint}: missing top-level key {key!r} (keys: {keys})")
    return body[key]


def obj(value: object, what: str, endpoint: str) -> JSON:
    """A JSON object, with ``null`` read as ``{}``; ParseError for any other kind."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    raise ParseError(f"{endpoint}: {what} is {type(value).__name__}, expected an object")


def as_list(value: object, what: str, endpoint: str) -> list[JSON]:
    """A list of objects: a list, a single object, or nothing (None / ``{}``)."""
    if isinstance(value, list):
        items = value
    elif isinstance(value, dict):
        items = [value] if value else []
    elif value is None or value == "":
        return []
    else:
        raise ParseError(f"{endpoint}: {what} is {type(value).__name__}, expected a list")
    for item in items:
        if not isinstance(item, dict):
            kind = type(item).__name__
            raise ParseError(f"{endpoint}: {what} item is {kind}, expected an object")
    return items


def wrapped_list(value: object, key: str, what: str, endpoint: str) -> list[JSON]:
    """Items of a wrapper such as ``{"app": [...]}``; also a bare list or nothing."""
    if isinstance(value, dict) and key in value:
        return as_list(value[key], key, endpoint)
    if isinstance(value, dict) and value:
        # a non-empty wrapper without the item key holds no items we know of
        return []
    return as_list(value, what, endpoint)


def items_or_single(body: object, plural: str, singular: str, endpoint: str) -> list[JSON]:
    """The items of a collection body ``{plural: {singular: [...]}}`` or of a
    single-object body ``{singular: {...}}`` (a list there is accepted too)."""
    if isinstance(body, dict) and plural not in body and singular in body:
        return as_list(body[singular], singular, endpoint)
    return wrapped_list(top(body, plural, endpoint), singular, plural, endpoint)


def require_str(item: JSON, key: str, what: str, endpoint: str) -> str:
    """A required, non-empty string field."""
    value = item.get(key)
    if type(value) is str and value:
        return value
    if value is None:
        raise ParseError(f"{endpoint}: {what} without {key!r}")
    raise ParseError(f"{endpoint}: {what} has {key}={value!r}, expected a non-empty string")


# No counter, size or time the RM reports comes near 2^63 (what Java's long holds):
# a larger number is junk, read as the default like any other junk.
MAX_INT = 2**63 - 1


def as_int(value: object, default: int = 0) -> int:
    """An int from an int, float, numeric string or bool; ``default`` otherwise
    (and for numbers beyond Java's long)."""
    if type(value) is int:
        return value if -MAX_INT <= value <= MAX_INT else default
    if value is None:
        return default
    if isinstance(value, str):
        try:
            n = int(value)
        except ValueError:
            return _float_to_int(_parse_float(value), default)
        return n if -MAX_INT <= n <= MAX_INT else default
    if isinstance(value, float):
        return _float_to_int(value, default)
    if isinstance(value, int):  # bool
        return int(value)
    return default


def as_float(value: object, default: float = 0.0) -> float:
    """A finite float from a number or numeric string; ``default`` for NaN, junk, None."""
    if type(value) is float:
        return value if math.isfinite(value) else default
    if type(value) is int:
        return float(value) if -MAX_INT <= value <= MAX_INT else default
    if value is None:
        return default
    if isinstance(value, str):
        parsed = _parse_float(value)
        return parsed if math.isfinite(parsed) else default
    if isinstance(value, int):  # bool
        return float(value)
    return default


def as_str(value: object, default: str = "") -> str:
    """A string; numbers are formatted, None and containers give ``default``."""
    if type(value) is str:
        return value
    if value is None or isinstance(value, (dict, list)):
        return default
    return str(value)


def as_bool(value: object, default: bool = False) -> bool:
    """A bool from a bool, ``"true"``/``"false"`` or a number."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        return default
    if isinstance(value, (int, float)):
        return value != 0
    return default


def as_str_tuple(value: object) -> tuple[str, ...]:
    """A tuple of strings from a list, a single string, or nothing."""
    if isinstance(value, list):
        return tuple(as_str(v) for v in value if v is not None and v != "")
    if isinstance(value, str):
        return (value,) if value else ()
    return ()


def split_csv(value: object) -> tuple[str, ...]:
    """``"a,b"`` -> ``("a", "b")``; also accepts a list; blanks are dropped."""
    if isinstance(value, str):
        if not value:
            return ()
        return tuple(part for part in (p.strip() for p in value.split(",")) if part)
    return as_str_tuple(value)


@lru_cache(maxsize=8192)
def resources(memory_mb: int, vcores: int) -> Resources:
    """A shared, immutable Resources value (most clusters use few distinct sizes)."""
    if memory_mb == 0 and vcores == 0:
        return ZERO
    return Resources(memory_mb, vcores)


def as_resources(value: object) -> Resources:
    """A ResourceInfo object (``memory``/``memorySize`` and ``vCores``/``virtualCores``,
    or only ``resourceInformations``) as Resources; ZERO when absent."""
    if not isinstance(value, dict) or not value:
        return ZERO
    get = value.get
    mem = get("memory")
    if mem is None:
        mem = get("memorySize")
    cpu = get("vCores")
    if cpu is None:
        cpu = get("virtualCores")
    if mem is None and cpu is None:
        # kept raw by the lean decode (read only here, where memory and vcores are missing)
        return _from_resource_informations(materialized(value.get("resourceInformations")))
    return _pair(mem, cpu, False)


def res_pair(item: JSON, mem_key: str, cpu_key: str) -> Resources:
    """Resources from two flat fields (e.g. ``allocatedMB``/``allocatedVCores``);
    the -1 a finished app reports becomes 0."""
    return _pair(item.get(mem_key), item.get(cpu_key), True)


def _pair(mem: object, cpu: object, clamp: bool) -> Resources:
    try:
        return _cached_pair(mem, cpu, clamp)
    except TypeError:  # an unhashable (list / object) value: junk, read as 0
        return _convert_pair(mem, cpu, clamp)


def _convert_pair(mem: object, cpu: object, clamp: bool) -> Resources:
    m, c = as_int(mem), as_int(cpu)
    if clamp:
        m, c = max(m, 0), max(c, 0)
    return resources(m, c)


# Sizes repeat across thousands of items; caching on the raw JSON values skips
# the string/number conversion for all but the first of each.
_cached_pair = lru_cache(maxsize=8192)(_convert_pair)
_cached_int = lru_cache(maxsize=4096)(as_int)


def small_int(value: object) -> int:
    """:func:`as_int` for values that repeat (priorities, counts): cached."""
    try:
        return _cached_int(value)
    except TypeError:
        return 0


def nonneg(value: object) -> int:
    """An int clamped at 0 (YARN uses -1 for 'unknown' / 'never')."""
    n = as_int(value)
    return n if n > 0 else 0


def _from_resource_informations(value: object) -> Resources:
    infos = value.get("resourceInformation") if isinstance(value, dict) else value
    if isinstance(infos, dict):
        infos = [infos]
    if not isinstance(infos, list):
        return ZERO
    mem = cpu = 0
    for info in infos:
        if not isinstance(info, dict):
            continue
        name = info.get("name")
        if name == "memory-mb":
            mem = as_int(info.get("value"))
        elif name == "vcores":
            cpu = as_int(info.get("value"))
    return resources(mem, cpu)


def _parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _float_to_int(value: float, default: int) -> int:
    return int(value) if math.isfinite(value) and abs(value) <= MAX_INT else default
