"""The harm watchdog of enforce mode: after the advisor acts, watch for harm its live
changes could have caused, per policy and per target, and trip the policy past a
threshold (the actuator then puts it in dry-run and rolls its changes back).

What counts, within ``window_s`` (``actuator.watchdog`` settings):

- ``task_failures``: tasks that failed or were killed on nodes the policy changed
  (``update_node_resource``, ``replace_node_labels``) since it changed them, at
  least ``task_failures`` of them and at ``failure_ratio`` times the per-node rate
  of the nodes it did not change (kills that happen everywhere, such as an AM
  preempting its reduces, are not the policy's doing);
- ``unhealthy_nodes``: nodes it changed that turned UNHEALTHY or LOST;
- ``failed_apps``: applications that failed (the RM's ``appsFailed`` rising) while
  its changed nodes showed task failures;
- ``refused_writes``: its writes that the RM refused, that failed, or whose answer
  was lost.

Not watched yet: jobs slowed against their own recent runs (the snapshot keeps no
per-job history to compare with) and AM failures apart from the app's own failure.

The watchdog only counts and judges (no I/O); it is fed by the actuator, which
owns what happens on a trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from yarn_advisor.advisor.act.outcomes import Outcome
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import WatchdogSettings

NODE_KINDS = frozenset({Kind.UPDATE_NODE_RESOURCE, Kind.REPLACE_NODE_LABELS})
BAD_WRITES = frozenset({Outcome.REFUSED, Outcome.FAILED, Outcome.UNKNOWN})
FAILED_TASK = frozenset({"FAILED", "KILLED"})
DOWN = frozenset({"UNHEALTHY", "LOST"})


class Signal(StrEnum):
    """The kinds of harm the watchdog counts (see the module docstring)."""

    TASK_FAILURES = "task_failures"
    UNHEALTHY_NODES = "unhealthy_nodes"
    FAILED_APPS = "failed_apps"
    REFUSED_WRITES = "refused_writes"


@dataclass(frozen=True)
class Trip:
    """One policy past one threshold: what, where, how much."""

    policy: str
    signal: Signal
    kind: Kind
    target: str  # the target that showed the most harm ("*": the policy's writes)
    count: int
    summary: str


@dataclass
class Watchdog:
    """Harm counted per cycle; :meth:`observe` says which policies to trip."""

    settings: WatchdogSettings
    _failures: list[tuple[float, str]] = field(default_factory=list)  # (seen at, node id)
    _bad_writes: dict[str, list[float]] = field(default_factory=dict)  # policy -> times
    _app_failures: list[tuple[float, int]] = field(default_factory=list)  # (at, how many)
    _apps_failed: int | None = None

    def wrote(self, policy: str, outcome: Outcome, at: float) -> None:
        """An enforced write of ``policy`` ended with ``outcome``."""
        if outcome in BAD_WRITES:
            self._bad_writes.setdefault(policy, []).append(at)

    def observe(self, snap: Snapshot, now: float,
                changed: Mapping[tuple[Kind, str], tuple[str, float]]) -> list[Trip]:
        """Count this snapshot's harm; the trips past a threshold. ``changed`` maps each
        live change (a target not back at its value before the advisor) to the policy
        that owns it and when it wrote."""
        s = self.settings
        since = now - s.window_s
        self._failures = [f for f in self._failures if f[0] > since]
        self._failures += [(now, t.node_id) for t in snap.finished_tasks
                           if t.state in FAILED_TASK and t.node_id]
        failed = snap.metrics.apps_failed
        if self._apps_failed is not None and failed > self._apps_failed:
            self._app_failures.append((now, failed - self._apps_failed))
        self._apps_failed = failed
        self._app_failures = [a for a in self._app_failures if a[0] > since]
        for policy in list(self._bad_writes):
            times = [t for t in self._bad_writes[policy] if t > since]
            if times:
                self._bad_writes[policy] = times
            else:
                del self._bad_writes[policy]

        nodes: dict[str, dict[str, tuple[Kind, float]]] = {}  # policy -> node -> (kind, at)
        for (kind, target), (policy, at) in changed.items():
            if kind in NODE_KINDS:
                nodes.setdefault(policy, {})[target] = (kind, at)
        every_changed = {n for by in nodes.values() for n in by}
        trips = [t for policy, by in sorted(nodes.items())
                 for t in self._node_harm(snap, policy, by, every_changed)]
        tripped = {t.policy for t in trips}
        for policy, times in sorted(self._bad_writes.items()):
            if policy not in tripped and len(times) >= s.refused_writes:
                trips.append(Trip(policy, Signal.REFUSED_WRITES, Kind.UPDATE_SCHEDULER_CONF,
                                  "*", len(times),
                                  f"{len(times)} of {policy}'s writes were refused, failed or "
                                  f"lost in {s.window_s:.0f} s"))
        return trips

    def _node_harm(self, snap: Snapshot, policy: str, mine: Mapping[str, tuple[Kind, float]],
                   every_changed: set[str]) -> list[Trip]:
        """The first threshold ``policy``'s changed nodes passed, if any."""
        s = self.settings
        per_node: dict[str, int] = {}
        for at, node in self._failures:
            if node in mine and at >= mine[node][1]:
                per_node[node] = per_node.get(node, 0) + 1
        own = sum(per_node.values())
        others = sum(1 for at, node in self._failures if node not in every_changed)
        running = sum(1 for n in snap.nodes if n.state == "RUNNING" and n.id not in every_changed)
        worst = max(per_node, key=lambda n: (per_node[n], n)) if per_node else ""
        kind = mine[worst][0] if worst else next(iter(mine.values()))[0]
        if own >= s.task_failures and \
                own / len(mine) >= s.failure_ratio * others / max(1, running):
            return [Trip(policy, Signal.TASK_FAILURES, kind, worst, own,
                         f"{own} tasks failed or were killed on the {len(mine)} node(s) "
                         f"{policy} changed ({others} on the {running} other node(s)); most "
                         f"on {worst}")]
        down = sorted(n.id for n in snap.nodes if n.id in mine and n.state in DOWN)
        if len(down) >= s.unhealthy_nodes:
            return [Trip(policy, Signal.UNHEALTHY_NODES, mine[down[0]][0], down[0], len(down),
                         f"node(s) {', '.join(down)} that {policy} changed turned unhealthy "
                         f"or lost")]
        first = min(at for _, at in mine.values())
        apps = sum(n for at, n in self._app_failures if at >= first)
        if own and apps >= s.failed_apps:
            return [Trip(policy, Signal.FAILED_APPS, kind, worst, apps,
                         f"{apps} application(s) failed while the nodes {policy} changed "
                         f"showed {own} task failure(s)")]
        return []
