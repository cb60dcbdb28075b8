"""What a recommendation (or a rollback step) changes: the kinds, and what their
targets name. Each kind's value type is :mod:`.payloads`; each kind that is not
advisory has one RM lever (``connectors.rm.write.LEVERS``)."""

from __future__ import annotations

from enum import StrEnum


class Target(StrEnum):
    """What a kind's target id names (the actuator's scope checks read it)."""

    APP = "app"
    NODE = "node"
    CONTAINER = "container"
    QUEUE = "queue"  # a queue path, or ``scheduler`` for global updates
    CLUSTER = "cluster"
    ANY = "any"  # advice may target an app or a node


class Kind(StrEnum):
    """What a recommendation (or a rollback step) changes: the one list of kinds.

    Every kind that is not advisory has exactly one RM lever
    (``connectors.rm.write.LEVERS``, keyed by Kind; a test checks the two match).
    ``add_cluster_labels`` / ``remove_cluster_labels`` are used by rollback only.
    """

    SET_APP_PRIORITY = "set_app_priority"
    MOVE_APP_QUEUE = "move_app_queue"
    KILL_APP = "kill_app"
    UPDATE_SCHEDULER_CONF = "update_scheduler_conf"
    REPLACE_NODE_LABELS = "replace_node_labels"
    UPDATE_NODE_RESOURCE = "update_node_resource"
    SIGNAL_CONTAINER = "signal_container"
    ADD_CLUSTER_LABELS = "add_cluster_labels"
    REMOVE_CLUSTER_LABELS = "remove_cluster_labels"
    SET_MAPPING_RULES = "set_mapping_rules"
    ADVISE_CONTAINER_SIZE = "advise_container_size"
    ADVISE_APP_CONFIG = "advise_app_config"

    @property
    def advisory(self) -> bool:
        """True for kinds that are published only, never pushed to the RM."""
        return self.value.startswith("advise_")

    @property
    def irreversible(self) -> bool:
        """Kill-like: cannot be undone by rollback, opt-in in the actuator."""
        return self in (Kind.SIGNAL_CONTAINER, Kind.KILL_APP)

    @property
    def target(self) -> Target:
        """What the target id of this kind names."""
        return _TARGETS[self]


_TARGETS = {
    Kind.SET_APP_PRIORITY: Target.APP, Kind.MOVE_APP_QUEUE: Target.APP,
    Kind.KILL_APP: Target.APP, Kind.UPDATE_SCHEDULER_CONF: Target.QUEUE,
    Kind.REPLACE_NODE_LABELS: Target.NODE, Kind.UPDATE_NODE_RESOURCE: Target.NODE,
    Kind.SIGNAL_CONTAINER: Target.CONTAINER, Kind.ADD_CLUSTER_LABELS: Target.CLUSTER,
    Kind.REMOVE_CLUSTER_LABELS: Target.CLUSTER, Kind.ADVISE_CONTAINER_SIZE: Target.APP,
    Kind.ADVISE_APP_CONFIG: Target.ANY, Kind.SET_MAPPING_RULES: Target.QUEUE,
}
