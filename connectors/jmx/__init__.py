"""The Hadoop ``/jmx`` servlet of the RM and the NodeManagers: ``client``
fetches, ``parse`` holds the pure parsers (also importable from here:
``connectors.jmx.parse_beans``)."""

from yarn_advisor.connectors.jmx.parse import (
    cluster_metrics_bean,
    container_usage,
    parse_beans,
    plugin_status,
    queue_metrics,
)

__all__ = ["cluster_metrics_bean", "container_usage", "parse_beans", "plugin_status",
           "queue_metrics"]
