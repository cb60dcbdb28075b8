"""ANACRAC's recommendations, one function per lever (see the package docstring)."""

from __future__ import annotations

from collections import Counter

from yarn_advisor.advisor.model.jsonvalue import JsonDict, JsonValue
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import (
    Advice,
    ConfUpdate,
    ContainerSignal,
    ContainerSize,
    ContainerStatus,
    MappingRules,
    NodeLabels,
    PlacementRule,
    Priority,
    Queue,
)
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import App, Container, Snapshot
from yarn_advisor.advisor.policies._base import NO_READS, PolicyResult, Reads
from yarn_advisor.advisor.policies.anacrac import core as ac
from yarn_advisor.advisor.policies.anacrac.inputs import Inputs, build_inputs, in_hosts
from yarn_advisor.advisor.policies.anacrac.params import NAME, Params, Rule
from yarn_advisor.advisor.policies.anacrac.state import State


def _rule_json(r: Rule) -> JsonDict:
    return {
        "name": r.name, "hosts": list(r.hosts), "tasks_maximum": r.tasks_maximum,
        "job_type": r.job_type, "cpu_threshold": r.cpu_threshold,
        "io_threshold": r.io_threshold, "label": r.label, "target_queue": r.target_queue,
        **({"task_memory_mb": r.task_memory_mb, "am_memory_mb": r.am_memory_mb}
           if r.task_memory_mb is not None else {}),
    }


def _load_json(inp: Inputs, nid: str) -> JsonDict:
    ld = inp.loads[nid]
    return {"cpu_percent": None if ld.cpu is None else round(ld.cpu, 3),
            "io_percent": None if ld.io is None else round(ld.io, 3),
            "source": inp.load_source[nid]}


def labels_and_queues(inp: Inputs, params: Params) -> list[Recommendation]:
    """Steps 8 and 11-12 as node-label partitions; queue moves into the bound queue."""
    active = {r.name: r for r in inp.rule_of.values() if r.label is not None and r.hosts}
    if not active:
        return []
    managed = {r.label for r in active.values()}  # labels of rules with no app stay put
    ordered = [r for r in params.rules if r.name in active]
    out: list[Recommendation] = []
    for n in inp.nodes:
        want: list[str] = []
        why: JsonDict = {}
        for r in ordered:
            if not in_hosts(r, n.id, n.host):
                continue
            past = ac.hot(r, inp.loads[n.id])
            why[r.name] = {"in_hosts": True, "past_thresholds": list(past)}
            if not past and not want:
                want = [str(r.label)]
        if list(n.labels) == want or (n.labels and n.labels[0] not in managed):
            continue  # already right, or a label we do not manage
        if not want and not n.labels:
            continue
        rule = "anacrac.node_awareness" if want else "anacrac.node_awareness.release"
        summary = (f"{n.id}: label {want[0]!r} (hosts of rule(s) {', '.join(why)})" if want
                   else f"{n.id}: remove label {n.labels[0]!r}: outside every active rule's "
                   f"hosts or past its thresholds")
        inputs: JsonDict = {"node": n.id, "host": n.host, "labels": list(n.labels),
                            "load": _load_json(inp, n.id), "rules": why}
        th: JsonDict = {"rules": [_rule_json(r) for r in ordered]}
        out.append(Recommendation(Kind.REPLACE_NODE_LABELS, n.id, NodeLabels(tuple(want)), NAME,
                                  Explanation(rule, summary, inputs, {}, th),
                                  NodeLabels(tuple(n.labels))))
    for a in inp.apps:
        ar = inp.rule_of.get(a.id)
        if ar is None or ar.target_queue is None or ar.name not in active:
            continue
        if ar.target_queue in (a.queue, a.queue.rsplit(".", 1)[-1]):
            continue
        summary = (f"{a.id} ({a.name}): rule {ar.name} restricts it to {len(ar.hosts)} host(s) "
                   f"labelled {ar.label!r}: move it to queue {ar.target_queue} (was {a.queue})")
        e = Explanation("anacrac.node_awareness.queue", summary,
                        {"app": _app_json(a)}, {}, {"rule": _rule_json(ar)})
        out.append(Recommendation(Kind.MOVE_APP_QUEUE, a.id, Queue(ar.target_queue), NAME, e,
                                  Queue(a.queue)))
    return out


