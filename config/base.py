"""The one way configuration is validated: strict pydantic models, every error at once.

Why pydantic v2: it validates nested typed models in one pass and reports
*every* problem with its location (msgspec and cattrs stop at the first),
``extra="forbid"`` rejects unknown keys, and the models are frozen values the
daemon can hand around. The main configuration (:mod:`.schema`) and every
policy's ``Params`` derive from :class:`ConfigModel`, so both follow the same
rules:

- unknown keys are errors (``unknown key (known: ...)``);
- no coercion between kinds: ``"3"`` is not a number, ``1`` is not ``true``;
  an ``int`` is accepted where a float is expected;
- ``.inf`` and ``.nan`` are rejected;
- YAML lists become tuples, so a validated configuration is immutable.

:func:`validate` turns a decoded mapping into a model or raises
:class:`ConfigError` with one line per problem, each with its key path
(``rm.timeout.read_s: must be > 0``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

M = TypeVar("M", bound="ConfigModel")
T = TypeVar("T")


class ConfigError(ValueError):
    """Every problem found in a configuration, one per line, each with its key path."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors: list[str] = list(errors)
        super().__init__("invalid configuration:\n  " + "\n  ".join(self.errors))


class ConfigModel(BaseModel):
    """Base of every configuration section and every policy's ``Params``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def _as_tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


Seq = Annotated[tuple[T, ...], BeforeValidator(_as_tuple)]
"""A YAML list, kept as a tuple (strict models accept tuples only)."""

Pair = Annotated[tuple[T, T], BeforeValidator(_as_tuple)]
Triple = Annotated[tuple[T, T, T], BeforeValidator(_as_tuple)]


def validate(model: type[M], raw: object, path: str = "",
             context: Mapping[str, Any] | None = None) -> M:
    """``model`` built from ``raw`` (a decoded mapping), or ConfigError listing every problem.

    ``path`` prefixes each key path (``policies.haste.params``)."""
    try:
        return model.model_validate({} if raw is None else raw, context=context)
    except ValidationError as exc:
        raise ConfigError([_line(model, err, path) for err in exc.errors()]) from None


def _where(loc: Sequence[int | str], path: str) -> str:
    out = path
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "top level"


def _line(model: type[BaseModel], err: Any, path: str) -> str:
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        known = ", ".join(sorted(_fields_at(model, loc[:-1]))) or "none"
        return f"{_where(loc, path)}: unknown key (known: {known})"
    return f"{_where(loc, path)}: {_message(err)}"


_KINDS = {"bool_type": "bool", "int_type": "int", "int_from_float": "int",
          "float_type": "float", "string_type": "str", "tuple_type": "a list",
          "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
          "model_attributes_type": "a mapping"}
_BOUNDS = {"greater_than": (">", "gt"), "greater_than_equal": (">=", "ge"),
           "less_than": ("<", "lt"), "less_than_equal": ("<=", "le")}


def _message(err: Any) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "missing":
        return "missing key"
    if kind in _KINDS:
        return f"must be {_KINDS[kind]}, got {_shown(err.get('input'))}"
    if kind in _BOUNDS:
        op, key = _BOUNDS[kind]
        bound = ctx.get(key)
        return f"must be {op} {bound:g}" if isinstance(bound, float) else f"must be {op} {bound}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}, got {_shown(err.get('input'))}"
    if kind == "finite_number":
        return "must be a finite number"
    if kind in ("too_short", "too_long"):
        return f"must have {ctx.get('min_length', ctx.get('max_length'))} items"
    msg = str(err.get("msg", kind))
    return msg.removeprefix("Value error, ")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fields_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The keys a model (or a nested model) at ``loc`` accepts, for 'unknown key'."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (isinstance(current, type)
                                         and issubclass(current, BaseModel)):
            current = _inner_model(current)
            if isinstance(part, int):
                continue
        field = current.model_fields.get(part) if _is_model(current) else None
        if field is None:
            return []
        current = field.annotation
    current = current if _is_model(current) else _inner_model(current)
    if not _is_model(current):
        return []
    return [f.alias or name for name, f in current.model_fields.items()]


def _is_model(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _inner_model(tp: object) -> object:
    """The model inside ``X | None``, ``tuple[X, ...]`` or ``Annotated[...]``."""
    for arg in getattr(tp, "__args__", ()) or ():
        if _is_model(arg):
            return arg
        inner = _inner_model(arg)
        if _is_model(inner):
            return inner
    origin = getattr(tp, "__origin__", None)
    return origin if _is_model(origin) else tp
