"""The advisor's configuration loader: ``config.schema`` with every registered policy's
``Params``, so the whole file (policies included) is validated once, at start-up."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from yarn_advisor.advisor.policies import params_models
from yarn_advisor.config.schema import AdvisorConfig, from_dict, load, merge


def load_config(path: str | Path | None = None,
                overrides: Mapping[str, Any] | None = None) -> AdvisorConfig:
    """Defaults, the file at ``path``, then ``overrides``; ConfigError lists every problem."""
    return load(path, overrides, params_models())


def with_overrides(cfg: AdvisorConfig, overrides: Mapping[str, Any]) -> AdvisorConfig:
    """``cfg`` with some keys replaced, validated again."""
    return from_dict(merge(cfg.model_dump(by_alias=True), overrides), params_models())
