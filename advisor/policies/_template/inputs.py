"""Snapshot -> the paper's terms: here, how long each app has waited with pending asks."""

from __future__ import annotations

from yarn_advisor.advisor.model.snapshot import Snapshot


def waiting_ms(snapshot: Snapshot) -> dict[str, int]:
    """App id -> milliseconds since it started, for apps with pending containers."""
    return {a.id: snapshot.taken_at - a.started_time for a in snapshot.apps
            if a.pending.memory_mb > 0 and a.started_time > 0}
