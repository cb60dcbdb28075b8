"""Immutable JSON: the type of every payload that crosses the model's edges.

:func:`freeze` canonicalises a value into *immutable* JSON: mappings become
:class:`FrozenJson` (a read-only ``dict`` with string keys), lists and tuples
become tuples, numpy scalars become Python numbers, and anything not
representable in JSON (NaN, sets, objects) is rejected with
``TypeError``/``ValueError`` naming its path. Freezing an already frozen
payload is free, so a policy can freeze a payload shared by many
recommendations (thresholds, a request's description) once. :func:`thaw`
gives back plain sorted ``dict``/``list`` for serialisers.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, TypeAlias

JsonValue: TypeAlias = (
    bool
    | int
    | float
    | str
    | list["JsonValue"]
    | tuple["JsonValue", ...]
    | dict[str, "JsonValue"]
    | None
)
JsonDict: TypeAlias = dict[str, JsonValue]


class FrozenJson(dict[str, Any]):
    """A read-only JSON object: string keys, frozen values (``to_dict`` sorts keys).

    A ``dict`` subclass, so ``json.dumps`` and ``==`` with plain dicts work;
    every mutating method raises ``TypeError``. Build one with :func:`freeze`.
    """

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> Any:
        raise TypeError("FrozenJson is read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __copy__(self) -> FrozenJson:
        return self

    def __deepcopy__(self, memo: object) -> FrozenJson:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenJson, (dict(self),))


def freeze(value: object, path: str = "value") -> JsonValue:
    """Return ``value`` as canonical immutable JSON, or raise naming the bad path.

    Mapping keys must be strings; lists and tuples
    become tuples; integral and real numbers (numpy scalars included) become
    ``int`` and ``float``; non-finite floats are rejected. A
    :class:`FrozenJson` is returned as is.
    """
    try:
        return _fast(value)
    except _NotJson:
        return _checked(value, path)


def freeze_dict(value: Mapping[str, Any], path: str = "value") -> FrozenJson:
    """:func:`freeze` for a mapping, typed as :class:`FrozenJson`."""
    return json_dict(value, path)


def thaw(value: JsonValue) -> JsonValue:
    """Plain ``dict``/``list`` copy of a frozen payload, keys sorted (for serialisers)."""
    if isinstance(value, dict):
        return {k: thaw(value[k]) for k in sorted(value)}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


class _NotJson(Exception):
    pass


_LEAVES = frozenset({str, int, bool, FrozenJson})  # kept as they are


def _fast(v: object) -> JsonValue:
    """The common case (builtin types only), without building paths."""
    t = type(v)
    if t is FrozenJson:
        return v  # type: ignore[return-value]
    if t is dict:
        return _fast_dict(v)  # type: ignore[arg-type]
    if t is list or t is tuple:
        return tuple([_fast(x) for x in v])  # type: ignore[attr-defined]
    if t is str or t is int or t is bool or v is None:
        return v  # type: ignore[return-value]
    if t is float and v - v == 0.0:  # type: ignore[operator]  # finite (inf - inf is nan)
        return v  # type: ignore[return-value]
    raise _NotJson


def _fast_dict(d: dict[Any, Any]) -> FrozenJson:
    out: dict[str, JsonValue] = {}
    for k in d:
        if type(k) is not str:
            raise _NotJson
        v = d[k]
        t = type(v)
        if t in _LEAVES or v is None or (t is float and v - v == 0.0):
            out[k] = v
        elif t is dict:
            out[k] = _fast_dict(v)
        elif t is list or t is tuple:
            out[k] = tuple([_fast(x) for x in v])
        else:
            raise _NotJson
    return FrozenJson(out)


def _checked(value: object, path: str) -> JsonValue:
    """The general case: ABCs and numpy scalars, with the path in errors."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{path}: non-finite number {f!r} is not JSON-safe")
        return f
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str):
                raise TypeError(f"{path}: mapping key {k!r} is not a string")
        return FrozenJson({k: _checked(value[k], f"{path}.{k}") for k in value})
    if isinstance(value, list | tuple):
        return tuple(_checked(v, f"{path}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"{path}: {type(value).__name__} is not JSON-safe")


def json_dict(value: object, path: str) -> FrozenJson:
    if type(value) is dict:
        try:
            return _fast_dict(value)
        except _NotJson:
            pass
    elif type(value) is FrozenJson:
        return value
    out = freeze(value, path)
    if not isinstance(out, FrozenJson):
        raise TypeError(f"{path}: expected a mapping, got {type(value).__name__}")
    return out
