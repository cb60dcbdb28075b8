"""Validation of the naive Bayes checkpoint (versioned JSON).

A checkpoint holds only learned state: the counts, the longest short task per
shape, the ids of tasks already learned, and what gives the counts their
meaning (feature levels, threshold). Version 2 (the levels of user, queue,
shape and job, counts handed up as effective numbers) cannot be made from a
version 1 file, whose counts were learned on other levels: it is reported
and the model starts fresh. It is trusted only after every field was
checked: a truncated, hand-edited, other-version or other-features file raises
:class:`CheckpointError` and the caller starts fresh rather than classify with
counts it cannot interpret.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "yarn-advisor/naive-bayes-task-classifier"
VERSION = 2


class CheckpointError(Exception):
    """A checkpoint that cannot be used (corrupt, other version, other features)."""


@dataclass(frozen=True, slots=True)
class LearnedState:
    """The checked contents of a checkpoint."""

    threshold_s: float
    class_counts: tuple[int, int]
    counts: dict[str, list[float]]
    short_max_ms: dict[str, int]
    seen: list[tuple[str, bool]]


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _pair(value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or len(value) != 2 or not all(_count(x) for x in value):
        raise CheckpointError(f"{what} must be two non-negative integers")
    return [int(value[0]), int(value[1])]


def _amount(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def _row(value: Any, what: str) -> list[float]:
    """[short, long, tasks, short tasks]: two non-negative numbers, two counts."""
    if (not isinstance(value, list) or len(value) != 4 or not _amount(value[0])
            or not _amount(value[1]) or not _count(value[2]) or not _count(value[3])
            or value[3] > value[2]):
        raise CheckpointError(f"{what} must be [short, long, tasks, short tasks], "
                              "non-negative, short tasks at most tasks")
    return [float(value[0]), float(value[1]), int(value[2]), int(value[3])]


def _mapping(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise CheckpointError(f"field {key!r} is missing or not an object")
    return value


def validate(data: Any, levels: Sequence[str]) -> LearnedState:
    """Check a decoded checkpoint against this code's format and feature levels."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError("not a task-classifier checkpoint")
    if data.get("version") != VERSION:
        raise CheckpointError(f"checkpoint version {data.get('version')!r}, expected {VERSION}")
    if data.get("levels") != list(levels):
        raise CheckpointError("checkpoint was learned with other feature levels")
    threshold = data.get("threshold_s")
    if not isinstance(threshold, int | float) or not math.isfinite(threshold) or threshold <= 0:
        raise CheckpointError("field 'threshold_s' is missing or not a positive number")
    prefixes = tuple(name + "=" for name in levels)
    counts = {}
    for feat, row in _mapping(data, "counts").items():
        if not feat.startswith(prefixes):
            raise CheckpointError(f"feature {feat[:60]!r} belongs to no level")
        counts[feat] = _row(row, f"counts of {feat[:60]!r}")
    short_max = _mapping(data, "short_max_ms")
    if not all(_count(v) for v in short_max.values()):
        raise CheckpointError("'short_max_ms' values must be non-negative integers")
    seen_in = data.get("seen")
    if not isinstance(seen_in, list) or not all(
        isinstance(i, list) and len(i) == 2 and isinstance(i[0], str) and isinstance(i[1], bool)
        for i in seen_in
    ):
        raise CheckpointError("'seen' must be a list of [task id, censored] pairs")
    class_counts = _pair(data.get("class_counts"), "class_counts")
    return LearnedState(
        threshold_s=float(threshold),
        class_counts=(class_counts[0], class_counts[1]),
        counts=counts,
        short_max_ms={str(k): int(v) for k, v in short_max.items()},
        seen=[(i[0], i[1]) for i in seen_in],
    )


def write_atomic(path: str | Path, data: dict[str, Any]) -> None:
    """Write JSON to a temporary file, then rename it over ``path``."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, path)


def read(path: str | Path) -> Any:
    """The decoded JSON of ``path``; CheckpointError if it cannot be read."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"unreadable: {exc}") from exc
