"""The policies: one package per paper, in an explicit registry.

``POLICIES`` maps a policy's configuration name to its package; its order is
the engine's default precedence when two policies recommend on the same
target (see ``advisor.engine``). What a policy package provides is in
:mod:`._base`; ``_template/`` is the starting point for a new one.
"""

from __future__ import annotations

from yarn_advisor.advisor.policies import anacrac, haste, matchmaking, opera, prism
from yarn_advisor.advisor.policies._base import (
    NO_READS,
    Policy,
    PolicyResult,
    PolicyState,
    Reads,
    StateError,
)
from yarn_advisor.config.base import ConfigModel

POLICIES: dict[str, Policy] = {
    haste.NAME: haste,
    matchmaking.NAME: matchmaking,
    opera.NAME: opera,
    anacrac.NAME: anacrac,
    prism.NAME: prism,
}


def params_models(registry: dict[str, Policy] = POLICIES) -> dict[str, type[ConfigModel]]:
    """Each policy's ``Params`` model, for the configuration loader."""
    return {name: policy.Params for name, policy in registry.items()}


__all__ = [
    "NO_READS",
    "POLICIES",
    "Policy",
    "PolicyResult",
    "PolicyState",
    "Reads",
    "StateError",
    "params_models",
]
