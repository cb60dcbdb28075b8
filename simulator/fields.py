"""Strict reading of one mapping of a workload file, collecting every error.

Each error names the file, the line and the place (``jobs[2] (id wc1):
maps.duration_s``), so a bad workload is fixed in one pass. Unknown keys are
errors: a typo never silently becomes a default.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from yarn_advisor.simulator.located import LDict, line_of


class WorkloadError(ValueError):
    """A workload or trace could not be read; ``problems`` lists every reason."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class Fields:
    """Typed getters over one mapping; errors go to the shared list."""

    def __init__(self, data: Any, file: str, where: str, errors: list[str],
                 allowed: Iterable[str], line: int = 0) -> None:
        self.file = file
        self.where = where
        self.errors = errors
        self.line = getattr(data, "line", line)
        if not isinstance(data, dict):
            self.data: dict[str, Any] = {}
            self.error("", f"expected a mapping, got {type(data).__name__}")
            return
        self.data = data
        allowed = set(allowed)
        for key in data:
            if key not in allowed:
                self.error(key, f"unknown field {key!r} (allowed: {', '.join(sorted(allowed))})")

    def at(self, key: str) -> int:
        return line_of(self.data, key) if isinstance(self.data, LDict) else self.line

    def error(self, key: str, message: str) -> None:
        line = self.at(key) if key else self.line
        place = f"{self.where}{key}" if key else self.where.rstrip(".: ")
        loc = f"{self.file}:{line}" if line else self.file
        self.errors.append(f"{loc}: {place}: {message}" if place else f"{loc}: {message}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def number(self, key: str, default: float, minimum: float | None = None,
               maximum: float | None = None) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error(key, f"must be a number, got {value!r}")
            return default
        if minimum is not None and value < minimum:
            self.error(key, f"must be >= {minimum:g}, got {value:g}")
            return default
        if maximum is not None and value > maximum:
            self.error(key, f"must be <= {maximum:g}, got {value:g}")
            return default
        return float(value)

    def integer(self, key: str, default: int, minimum: int | None = None,
                maximum: int | None = None) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                self.error(key, f"must be an integer, got {value!r}")
                return default
        if minimum is not None and value < minimum:
            self.error(key, f"must be >= {minimum}, got {value}")
            return default
        if maximum is not None and value > maximum:
            self.error(key, f"must be <= {maximum}, got {value}")
            return default
        return int(value)

    def string(self, key: str, default: str, choices: Iterable[str] | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            self.error(key, f"must be a string, got {value!r}")
            return default
        if choices is not None and value not in set(choices):
            self.error(key, f"must be one of {', '.join(choices)}, got {value!r}")
            return default
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.error(key, f"must be true or false, got {value!r}")
            return default
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if isinstance(value, str):
            return tuple(x.strip() for x in value.split(",") if x.strip())
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            self.error(key, f"must be a list of strings, got {value!r}")
            return ()
        return tuple(value)

    def numbers(self, key: str, minimum: float = 0.0) -> tuple[float, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in value):
            self.error(key, f"must be a list of numbers, got {value!r}")
            return ()
        bad = [x for x in value if x < minimum]
        if bad:
            self.error(key, f"must all be >= {minimum:g}, got {bad[0]:g}")
            return ()
        return tuple(float(x) for x in value)

    def sub(self, key: str, allowed: Iterable[str], where: str | None = None) -> Fields:
        return Fields(self.data.get(key, LDict()), self.file,
                      where if where is not None else f"{self.where}{key}.", self.errors,
                      allowed, line=self.at(key))
