"""CapacityScheduler configuration: the property map, parsed into leaf queues.

The live configuration is the flat ``capacity-scheduler.xml`` map that
``GET /ws/v1/cluster/scheduler-conf`` returns; updates (``PUT
/scheduler-conf``) change it and are accepted only if the result is valid,
as ``MutableCSConfigurationProvider`` re-initialises the scheduler and rolls
back on failure. Only one level of leaf queues under ``root`` is modelled.
Checked like ``AbstractParentQueue``: children's capacities sum to 100 for the
default partition and for every label any child configures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from yarn_advisor.simulator.spec import SchedulerSpec

P = "yarn.scheduler.capacity."
ROOT = "root"
DEFAULT_MAX_AM = 0.1
_QUEUE_KEYS = frozenset({
    "capacity", "maximum-capacity", "user-limit-factor", "minimum-user-limit-percent",
    "maximum-am-resource-percent", "accessible-node-labels", "default-node-label-expression",
    "ordering-policy", "state", "default-application-priority",
})
_GLOBAL_KEYS = frozenset({
    "node-locality-delay", "rack-locality-additional-delay", "maximum-am-resource-percent",
    "per-node-heartbeat.maximum-offswitch-assignments", "resource-calculator",
    "per-node-heartbeat.multiple-assignments-enabled",
    "per-node-heartbeat.maximum-container-assignments",
    "rack-locality-full-reset", "maximum-applications",
    # placement at submission (CapacityScheduler.add_app, advisor.model.mapping_rules)
    "mapping-rule-format", "mapping-rule-json", "queue-mappings-override.enable",
})


@dataclass(frozen=True)
class LeafConf:
    """One leaf queue's settings (percentages 0-100, fractions where YARN uses them)."""

    name: str
    capacity: float
    maximum_capacity: float
    user_limit_factor: float
    minimum_user_limit_percent: float
    maximum_am_resource_percent: float
    labels: frozenset[str]
    label_capacity: Mapping[str, float]
    label_maximum: Mapping[str, float]
    default_label: str
    state: str
    default_priority: int

    @property
    def path(self) -> str:
        return f"{ROOT}.{self.name}"

    def accessible(self, label: str) -> bool:
        return label == "" or "*" in self.labels or label in self.labels

    def guaranteed(self, label: str) -> float:
        """Share (0-1) of the partition guaranteed to this queue."""
        if label == "":
            return self.capacity / 100.0
        return self.label_capacity.get(label, 0.0) / 100.0 if self.accessible(label) else 0.0

    def maximum(self, label: str) -> float:
        if label == "":
            return self.maximum_capacity / 100.0
        return self.label_maximum.get(label, 100.0) / 100.0 if self.accessible(label) else 0.0


@dataclass(frozen=True)
class CSConf:
    """The whole configuration, parsed."""

    leaves: tuple[LeafConf, ...]
    node_locality_delay: int
    rack_locality_additional_delay: int
    offswitch_per_heartbeat: int
    dominant: bool
    # CapacityScheduler.canAllocateMore (3.4.2, lines 1559-1576): another container on
    # the same heartbeat only if multiple-assignments-enabled (default true) and fewer
    # than maximum-container-assignments (default 100; -1: no limit) were assigned
    assign_multiple: bool = True
    max_assign_per_heartbeat: int = 100


def initial_map(spec: SchedulerSpec) -> dict[str, str]:
    """The property map of a workload's scheduler section."""
    conf = {
        f"{P}root.queues": ",".join(q.name for q in spec.queues),
        f"{P}maximum-am-resource-percent": _num(spec.maximum_am_resource_percent),
        f"{P}node-locality-delay": str(spec.node_locality_delay),
        f"{P}rack-locality-additional-delay": str(spec.rack_locality_additional_delay),
        f"{P}per-node-heartbeat.maximum-offswitch-assignments":
            str(spec.offswitch_per_heartbeat),
        f"{P}resource-calculator": (
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
            if spec.resource_calculator == "dominant"
            else "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"),
    }
    for q in spec.queues:
        base = f"{P}root.{q.name}."
        conf[base + "capacity"] = _num(q.capacity)
        conf[base + "maximum-capacity"] = _num(q.maximum_capacity)
        conf[base + "user-limit-factor"] = _num(q.user_limit_factor)
        if q.minimum_user_limit_percent != 100.0:
            conf[base + "minimum-user-limit-percent"] = _num(q.minimum_user_limit_percent)
        if q.maximum_am_resource_percent is not None:
            conf[base + "maximum-am-resource-percent"] = _num(q.maximum_am_resource_percent)
        if q.accessible_node_labels:
            conf[base + "accessible-node-labels"] = ",".join(q.accessible_node_labels)
            for label in q.accessible_node_labels:
                if label != "*":
                    sharing = [x for x in spec.queues if label in x.accessible_node_labels]
                    share = dict(q.label_capacities).get(label, 100.0 / len(sharing))
                    conf[base + f"accessible-node-labels.{label}.capacity"] = _num(
                        round(share, 4))
        if q.default_node_label:
            conf[base + "default-node-label-expression"] = q.default_node_label
    return conf


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _float(conf: Mapping[str, str], key: str, default: float, errors: list[str]) -> float:
    raw = conf.get(key)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        errors.append(f"{key}: not a number: {raw!r}")
        return default


