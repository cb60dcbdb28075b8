"""From a Snapshot (and ANACRAC's state) to its inputs: node loads (step 6),
the rule of each active app (steps 1-4, :func:`rule_for`), their containers,
previous waits.

Node CPU% comes from raw counters when the state carries two readings of
them (Eq 4-5; IO% from Eq 6-8 likewise), else from the heartbeat's
``nodeCPUUsage`` (cores in use) over the node's vcores, clipped to 0-100.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from yarn_advisor.advisor.model.snapshot import App, Container, Node, Snapshot
from yarn_advisor.advisor.policies.anacrac import core as ac
from yarn_advisor.advisor.policies.anacrac.params import Rule
from yarn_advisor.advisor.policies.anacrac.state import State

ACTIVE = frozenset({"RUNNING", "ACCEPTED"})
NO_LOAD = ac.NodeLoad(None, None)


@dataclass
class Inputs:
    """Everything ANACRAC's steps read this cycle."""

    snap: Snapshot
    now: int
    nodes: list[Node]
    loads: dict[str, ac.NodeLoad]  # per node; empty when no app has a rule (none reads it)
    load_source: dict[str, str]
    counters: dict[str, dict[str, float]]
    apps: list[App]
    rule_of: dict[str, Rule]
    containers_of: dict[str, list[Container]] = field(default_factory=dict)
    waits: dict[str, ac.Wait] = field(default_factory=dict)
    last_start: dict[str, int] = field(default_factory=dict)


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def node_load(
    node: Node, now_c: Mapping[str, Any], last_c: Mapping[str, Any]
) -> tuple[ac.NodeLoad, str]:
    """Step 6 for one node: (load, source)."""
    if not now_c:  # the common case: no raw counters, the heartbeat's CPU only
        nu = node.utilization
        if nu is None or node.total.vcores <= 0:
            return NO_LOAD, "none"
        return ac.NodeLoad(min(100.0, max(0.0, 100.0 * nu.node_cpu / node.total.vcores)),
                           None), "nm_heartbeat"
    cpu: float | None = None
    io: float | None = None
    src = []
    keys = ("user", "nice", "system", "stamp", "nprocs")
    a = [_num(now_c.get(k)) for k in keys]
    b = [_num(last_c.get(k)) for k in keys]
    if all(v is not None for v in a + b[:4]):
        u, n, s, stamp, nprocs = (float(v) for v in a)  # type: ignore[arg-type]
        lu, ln, ls, lstamp = (float(v) for v in b[:4])  # type: ignore[arg-type]
        cpu = ac.cpu_usage(
            ac.cumulative_cpu_time(u, n, s), ac.cumulative_cpu_time(lu, ln, ls),
            stamp, lstamp, int(nprocs),
        )
        if cpu is not None:
            src.append("counters")
    ds, lds = _num(now_c.get("io_ms")), _num(last_c.get("io_ms"))
    st, lst = _num(now_c.get("io_stamp_ms")), _num(last_c.get("io_stamp_ms"))
    if None not in (ds, lds, st, lst):
        io = ac.io_usage(ac.disk_delta(ds, lds), ac.time_delta(st, lst))  # type: ignore[arg-type]
    if cpu is None and node.utilization is not None and node.total.vcores > 0:
        cpu = min(100.0, max(0.0, 100.0 * node.utilization.node_cpu / node.total.vcores))
        src.append("nm_heartbeat")
    if io is not None:
        io = min(100.0, max(0.0, io))
        src.append("io_counters")
    return ac.NodeLoad(cpu, io), "+".join(src) or "none"


def build_inputs(snap: Snapshot, state: State, rules: Sequence[Rule]) -> Inputs:
    """The :class:`Inputs` of one cycle."""
    fresh = state.node_counters
    last = state.counters
    nodes = sorted((n for n in snap.nodes if n.state == "RUNNING"), key=lambda n: n.id)
    apps = sorted((a for a in snap.apps if a.state in ACTIVE), key=lambda a: a.id)
    rule_of: dict[str, Rule] = {}
    if rules:
        for a in apps:
            r = rule_for(a, rules)
            if r is not None:
                rule_of[a.id] = r
    loads: dict[str, ac.NodeLoad] = {}
    source: dict[str, str] = {}
    counters: dict[str, dict[str, float]] = {}
    empty: Mapping[str, Any] = {}
    for n in nodes:
        now_c = fresh.get(n.id, empty) if fresh else empty
        if rule_of:  # only the rules of matched apps read the loads (steps 8-12)
            loads[n.id], source[n.id] = node_load(n, now_c,
                                                  last.get(n.id, empty) if last else empty)
        if now_c:
            keep = {k: float(v) for k, v in now_c.items() if _num(v) is not None}
            if keep:
                counters[n.id] = keep
    inp = Inputs(snap, snap.taken_at, nodes, loads, source, counters, apps, rule_of)
    inp.waits = dict(state.waits)
    need_start = any(a.id not in inp.waits for a in apps)
    if rule_of or need_start:
        for c in snap.containers:
            if c.app_id in rule_of:
                inp.containers_of.setdefault(c.app_id, []).append(c)
            if need_start and c.started_time > inp.last_start.get(c.app_id, 0):
                inp.last_start[c.app_id] = c.started_time
    return inp


@lru_cache(maxsize=256)
def _pattern(expr: str) -> re.Pattern[str]:
    return re.compile(expr)


def matches(rule: Rule, app: App) -> bool:
    """Whether every matcher the rule sets holds for ``app``."""
    if rule.app_name is not None and not _pattern(rule.app_name).search(app.name):
        return False
    if rule.app_names and app.name not in rule.app_names:
        return False
    if rule.app_type is not None and rule.app_type.lower() != app.type.lower():
        return False
    if rule.queue is not None and rule.queue not in (app.queue, app.queue.rsplit(".", 1)[-1]):
        return False
    return rule.tag is None or rule.tag in app.tags


def rule_for(app: App, rules: Sequence[Rule]) -> Rule | None:
    """Steps 1-3: the first rule matching ``app``, else None (plain Fair scheduling)."""
    for r in rules:
        if matches(r, app):
            return r
    return None


def in_hosts(rule: Rule, node_id: str, host: str) -> bool:
    """i in M: a node is named by its host, its id (host:port) or M is empty."""
    return not rule.hosts or host in rule.hosts or node_id in rule.hosts
