"""YAML (and JSON) read with the line of every mapping key and list item.

Errors in a workload file then name the line (``file.yaml:12``) rather than
only a path of keys. Plain ``dict``/``list`` subclasses, so the rest of the
loader reads them as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class LDict(dict[str, Any]):
    """A mapping that remembers its line and each key's line (1-based)."""

    line: int = 0
    key_lines: dict[str, int] = {}  # noqa: RUF012 (replaced per instance, never mutated)


class LList(list[Any]):
    """A list that remembers its line and each item's line (1-based)."""

    line: int = 0
    item_lines: list[int] = []  # noqa: RUF012 (replaced per instance, never mutated)


class LocatedError(ValueError):
    """The file is not valid YAML/JSON; ``line`` is where the parser stopped."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def load_located(path: Path) -> Any:
    """Parse ``path``; raises OSError, UnicodeDecodeError or :class:`LocatedError`."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise LocatedError(f"{exc.problem or exc}", line) from None
    except yaml.YAMLError as exc:
        raise LocatedError(str(exc), 0) from None
    if node is None:
        return None
    return _convert(node)


def _convert(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = LDict()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for k, v in node.value:  # YAML merge keys (<<: *anchor) first, overridden below
            if k.tag == "tag:yaml.org,2002:merge":
                for src in (v.value if isinstance(v, yaml.SequenceNode) else [v]):
                    base = _convert(src)
                    if not isinstance(base, LDict):
                        raise LocatedError("a merge key (<<) needs a mapping",
                                           k.start_mark.line + 1)
                    for bk, bv in base.items():
                        out.setdefault(bk, bv)
                        out.key_lines.setdefault(bk, k.start_mark.line + 1)
        explicit: set[str] = set()
        for k, v in node.value:
            if k.tag == "tag:yaml.org,2002:merge":
                continue
            key = _scalar(k)
            if not isinstance(key, str):
                key = str(key)
            if key in explicit:
                raise LocatedError(f"duplicate key {key!r}", k.start_mark.line + 1)
            explicit.add(key)
            out[key] = _convert(v)
            out.key_lines[key] = k.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        lst = LList(_convert(v) for v in node.value)
        lst.line = node.start_mark.line + 1
        lst.item_lines = [v.start_mark.line + 1 for v in node.value]
        return lst
    return _scalar(node)


_CONSTRUCTOR = yaml.SafeLoader("")


def _scalar(node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        try:
            return _CONSTRUCTOR.construct_object(node)
        except yaml.YAMLError as exc:
            raise LocatedError(str(exc), node.start_mark.line + 1) from None
    return _convert(node)


def line_of(container: Any, key: str | int) -> int:
    """The line of ``container[key]`` (0 when unknown)."""
    if isinstance(container, LDict) and isinstance(key, str):
        return container.key_lines.get(key, container.line)
    if isinstance(container, LList) and isinstance(key, int) and key < len(container.item_lines):
        return container.item_lines[key]
    return getattr(container, "line", 0)
