"""What a recommendation asks for, one frozen type per kind, and how values compare.

A :class:`~yarn_advisor.advisor.model.recommendation.Recommendation` carries
its ``value`` (the desired state) and ``previous`` (the state seen) as these
types from the policy to the RM's levers; JSON is made only at the edges
(journal, HTTP API, metrics, CLI) with ``to_json``, and read back with
:func:`value_from_json` / :func:`previous_from_json`. The JSON shapes are the
ones the journal has always held, so old journals read back unchanged:

============================  =========================  ================================
kind                          value                      previous (what the lever reads)
============================  =========================  ================================
``set_app_priority``          :class:`Priority`: int     :class:`Priority`
``move_app_queue``            :class:`Queue`: str        :class:`Queue`
``update_scheduler_conf``     :class:`ConfUpdate`:       :class:`ConfUpdate` (the same
                              ``{key: value or null}``   keys, null: unset)
``replace_node_labels``       :class:`NodeLabels`: list  :class:`NodeLabels`
``update_node_resource``      :class:`NodeResource`:     :class:`NodeResource`
                              ``{memory_mb, vcores}``
``signal_container``          :class:`ContainerSignal`   :class:`ContainerStatus`
                                                         ``{state, node}`` (none: gone)
``kill_app``                  :class:`AppState`          :class:`AppState`
``add_cluster_labels``,       :class:`ClusterLabels`     :class:`ClusterLabels` (the
``remove_cluster_labels``                                cluster's labels)
``advise_container_size``     :class:`ContainerSize`     :class:`ContainerSize`
``advise_app_config``         :class:`Advice`: ``{...}`` :class:`Advice`
``set_mapping_rules``         :class:`MappingRules`:     :class:`MappingConf` (the RM's
                              the advisor's rule block   two mapping-rule settings,
                                                         verbatim)
============================  =========================  ================================

:func:`holds` is the one comparison of a value the RM holds with the one
wanted (read-before-write, rollback's restores, the actuator's guardrails).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from yarn_advisor.advisor.model.jsonvalue import FrozenJson, JsonValue, freeze_dict, thaw
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.mapping_rules import MARK, TYPES, advisor_block, rm_rule

ConfScalar: TypeAlias = str | int | float | bool | None
SIGNALS = frozenset({"OUTPUT_THREAD_DUMP", "GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"})
FINAL_APP_STATES = frozenset({"FINISHED", "FAILED", "KILLED"})


@dataclass(frozen=True, slots=True)
class Priority:
    """An application's priority."""

    value: int

    def to_json(self) -> JsonValue:
        return self.value


@dataclass(frozen=True, slots=True)
class Queue:
    """A queue, as a path (``root.a.b``) or a leaf name."""

    path: str

    def to_json(self) -> JsonValue:
        return self.path

    def same(self, other: Queue) -> bool:
        """Same queue: full paths compared whole, otherwise by leaf name."""
        x, y = self.path, other.path
        if x.startswith("root.") and y.startswith("root."):
            return x == y
        return x.rsplit(".", 1)[-1] == y.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class ConfUpdate:
    """Scheduler-conf settings (keys relative to the target queue; None: unset),
    kept sorted by key."""

    items: tuple[tuple[str, ConfScalar], ...]

    @classmethod
    def of(cls, settings: Mapping[str, ConfScalar]) -> ConfUpdate:
        return cls(tuple(sorted(settings.items())))

    @property
    def settings(self) -> dict[str, ConfScalar]:
        return dict(self.items)

    def to_json(self) -> JsonValue:
        return dict(self.items)


@dataclass(frozen=True, slots=True)
class NodeLabels:
    """A node's partition labels (YARN allows at most one)."""

    labels: tuple[str, ...]

    def to_json(self) -> JsonValue:
        return list(self.labels)


@dataclass(frozen=True, slots=True)
class NodeResource:
    """A node's schedulable resource; a field left None is kept as it is.
    ``overcommit_timeout_ms``: how long the RM waits before it preempts containers
    above a lowered total (None: the writer's default)."""

    memory_mb: int | None = None
    vcores: int | None = None
    overcommit_timeout_ms: int | None = None

    def to_json(self) -> JsonValue:
        out: dict[str, JsonValue] = {}
        if self.memory_mb is not None:
            out["memory_mb"] = self.memory_mb
        if self.vcores is not None:
            out["vcores"] = self.vcores
        if self.overcommit_timeout_ms is not None:
            out["overcommit_timeout_ms"] = self.overcommit_timeout_ms
        return out


@dataclass(frozen=True, slots=True)
class ContainerSignal:
    """A signal to a container: one of :data:`SIGNALS`."""

    signal: str

    def to_json(self) -> JsonValue:
        return self.signal


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """A container as a signal's lever reads it (None when it is gone)."""

    state: str
    node: str

    def to_json(self) -> JsonValue:
        return {"node": self.node, "state": self.state}


