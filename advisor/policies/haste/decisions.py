"""HaSTE's part of the decision table (precision mode; docs/decision-table.md). Pure.

What a plug-in in the RM can apply of HaSTE at every heartbeat, for every
MapReduce application (a table rule, so an application submitted between two
cycles has it from its first container):

* ``haste.holdback``: the reduces (request priority 10) are held while the job
  still asks for maps (20, 19, fast-fail maps 5). The RM evaluates "still asks"
  at each attempt, so the hold ends when the last map is placed, not a cycle
  later: a slow start of "every map scheduled". Why: with MapReduce's default
  slow start (0.05) the reduces are asked early, YARN serves priority 10 before
  20, and idle shuffling reduces hold room the maps need; HaSTE's Eq 3 ranks
  reduces low until the maps progress.
* ``haste.fitness``: a task request (maps, reduces) skips a node whose
  unallocated (memory, vcores) it fits badly: the cosine of the two shapes,
  each over the node's size, under ``plugin_min_alignment`` -- Eq 1's
  dot-product fitness made scale-free, evaluated by the RM on the node's live
  room, so the node goes to the next request or application whose shape it
  suits (HaSTE's packing across resource types). At most one skip per RUNNING
  node in a row, then the request is admitted until it gets a container: a
  request alone in the cluster is never starved. Published only while two
  pending task requests differ in shape (else a skipped node has no better
  taker and only idles: measured on ANACRAC's one-job-at-a-time Table 6,
  388 -> 438 s).
* ``haste.order``: in each leaf queue, applications ranked by HaSTE-A's
  alignment (Eq 5: jobs with more, and more finished, iterations first), the
  application-level part of Eq 6; Eq 1 (fitness) is the live ``haste.fitness``
  and Eq 3 (reduce urgency) the hold-back. Applications the table has not seen
  yet go first (a new application's first request is its AM). Measured: ranking
  by the whole Eq 6 preference of each app's best request (what the priority
  lever writes) made Table 2 worse (742 -> 809 s with the other kinds on) and
  Table 3 too (1294 -> 1326 s); alignment alone keeps Table 4's gain (see
  simulator/README.md).
"""

from __future__ import annotations

import math

from yarn_advisor.advisor.model.decision_table import (
    AppDecisions,
    Decisions,
    Fit,
    Hold,
    Match,
    Reason,
    RequestDecision,
    Rule,
    Unranked,
)
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, Reads
from yarn_advisor.advisor.policies.haste import core as hc
from yarn_advisor.advisor.policies.haste.inputs import (
    ACTIVE_STATES,
    MAP_PRIORITIES,
    REDUCE_PRIORITY,
    iteration_of,
)
from yarn_advisor.advisor.policies.haste.params import Params

HOLDBACK, FITNESS, ORDER = "haste.holdback", "haste.fitness", "haste.order"
MAPREDUCE = Match(application_type="MAPREDUCE")


def plan(snapshot: Snapshot, result: PolicyResult[object], params: Params, reads: Reads,
         kinds: frozenset[str]) -> Decisions:
    """HaSTE's decisions of the ``kinds`` asked for."""
    requests: list[RequestDecision] = []
    if HOLDBACK in kinds:
        requests.append(RequestDecision(REDUCE_PRIORITY, hold=Hold(
            Reason.HASTE_HOLDBACK, tuple(sorted(MAP_PRIORITIES)))))
    if FITNESS in kinds and mixed_shapes(snapshot, params.plugin_min_alignment):
        running = sum(n.state == "RUNNING" for n in snapshot.nodes)
        fit = Fit(params.plugin_min_alignment, Reason.HASTE_FITNESS, max(1, running))
        requests += [RequestDecision(p, fit=fit)
                     for p in sorted({*MAP_PRIORITIES, REDUCE_PRIORITY})]
    rules = (Rule(MAPREDUCE, tuple(requests)),) if requests else ()
    ranks = ranks_in_queues(snapshot, params) if ORDER in kinds else {}
    apps = {a: AppDecisions(r, ()) for a, r in sorted(ranks.items())}
    return Decisions(apps=apps, rules=rules, unranked=Unranked.FIRST)


def mixed_shapes(snapshot: Snapshot, min_alignment: float) -> bool:
    """Whether two pending task requests differ in shape (cosine of their vectors over
    the mean RUNNING node under ``min_alignment``): only then can a node refused to
    one suit another; with one shape pending, skipping a node only leaves it idle."""
    nodes = [n.total for n in snapshot.nodes if n.state == "RUNNING"]
    if not nodes:
        return False
    mem = sum(r.memory_mb for r in nodes) / len(nodes)
    vc = sum(r.vcores for r in nodes) / len(nodes)
    shapes = {(rr.capability.memory_mb / mem, rr.capability.vcores / vc)
              for a in snapshot.apps if a.state == "RUNNING"
              for rr in a.resource_requests
              if rr.resource_name == "*" and rr.num_containers > 0 and rr.priority != 0
              and mem > 0 and vc > 0}
    vecs = [(m / h, v / h) for m, v in shapes if (h := math.hypot(m, v)) > 0]
    return any(a[0] * b[0] + a[1] * b[1] < min_alignment
               for i, a in enumerate(vecs) for b in vecs[i + 1:])


def ranks_in_queues(snapshot: Snapshot, params: Params) -> dict[str, int]:
    """Per leaf queue, the active apps ranked by Eq 5's alignment, highest first
    (equal alignments share a rank: YARN's FIFO order between them); nothing where
    every app of the queue has the same alignment (no iterations known), and nothing
    with alignment off (Eq 4)."""
    if not params.alignment:
        return {}
    apps = [a for a in snapshot.apps if a.state in ACTIVE_STATES]
    iters = {a.id: iteration_of(a, params.iteration_rules) for a in apps}
    total = sum(it.total if it else 1 for it in iters.values())
    by_queue: dict[str, dict[str, float]] = {}
    for a in apps:
        it = iters[a.id]
        by_queue.setdefault(a.queue, {})[a.id] = hc.alignment(
            it.total if it else 1, it.finished if it else 0, total)
    ranks: dict[str, int] = {}
    for align in by_queue.values():
        levels = sorted(set(align.values()), reverse=True)
        if len(levels) > 1:
            level = {v: k for k, v in enumerate(levels)}
            ranks.update({a: level[v] for a, v in align.items()})
    return ranks
