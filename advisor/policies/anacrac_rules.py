"""ANACRAC application rules: the per-application configuration of Table 4.

The paper reads one XML file per application at submission; here the same
properties form a :class:`Rule` in the policy's YAML ``params.rules``, and a
rule applies to the applications it *matches*: every matcher it sets
(``app_name`` regular expression searched in the name, ``app_type``
case-insensitive, ``queue`` as full path or leaf name, ``tag`` exact) must
hold, and it must set at least one. The first matching rule wins.

Table 4 itself is not in the seed text we have (only its description), so
the property names below follow the issue's list and the defaults are ours:
``hosts`` (M of Eq 1, empty = any node), ``tasks_maximum`` (P of Eq 2-3),
``job_type`` CPU / IO / ALL with ``cpu_threshold`` / ``io_threshold`` in
percent, limited to 50-99 as the paper does, and the adaptive properties
``container_job_type`` CPU / MEMORY / ALL, ``container_cpu_threshold`` /
``container_memory_threshold`` (R_s of Eq 12, percent of the container's
allocation) and the increments (P - K of Eq 12). ``label`` and
``target_queue`` are ours: the node-label partition that carries the hosts
and the queue bound to it (the RM levers of node awareness).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from yarn_advisor.advisor.model import App
from yarn_advisor.advisor.policies._base import raise_problems

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*$")


@dataclass(frozen=True)
class Rule:
    """One application rule (see the module docstring)."""

    name: str
    app_name: str | None = None
    app_type: str | None = None
    queue: str | None = None
    tag: str | None = None
    hosts: tuple[str, ...] = ()
    tasks_maximum: int | None = None
    job_type: Literal["CPU", "IO", "ALL"] | None = None
    cpu_threshold: float = 80.0
    io_threshold: float = 80.0
    container_job_type: Literal["CPU", "MEMORY", "ALL"] | None = None
    container_cpu_threshold: float = 80.0
    container_memory_threshold: float = 80.0
    container_cpu_increment: int = 1
    container_memory_increment_mb: int = 512
    label: str | None = None
    target_queue: str | None = None

    def __post_init__(self) -> None:
        p: list[tuple[str, str]] = []
        if not self.name:
            p.append(("name", "must be a non-empty string"))
        if not any(m is not None for m in (self.app_name, self.app_type, self.queue, self.tag)):
            p.append(("app_name", "set at least one of app_name, app_type, queue, tag"))
        if self.app_name is not None:
            try:
                re.compile(self.app_name)
            except re.error as exc:
                p.append(("app_name", f"invalid regular expression: {exc}"))
        if self.tasks_maximum is not None and self.tasks_maximum < 1:
            p.append(("tasks_maximum", f"must be >= 1 or null, got {self.tasks_maximum}"))
        for name in ("cpu_threshold", "io_threshold"):
            v = getattr(self, name)
            if not 50.0 <= v <= 99.0:
                p.append((name, f"must be in [50, 99] percent, got {v}"))
        for name in ("container_cpu_threshold", "container_memory_threshold"):
            v = getattr(self, name)
            if not 1.0 <= v <= 100.0:
                p.append((name, f"must be in [1, 100] percent, got {v}"))
        for name in ("container_cpu_increment", "container_memory_increment_mb"):
            if getattr(self, name) < 0:
                p.append((name, f"must be >= 0, got {getattr(self, name)}"))
        if self.label is not None and not _LABEL.match(self.label):
            p.append(("label", f"not a valid node label: {self.label!r}"))
        if self.target_queue is not None and self.label is None:
            p.append(("target_queue", "needs a label (the partition the queue can access)"))
        raise_problems(p)


@lru_cache(maxsize=256)
def _pattern(expr: str) -> re.Pattern[str]:
    return re.compile(expr)


def matches(rule: Rule, app: App) -> bool:
    """Whether every matcher the rule sets holds for ``app``."""
    if rule.app_name is not None and not _pattern(rule.app_name).search(app.name):
        return False
    if rule.app_type is not None and rule.app_type.lower() != app.type.lower():
        return False
    if rule.queue is not None and rule.queue not in (app.queue, app.queue.rsplit(".", 1)[-1]):
        return False
    return rule.tag is None or rule.tag in app.tags


def rule_for(app: App, rules: Sequence[Rule]) -> Rule | None:
    """Steps 1-3: the first rule matching ``app``, else None (plain Fair scheduling)."""
    for r in rules:
        if matches(r, app):
            return r
    return None


def in_hosts(rule: Rule, node_id: str, host: str) -> bool:
    """i in M: a node is named by its host, its id (host:port) or M is empty."""
    return not rule.hosts or host in rule.hosts or node_id in rule.hosts
