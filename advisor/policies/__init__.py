"""The policies: one package per paper, in an explicit registry.

``POLICIES`` maps a policy's configuration name to its :class:`~._base.Policy`;
its order is the engine's default precedence when two policies recommend on
the same target (see ``advisor.engine``). What a policy provides is in
:mod:`._base`; ``_template/`` is the starting point for a new one.
"""

from __future__ import annotations

from yarn_advisor.advisor.policies import anacrac, haste, matchmaking, opera, prism
from yarn_advisor.advisor.policies._base import (
    NO_READS,
    AnyPolicy,
    Policy,
    PolicyResult,
    PolicyState,
    Reads,
    Shared,
    StateError,
)
from yarn_advisor.config.base import ConfigModel

POLICIES: dict[str, AnyPolicy] = {p.name: p for p in (
    haste.POLICY, matchmaking.POLICY, opera.POLICY, anacrac.POLICY, prism.POLICY)}


def params_models(registry: dict[str, AnyPolicy] = POLICIES) -> dict[str, type[ConfigModel]]:
    """Each policy's ``Params`` model, for the configuration loader."""
    return {name: policy.params for name, policy in registry.items()}


__all__ = [
    "NO_READS",
    "POLICIES",
    "AnyPolicy",
    "Policy",
    "PolicyResult",
    "PolicyState",
    "Reads",
    "Shared",
    "StateError",
    "params_models",
]
