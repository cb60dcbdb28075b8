"""The order of a paired bench's runs: round ``i`` runs every mode once, the modes rotated
by ``i``, so a load that rises or falls on this shared machine (or a JVM that warms up)
hits every mode in every position instead of always the one run first."""

from __future__ import annotations

from collections.abc import Sequence


def rotated(modes: Sequence[str], i: int) -> list[str]:
    """Round ``i``'s order of ``modes``."""
    k = i % len(modes)
    return [*modes[k:], *modes[:k]]
