"""HaSTE's name and parameters: defaults follow the paper where it gives one (beta 0.2/0.2/0.6)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from yarn_advisor.advisor.policies.haste import core as hc
from yarn_advisor.config.base import ConfigModel, Seq, Triple

NAME = "haste"


class IterationRule(ConfigModel):
    """Configured iterations for apps whose name matches ``name_pattern``."""

    name_pattern: str
    total: int = Field(ge=1)

    @field_validator("name_pattern")
    @classmethod
    def _regex(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return pattern


class Params(ConfigModel):
    """HaSTE parameters (see README.md for each one's source)."""

    memory_weight: float = Field(1.0, ge=0)
    vcores_weight: float = Field(1.0, ge=0)
    memory_unit_mb: int = Field(1024, ge=1)
    beta: Triple[float] = (0.2, 0.2, 0.6)
    alignment: bool = True
    max_priority: int = Field(10, ge=1)
    reduce_ratio_cap: float = Field(10.0, ge=0)
    iteration_rules: Seq[IterationRule] = ()
    # raise an app waiting for its AM even where nothing ranks the running apps of its
    # queue (false: those queues stay at YARN's default priority; see README.md)
    am_first_alone: bool = False
    node_advice: bool = True
    # per-node advice is advisory: the nodes with the most free resources, not all of them
    max_node_advice: int | None = Field(100, ge=0)
    ita: bool = True
    ita_max_nodes: int = Field(16, ge=0)
    ita_memory_quantum_mb: int = Field(512, ge=1)
    ita_max_cells: int = Field(8192, ge=4)
    ita_max_items: int = Field(64, ge=1)
    # precision mode (haste.fitness): a task request skips a node whose unallocated
    # resource it aligns with less than this (cosine, 1 = same shape), for at most one
    # attempt per RUNNING node in a row
    plugin_min_alignment: float = Field(0.9, gt=0, le=1)

    @field_validator("beta")
    @classmethod
    def _beta(cls, beta: tuple[float, float, float]) -> tuple[float, float, float]:
        if any(b < 0 for b in beta) or sum(beta) <= 0:
            raise ValueError(f"must be three numbers >= 0 with a positive sum, got {list(beta)}")
        return beta

    @model_validator(mode="after")
    def _some_weight(self) -> Params:
        if self.memory_weight + self.vcores_weight <= 0:
            raise ValueError("memory_weight + vcores_weight must be > 0")
        return self

    @property
    def weights(self) -> hc.Weights:
        """The resource weights of Eq 1-3."""
        return hc.Weights(self.memory_weight, self.vcores_weight, self.memory_unit_mb)

    @property
    def effective_beta(self) -> tuple[float, float, float]:
        """``beta`` for HaSTE-A (Eq 6), ``(1, 1, 0)`` for plain HaSTE (Eq 4)."""
        return self.beta if self.alignment else (1.0, 1.0, 0.0)
