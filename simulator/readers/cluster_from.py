"""The cluster as it is: nodes, racks, labels and queues from a live RM or a recording.

``--cluster-from URL_OR_RECORDING`` takes one snapshot with the advisor's own
sensor: from a live RM (read only: the sensor never writes) or from the last
cycle of a recording (``yarn-advisor record``). What the simulation takes:

- nodes in state RUNNING, grouped by rack, first node label and schedulable
  size (``totalResource``), each with its host name;
- the scheduler's type, and its leaf queues with their absolute capacity and
  maximum capacity (percent of the cluster), accessible node labels, default
  node label and ``maximum-am-resource-percent`` (the queue's own, else the
  scheduler's; read from scheduler-conf where the RM serves it);
- ``node-locality-delay`` and ``yarn.cluster.max-application-priority``;
- the scheduler's minimum and maximum allocation (``yarn.scheduler.minimum-`` and
  ``maximum-allocation-mb`` / ``-vcores`` from ``/conf``; YARN's defaults 1024 MB
  and 1 vcore, and the largest node, where the RM or the recording does not say).

Not taken: queue ordering policies other than FIFO (the simulated
CapacityScheduler orders FIFO by priority), the hierarchy above the leaves
(each leaf keeps its absolute share), and measured use (the snapshot's
utilization is of that instant, not of the history).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from yarn_advisor.advisor.engine.settings import load_config, with_overrides
from yarn_advisor.advisor.loop.replaying import replay_config
from yarn_advisor.advisor.loop.sense import SenseError
from yarn_advisor.advisor.loop.wiring import build_sensor
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.connectors.replay import RecordingError, open_recording, replaying
from yarn_advisor.simulator.fields import WorkloadError
from yarn_advisor.simulator.spec import (
    Cluster,
    Hdfs,
    NodeGroup,
    QueueSpec,
    Res,
    SchedulerSpec,
    Workload,
)

SCHEDULER_TYPES = {"capacityScheduler": "capacity", "fairScheduler": "fair",
                   "fifoScheduler": "fifo"}
CS = "yarn.scheduler.capacity."
MAX_PRIORITY = 10_000  # a larger configured value is taken as this (YARN's int, bounded)
ALLOCATION_KEYS = {  # RM settings the scheduler rounds asks with (read from /conf)
    "min_mb": "yarn.scheduler.minimum-allocation-mb",
    "min_vcores": "yarn.scheduler.minimum-allocation-vcores",
    "max_mb": "yarn.scheduler.maximum-allocation-mb",
    "max_vcores": "yarn.scheduler.maximum-allocation-vcores",
}
CONF_KEYS = ("yarn.cluster.max-application-priority", *ALLOCATION_KEYS.values())


def on_cluster(wl: Workload, source: str, scheduler: str | None = None) -> Workload:
    """``wl`` run on the cluster at ``source`` (with ``scheduler`` instead of the
    cluster's own, if given). Jobs of a queue the cluster lacks, or asking more
    than its largest node, are errors (the RM would reject them)."""
    cluster, spec = cluster_of(snapshot_from(source), source)
    cluster = replace(cluster, timing=wl.cluster.timing)  # the history's, not the snapshot's
    if scheduler:
        spec = replace(spec, type=scheduler)
    names = {q.name for q in spec.queues}
    big = cluster.maximum_allocation
    problems = [f"{wl.source or wl.name}: job {j.id}: queue {j.queue!r} is not a leaf queue "
                f"of {source} ({', '.join(sorted(names))})" for j in wl.jobs
                if j.queue not in names]
    problems += [f"{wl.source or wl.name}: job {j.id}: its {what} ask does not fit the largest "
                 f"node of {source} <{big.memory_mb} MB, {big.vcores} vcores>"
                 for j in wl.jobs
                 for what, r in (("am", j.am), ("map", j.maps and j.maps.request),
                                 ("reduce", j.reduces and j.reduces.request))
                 if r and (r.memory_mb > big.memory_mb or r.vcores > big.vcores)]
    if problems:
        raise WorkloadError(problems)
    return replace(wl, cluster=cluster, scheduler=spec)


def snapshot_from(source: str) -> Snapshot:
    """One snapshot of the cluster at ``source``: an RM URL, or a recording directory
    (its last cycle). Raises :class:`WorkloadError` naming the source."""
    quiet = logging.getLogger("yarn_advisor")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # a recording's optional sources not recorded: no matter
    try:
        if source.startswith(("http://", "https://")):
            cfg = load_config(None, {"rm": {"urls": [source]}, "dry_run": True,
                                     "state_dir": tempfile.gettempdir(),
                                     "sense": {"rm_conf_keys": list(CONF_KEYS)}})
            return build_sensor(cfg).sense(int(time.time() * 1000))
        recording = open_recording(Path(source))
        if not recording.cycles:
            raise WorkloadError([f"{source}: the recording has no cycle"])
        cfg = replay_config(recording, load_config(None), tempfile.gettempdir())
        cfg = with_overrides(cfg, {"rm": {"retry": {"deadline_s": 5.0}}})
        last = recording.cycles[-1]
        with replaying(last):
            return build_sensor(cfg).sense(last.taken_at)
    except (RecordingError, OSError) as exc:
        raise WorkloadError([f"{source}: not a recording or an RM URL: {exc}"]) from None
    except SenseError as exc:
        raise WorkloadError([f"{source}: the cluster could not be read: {exc}"]) from None
    finally:
        quiet.setLevel(level)


def cluster_of(snap: Snapshot, source: str) -> tuple[Cluster, SchedulerSpec]:
    """The simulated cluster and scheduler of ``snap`` (see the module docstring)."""
    groups: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
    for n in snap.nodes:
        if n.state == "RUNNING" and n.total.memory_mb > 0 and n.total.vcores > 0:
            label = n.labels[0] if n.labels else ""
            groups[n.rack or "/default-rack", label, n.total.memory_mb, n.total.vcores].append(
                n.host or n.id.partition(":")[0])
    if not groups:
        raise WorkloadError([f"{source}: the cluster has no running node"])
    node_groups = tuple(NodeGroup(len(hosts), mem, vcores, rack=rack, label=label,
                                  hosts=tuple(sorted(hosts)))
                        for (rack, label, mem, vcores), hosts in sorted(groups.items()))
    biggest = max(node_groups, key=lambda g: (g.memory_mb, g.vcores))
    labels = tuple(sorted({g.label for g in node_groups if g.label}))
    rm = {k: _opt_float(snap.rm_conf.get(key)) for k, key in ALLOCATION_KEYS.items()}

    def bound(key: str, default: int, top: int) -> int:
        value = rm[key]
        return default if value is None or value < 1 else int(min(value, top))

    cluster = Cluster(
        groups=node_groups, hdfs=Hdfs(), labels=labels,
        minimum_allocation=Res(bound("min_mb", 1024, biggest.memory_mb),
                               bound("min_vcores", 1, biggest.vcores)),
        maximum_allocation=Res(bound("max_mb", biggest.memory_mb, biggest.memory_mb),
                               bound("max_vcores", biggest.vcores, biggest.vcores)))
    conf = snap.scheduler_conf
    am_percent = _float(conf.get(CS + "maximum-am-resource-percent"), 0.1)
    queues = tuple(
        QueueSpec(q.path.removeprefix("root."), capacity=q.absolute_capacity,
                  maximum_capacity=q.absolute_max_capacity or 100.0,
                  maximum_am_resource_percent=_opt_float(
                      conf.get(f"{CS}{q.path}.maximum-am-resource-percent")),
                  accessible_node_labels=tuple(x for x in q.node_labels if x not in ("*", "")),
                  default_node_label=conf.get(f"{CS}{q.path}.default-node-label-expression",
                                              ""))
        for q in snap.queues if q.is_leaf)
    if not queues:
        raise WorkloadError([f"{source}: the scheduler has no leaf queue"])
    scheduler = SchedulerSpec(
        type=SCHEDULER_TYPES.get(snap.scheduler_type, "capacity"), queues=queues,
        node_locality_delay=int(_float(conf.get(CS + "node-locality-delay"), 40)),
        maximum_am_resource_percent=am_percent,
        max_application_priority=int(min(MAX_PRIORITY, max(0.0, _float(
            snap.rm_conf.get("yarn.cluster.max-application-priority"), 0)))))
    return cluster, scheduler


def _float(raw: str | None, default: float) -> float:
    value = _opt_float(raw)
    return default if value is None else value


def _opt_float(raw: str | None) -> float | None:
    """A configured number, or None if absent or not a finite number of sane size."""
    if raw is None or len(raw) > 32:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if abs(value) < 1e9 else None