def mapping_rules(params: Params) -> list[Recommendation]:
    """Steps 1-4 at submission: the rules naming their applications (``app_names``)
    as the RM's JSON mapping rules, so the RM places them into the rule's queue (bound
    to its label) before their AM is requested. One set, every cycle: the writer sends
    it only when the RM does not hold it."""
    placed = [PlacementRule(r.name, "application", n, str(r.target_queue))
              for r in params.rules if r.target_queue is not None for n in r.app_names]
    if not placed:
        return []
    summary = (f"place {len(placed)} application name(s) at submission: "
               + ", ".join(f"{p.matches} -> {p.queue}" for p in placed))
    th: JsonDict = {"rules": [_rule_json(r) for r in params.rules if r.app_names]}
    e = Explanation("anacrac.node_awareness.mapping_rules", summary, {}, {}, th)
    return [Recommendation(Kind.SET_MAPPING_RULES, "scheduler", MappingRules(tuple(placed)),
                           NAME, e)]


CAP_KEY = "accessible-node-labels.{label}.maximum-capacity"


def partition_caps(inp: Inputs, params: Params) -> list[Recommendation]:
    """Step 10's per-node limit as a bound the RM has: the target queue's share of its
    label's partition capped at ``tasks_maximum`` task containers of ``task_memory_mb``
    per rule host plus ``am_memory_mb``, written before any matched app is submitted
    (rules that set ``task_memory_mb`` only). A total, not a per-node bound: it acts
    per node where one container is assigned per node heartbeat (off-switch asks and
    ``maximum-offswitch-assignments`` 1, the default; ``bench/anacrac_mapping_ceiling.py``
    measures it). The partition is the rule's hosts, which labels_and_queues labels."""
    out: list[Recommendation] = []
    for r in params.rules:
        if r.task_memory_mb is None or r.tasks_maximum is None or not r.hosts \
                or r.target_queue is None or r.label is None:
            continue
        nodes = [n for n in inp.nodes if in_hosts(r, n.id, n.host)]
        part_mb = sum(n.total.memory_mb for n in nodes)
        if part_mb <= 0:
            continue
        want_mb = r.tasks_maximum * len(nodes) * r.task_memory_mb + r.am_memory_mb
        pct = min(100.0, round(100.0 * want_mb / part_mb, 2))
        queue = _queue_path(inp.snap, r.target_queue)
        key = CAP_KEY.format(label=r.label)
        current = inp.snap.scheduler_conf.get(f"yarn.scheduler.capacity.{queue}.{key}")
        if current is not None and _same_number(current, pct):
            continue
        summary = (f"{queue}: at most {pct:g} % of partition {r.label!r} ({r.tasks_maximum} x "
                   f"{r.task_memory_mb} MiB on each of {len(nodes)} host(s) + "
                   f"{r.am_memory_mb} MiB AM of {part_mb} MiB; rule {r.name})")
        inputs: JsonDict = {"hosts": [n.id for n in nodes], "partition_mb": part_mb,
                            "current": current}
        th: JsonDict = {"rule": _rule_json(r), "task_memory_mb": r.task_memory_mb,
                        "am_memory_mb": r.am_memory_mb}
        e = Explanation("anacrac.container_awareness.partition_cap", summary, inputs,
                        {"maximum_capacity_percent": pct}, th)
        out.append(Recommendation(Kind.UPDATE_SCHEDULER_CONF, queue, ConfUpdate.of({key: pct}),
                                  NAME, e, ConfUpdate.of({key: current})))
    return out


def _queue_path(snap: Snapshot, queue: str) -> str:
    """A leaf queue's full path, by its path or its name (``root.<queue>`` if unknown)."""
    for q in snap.queues:
        if q.is_leaf and queue in (q.path, q.name):
            return q.path
    return queue if queue.startswith("root") else f"root.{queue}"


def _same_number(text: str, value: float) -> bool:
    try:
        return abs(float(text) - value) < 0.005
    except ValueError:
        return False


def _app_json(a: App) -> JsonDict:
    return {"id": a.id, "name": a.name, "type": a.type, "queue": a.queue,
            "tags": list(a.tags), "state": a.state, "priority": a.priority}


