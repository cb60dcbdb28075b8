"""Matchmaking's name and parameters (the paper has none to tune: these bound our lever)."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from yarn_advisor.config.base import ConfigModel

NAME = "matchmaking"


class Params(ConfigModel):
    """How the heartbeat-round rule becomes a ``node-locality-delay``."""

    rounds: int = Field(1, ge=1)
    min_delay: int = Field(1, ge=1)
    max_delay: int | None = None
    hysteresis: float = Field(0.1, ge=0, lt=1)
    current_node_locality_delay: int | None = Field(None, ge=-1)
    top_apps: int = Field(10, ge=0)
    # precision mode (matchmaking.local_only): also admit non-local maps on the nodes the
    # last cycle marked (measured worse than the skip count alone: the marks are a cycle old)
    plugin_markers: bool = False

    @field_validator("max_delay")
    @classmethod
    def _above_min(cls, max_delay: int | None, info: ValidationInfo) -> int | None:
        low = info.data.get("min_delay")
        if max_delay is not None and low is not None and max_delay < low:
            raise ValueError(f"must be >= min_delay ({low}), got {max_delay}")
        return max_delay
