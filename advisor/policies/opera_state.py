"""OPERA's cross-cycle state (plain JSON) and the explanation of a node decision.

See :mod:`yarn_advisor.advisor.policies.opera` for the keys. Parsing is defensive: the
state may come from an older version, a checkpoint or the classifier hook,
so malformed entries are dropped rather than failing the policy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from yarn_advisor.advisor.policies import opera_core as oc
from yarn_advisor.advisor.policies.opera_inputs import NodeIn, TaskQueue
from yarn_advisor.advisor.recommendation import Explanation, JsonDict, JsonValue

if TYPE_CHECKING:
    from yarn_advisor.advisor.policies.opera import Params

VERSION = 1


@dataclass
class OperaState:
    """What one cycle hands to the next (plus what it read from others)."""

    bases: dict[str, oc.Vec] = field(default_factory=dict)
    blocks: dict[str, oc.Block] = field(default_factory=dict)
    reservations: dict[str, list[list[Any]]] = field(default_factory=dict)
    lent: dict[str, dict[str, int]] = field(default_factory=dict)
    predictions: Mapping[str, object] = field(default_factory=dict)
    headroom: dict[str, oc.Vec] = field(default_factory=dict)

    def to_json(self, now: int, nodes: int, groups: int) -> dict[str, Any]:
        """The ``next_state`` (predictions are not carried: the hook adds fresh ones)."""
        return {
            "version": VERSION,
            "updated_at": now,
            "bases": {k: [v[0], v[1]] for k, v in sorted(self.bases.items())},
            "blocks": {
                k: {"br": [b.br[0], b.br[1]], "bt_ms": b.bt_ms, "last_relief": b.last_relief}
                for k, b in sorted(self.blocks.items())
            },
            "reservations": dict(sorted(self.reservations.items())),
            "lent": dict(sorted(self.lent.items())),
            "stats": {
                "nodes": nodes,
                "pending_groups": groups,
                "nodes_lending": len(self.lent),
                "nodes_raised": len(self.bases),
                "reserved_tasks": sum(len(v) for v in self.reservations.values()),
            },
        }


def _vec(raw: object) -> oc.Vec | None:
    if isinstance(raw, list | tuple) and len(raw) == 2:
        a, b = raw
        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b)):
            return (float(a), float(b))
    if isinstance(raw, Mapping):
        return _vec([raw.get("memory_mb"), raw.get("vcores")])
    return None


def _map(raw: object) -> Mapping[str, Any]:
    return raw if isinstance(raw, Mapping) else {}


def parse_state(state: object, floor: oc.Block) -> OperaState:
    """Read the previous ``next_state`` (and the hook's additions) defensively."""
    s = _map(state)
    preds = s.get("predictions")
    if preds is None:  # the classifier hook's own payload, when it is handed to OPERA
        preds = _map(s.get("classifier")).get("groups")
    out = OperaState(predictions=_map(preds))
    for nid, raw in _map(_map(s.get("prism")).get("idle_headroom")).items():
        v = _vec(raw)
        if v is not None:
            out.headroom[str(nid)] = v
    for nid, raw in _map(s.get("bases")).items():
        v = _vec(raw)
        if v is not None:
            out.bases[str(nid)] = v
    for nid, raw in _map(s.get("blocks")).items():
        b = _map(raw)
        br, bt, last = _vec(b.get("br")), b.get("bt_ms"), b.get("last_relief")
        if br is None or not isinstance(bt, int | float) or isinstance(bt, bool):
            continue
        last_ok = last if isinstance(last, int) and not isinstance(last, bool) else None
        out.blocks[str(nid)] = oc.Block(br, float(bt), last_ok)
    for nid, raw in _map(s.get("reservations")).items():
        if not isinstance(raw, list | tuple):
            continue
        kept = [
            [r[0], r[1]]
            for r in raw
            if isinstance(r, list | tuple) and len(r) == 2 and isinstance(r[0], str)
            and isinstance(r[1], int) and not isinstance(r[1], bool)
        ]
        if kept:
            out.reservations[str(nid)] = kept
    return out


def _v(x: oc.Vec) -> JsonDict:
    return {"memory_mb": round(x[0], 3), "vcores": round(x[1], 3)} if x[1] != float("inf") else {
        "memory_mb": round(x[0], 3), "vcores": None}


def explain_node(
    n: NodeIn,
    relief: oc.Relief,
    slot: oc.Slot,
    borrow: oc.Vec,
    desired: tuple[int, int],
    branches: list[str],
    queue: TaskQueue,
    params: Params,
    rule: str,
) -> Explanation:
    """Inputs, scores and thresholds of one node's decision."""
    node = n.node
    lent = Counter(t.key for t, how in slot.assigned if how == "opportunistic")
    tasks: list[JsonValue] = [
        {"group": k, "app": queue.groups[k].app_id, "priority": queue.groups[k].priority,
         "memory_mb": queue.groups[k].task.demand[0], "vcores": queue.groups[k].task.demand[1],
         "tasks": c, "prediction": queue.groups[k].label}
        for k, c in sorted(lent.items()) if k in queue.groups
    ]
    inputs: JsonDict = {
        "node": {
            "capacity": _v(n.base),
            "total": {"memory_mb": node.total.memory_mb, "vcores": node.total.vcores},
            "allocated": {"memory_mb": node.used.memory_mb, "vcores": node.used.vcores},
            "partition": n.partition,
        },
        "usage": {"source": n.usage_source, "tu": _v(n.usage),
                  "measured": None if n.measured is None else _v(n.measured)},
        "opportunistic_containers": len(n.opportunistic),
        "lent_to": tasks,
        "heartbeats": list(branches),
    }
    scores: JsonDict = {
        "contention": relief.contention,
        "relief": relief.branch,
        "borrow": _v(borrow),
        "ga_after": _v(slot.ga),
        "oa_after": _v(slot.oa),
        "desired": {"memory_mb": desired[0], "vcores": desired[1]},
    }
    if params.relief_policy == "PRESERVE":
        b = relief.block
        scores["block"] = {"br": _v(b.br), "bt_s": round(b.bt_ms / 1000.0, 3),
                           "last_relief": b.last_relief}
    thresholds: JsonDict = {
        "rho": params.rho, "relief_policy": params.relief_policy, "alpha": params.alpha,
        "reservation": params.reservation, "eps_r": params.eps_r, "eps_s": params.eps_s,
        "min_confidence": params.min_confidence,
    }
    cur = f"{node.total.memory_mb} MiB/{node.total.vcores} vcores"
    new = f"{desired[0]} MiB/{desired[1]} vcores"
    if rule == "opera.relieve_contention":
        summary = (f"{node.id}: {relief.contention} usage above {params.rho:g} x capacity with "
                   f"{len(n.opportunistic)} opportunistic container(s): {params.relief_policy} "
                   f"relief returns the borrowed headroom ({cur} -> {new})")
    elif rule == "opera.opportunistic_assign":
        summary = (f"{node.id}: lend {int(borrow[0])} MiB/{int(borrow[1])} vcores of idle "
                   f"reserved resources to {sum(lent.values())} short pending task(s) "
                   f"({cur} -> {new})")
    else:
        summary = f"{node.id}: no short task uses the borrowed headroom any more ({cur} -> {new})"
    return Explanation(rule, summary, inputs, scores, thresholds)