def compliance(inp: Inputs, params: Params) -> list[Recommendation]:
    """Steps 28-30: violations per app, and opt-in signals for excess containers."""
    out: list[Recommendation] = []
    hosts = {n.id: n.host for n in inp.nodes}
    for a in inp.apps:
        r = inp.rule_of.get(a.id)
        if r is None:
            continue
        by_node: dict[str, list[Container]] = {}
        for c in inp.containers_of.get(a.id, []):
            if not c.is_am:
                by_node.setdefault(c.node_id, []).append(c)
        found: list[JsonValue] = []
        excess: list[Container] = []
        for nid in sorted(by_node):
            cs = sorted(by_node[nid], key=lambda c: (c.started_time, c.id))
            if r.hosts and not in_hosts(r, nid, hosts.get(nid, nid.split(":")[0])):
                found.append({"type": "hosts", "step": 8, "node": nid, "containers": len(cs)})
            if r.tasks_maximum is not None and len(cs) > r.tasks_maximum:
                found.append({"type": "tasks_maximum", "step": 10, "node": nid,
                              "containers": len(cs), "limit": r.tasks_maximum})
                excess += cs[r.tasks_maximum:]
            if nid in inp.loads:
                for t in ac.hot(r, inp.loads[nid]):
                    ld = inp.loads[nid]
                    use = ld.cpu if t == "cpu_threshold" else ld.io
                    found.append({"type": t, "step": 11 if t == "cpu_threshold" else 12,
                                  "node": nid, "usage_percent": round(float(use or 0), 3),
                                  "threshold": getattr(r, t)})
        if not found:
            continue
        kinds = Counter(str(f["type"]) for f in found if isinstance(f, dict))
        summary = (f"{a.id} ({a.name}) breaks rule {r.name}: "
                   + ", ".join(f"{k} on {v} node(s)" for k, v in sorted(kinds.items())))
        e = Explanation("anacrac.compliance", summary, {"app": _app_json(a)},
                        {"violations": len(found)}, {"rule": _rule_json(r)})
        value: JsonDict = {"rule": r.name, "violations": found}
        out.append(Recommendation(Kind.ADVISE_APP_CONFIG, a.id, Advice.of(value), NAME, e))
        if params.signal_excess_containers:
            for c in excess:
                s = (f"{c.id}: container beyond tasks.maximum {r.tasks_maximum} of {a.id} on "
                     f"{c.node_id} (rule {r.name}): signal {params.signal}")
                ce = Explanation("anacrac.container_awareness.signal", s,
                                 {"app": a.id, "node": c.node_id, "started_time": c.started_time},
                                 {}, {"tasks_maximum": r.tasks_maximum})
                out.append(Recommendation(Kind.SIGNAL_CONTAINER, c.id,
                                          ContainerSignal(params.signal), NAME, ce,
                                          ContainerStatus(c.state, c.node_id)))
    return out


def container_sizes(inp: Inputs) -> list[Recommendation]:
    """Steps 13-16 (Eq 9-12): the next containers' size from the app's usage."""
    out: list[Recommendation] = []
    for a in inp.apps:
        r = inp.rule_of.get(a.id)
        if r is None or r.container_job_type is None:
            continue
        cs = [c for c in inp.containers_of.get(a.id, []) if not c.is_am]
        measured = [c for c in cs if c.usage is not None and c.usage.samples > 0]
        if not measured:
            continue
        k_mem, k_vc = Counter((c.allocated.memory_mb, c.allocated.vcores) for c in cs).most_common(
            1)[0][0]
        mem_n: dict[str, list[float]] = {}
        cpu_n: dict[str, list[float]] = {}
        for c in measured:
            assert c.usage is not None
            mem_n.setdefault(c.node_id, []).append(
                100.0 * c.usage.pmem_avg_mb / max(1, c.allocated.memory_mb))
            cpu_n.setdefault(c.node_id, []).append(
                c.usage.cpu_avg_percent / max(1, c.allocated.vcores))
        m = len(measured)
        u_mem = ac.app_average_usage(ac.app_total_usage(
            [ac.app_node_usage(v) for v in mem_n.values()]), m) or 0.0
        u_cpu = ac.app_average_usage(ac.app_total_usage(
            [ac.app_node_usage(v) for v in cpu_n.values()]), m) or 0.0
        new_mem, new_vc = k_mem, k_vc
        if r.container_job_type in ("MEMORY", "ALL"):
            new_mem = ac.adaptive_size(k_mem, u_mem, r.container_memory_threshold,
                                       r.container_memory_increment_mb)
        if r.container_job_type in ("CPU", "ALL"):
            new_vc = ac.adaptive_size(k_vc, u_cpu, r.container_cpu_threshold,
                                      r.container_cpu_increment)
        if (new_mem, new_vc) == (k_mem, k_vc):
            continue
        summary = (f"{a.id} ({a.name}): containers use {u_mem:.1f}% of their memory and "
                   f"{u_cpu:.1f}% of their vcores on average over {m}: size the next ones "
                   f"{new_mem} MiB/{new_vc} vcores (was {k_mem} MiB/{k_vc})")
        scores: JsonDict = {"u_at_memory_percent": round(u_mem, 3),
                            "u_at_cpu_percent": round(u_cpu, 3), "measured_containers": m}
        th: JsonDict = {"container_job_type": r.container_job_type,
                        "container_memory_threshold": r.container_memory_threshold,
                        "container_cpu_threshold": r.container_cpu_threshold,
                        "container_memory_increment_mb": r.container_memory_increment_mb,
                        "container_cpu_increment": r.container_cpu_increment, "rule": r.name}
        e = Explanation("anacrac.adaptive", summary, {"app": _app_json(a)}, scores, th)
        out.append(Recommendation(Kind.ADVISE_CONTAINER_SIZE, a.id,
                                  ContainerSize(new_mem, new_vc), NAME, e,
                                  ContainerSize(k_mem, k_vc)))
    return out


