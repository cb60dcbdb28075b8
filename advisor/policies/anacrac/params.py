"""ANACRAC's name and parameters: the application rules (the paper's Table 4) and the
waiting-time boost.

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
and the queue bound to it (the RM levers of node awareness). ``app_names``
(exact names) is ours too: the RM places those applications into
``target_queue`` at submission, through one JSON mapping rule each
(``advisor.model.mapping_rules``); a Hadoop 3.4.2 mapping rule matches an exact
application name, a user or a group, never a type, a tag or a pattern.
``task_memory_mb`` and ``am_memory_mb`` are ours too (opt-in): the memory of one of
the matched applications' task containers and of their AM. With ``tasks_maximum``,
``hosts``, ``label`` and ``target_queue``, they size the one RM bound that stands in
for step 10's per-node limit from outside: the target queue's share of the label's
partition (``accessible-node-labels.<label>.maximum-capacity``), capped at
``tasks_maximum`` task containers per host plus one AM (see ``advice.partition_caps``).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from yarn_advisor.config.base import ConfigModel, Seq

NAME = "anacrac"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*$")


class Rule(ConfigModel):
    """One application rule (see the module docstring)."""

    name: str = Field(min_length=1)
    app_name: str | None = None
    app_names: Seq[str] = ()
    app_type: str | None = None
    queue: str | None = None
    tag: str | None = None
    hosts: Seq[str] = ()
    tasks_maximum: int | None = Field(None, ge=1)
    job_type: Literal["CPU", "IO", "ALL"] | None = None
    cpu_threshold: float = Field(80.0, ge=50, le=99)
    io_threshold: float = Field(80.0, ge=50, le=99)
    container_job_type: Literal["CPU", "MEMORY", "ALL"] | None = None
    container_cpu_threshold: float = Field(80.0, ge=1, le=100)
    container_memory_threshold: float = Field(80.0, ge=1, le=100)
    container_cpu_increment: int = Field(1, ge=0)
    container_memory_increment_mb: int = Field(512, ge=0)
    label: str | None = None
    target_queue: str | None = None
    task_memory_mb: int | None = Field(None, ge=1)
    am_memory_mb: int = Field(0, ge=0)

    @field_validator("app_name")
    @classmethod
    def _regex(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression: {exc}") from None
        return pattern

    @field_validator("label")
    @classmethod
    def _label(cls, label: str | None) -> str | None:
        if label is not None and not _LABEL.match(label):
            raise ValueError(f"not a valid node label: {label!r}")
        return label

    @model_validator(mode="after")
    def _consistent(self) -> Rule:
        if all(m is None for m in (self.app_name, self.app_type, self.queue, self.tag)) \
                and not self.app_names:
            raise ValueError("set at least one of app_name, app_names, app_type, queue, tag")
        if self.app_names and self.target_queue is None:
            raise ValueError("app_names needs a target_queue (where the RM places them)")
        if self.target_queue is not None and self.label is None:
            raise ValueError("target_queue needs a label (the partition the queue can access)")
        if self.task_memory_mb is not None and (
                self.tasks_maximum is None or not self.hosts or self.target_queue is None):
            raise ValueError("task_memory_mb sizes the partition cap: it needs tasks_maximum, "
                             "hosts and target_queue")
        return self


class Params(ConfigModel):
    """The rules, and the waiting-time boost of steps 20-27."""

    rules: Seq[Rule] = ()
    wait_threshold_s: float = Field(30.0, gt=0)  # one default daemon cycle without a container
    high_priority: int | None = Field(None, ge=1)
    boost_waiting: bool = True
    signal_excess_containers: bool = False
    signal: Literal["GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"] = "GRACEFUL_SHUTDOWN"

    @field_validator("rules")
    @classmethod
    def _unique(cls, rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
        names = [r.name for r in rules]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate rule names: {', '.join(dup)}")
        return rules
