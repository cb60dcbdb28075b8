"""Matchmaking (He, Lu, Swanson; UNL CSE 2011) as an advisor policy.

Status: experimental. The paper gives every node one chance per heartbeat
round to grab a local map task before any node takes a non-local one, instead
of a hand-tuned delay ``D``. The CapacityScheduler's equivalent knob is
``yarn.scheduler.capacity.node-locality-delay``: the number of missed
scheduling opportunities (node heartbeats offered to an app) after which it
accepts a rack-local container. One heartbeat round offers at most one
opportunity per node, so we recommend ``rounds x RUNNING nodes`` (clamped to
``[min_delay, max_delay]``) -- the Hadoop docs' own "typically the number of
nodes in the cluster". ``rack-locality-additional-delay`` is left to the RM
(its default -1 derives the off-switch delay from the request); the paper's
evaluation is one rack, where rack-local is any node.

Each cycle counts as one heartbeat round for the locality markers (Tables
1-2, ``core.step_markers``): a RUNNING node with free resources
either has node-local pending work (a pending row named after its host),
or is marked, or -- marked already -- would take one non-local task under
matchmaking. Markers are cleared when an app id appears that the previous
cycle did not show. The counts are reported in the explanation.

Locality (Eq 1, node-local / all): cluster-wide from the RM's QueueMetrics
``AggregateNodeLocalContainersAllocated`` / rack-local / off-switch counters
(the ``root`` bean, else the leaf beans summed): cumulative and, from the
previous cycle's counters kept in state, for the last cycle. These count
every container, AMs and reduces (ANY-only asks, counted off-switch)
included, so they are a lower bound of the paper's map-only rate. Per app,
the MapReduce counters ``DATA_LOCAL_MAPS`` / ``RACK_LOCAL_MAPS`` /
``OTHER_LOCAL_MAPS`` are used when the model's MRJob carries them
(``data_local_maps`` etc.; absent today), else the app inherits its queue's
rate (``source: queue``).

Hysteresis: the held value changes only when the new one differs from it by
more than ``hysteresis`` (relative), so nodes joining and leaving do not
flap the scheduler configuration. A recommendation is emitted unless the
RM's current value already equals the held value: the live value read from
``GET /scheduler-conf`` (``Snapshot.scheduler_conf``), else the
``current_node_locality_delay`` parameter, else unknown (always emitted).
"""

from yarn_advisor.advisor.policies._base import Policy
from yarn_advisor.advisor.policies.matchmaking.advice import advise
from yarn_advisor.advisor.policies.matchmaking.params import NAME, Params
from yarn_advisor.advisor.policies.matchmaking.state import State

POLICY: Policy[Params, State] = Policy(NAME, Params, State, advise)

__all__ = ["NAME", "POLICY", "Params", "State", "advise"]
