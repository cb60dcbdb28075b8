"""PRISM's name and parameters (the paper gives none; these are ours, see README.md)."""

from __future__ import annotations

from pydantic import Field

from yarn_advisor.config.base import ConfigModel

NAME = "prism"


class Params(ConfigModel):
    """Utility weight ``a``, how many jobs and nodes one cycle schedules, profile window."""

    a: float = Field(1.0, ge=0)
    top_k: int = Field(5, ge=1)
    max_nodes_per_cycle: int = Field(128, ge=1)
    max_phases_per_node: int = Field(8, ge=1)
    profile_window: int = Field(20, ge=1)
    default_slowstart: float = Field(0.05, ge=0, le=1)
