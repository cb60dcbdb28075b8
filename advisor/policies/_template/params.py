"""The template policy's name and parameters."""

from __future__ import annotations

from pydantic import Field

from yarn_advisor.config.base import ConfigModel

NAME = "template"


class Params(ConfigModel):
    """Defaults and bounds together; the configuration loader validates them."""

    max_wait_s: float = Field(60.0, gt=0)
