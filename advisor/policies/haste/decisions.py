"""HaSTE's part of the decision table (precision mode; docs/decision-table.md). Pure.

What a plug-in in the RM can apply of HaSTE at every heartbeat:

* ``haste.holdback``: a running MapReduce job's reduces (request priority 10)
  are held while the job still asks for maps (20, and fast-fail maps 5). The RM
  evaluates "still asks" at each attempt, so the hold ends as soon as the last
  map is placed, not a cycle later: a slow start of "every map scheduled".
  Why: with MapReduce's default slow start (0.05) the reduces are asked early,
  YARN serves priority 10 before 20, and idle shuffling reduces hold room the
  maps need; HaSTE's Eq 3 ranks reduces low until the maps progress.
* ``haste.order``: in each leaf queue, applications ranked by their best
  request's preference (Eq 4, or Eq 6 with alignment), AM requests first: the
  order the priority lever writes, without its cap at
  ``yarn.cluster.max-application-priority``. Applications the table has not
  seen yet go first (a new application's first request is its AM).
"""

from __future__ import annotations

import numpy as np

from yarn_advisor.advisor.model.decision_table import (
    AppDecisions,
    Decisions,
    Hold,
    Reason,
    RequestDecision,
    Unranked,
)
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, Reads
from yarn_advisor.advisor.policies.haste.advice import _reference_capacity
from yarn_advisor.advisor.policies.haste.inputs import (
    MAP_PRIORITIES,
    REDUCE_PRIORITY,
    Inputs,
    build_inputs,
)
from yarn_advisor.advisor.policies.haste.nodes import rank_on
from yarn_advisor.advisor.policies.haste.params import Params

HOLDBACK, ORDER = "haste.holdback", "haste.order"
RUNNING = frozenset({"ACCEPTED", "RUNNING"})


def plan(snapshot: Snapshot, result: PolicyResult[object], params: Params, reads: Reads,
         kinds: frozenset[str]) -> Decisions:
    """HaSTE's decisions of the ``kinds`` asked for."""
    requests: dict[str, tuple[RequestDecision, ...]] = {}
    if HOLDBACK in kinds:
        hold = (RequestDecision(REDUCE_PRIORITY, hold=Hold(Reason.HASTE_HOLDBACK,
                                                            tuple(sorted(MAP_PRIORITIES)))),)
        for app in snapshot.apps:
            if app.state in RUNNING and app.type.upper() == "MAPREDUCE":
                requests[app.id] = hold
    ranks = ranks_in_queues(snapshot, params) if ORDER in kinds else {}
    apps = {a: AppDecisions(ranks.get(a), requests.get(a, ()))
            for a in sorted(set(requests) | set(ranks))}
    return Decisions(apps=apps, unranked=Unranked.FIRST)


def ranks_in_queues(snapshot: Snapshot, params: Params) -> dict[str, int]:
    """Per leaf queue, each app with pending requests ranked 0, 1, ... by its best
    request (as the priority lever ranks them; ties keep the canonical order)."""
    inp: Inputs = build_inputs(snapshot, params.weights, params.iteration_rules,
                               params.reduce_ratio_cap)
    nodes = [n for n in snapshot.nodes if n.state == "RUNNING"]
    ref = _reference_capacity(nodes)
    by_queue: dict[str, list[int]] = {}
    for i, r in enumerate(inp.requests):
        by_queue.setdefault(r.app.queue, []).append(i)
    ranks: dict[str, int] = {}
    for queue in sorted(by_queue):
        idx = np.array(by_queue[queue], dtype=np.int64)
        order, *_ = rank_on(ref, inp.res[idx], inp.urgency[idx], inp.alignment[idx],
                            inp.is_am[idx], params.weights, params.effective_beta,
                            require_fit=False)
        k = 0
        for j in order.tolist():
            app = inp.requests[int(idx[j])].app.id
            if app not in ranks:
                ranks[app] = k
                k += 1
    return ranks
