"""HaSTE / HaSTE-A (Yao, Gao, Wang, Sheng, Mi; IEEE TCC 9(3), 2021) as an advisor policy.

Status: experimental. The paper's scheduler runs inside the RM; from outside
we publish two things each cycle:

* ``set_app_priority`` (lever ``PUT /apps/{id}/priority``): inside each leaf
  queue, apps with pending requests are ranked by their best request's
  preference (Eq 6; Eq 4 when ``alignment`` is off), AM requests first, and
  the K distinct score levels are spread evenly over ``0..max_priority``:
  level k (0 = best) gets ``max_priority - k * (max_priority + 1) // K``, so
  equal scores share a priority and the best level always gets
  ``max_priority`` (lowered to the cluster's ``yarn.cluster.max-application-priority``
  when the RM reports it). The fitness here is computed on a *reference
  capacity* -- the mean residual capacity of RUNNING nodes with free
  resources (mean total capacity when none is free) -- because a priority
  applies on every node; normalisation is over the queue's own requests,
  because priority only orders apps within a leaf queue. Only queues with at
  least two competing apps, and only apps whose priority would change, get
  a recommendation. The lever exists only on the CapacityScheduler and only
  FIFO-ordered leaf queues honour it, so nothing is recommended on other
  schedulers or in queues whose ordering policy is ``fair``. Note: with
  intra-queue preemption enabled, the RM may preempt lower-priority apps to
  serve the raised ones.
* ``advise_app_config`` with ``target`` = node id (advisory only, no RM
  lever): for each RUNNING node with free resources, the request it should
  serve next (``value.serve_next``). Idle nodes (no containers) get the ITA
  plan of Algorithm 1 (``value.plan``; AM requests are placed greedily before
  the DP; the requests it plans are taken out of the pool for the next idle
  node, as in the paper's loop over servers; at most ``ita_max_nodes`` per
  cycle, the others get RTA), the rest get RTA (``nodes``). RTA advice is
  per heartbeat: nodes do not see each other's picks. A request's partition
  (node label) must equal the node's first label ('' = default partition).
  ``max_node_advice`` (100; null: every node) keeps the nodes with the most
  free resources.

Deviations and choices: see ``core`` (Eq 1 on residual capacity,
Eq 3 cap, fallback urgency, flat normalisation, tie-breaks, ITA bounds) and
``inputs`` (roles, counts, tag format). ``beta`` is used as given
(the paper's default 0.2/0.2/0.6 is not renormalised).
"""
from yarn_advisor.advisor.policies._base import Policy
from yarn_advisor.advisor.policies.haste.advice import advise
from yarn_advisor.advisor.policies.haste.metrics import metrics
from yarn_advisor.advisor.policies.haste.params import NAME, IterationRule, Params
from yarn_advisor.advisor.policies.haste.state import State

POLICY: Policy[Params, State] = Policy(NAME, Params, State, advise, metrics=metrics)

__all__ = ["NAME", "POLICY", "IterationRule", "Params", "State", "advise"]
