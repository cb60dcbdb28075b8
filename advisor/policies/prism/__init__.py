"""PRISM (Mahendrakar, Patil; IJCA 172(4), 2017, after Zhang et al., IEEE TCC
2015; seed 004) as an advisor policy.

Status: experimental. PRISM schedules MapReduce work per *phase*, each with
its own resource profile. YARN allocates whole containers and does not gate
phase transitions, so the advisor runs the algorithm of section 4.1
(``core``) on the Snapshot and publishes what it
implies:

* Profiles per (app, task type, phase) learned from running tasks and their
  containers' NM measurements (``profiles``).
* Each cycle, up to ``max_nodes_per_cycle`` RUNNING nodes (rotating, so every
  node gets its "status message" over a few cycles) run lines 1-37: the
  candidates are the next phases of the tasks running there and the first
  phases of pending tasks of the ``top_k`` jobs with the highest deficit
  (data-local map first, else the non-local map and the reduce's shuffle),
  at most ``max_phases_per_node`` picks per node; utility with weight ``a``.
* ``advise_app_config`` per MapReduce app (value
  ``{"mapreduce.job.reduce.slowstart.completedmaps": x}``, advisory, for the
  app's next runs): x is the fraction of maps completed when PRISM first
  picked a shuffle phase of the job, or 1.0 if its maps finished with
  reduces still pending and no shuffle was ever picked (no room for them
  earlier). Decided once per app and kept in the state.

Published in its state for policies that read ``"prism"`` (OPERA):
``idle_headroom`` (node id -> ``{memory_mb, vcores}``:
allocated but idle by the phase profile of what runs there, e.g. reduces
waiting in shuffle; OPERA reads it as ``prism.idle_headroom``), ``urgency``
(app id -> share of the app's allocated memory held by reduces waiting in
shuffle for maps not yet done, 0-1; a HaSTE urgency input: finishing those
maps frees them), ``plan`` (node -> the phases picked this cycle, ``[app,
task type, phase, start | next_phase, utility]``), ``profiles`` (see
``profiles``, with the containers' last NM counters), ``slowstart`` and
``cursor``.
"""

from yarn_advisor.advisor.policies._base import Policy, Shared
from yarn_advisor.advisor.policies.prism.advice import advise
from yarn_advisor.advisor.policies.prism.metrics import metrics
from yarn_advisor.advisor.policies.prism.params import NAME, Params
from yarn_advisor.advisor.policies.prism.state import State


def _shares(state: State) -> Shared:
    """PRISM hands OPERA its idle-headroom estimate (node -> (MiB, vcores))."""
    return Shared(idle_headroom=state.idle_headroom)


POLICY: Policy[Params, State] = Policy(NAME, Params, State, advise, shares=_shares, metrics=metrics)

__all__ = ["NAME", "POLICY", "Params", "State", "advise"]
