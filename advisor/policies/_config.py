"""Build a policy's typed ``Params`` from a decoded YAML mapping.

The YAML section of a policy is ``{enabled: bool, dry_run: bool|null,
params: {...}}``; this module turns its ``params`` mapping into the policy's
frozen dataclass. Unknown keys and wrongly typed values are reported with
their key path (``policies.haste.params: unknown key 'x'``,
``policies.haste.params.beta[2]: expected float, got str``) and *all*
problems are collected before :class:`ConfigError` is raised, the
``Params.__post_init__`` validation included (its problems get the path of
the field they name).

Supported field types: ``bool``, ``int``, ``float`` (ints accepted), ``str``,
``X | None``, ``Literal[...]``, ``tuple[X, ...]``, fixed ``tuple[X, Y]`` and
nested frozen dataclasses (from a mapping). YAML lists become tuples.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from yarn_advisor.advisor.policies._base import ParamsError

T = TypeVar("T")


class ConfigError(ValueError):
    """Invalid configuration; ``problems`` lists every problem with its path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__("invalid configuration:\n  " + "\n  ".join(self.problems))


_MISSING = object()


def build_params(params_cls: type[T], raw: object, path: str) -> T:
    """Return ``params_cls`` built from ``raw`` (None = all defaults) or raise ConfigError."""
    problems: list[str] = []
    value = _build_dataclass(params_cls, {} if raw is None else raw, path, problems)
    if problems or value is _MISSING:
        raise ConfigError(problems)
    return typing.cast(T, value)


def _build_dataclass(cls: type[Any], raw: object, path: str, problems: list[str]) -> Any:
    if not isinstance(raw, Mapping):
        problems.append(f"{path}: expected a mapping, got {_tname(raw)}")
        return _MISSING
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in raw:
        if key not in fields:
            known = ", ".join(sorted(fields)) or "none"
            problems.append(f"{path}: unknown key {key!r} (known: {known})")
    kwargs: dict[str, Any] = {}
    ok = True
    for name, f in fields.items():
        if name not in raw:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                problems.append(f"{path}: missing key {name!r}")
                ok = False
            continue
        value = _convert(hints[name], raw[name], f"{path}.{name}", problems)
        if value is _MISSING:
            ok = False
        else:
            kwargs[name] = value
    if not ok or any(k not in fields for k in raw):
        return _MISSING
    try:
        return cls(**kwargs)
    except ParamsError as exc:
        problems.extend(f"{path}.{field}: {msg}" for field, msg in exc.problems)
    except (TypeError, ValueError) as exc:
        problems.append(f"{path}: {exc}")
    return _MISSING


def _convert(tp: Any, raw: object, path: str, problems: list[str]) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return raw
    if origin in (typing.Union, types.UnionType):
        if raw is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _convert(rest[0], raw, path, problems)
        for alt in rest:
            scratch: list[str] = []
            value = _convert(alt, raw, path, scratch)
            if value is not _MISSING:
                return value
        problems.append(f"{path}: expected {_tdesc(tp)}, got {_tname(raw)}")
        return _MISSING
    if origin is typing.Literal:
        if raw in args and not (isinstance(raw, bool) and not any(a is raw for a in args)):
            return raw
        allowed = ", ".join(repr(a) for a in args)
        problems.append(f"{path}: expected one of {allowed}, got {raw!r}")
        return _MISSING
    if origin is tuple:
        if not isinstance(raw, list | tuple):
            problems.append(f"{path}: expected a list, got {_tname(raw)}")
            return _MISSING
        if len(args) == 2 and args[1] is Ellipsis:
            item_types = [args[0]] * len(raw)
        elif len(args) != len(raw):
            problems.append(f"{path}: expected a list of {len(args)} items, got {len(raw)}")
            return _MISSING
        else:
            item_types = list(args)
        items = [
            _convert(t, v, f"{path}[{i}]", problems)
            for i, (t, v) in enumerate(zip(item_types, raw, strict=True))
        ]
        return _MISSING if any(v is _MISSING for v in items) else tuple(items)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _build_dataclass(tp, raw, path, problems)
    return _scalar(tp, raw, path, problems)


def _scalar(tp: Any, raw: object, path: str, problems: list[str]) -> Any:
    if tp is bool:
        ok = isinstance(raw, bool)
    elif tp is int:
        ok = isinstance(raw, int) and not isinstance(raw, bool)
    elif tp is float:
        ok = isinstance(raw, int | float) and not isinstance(raw, bool)
        raw = float(raw) if ok else raw  # type: ignore[arg-type]
    elif tp is str:
        ok = isinstance(raw, str)
    else:
        problems.append(f"{path}: unsupported parameter type {tp!r}")
        return _MISSING
    if not ok:
        problems.append(f"{path}: expected {tp.__name__}, got {_tname(raw)}")
        return _MISSING
    return raw


def _tname(raw: object) -> str:
    return "null" if raw is None else type(raw).__name__


def _tdesc(tp: Any) -> str:
    return " | ".join(getattr(a, "__name__", repr(a)) for a in typing.get_args(tp))