@dataclass(frozen=True, slots=True)
class AppState:
    """An application's state (``KILLED`` is what a kill asks for)."""

    state: str

    def to_json(self) -> JsonValue:
        return self.state


@dataclass(frozen=True, slots=True)
class ClusterLabels:
    """Node labels of the cluster (added or removed by rollback)."""

    labels: tuple[str, ...]

    def to_json(self) -> JsonValue:
        return list(self.labels)


@dataclass(frozen=True, slots=True)
class ContainerSize:
    """Advice: the size of an application's next containers."""

    memory_mb: int
    vcores: int

    def to_json(self) -> JsonValue:
        return {"memory_mb": self.memory_mb, "vcores": self.vcores}


@dataclass(frozen=True, slots=True)
class Advice:
    """Advice published for people (never written): a JSON object."""

    fields: FrozenJson

    @classmethod
    def of(cls, fields: Mapping[str, object]) -> Advice:
        return cls(freeze_dict(fields, "value"))

    def to_json(self) -> JsonValue:
        return thaw(self.fields)


@dataclass(frozen=True, slots=True)
class PlacementRule:
    """One submission-time placement: applications whose ``type`` (user, group or
    application name) equals ``matches`` go into ``queue``; ``name`` is the policy
    rule it comes from (the mark of the advisor's block in the RM's rules)."""

    name: str
    type: str
    matches: str
    queue: str

    def to_json(self) -> JsonValue:
        return {"name": self.name, "type": self.type, "matches": self.matches,
                "queue": self.queue}

    def rm_json(self) -> dict[str, JsonValue]:
        """The rule as the RM's mapping-rule JSON holds it."""
        return rm_rule(self.name, self.type, self.matches, self.queue)


@dataclass(frozen=True, slots=True)
class MappingRules:
    """The advisor's block of the CapacityScheduler's mapping rules, in order
    (:mod:`.mapping_rules`: merged first, before the operator's own)."""

    rules: tuple[PlacementRule, ...]

    def to_json(self) -> JsonValue:
        return {"rules": [r.to_json() for r in self.rules]}


@dataclass(frozen=True, slots=True)
class MappingConf:
    """The RM's ``mapping-rule-format`` and ``mapping-rule-json``, verbatim (None:
    unset): what a mapping-rule write read first, and what its rollback restores."""

    format: str | None
    json: str | None

    def to_json(self) -> JsonValue:
        return {"format": self.format, "json": self.json}


Payload: TypeAlias = (Priority | Queue | ConfUpdate | NodeLabels | NodeResource
                      | ContainerSignal | ContainerStatus | AppState | ClusterLabels
                      | ContainerSize | Advice | MappingRules | MappingConf)

VALUE_TYPES: dict[Kind, type[Payload]] = {
    Kind.SET_APP_PRIORITY: Priority,
    Kind.MOVE_APP_QUEUE: Queue,
    Kind.UPDATE_SCHEDULER_CONF: ConfUpdate,
    Kind.REPLACE_NODE_LABELS: NodeLabels,
    Kind.UPDATE_NODE_RESOURCE: NodeResource,
    Kind.SIGNAL_CONTAINER: ContainerSignal,
    Kind.KILL_APP: AppState,
    Kind.ADD_CLUSTER_LABELS: ClusterLabels,
    Kind.REMOVE_CLUSTER_LABELS: ClusterLabels,
    Kind.ADVISE_CONTAINER_SIZE: ContainerSize,
    Kind.ADVISE_APP_CONFIG: Advice,
    Kind.SET_MAPPING_RULES: MappingRules,
}
PREVIOUS_TYPES: dict[Kind, type[Payload]] = {**VALUE_TYPES,
                                             Kind.SIGNAL_CONTAINER: ContainerStatus,
                                             Kind.SET_MAPPING_RULES: MappingConf}


def holds(kind: Kind, held: Payload | None, wanted: Payload) -> bool:
    """True when the value the RM ``held`` already is the one ``wanted`` for ``kind``
    (nothing to send): the one comparison every writer and guardrail uses."""
    if isinstance(wanted, ContainerSignal):  # a gone or stopped container needs no signal
        return not isinstance(held, ContainerStatus) or held.state != "RUNNING"
    if isinstance(wanted, AppState):
        return isinstance(held, AppState) and held.state in FINAL_APP_STATES
    if isinstance(wanted, MappingRules):  # held: the RM's settings, the block first in them
        if not isinstance(held, MappingConf) or (held.format or "").strip().lower() != "json":
            return False
        try:
            block = advisor_block(held.json)
        except ValueError:
            return False
        return block == [r.rm_json() for r in wanted.rules] and held.json is not None \
            and _first(held.json, len(block))
    if held is None or type(held) is not type(wanted):
        return False
    if isinstance(wanted, ClusterLabels):
        assert isinstance(held, ClusterLabels)
        if kind is Kind.REMOVE_CLUSTER_LABELS:
            return not set(wanted.labels) & set(held.labels)
        return set(wanted.labels) <= set(held.labels)
    if isinstance(wanted, Queue):
        assert isinstance(held, Queue)
        return wanted.same(held)
    if isinstance(wanted, NodeLabels):
        assert isinstance(held, NodeLabels)
        return sorted(held.labels) == sorted(wanted.labels)
    if isinstance(wanted, NodeResource):
        assert isinstance(held, NodeResource)
        return all(w is None or h == w for h, w in ((held.memory_mb, wanted.memory_mb),
                                                      (held.vcores, wanted.vcores)))
    if isinstance(wanted, ConfUpdate):
        assert isinstance(held, ConfUpdate)
        have = held.settings
        return all(conf_equal(have.get(k), v) for k, v in wanted.items)
    return held == wanted


