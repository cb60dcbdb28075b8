"""ANACRAC (Manjaly, Subbulakshmi; CSSE 47(3), 2023; seed 003) as an advisor policy.

Status: experimental. The seed text lost the paper's algorithm listing and
Tables 2 and 4; this is the algorithm rebuilt from the text (sections
3.2-3.3 and 4), numbered so that the waiting-time priority is steps 20-27 as
the issue cites it. Each cycle is one heartbeat of every node.

     1  on submission of application A:
     2    R <- the first rule matching A's name, type, queue or tag (anacrac_rules)
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
container thresholds 80% with increments of 512 MiB / 1 vcore (anacrac_rules),
``wait_threshold_s`` 30 s (an app that got no container for a whole default
daemon cycle is starving). Without rules only the waiting-time boost runs.

State (JSON): ``waits`` (app -> ``{since, containers, memory_mb,
boosted_from}``) and ``counters`` (the last raw counters per node). Raw
counters are *read* from ``node_counters`` (node id -> ``{user, nice,
system, stamp, nprocs}`` in ``/proc/stat`` ticks and/or ``{io_ms,
io_stamp_ms}``), written by a counters source when one exists. Without them
CPU% is ``100 * nodeCPUUsage / vcores`` (the NM reports cores in use) and
IO% is unknown (IO thresholds are then not applied).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from yarn_advisor.advisor.model import Snapshot
from yarn_advisor.advisor.policies._base import PolicyResult, raise_problems
from yarn_advisor.advisor.policies.anacrac_advice import (
    compliance,
    container_sizes,
    labels_and_queues,
    priorities,
)
from yarn_advisor.advisor.policies.anacrac_inputs import Inputs, build_inputs
from yarn_advisor.advisor.policies.anacrac_rules import Rule

NAME = "anacrac"

__all__ = ["NAME", "Params", "Rule", "advise"]


@dataclass(frozen=True)
class Params:
    """ANACRAC parameters: the application rules and the waiting-time boost."""

    rules: tuple[Rule, ...] = ()
    wait_threshold_s: float = 30.0  # one default daemon cycle without any container
    high_priority: int | None = None
    boost_waiting: bool = True
    signal_excess_containers: bool = False
    signal: Literal["GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"] = "GRACEFUL_SHUTDOWN"

    def __post_init__(self) -> None:
        p: list[tuple[str, str]] = []
        names = [r.name for r in self.rules]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            p.append(("rules", f"duplicate rule names: {', '.join(dup)}"))
        if not self.wait_threshold_s > 0:
            p.append(("wait_threshold_s", f"must be > 0, got {self.wait_threshold_s}"))
        if self.high_priority is not None and self.high_priority < 1:
            p.append(("high_priority", f"must be >= 1 or null, got {self.high_priority}"))
        raise_problems(p)


def advise(snapshot: Snapshot, state: object, params: Params) -> PolicyResult:
    """ANACRAC's recommendations for ``snapshot`` and the next state."""
    inp: Inputs = build_inputs(snapshot, state, params.rules)
    recs = labels_and_queues(inp, params)
    recs += compliance(inp, params)
    recs += container_sizes(inp)
    prio, waits = priorities(inp, params)
    recs += prio
    next_state = {
        "version": 1,
        "updated_at": snapshot.taken_at,
        "waits": waits,
        "counters": inp.counters,
    }
    return PolicyResult(tuple(recs), next_state)
