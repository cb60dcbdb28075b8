"""The configuration files of one SLS JVM (its conf dir, first on the classpath).

The RM gets what the mini cluster's has (tests/minicluster/hadoopconf.py,
shared with yarnmini.py): the CapacityScheduler with leaf queues
default/etl/adhoc, application priorities up to 10, centralized node labels,
the in-memory mutable scheduler-conf store (so PUT /ws/v1/cluster/scheduler-conf
works), on loopback ports of its own, with larger containers allowed and a
smaller AM share than the mini cluster's. The CapacityScheduler counts vcores
too (DominantResourceCalculator): the simulated nodes differ in memory per
vcore. ``sls-runner.xml`` sets SLS itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hadoopconf import LOG4J_CONSOLE, capacity_scheduler, rm_yarn_site, write_conf_dir
from workload import AM_MB, AM_VCORES


@dataclass(frozen=True)
class SimSettings:
    """What SLS's own simulation is told (sls-runner.xml)."""

    task_mb: int  # SLS's Rumen reader gives every task this size
    nm_heartbeat_ms: int = 1000
    am_heartbeat_ms: int = 1000
    # what every simulated NM reports as its (and its containers') physical
    # use, a fixed share of its size: without it the RM's /ws/v1/cluster/nodes
    # fails (see README); the figure means nothing
    nm_utilization_ratio: float = 0.5


def write_conf(d: Path, w: Path, p: dict[str, int], sim: SimSettings,
               extra_conf: dict[str, object]) -> None:
    """Write the conf dir ``d`` of an SLS whose work dir is ``w`` and RM ports ``p``."""
    yarn = rm_yarn_site(w, p, max_allocation_mb=8192) | {
        # keep every trace app readable after it finished (default 1000)
        "yarn.resourcemanager.max-completed-applications": 100000,
        "yarn.resourcemanager.state-store.max-completed-applications": 100000,
    } | extra_conf
    cs = capacity_scheduler(max_am_share=0.2)
    cs["yarn.scheduler.capacity.resource-calculator"] = (
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator")
    sls_runner: dict[str, object] = {
        "yarn.sls.runner.pool.size": 10,
        "yarn.sls.nm.heartbeat.interval.ms": sim.nm_heartbeat_ms,
        "yarn.sls.am.heartbeat.interval.ms": sim.am_heartbeat_ms,
        # SLS's MRAMSimulator, its last step reordered (UnregisterFirstMRAMSimulator.java)
        "yarn.sls.am.type.mapreduce":
            "org.apache.hadoop.yarn.sls.appmaster.UnregisterFirstMRAMSimulator",
        "yarn.sls.container.memory.mb": sim.task_mb,
        "yarn.sls.container.vcores": 1,
        "yarn.sls.am.container.memory": AM_MB,
        "yarn.sls.am.container.vcores": AM_VCORES,
        # SLS's own metrics would start a web server on a fixed port (10001)
        # and write CSVs every second; the RM's own REST API is what we read
        "yarn.sls.metrics.switch": "false",
        "yarn.sls.dns.caching.enabled": "true",
        "yarn.sls.nm.resource.utilization.ratio": sim.nm_utilization_ratio,
    }
    log4j = (
        "log4j.rootLogger=WARN,console\n"
        "log4j.logger.org.apache.hadoop.yarn.sls.SLSRunner=INFO\n"
        "log4j.logger.org.apache.hadoop.yarn.sls.NMRunner=INFO\n"
        # once per app: "lastStep was already called" (YARN-10427), and
        # "no groups found" for the trace's users
        "log4j.logger.org.apache.hadoop.yarn.sls.appmaster.AMSimulator=ERROR\n"
        "log4j.logger.org.apache.hadoop.yarn.server.resourcemanager.placement=ERROR\n"
        + LOG4J_CONSOLE)
    core = {"fs.defaultFS": "file:///", "hadoop.tmp.dir": f"{w}/tmp"}
    write_conf_dir(d, {"core-site": core, "yarn-site": yarn, "capacity-scheduler": cs,
                       "sls-runner": sls_runner}, log4j)