def parse(conf: Mapping[str, str]) -> CSConf:
    """Parse and validate; raises ValueError with every problem found."""
    errors: list[str] = []
    names = [x.strip() for x in conf.get(f"{P}root.queues", "default").split(",") if x.strip()]
    if not names:
        errors.append(f"{P}root.queues: no queues")
    for key in conf:
        _check_key(key, names, errors)
    global_am = _float(conf, f"{P}maximum-am-resource-percent", DEFAULT_MAX_AM, errors)
    leaves = []
    for name in names:
        b = f"{P}root.{name}."
        labels = frozenset(x.strip() for x in conf.get(b + "accessible-node-labels", "").split(",")
                           if x.strip() and x.strip() != " ")
        label_cap = {}
        label_max = {}
        for key in conf:
            if key.startswith(b + "accessible-node-labels.") and key.count(".") > b.count("."):
                rest = key[len(b + "accessible-node-labels."):]
                label, _, what = rest.rpartition(".")
                if what == "capacity":
                    label_cap[label] = _float(conf, key, 0.0, errors)
                elif what == "maximum-capacity":
                    label_max[label] = _float(conf, key, 100.0, errors)
                else:
                    errors.append(f"{key}: unknown node-label setting")
        leaf = LeafConf(
            name=name,
            capacity=_float(conf, b + "capacity", 0.0, errors),
            maximum_capacity=_float(conf, b + "maximum-capacity", 100.0, errors),
            user_limit_factor=_float(conf, b + "user-limit-factor", 1.0, errors),
            minimum_user_limit_percent=_float(conf, b + "minimum-user-limit-percent", 100.0,
                                              errors),
            maximum_am_resource_percent=_float(conf, b + "maximum-am-resource-percent",
                                               global_am, errors),
            labels=labels, label_capacity=label_cap, label_maximum=label_max,
            default_label=conf.get(b + "default-node-label-expression", "").strip(),
            state=conf.get(b + "state", "RUNNING").strip().upper() or "RUNNING",
            default_priority=int(_float(conf, b + "default-application-priority", 0, errors)),
        )
        if not 0 <= leaf.capacity <= leaf.maximum_capacity <= 100:
            errors.append(f"{b}capacity {leaf.capacity} / maximum-capacity "
                          f"{leaf.maximum_capacity}: need 0 <= capacity <= maximum <= 100")
        if leaf.default_label and not leaf.accessible(leaf.default_label):
            errors.append(f"{b}default-node-label-expression {leaf.default_label!r} is not "
                          "among the queue's accessible-node-labels")
        leaves.append(leaf)
    _check_sums(leaves, errors)
    calc = conf.get(f"{P}resource-calculator", "")
    result = CSConf(
        leaves=tuple(leaves),
        node_locality_delay=int(_float(conf, f"{P}node-locality-delay", 40, errors)),
        rack_locality_additional_delay=int(
            _float(conf, f"{P}rack-locality-additional-delay", -1, errors)),
        offswitch_per_heartbeat=max(1, int(_float(
            conf, f"{P}per-node-heartbeat.maximum-offswitch-assignments", 1, errors))),
        dominant=calc.endswith("DominantResourceCalculator"),
        assign_multiple=_bool(conf, f"{P}per-node-heartbeat.multiple-assignments-enabled",
                              True, errors),
        max_assign_per_heartbeat=int(_float(
            conf, f"{P}per-node-heartbeat.maximum-container-assignments", 100, errors)),
    )
    if errors:
        raise ValueError("; ".join(errors))
    return result


def _bool(conf: Mapping[str, str], key: str, default: bool, errors: list[str]) -> bool:
    """A boolean property as Hadoop's ``Configuration.getBoolean`` reads it: ``true`` or
    ``false`` in any case; anything else is the default there, an error here."""
    raw = conf.get(key)
    if raw is None:
        return default
    if raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    errors.append(f"{key}: {raw!r} is not true or false")
    return default


def _check_key(key: str, names: list[str], errors: list[str]) -> None:
    if not key.startswith(P):
        errors.append(f"{key}: not a CapacityScheduler property")
        return
    rest = key[len(P):]
    if rest in _GLOBAL_KEYS or rest in ("root.queues", "root.capacity",
                                        "root.maximum-capacity", "root.accessible-node-labels"):
        return
    if rest.startswith("root.accessible-node-labels."):
        return
    if not rest.startswith("root."):
        errors.append(f"{key}: unknown property")
        return
    queue, _, setting = rest[5:].partition(".")
    if queue not in names:
        errors.append(f"{key}: no queue root.{queue}")
    elif setting not in _QUEUE_KEYS and not setting.startswith("accessible-node-labels."):
        errors.append(f"{key}: unknown queue property {setting!r}")


def _check_sums(leaves: list[LeafConf], errors: list[str]) -> None:
    total = sum(q.capacity for q in leaves)
    if abs(total - 100.0) > 1e-3:
        errors.append(f"Illegal capacity sum of {total:g} for children of queue root "
                      "(it must be 100)")
    labels = {label for q in leaves for label in q.label_capacity}
    for label in sorted(labels):
        s = sum(q.label_capacity.get(label, 0.0) for q in leaves)
        if abs(s - 100.0) > 1e-3:
            errors.append(f"Illegal capacity sum of {s:g} for children of queue root for "
                          f"label={label} (it must be 100)")