def _lever_ok(inp: Inputs, a: App) -> tuple[bool, str]:
    if inp.snap.scheduler_type != "capacityScheduler":
        return False, ""
    for q in inp.snap.queues:
        if q.is_leaf and a.queue in (q.path, q.name):
            return "fair" not in q.ordering_policy.lower(), q.ordering_policy
    return True, ""


def priorities(inp: Inputs, params: Params) -> tuple[list[Recommendation], dict[str, ac.Wait]]:
    """Steps 20-27: boosts for starving apps, restores once served; the next waits."""
    high = params.high_priority or inp.snap.max_app_priority or 10
    th_ms = int(params.wait_threshold_s * 1000)
    out: list[Recommendation] = []
    waits: dict[str, ac.Wait] = {}
    for a in inp.apps:
        pending = sum(r.num_containers for r in a.resource_requests
                      if r.resource_name == "*" and r.num_containers > 0)
        waiting = pending > 0 or (a.state == "ACCEPTED" and a.running_containers == 0)
        if a.state == "ACCEPTED" and a.running_containers == 0:
            first = a.started_time or inp.now
        else:
            first = inp.last_start.get(a.id) or inp.now
        step = ac.waiting_step(inp.waits.get(a.id), waiting, a.running_containers,
                               a.allocated.memory_mb, first, inp.now, a.priority, high, th_ms)
        waits[a.id] = step.wait
        if step.action == "keep" or not params.boost_waiting:
            continue
        ok, ordering = _lever_ok(inp, a)
        prev_boost = inp.waits[a.id].boosted_from if a.id in inp.waits else None
        target = high if step.action == "boost" else (prev_boost if prev_boost is not None
                                                      else a.priority)
        if not ok or a.priority == target:
            continue
        if step.action == "boost":
            summary = (f"{a.id} ({a.name}) has waited {step.waited_ms / 1000:.0f} s for "
                       f"{pending or 1} container(s) (>= {params.wait_threshold_s:g} s): "
                       f"priority HIGH {high} (was {a.priority})")
        else:
            summary = (f"{a.id} ({a.name}) got a container (or no longer waits): restore "
                       f"priority {target} (was {a.priority})")
        inputs: JsonDict = {"app": _app_json(a), "pending_containers": pending,
                            "queue_ordering_policy": ordering}
        scores: JsonDict = {"waited_s": round(step.waited_ms / 1000.0, 3),
                            "served": step.served}
        th: JsonDict = {"wait_threshold_s": params.wait_threshold_s, "high_priority": high}
        e = Explanation(f"anacrac.waiting_time.{step.action}", summary, inputs, scores, th)
        out.append(Recommendation(Kind.SET_APP_PRIORITY, a.id, Priority(target), NAME, e,
                                  Priority(a.priority)))
    return out, waits


def advise(snapshot: Snapshot, state: State, params: Params,
           reads: Reads = NO_READS) -> PolicyResult[State]:
    """ANACRAC's recommendations for ``snapshot`` and the next state."""
    inp = build_inputs(snapshot, state, params.rules)
    recs = mapping_rules(params)
    recs += partition_caps(inp, params)
    recs += labels_and_queues(inp, params)
    recs += compliance(inp, params)
    recs += container_sizes(inp)
    prio, waits = priorities(inp, params)
    recs += prio
    return PolicyResult(tuple(recs), State(waits, inp.counters, {}, snapshot.taken_at))
