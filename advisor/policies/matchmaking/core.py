"""Matchmaking (He, Lu, Swanson 2011): locality markers (Tables 1-2) and Eq 1.

Pure functions. Table 1 as printed can never reach its non-local branch
(``previousMarker == marker`` always holds after a miss), so the rule stated
in the text is implemented: the first miss in a row marks the node (marker
0) and assigns nothing; a miss while already marked may take one non-local
task (at most one per node per heartbeat). Markers are cleared whenever a
job arrives (Table 2). The scripted-heartbeat comparison with delay
scheduling that checks these rules lives with the tests
(``tests/unit/_matchmaking_sim.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Marker = int | None  # None = never set, 0 = marked (missed once), k >= 1 = local hits


def locality_rate(local: int, total: int) -> float | None:
    """Eq 1: ``l / n``; None when no task ran."""
    return local / total if total > 0 else None


@dataclass(frozen=True)
class MarkerStep:
    """Result of one heartbeat round of markers (see :func:`step_markers`)."""

    markers: dict[str, Marker]
    local_hits: tuple[str, ...]
    newly_marked: tuple[str, ...]
    eligible_nonlocal: tuple[str, ...]


def step_markers(
    markers: Mapping[str, Marker], has_local: Mapping[str, bool], reset: bool
) -> MarkerStep:
    """Advance the markers of the nodes in ``has_local`` by one heartbeat each.

    ``has_local[node]`` says whether any job has a local task for it; nodes
    not in the mapping did not offer free resources and keep their marker.
    ``reset`` applies Table 2 first (a job arrived).
    """
    new: dict[str, Marker] = {} if reset else dict(markers)
    hits, marked, eligible = [], [], []
    for node in sorted(has_local):
        m = new.get(node)
        if has_local[node]:
            new[node] = 1 if m is None else m + 1
            hits.append(node)
        elif m == 0:
            eligible.append(node)
        else:
            new[node] = 0
            marked.append(node)
    return MarkerStep(new, tuple(hits), tuple(marked), tuple(eligible))
