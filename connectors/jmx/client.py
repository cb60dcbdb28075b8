"""JMX connector: RM queue/cluster beans and NodeManager per-container usage.

Fetch here, parse in :mod:`yarn_advisor.connectors.jmx.parse` (``parse_beans`` is the
public pure function). ``/jmx`` is not redirected by a standby RM, so RM
beans are always read from the active RM that :class:`RMClient` follows.
"""

from __future__ import annotations

from typing import Any

from yarn_advisor.connectors.http import HttpClient
from yarn_advisor.connectors.rm.client import RMClient

__all__ = ["JmxClient"]

RM_QUEUE_BEANS = "Hadoop:service=ResourceManager,name=QueueMetrics,*"
RM_CLUSTER_BEAN = "Hadoop:service=ResourceManager,name=ClusterMetrics"
NM_CONTAINER_BEANS = "Hadoop:service=NodeManager,name=ContainerResource_*"
RM_PLUGIN_BEAN = "Hadoop:service=ResourceManager,name=AdvisorPlugin"  # the RM plug-in's


class JmxClient:
    """Reads the JMX servlet of the active RM and of NodeManagers."""

    def __init__(self, http: HttpClient, rm: RMClient, nm_scheme: str = "http") -> None:
        self.http = http
        self.rm = rm
        self.nm_scheme = nm_scheme

    def rm_queue_beans(self) -> Any:
        return self.rm.jmx(RM_QUEUE_BEANS)

    def rm_cluster_bean(self) -> Any:
        return self.rm.jmx(RM_CLUSTER_BEAN)

    def rm_plugin_bean(self) -> Any:
        """The RM plug-in's MBean (``{"beans": []}`` when the RM has none)."""
        return self.rm.jmx(RM_PLUGIN_BEAN)

    def nm_container_beans(self, node_http_address: str) -> Any:
        url = f"{self.nm_scheme}://{node_http_address}/jmx"
        return self.http.get_json(url, {"qry": NM_CONTAINER_BEANS})
