"""The ResourceManager: reading it (``client``: find the active RM, fetch its
endpoints; ``parse``: the pure parsers of its bodies), writing to it
(``write``: read-before-write levers) and finding the active one of an HA
pair through the RMs' own election in ZooKeeper (``active``).

The pure parsers are also importable from here (``connectors.rm.parse_nodes``),
each taking the decoded JSON body of its endpoint.
"""

from yarn_advisor.connectors.rm.parse import (
    parse_app_attempts,
    parse_apps,
    parse_cluster_info,
    parse_cluster_metrics,
    parse_conf_property,
    parse_containers,
    parse_nodes,
    parse_scheduler,
    parse_scheduler_conf,
)

__all__ = [
    "parse_app_attempts",
    "parse_apps",
    "parse_cluster_info",
    "parse_cluster_metrics",
    "parse_conf_property",
    "parse_containers",
    "parse_nodes",
    "parse_scheduler",
    "parse_scheduler_conf",
]