def _first(raw: str, n: int) -> bool:
    """True when the first ``n`` rules of ``raw`` are the advisor's (its block leads)."""
    rules = json.loads(raw).get("rules", [])
    return all(isinstance(r, dict) and MARK in r for r in rules[:n])


def conf_str(v: ConfScalar) -> str:
    """A scheduler-conf value as the RM's configuration holds it."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def conf_equal(a: ConfScalar, b: ConfScalar) -> bool:
    """Same scheduler-conf value (``None`` = unset; numbers compared as numbers)."""
    if a is None or b is None:
        return a is None and b is None
    try:
        return float(conf_str(a)) == float(conf_str(b))
    except ValueError:
        return conf_str(a).strip() == conf_str(b).strip()


# --- JSON, at the edges -----------------------------------------------------------
def value_from_json(kind: Kind, data: object) -> Payload:
    """The value of a ``kind`` recommendation from its JSON form (ValueError if not)."""
    if kind is Kind.SET_MAPPING_RULES and isinstance(data, Mapping) and "rules" not in data:
        return _from_json(MappingConf, data, kind)  # a rollback's step: the settings as were
    return _from_json(VALUE_TYPES[kind], data, kind)


def previous_from_json(kind: Kind, data: object) -> Payload | None:
    """A previous value from its JSON form (None stays None)."""
    return None if data is None else _from_json(PREVIOUS_TYPES[kind], data, kind)


def _from_json(cls: type[Payload], data: object, kind: Kind) -> Payload:
    try:
        return _build(cls, data)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"{kind.value}: not a {cls.__name__}: {data!r} ({exc})") from None


def _build(cls: type[Payload], data: object) -> Payload:
    if cls is Priority:
        return Priority(_int(data))
    if cls in (Queue, ContainerSignal, AppState):
        if not isinstance(data, str):
            raise TypeError("expected a string")
        return cls(data)
    if cls is ConfUpdate:
        settings = _mapping(data)
        for k, v in settings.items():
            if v is not None and not isinstance(v, str | int | float | bool):
                raise TypeError(f"{k}: not a scalar")
        return ConfUpdate.of(settings)  # type: ignore[arg-type]
    if cls in (NodeLabels, ClusterLabels):
        if not isinstance(data, list | tuple) or not all(isinstance(x, str) for x in data):
            raise TypeError("expected a list of strings")
        return cls(tuple(data))
    if cls is NodeResource:
        d = _mapping(data)
        return NodeResource(*(None if d.get(k) is None else _int(d[k])
                              for k in ("memory_mb", "vcores", "overcommit_timeout_ms")))
    if cls is ContainerStatus:
        d = _mapping(data)
        return ContainerStatus(str(d["state"]), str(d.get("node", "")))
    if cls is MappingRules:
        rules = _mapping(data)["rules"]
        if not isinstance(rules, list):
            raise TypeError("rules: expected a list")
        out = []
        for r in rules:
            d = _mapping(r)
            fields = [d.get(k) for k in ("name", "type", "matches", "queue")]
            if not all(isinstance(f, str) and f for f in fields) or d["type"] not in TYPES:
                raise TypeError(f"not a placement rule: {r!r}")
            out.append(PlacementRule(*(str(f) for f in fields)))
        return MappingRules(tuple(out))
    if cls is MappingConf:
        d = _mapping(data)
        fmt, raw = d.get("format"), d.get("json")
        if not all(x is None or isinstance(x, str) for x in (fmt, raw)):
            raise TypeError("format and json: strings or null")
        return MappingConf(fmt, raw)  # type: ignore[arg-type]
    if cls is ContainerSize:
        d = _mapping(data)
        return ContainerSize(_int(d["memory_mb"]), _int(d["vcores"]))
    return Advice.of(_mapping(data))


def _mapping(data: object) -> Mapping[str, object]:
    if not isinstance(data, Mapping):
        raise TypeError("expected an object")
    return data


def _int(x: object) -> int:
    if isinstance(x, bool) or not isinstance(x, int | float | str):
        raise TypeError(f"not a number: {x!r}")
    return int(x)
