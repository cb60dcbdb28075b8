"""ANACRAC (Manjaly, Subbulakshmi; CSSE 47(3), 2023; seed 003) as an advisor policy.

Status: experimental. The seed text lost the paper's algorithm listing and
Tables 2 and 4; this is the algorithm rebuilt from the text (sections
3.2-3.3 and 4), numbered so that the waiting-time priority is steps 20-27 as
the issue cites it. Each cycle is one heartbeat of every node.

     1  on submission of application A:
     2    R <- the first rule matching A's name, type, queue or tag (``params.Rule``)
     3    no rule: A is scheduled as by the Fair scheduler (no restriction)
     4    M <- R.hosts; P <- R.tasks_maximum; job type and thresholds <- R
     5  on a heartbeat of node i:
     6    CU_i <- Eq 4-5, IOU_i <- Eq 6-8 (raw counters), else the node's utilization
     7    for each application A with pending containers:
     8      i not in M (Eq 1): refuse A on i
     9      j <- A's active containers on i, plus one
    10      j > P (Eq 2; Eq 3 is 8 and 10 together): refuse A on i
    11      CPU or ALL job and CU_i >= cpu threshold: refuse A on i
    12      IO or ALL job and IOU_i >= io threshold: refuse A on i
    13      N_jR <- A's container usage on each node j (Eq 9)
    14      TR <- sum of N_jR (Eq 10)
    15      U_at <- TR / M (Eq 11, M = A's measured containers)
    16      size <- K if U_at <= R_s else K + increment (Eq 12)
    17      the container fits i: allocate it on i
    18        reset A's waiting time (step 22)
    19      else A stays pending
    20  waiting time, each heartbeat, for each application A:
    21    A has pending containers (or is ACCEPTED without its AM container)?
    22    A got a container since the last heartbeat: wait_A <- 0
    23    else wait_A <- wait_A + the time since the last heartbeat
    24    wait_A >= W (wait_threshold_s): priority_A <- HIGH
    25      (HIGH apps are served first in step 7)
    26    A boosted and served (or no longer waiting): priority_A <- its own again
    27  end
    28  compliance, each heartbeat, for each running A with a rule:
    29    containers on hosts outside M, beyond P on a node, on nodes past A's thresholds
    30    report them (signal the newest container beyond P when enabled)

Levers (the RM keeps scheduling; we steer it):

* steps 8, 11-12 -> ``replace_node_labels``: the hosts M of a rule with a
  ``label``, minus those past its thresholds, carry that label (value
  ``[label]``) while the rule has a running app; a node carrying such a
  label outside the set gets ``[]``. Other labels (no rule, or a rule with
  no app now) are left alone. Create the labels non-exclusive so other apps
  may still use idle resources there.
* ``move_app_queue`` into the rule's ``target_queue`` (bound to its label).
* steps 1-4 at submission -> ``set_mapping_rules``: a rule naming its
  applications (``app_names``) becomes one JSON mapping rule per name, merged
  first before the operator's own; the RM places them into ``target_queue``
  before their AM is requested (README, "Mapping rules").
* steps 13-16 -> ``advise_container_size`` ``{memory_mb, vcores}`` (previous
  = the app's usual container K) for the next containers / runs.
* steps 20-27 -> ``set_app_priority`` HIGH (``high_priority``, else the RM's
  max-application-priority, else 10) for starving apps, and back to their
  own priority once served; only where the lever works (CapacityScheduler,
  leaf queues not ordered by ``fair``).
* steps 28-30 -> ``advise_app_config`` ``{"rule", "violations": [...]}``,
  and ``signal_container`` for excess containers with
  ``signal_excess_containers: true``.

Defaults where the paper's Table 4 is lost: node CPU/IO thresholds 80%, the
container thresholds 80% with increments of 512 MiB / 1 vcore (``params.Rule``),
``wait_threshold_s`` 30 s (an app that got no container for a whole default
daemon cycle is starving). Without rules only the waiting-time boost runs.

State: ``waits`` per app and the last raw counters per node (``state``). Raw
counters are *read* from the state's ``node_counters``, written by a
counters source when one exists. Without them
CPU% is ``100 * nodeCPUUsage / vcores`` (the NM reports cores in use) and
IO% is unknown (IO thresholds are then not applied).
"""

from yarn_advisor.advisor.policies._base import Policy
from yarn_advisor.advisor.policies.anacrac.advice import advise
from yarn_advisor.advisor.policies.anacrac.decisions import plan
from yarn_advisor.advisor.policies.anacrac.params import NAME, Params, Rule
from yarn_advisor.advisor.policies.anacrac.state import State

POLICY: Policy[Params, State] = Policy(NAME, Params, State, advise, plan=plan)

__all__ = ["NAME", "POLICY", "Params", "Rule", "State", "advise"]
