"""The configuration files of one SLS JVM (its conf dir, first on the classpath).

The RM gets what the mini cluster's has (tests/minicluster/yarnmini.py): the
CapacityScheduler with leaf queues default/etl/adhoc, application priorities
up to 10, centralized node labels, the in-memory mutable scheduler-conf store
(so PUT /ws/v1/cluster/scheduler-conf works), on loopback ports of its own.
The CapacityScheduler counts vcores too (DominantResourceCalculator): the
simulated nodes differ in memory per vcore. ``sls-runner.xml`` sets SLS itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workload import AM_MB, AM_VCORES

QUEUES = {"default": 40, "etl": 40, "adhoc": 20}


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


def site_xml(props: dict[str, object]) -> str:
    rows = "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n"
                   for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def write_conf(d: Path, w: Path, p: dict[str, int], sim: SimSettings,
               extra_conf: dict[str, object]) -> None:
    """Write the conf dir ``d`` of an SLS whose work dir is ``w`` and RM ports ``p``."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "core-site.xml").write_text(site_xml({
        "fs.defaultFS": "file:///", "hadoop.tmp.dir": f"{w}/tmp"}))
    yarn: dict[str, object] = {
        "yarn.resourcemanager.hostname": "127.0.0.1",
        "yarn.resourcemanager.address": f"127.0.0.1:{p['rm_rpc']}",
        "yarn.resourcemanager.scheduler.address": f"127.0.0.1:{p['rm_sched']}",
        "yarn.resourcemanager.resource-tracker.address": f"127.0.0.1:{p['rm_tracker']}",
        "yarn.resourcemanager.admin.address": f"127.0.0.1:{p['rm_admin']}",
        "yarn.resourcemanager.webapp.address": f"127.0.0.1:{p['rm_web']}",
        "yarn.resourcemanager.scheduler.class": "org.apache.hadoop.yarn.server."
        "resourcemanager.scheduler.capacity.CapacityScheduler",
        "yarn.cluster.max-application-priority": 10,
        "yarn.node-labels.enabled": "true",
        "yarn.node-labels.fs-store.root-dir": f"file://{w}/node-labels",
        "yarn.node-labels.configuration-type": "centralized",
        "yarn.scheduler.configuration.store.class": "memory",
        "yarn.scheduler.minimum-allocation-mb": 128,
        "yarn.scheduler.maximum-allocation-mb": 8192,
        "yarn.scheduler.maximum-allocation-vcores": 4,
        # keep every trace app readable after it finished (default 1000)
        "yarn.resourcemanager.max-completed-applications": 100000,
        "yarn.resourcemanager.state-store.max-completed-applications": 100000,
        "yarn.log-aggregation-enable": "false",
    } | extra_conf
    (d / "yarn-site.xml").write_text(site_xml(yarn))
    cs: dict[str, object] = {"yarn.scheduler.capacity.root.queues": ",".join(QUEUES)}
    for q, cap in QUEUES.items():
        cs[f"yarn.scheduler.capacity.root.{q}.capacity"] = cap
        cs[f"yarn.scheduler.capacity.root.{q}.maximum-capacity"] = 100
    cs["yarn.scheduler.capacity.maximum-am-resource-percent"] = 0.2
    cs["yarn.scheduler.capacity.node-locality-delay"] = 40
    cs["yarn.scheduler.capacity.resource-calculator"] = (
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator")
    (d / "capacity-scheduler.xml").write_text(site_xml(cs))
    (d / "sls-runner.xml").write_text(site_xml({
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
    }))
    (d / "log4j.properties").write_text(
        "log4j.rootLogger=WARN,console\n"
        "log4j.logger.org.apache.hadoop.yarn.sls.SLSRunner=INFO\n"
        "log4j.logger.org.apache.hadoop.yarn.sls.NMRunner=INFO\n"
        # once per app: "lastStep was already called" (YARN-10427), and
        # "no groups found" for the trace's users
        "log4j.logger.org.apache.hadoop.yarn.sls.appmaster.AMSimulator=ERROR\n"
        "log4j.logger.org.apache.hadoop.yarn.server.resourcemanager.placement=ERROR\n"
        "log4j.appender.console=org.apache.log4j.ConsoleAppender\n"
        "log4j.appender.console.target=System.err\n"
        "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n\n")
