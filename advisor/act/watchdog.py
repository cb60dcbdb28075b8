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
  was lost;
- ``am_failures``: AM attempts that failed (an app's attempt number rose) of apps
  it changed (priority, queue) or whose failed attempt ran on a node it changed;
- ``preemptions``: containers the RM preempted from apps it changed or from apps in
  queues whose settings it changed;
- ``slow_jobs``: runs slower than the same job's recent runs (act/app_harm.py) among
  the apps it raised (a higher priority than before the advisor, or moved to another
  queue) or whose containers ran on nodes it enlarged. An app a policy lowered (HaSTE
  deprioritises on purpose) is not counted: its slow-down is the intent.

Harm counts for a policy only when seen after its change of that target.

The watchdog only counts and judges (no I/O); it is fed by the actuator, which
owns what happens on a trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from yarn_advisor.advisor.act.app_harm import AppHarm, Event
from yarn_advisor.advisor.act.outcomes import Outcome
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import NodeResource, Payload, Priority
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import WatchdogSettings

NODE_KINDS = frozenset({Kind.UPDATE_NODE_RESOURCE, Kind.REPLACE_NODE_LABELS})
APP_KINDS = frozenset({Kind.SET_APP_PRIORITY, Kind.MOVE_APP_QUEUE})
BAD_WRITES = frozenset({Outcome.REFUSED, Outcome.FAILED, Outcome.UNKNOWN})
FAILED_TASK = frozenset({"FAILED", "KILLED"})
DOWN = frozenset({"UNHEALTHY", "LOST"})


class Signal(StrEnum):
    """The kinds of harm the watchdog counts (see the module docstring)."""

    TASK_FAILURES = "task_failures"
    UNHEALTHY_NODES = "unhealthy_nodes"
    FAILED_APPS = "failed_apps"
    REFUSED_WRITES = "refused_writes"
    AM_FAILURES = "am_failures"
    PREEMPTIONS = "preemptions"
    SLOW_JOBS = "slow_jobs"


@dataclass(frozen=True)
class Trip:
    """One policy past one threshold: what, where, how much."""

    policy: str
    signal: Signal
    kind: Kind
    target: str  # the target that showed the most harm ("*": the policy's writes)
    count: int
    summary: str


Changed = dict[str, tuple[Kind, float]]  # target -> (kind of the change, when)


@dataclass
class Targets:
    """One policy's live changes, by what they name, and those that raised their target."""

    apps: Changed = field(default_factory=dict)
    queues: Changed = field(default_factory=dict)
    nodes: Changed = field(default_factory=dict)
    raised: set[str] = field(default_factory=set)  # apps raised, nodes enlarged

    def since(self, e: Event) -> tuple[Kind, str] | None:
        """The change ``e`` came after: of its app, its AM's node or its queue."""
        for target, by in ((e.app, self.apps), (e.node, self.nodes)):
            if target in by and e.at >= by[target][1]:
                return by[target][0], target
        for queue, (kind, at) in self.queues.items():
            if e.at >= at and (e.queue == queue or queue.endswith("." + e.queue)):
                return kind, queue
        return None


def targets(changed: Mapping[tuple[Kind, str], tuple[str, float]],
            origins: Mapping[tuple[Kind, str], Payload | None], snap: Snapshot
            ) -> dict[str, Targets]:
    """The live changes of each policy; ``raised``: apps now at a higher priority than
    before the advisor (or moved), nodes now larger than before."""
    apps = {a.id: a for a in snap.apps}
    nodes = {n.id: n for n in snap.nodes}
    out: dict[str, Targets] = {}
    for (kind, target), (policy, at) in changed.items():
        t = out.setdefault(policy, Targets())
        origin = origins.get((kind, target))
        if kind in NODE_KINDS:
            t.nodes[target] = (kind, at)
            node = nodes.get(target)
            if node is not None and isinstance(origin, NodeResource) and (
                    node.total.memory_mb > (origin.memory_mb or node.total.memory_mb)
                    or node.total.vcores > (origin.vcores or node.total.vcores)):
                t.raised.add(target)
        elif kind in APP_KINDS:
            t.apps[target] = (kind, at)
            app = apps.get(target)
            if kind is Kind.MOVE_APP_QUEUE or (
                    app is not None and isinstance(origin, Priority)
                    and app.priority > origin.value):
                t.raised.add(target)
        elif kind is Kind.UPDATE_SCHEDULER_CONF:
            t.queues[target] = (kind, at)
    return out


@dataclass
class Watchdog:
    """Harm counted per cycle; :meth:`observe` says which policies to trip."""

    settings: WatchdogSettings
    _failures: list[tuple[float, str]] = field(default_factory=list)  # (seen at, node id)
    _bad_writes: dict[str, list[float]] = field(default_factory=dict)  # policy -> times
    _app_failures: list[tuple[float, int]] = field(default_factory=list)  # (at, how many)
    _apps_failed: int | None = None
    apps: AppHarm = field(init=False)

    def __post_init__(self) -> None:
        self.apps = AppHarm(self.settings)

    def wrote(self, policy: str, outcome: Outcome, at: float) -> None:
        """An enforced write of ``policy`` ended with ``outcome``."""
        if outcome in BAD_WRITES:
            self._bad_writes.setdefault(policy, []).append(at)

    def observe(self, snap: Snapshot, now: float,
                changed: Mapping[tuple[Kind, str], tuple[str, float]],
                origins: Mapping[tuple[Kind, str], Payload | None] | None = None
                ) -> list[Trip]:
        """Count this snapshot's harm; the trips past a threshold. ``changed`` maps each
        live change (a target not back at its value before the advisor) to the policy
        that owns it and when it wrote; ``origins``: each target's value before."""
        s = self.settings
        self.apps.observe(snap, now)
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

        by_policy = targets(changed, origins or {}, snap)
        every_changed = {n for t in by_policy.values() for n in t.nodes}
        trips: list[Trip] = []
        for policy, mine in sorted(by_policy.items()):
            found = (self._node_harm(snap, policy, mine.nodes, every_changed)
                     if mine.nodes else []) or self._app_harm(snap, policy, mine)
            trips += found[:1]
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

    def _app_harm(self, snap: Snapshot, policy: str, mine: Targets) -> list[Trip]:
        """The first app threshold ``policy``'s changes passed, if any."""
        s = self.settings
        for signal, events, limit, what in (
                (Signal.AM_FAILURES, self.apps.am_failures, s.am_failures,
                 "AM attempt(s) failed"),
                (Signal.PREEMPTIONS, self.apps.preemptions, s.preemptions,
                 "container(s) were preempted")):
            hits = [(e, c) for e in events if (c := mine.since(e)) is not None]
            count = sum(e.count for e, _ in hits)
            if hits and count >= limit:
                (kind, target), _ = max(((c, e.count) for e, c in hits), key=lambda x: x[1])
                return [Trip(policy, signal, kind, target, count,
                             f"{count} {what} on the targets {policy} changed "
                             f"({len({e.app for e, _ in hits})} app(s)); most on {target}")]
        firsts = {**mine.apps, **mine.nodes}
        slow = sorted(app for app, (at, nodes) in self.apps.slowed.items()
                      if any(t in mine.raised and at >= firsts[t][1]
                             for t in (app, *sorted(nodes))))
        if len(slow) >= s.slow_jobs:
            target = slow[0] if slow[0] in mine.raised else next(
                n for n in sorted(self.apps.slowed[slow[0]][1]) if n in mine.raised)
            return [Trip(policy, Signal.SLOW_JOBS, firsts[target][0], target, len(slow),
                         f"{len(slow)} run(s) slower than {s.slow_factor:g} x their job's "
                         f"recent median among what {policy} raised: {', '.join(slow[:3])}")]
        return []
