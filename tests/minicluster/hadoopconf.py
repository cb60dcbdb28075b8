"""Hadoop configuration files shared by the mini cluster (yarnmini.py) and SLS (tests/sls).

Both run a real RM set up the same way, so the advisor meets the same
scheduler in either: loopback addresses, the CapacityScheduler with leaf queues
``default``, ``etl`` and ``adhoc``, application priorities up to 10,
centralized node labels in a file store, the in-memory mutable scheduler-conf
store (so PUT /ws/v1/cluster/scheduler-conf works), no log aggregation, and
log4j to the console (stderr). What differs between them (allocation sizes,
the AM share, the log levels) is a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

QUEUES = {"default": 40, "etl": 40, "adhoc": 20}

LOG4J_CONSOLE = (
    "log4j.appender.console=org.apache.log4j.ConsoleAppender\n"
    "log4j.appender.console.target=System.err\n"
    "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
    "log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n\n"
)


def site_xml(props: Mapping[str, object]) -> str:
    """A ``*-site.xml`` body with one ``<property>`` per entry, in order."""
    rows = "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n"
                   for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def rm_yarn_site(workdir: Path, ports: Mapping[str, int],
                 max_allocation_mb: int) -> dict[str, object]:
    """The RM's part of yarn-site.xml: its addresses (``ports``: ``rm_rpc``,
    ``rm_sched``, ``rm_tracker``, ``rm_admin``, ``rm_web``) and its scheduler."""
    p = ports
    return {
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
        "yarn.node-labels.fs-store.root-dir": f"file://{workdir}/node-labels",
        "yarn.node-labels.configuration-type": "centralized",
        "yarn.scheduler.configuration.store.class": "memory",
        "yarn.scheduler.minimum-allocation-mb": 128,
        "yarn.scheduler.maximum-allocation-mb": max_allocation_mb,
        "yarn.scheduler.maximum-allocation-vcores": 4,
        "yarn.log-aggregation-enable": "false",
    }


def capacity_scheduler(max_am_share: float) -> dict[str, object]:
    """capacity-scheduler.xml: the ``QUEUES`` (elastic up to 100 %) and the AM share."""
    cs: dict[str, object] = {"yarn.scheduler.capacity.root.queues": ",".join(QUEUES)}
    for q, cap in QUEUES.items():
        cs[f"yarn.scheduler.capacity.root.{q}.capacity"] = cap
        cs[f"yarn.scheduler.capacity.root.{q}.maximum-capacity"] = 100
    cs["yarn.scheduler.capacity.maximum-am-resource-percent"] = max_am_share
    cs["yarn.scheduler.capacity.node-locality-delay"] = 40
    return cs


def write_conf_dir(d: Path, sites: Mapping[str, Mapping[str, object]], log4j: str) -> Path:
    """Write ``d/<name>.xml`` for each of ``sites`` and ``d/log4j.properties``; returns ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    for name, props in sites.items():
        (d / f"{name}.xml").write_text(site_xml(props))
    (d / "log4j.properties").write_text(log4j)
    return d
