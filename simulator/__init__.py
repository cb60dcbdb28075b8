"""A discrete-event simulator of a YARN cluster, for what-if runs of the advisor.

It lives outside the production path: the daemon never imports it; only
``yarn-advisor simulate`` does (``tests/unit/test_packaging.py`` checks).

Build and run::

    from yarn_advisor.simulator import Simulation, load_workload
    wl = load_workload("examples/workloads/haste_table2.yaml")   # or read_swim/read_sls/read_rumen
    report = Simulation(wl, scheduler="fair").run()               # capacity | fair | fifo
    report.to_json()      # makespan_s, mean_jct_s, p95_jct_s, utilization, locality_rate, ...

The advisor's hooks (the sidecar mode)::

    sim = Simulation(wl)
    writer = Writer(SimLevers(sim))               # the advisor's writer, simulated RM
    def cycle(sim):                               # every `interval` of simulated time
        snap = snapshot(sim)                      # an advisor.model.Snapshot
        ...engine.decide(snap) -> actuator(writer)...
    sim.every(30_000, cycle)
    report = sim.run()

A paper's algorithm inside the RM (the in-RM mode) is a class with the
:class:`~yarn_advisor.simulator.schedulers.base.Scheduler` protocol, passed
as ``Simulation(wl, scheduler=MyScheduler(wl.scheduler))`` or registered in
``SCHEDULERS``.
"""

from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.levers import SimLevers
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.readers.common import TraceOptions
from yarn_advisor.simulator.readers.rumen import read_rumen
from yarn_advisor.simulator.readers.sls import read_sls
from yarn_advisor.simulator.readers.swim import read_swim
from yarn_advisor.simulator.schedulers import SCHEDULERS, Scheduler, make_scheduler
from yarn_advisor.simulator.simulation import Simulation
from yarn_advisor.simulator.snapshot import snapshot
from yarn_advisor.simulator.spec import Workload
from yarn_advisor.simulator.workload import load_workload

__all__ = [
    "SCHEDULERS",
    "Report",
    "Scheduler",
    "SimLevers",
    "Simulation",
    "TraceOptions",
    "Workload",
    "WorkloadError",
    "load_workload",
    "make_scheduler",
    "read_rumen",
    "read_sls",
    "read_swim",
    "snapshot",
]
