"""The policies: one pure module per seed algorithm, in an explicit registry.

``POLICIES`` maps a policy's config name to its module; its order is the
engine's default precedence when two policies recommend on the same target
(see ``advisor.engine``). A policy module provides ``NAME``, a frozen
``Params`` dataclass and ``advise(snapshot, state, params) -> PolicyResult``
(see :class:`Policy`). ``build_params`` turns a YAML ``params`` mapping into
``Params``, rejecting unknown keys with their path and reporting every
problem at once.
"""

from __future__ import annotations

# Imported after the base types: the policy modules import them from here.
from yarn_advisor.advisor.policies import anacrac, haste, matchmaking, opera, prism
from yarn_advisor.advisor.policies._base import ParamsError, Policy, PolicyResult, raise_problems
from yarn_advisor.advisor.policies._config import ConfigError, build_params

POLICIES: dict[str, Policy] = {
    haste.NAME: haste,
    matchmaking.NAME: matchmaking,
    opera.NAME: opera,
    anacrac.NAME: anacrac,
    prism.NAME: prism,
}

__all__ = [
    "POLICIES",
    "ConfigError",
    "ParamsError",
    "Policy",
    "PolicyResult",
    "build_params",
    "raise_problems",
]
