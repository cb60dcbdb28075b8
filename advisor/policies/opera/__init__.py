"""OPERA (Yang, Yao, Gao, Wang, Mi, Sheng; seed 002) as an advisor policy.

Status: experimental. OPERA lends the idle part of reserved resources to
short pending tasks and takes it back under contention. From outside the RM
each cycle plays one heartbeat round (``node_updates_per_cycle`` heartbeats
per RUNNING node, in node-id order) of the paper's algorithms
(``core``) on the Snapshot (``inputs``):

1. Node monitor (Alg 1) on every node: contention (rho, memory first) when it
   runs opportunistic containers; relief per ``relief_policy``; PRESERVE's
   BR/BT/LastReliefTime live in the state. A node whose monitor relieved
   contention this cycle gets no opportunistic resources (OA = 0).
2. Assignment (Alg 2) over the Fair-ordered pending tasks: by default without
   reservations (the RM keeps its own; see README "The sidecar defaults"),
   or with strict (Alg 3) or multi-chance (Alg 4, ``eps_r``, ``eps_s``)
   reservation as in the paper, whose reservations and skip counts persist in
   the state. OA is taken under ``lend_up_to`` x C_i; a node grows by at most
   ``ramp_step`` x C_i a cycle and never past ``max_overcommit`` x C_i.

Output (lever ``POST /nodes/{id}/resource`` and container signal):

* ``update_node_resource`` (value and previous ``{memory_mb, vcores}``): a
  node's schedulable capacity becomes ``C_i`` + the demand of the eligible
  (short) tasks opportunistically assigned to it this cycle, never below what
  is allocated on it while there is no contention (running opportunistic
  containers drain), back to ``C_i`` when its monitor relieves contention.
  The RM does not know which tasks are short: it may place other tasks in
  the raised capacity, which the monitor then treats as opportunistic.
* ``signal_container`` (value ``signal``, default GRACEFUL_SHUTDOWN) for the
  most recently launched opportunistic container of a relieved node, only
  with ``signal_containers: true`` (kill-like actions are opt-in).

Reads: ``classifier``, this cycle's predictions per pending request group
(none = all long, so nothing is lent), and ``prism``, PRISM's last state,
whose ``idle_headroom`` (node id -> (memory MiB, vcores): PRISM's phase-aware
estimate) is used for unmeasured containers. State: see ``state.State``.

With ``resource_calculator: auto`` vcores are ignored for assignment when the
scheduler conf does not name the DominantResourceCalculator and some node has
more vcores allocated than it has (the RM evidently schedules memory only).

Choices where the paper is silent or ambiguous (see also ``core``): the
paper gives rho = 0.95 only. ``alpha`` = 2 because the text says BR and BT
are "doubled"; the initial BR (1 GiB / 1 vcore, also its floor; the paper's
Fig. 12 shows a few vcores blocked before any contention) and BT (60 s,
capped at ``bt_max_s``), ``eps_r`` = ``eps_s`` = 3 and the default
PRESERVE + multi-chance are ours (the safest pair: fewest kills, no
starvation). MinTaskDemand is taken over what is pending at the start of the
cycle. The pending queue is shared by all nodes of the round, and a task
reserved on a node leaves it. A group's tasks are assigned in bulk
(``bulk``, same result as one by one).
"""

from yarn_advisor.advisor.policies._base import Policy
from yarn_advisor.advisor.policies.opera.advice import advise
from yarn_advisor.advisor.policies.opera.metrics import metrics
from yarn_advisor.advisor.policies.opera.params import NAME, Params
from yarn_advisor.advisor.policies.opera.state import State

POLICY: Policy[Params, State] = Policy(NAME, Params, State, advise, metrics=metrics)

__all__ = ["NAME", "POLICY", "Params", "State", "advise"]
