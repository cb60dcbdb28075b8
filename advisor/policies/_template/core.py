"""The paper's maths on plain values (one function per equation)."""

from __future__ import annotations


def starving(waited_ms: int, max_wait_ms: float) -> bool:
    """Eq 1 of the template: an app starves once it waited longer than the bound."""
    return waited_ms > max_wait_ms
