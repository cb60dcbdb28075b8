"""Pure parsers for the Hadoop ``/jmx`` servlet (``{"beans": [...]}``).

:func:`parse_beans` validates the body once; the other functions pick beans
by name from its result:

* RM ``Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=a`` ->
  :class:`~yarn_advisor.advisor.model.snapshot.QueueMetricsBean` for ``root.a`` (per-user beans,
  which add ``,user=<name>``, are skipped);
* RM ``Hadoop:service=ResourceManager,name=ClusterMetrics`` -> ``{attr: int}``;
* NM ``Hadoop:service=NodeManager,name=ContainerResource_<containerId>`` ->
  :class:`~yarn_advisor.advisor.model.snapshot.ContainerUsage`;
* RM ``Hadoop:service=ResourceManager,name=AdvisorPlugin`` (the RM plug-in's, when it is
  installed) -> :class:`~yarn_advisor.advisor.model.plugin.PluginStatus`.

A missing attribute reads as 0: attribute sets differ between versions and
the NM only fills container gauges after its first flush period.
"""

from __future__ import annotations

from typing import Any

from yarn_advisor.advisor.model.plugin import PluginStatus
from yarn_advisor.advisor.model.snapshot import ContainerUsage, QueueMetricsBean
from yarn_advisor.connectors._json import JSON, as_float, as_int, as_list, as_str, res_pair, top
from yarn_advisor.connectors.errors import ParseError

__all__ = ["cluster_metrics_bean", "container_usage", "parse_beans", "plugin_status",
           "queue_metrics"]

JMX = "/jmx"
QUEUE_PREFIX = "Hadoop:service=ResourceManager,name=QueueMetrics,"
CLUSTER_BEAN = "Hadoop:service=ResourceManager,name=ClusterMetrics"
CONTAINER_PREFIX = "Hadoop:service=NodeManager,name=ContainerResource_"
PLUGIN_BEAN = "Hadoop:service=ResourceManager,name=AdvisorPlugin"


def parse_beans(body: object) -> list[JSON]:
    """The beans of a ``/jmx`` body; each is an object with a string ``name``."""
    beans = as_list(top(body, "beans", JMX), "beans", JMX)
    for bean in beans:
        if not isinstance(bean.get("name"), str):
            raise ParseError(f"{JMX}: bean without a string 'name'")
    return beans


def queue_metrics(beans: list[JSON]) -> tuple[QueueMetricsBean, ...]:
    """QueueMetrics beans (one per queue, parent-first as the RM lists them)."""
    out = []
    for bean in beans:
        name: str = bean["name"]
        if not name.startswith(QUEUE_PREFIX) or ",user=" in name:
            continue
        path = _queue_path(name[len(QUEUE_PREFIX) :])
        if path:
            out.append(_queue_bean(path, bean))
    return tuple(out)


def _queue_path(keys: str) -> str:
    """``q0=root,q1=a`` -> ``root.a``."""
    segments = [kv.partition("=") for kv in keys.split(",")]
    return ".".join(v for k, _, v in segments if k[:1] == "q" and k[1:].isdigit())


def _queue_bean(path: str, b: JSON) -> QueueMetricsBean:
    g = b.get
    return QueueMetricsBean(
        queue_path=path,
        apps_pending=as_int(g("AppsPending")),
        apps_running=as_int(g("AppsRunning")),
        pending=res_pair(b, "PendingMB", "PendingVCores"),
        pending_containers=as_int(g("PendingContainers")),
        allocated=res_pair(b, "AllocatedMB", "AllocatedVCores"),
        allocated_containers=as_int(g("AllocatedContainers")),
        available=res_pair(b, "AvailableMB", "AvailableVCores"),
        reserved=res_pair(b, "ReservedMB", "ReservedVCores"),
        aggregate_containers_allocated=as_int(g("AggregateContainersAllocated")),
        aggregate_node_local=_either(b, "AggregateNodeLocalContainersAllocated"),
        aggregate_rack_local=_either(b, "AggregateRackLocalContainersAllocated"),
        aggregate_off_switch=_either(b, "AggregateOffSwitchContainersAllocated"),
    )


def _either(b: JSON, key: str) -> int:
    """Metrics.md spells these with a lower-case first letter, the RM with upper."""
    value = b.get(key)
    if value is None:
        value = b.get(key[0].lower() + key[1:])
    return as_int(value)


def cluster_metrics_bean(beans: list[JSON]) -> dict[str, int]:
    """Numeric attributes of the RM ClusterMetrics bean (``NumActiveNMs``, ...);
    ``{}`` when the bean is absent."""
    for bean in beans:
        if bean["name"] == CLUSTER_BEAN:
            return {k: as_int(v) for k, v in bean.items() if _is_number(v)}
    return {}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def container_usage(beans: list[JSON]) -> tuple[ContainerUsage, ...]:
    """NM ``ContainerResource_<id>`` beans -> ContainerUsage (missing gauges are 0)."""
    out = []
    for bean in beans:
        name: str = bean["name"]
        if not name.startswith(CONTAINER_PREFIX):
            continue
        g = bean.get
        out.append(
            ContainerUsage(
                container_id=name[len(CONTAINER_PREFIX) :],
                pmem_avg_mb=as_float(g("PMemUsageMBsAvgMBs")),
                pmem_max_mb=as_float(g("PMemUsageMBsMaxMBs")),
                cpu_avg_percent=as_float(g("PCpuUsagePercentAvgPercents")),
                cpu_max_percent=as_float(g("PCpuUsagePercentMaxPercents")),
                pmem_limit_mb=as_float(g("pMemLimitMBs")),
                vcore_limit=as_float(g("vCoreLimit")),
                samples=as_int(g("PMemUsageMBsNumUsage")),
            )
        )
    return tuple(out)


def plugin_status(beans: list[JSON]) -> PluginStatus | None:
    """The RM plug-in's MBean; None when the RM has none (not installed, or not started
    yet: it starts with the RM's first request). ``TableStatus`` is the one attribute it
    must have; the per-reason ``Vetoes.<reason>`` / ``Fallbacks.<why>`` are taken as the
    RM lists them (their totals are their sums)."""
    bean = next((b for b in beans if b["name"] == PLUGIN_BEAN), None)
    if bean is None:
        return None
    status = bean.get("TableStatus")
    if not isinstance(status, str):
        raise ParseError(f"{JMX}: {PLUGIN_BEAN} without a string 'TableStatus'")
    g = bean.get
    return PluginStatus(
        table_status=status,
        table_seq=as_int(g("TableSeq"), -1),
        table_age_ms=as_int(g("TableAgeMs"), -1),
        table_version=as_int(g("TableVersion"), -1),
        table_leader=as_str(g("TableLeader")),
        admits=as_int(g("Admits")),
        vetoes=_per("Vetoes.", bean),
        fallbacks=_per("Fallbacks.", bean),
        polls_ok=as_int(g("PollsOk")),
        polls_failed=as_int(g("PollsFailed")),
    )


def _per(prefix: str, bean: JSON) -> dict[str, int]:
    return {k[len(prefix):]: as_int(v) for k, v in sorted(bean.items())
            if k.startswith(prefix) and _is_number(v)}
