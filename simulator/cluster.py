"""The simulated nodes: schedulable and real capacity, racks, HDFS replicas.

A :class:`SimNode` is mutable run state. ``total_*`` is what the RM may
allocate (changed by ``update_node_resource``); ``real_*`` is the hardware,
against which measured use is checked (contention). ``alloc_*`` is what the
scheduler has handed out; ``use_*`` what the running containers consume.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from yarn_advisor.simulator.spec import Cluster, Hdfs

if TYPE_CHECKING:
    from yarn_advisor.simulator.apps import Reservation, SimContainer

NM_PORT = 45454
NM_HTTP_PORT = 8042


class SimNode:
    """One NodeManager."""

    __slots__ = (
        "aggregate_node_local",
        "alloc_mem",
        "alloc_vc",
        "completed",
        "containers",
        "cpu_factor",
        "hb_armed",
        "hb_phase",
        "host",
        "id",
        "index",
        "label",
        "overcommit_deadline",
        "rack",
        "real_cpu",
        "real_mem",
        "reserved",
        "state",
        "tags",
        "total_mem",
        "total_vc",
        "use_cpu",
        "use_mem",
    )

    def __init__(self, index: int, host: str, rack: str, memory_mb: int, vcores: int,
                 real_mem: int, real_cpu: float, label: str, tags: frozenset[str]) -> None:
        self.index = index
        self.host = host
        self.id = f"{host}:{NM_PORT}"
        self.rack = rack
        self.total_mem = memory_mb
        self.total_vc = vcores
        self.real_mem = real_mem
        self.real_cpu = real_cpu
        self.label = label
        self.tags = tags
        self.state = "RUNNING"
        self.alloc_mem = 0
        self.alloc_vc = 0
        self.use_mem = 0
        self.use_cpu = 0.0
        self.cpu_factor = 1.0
        self.containers: dict[str, SimContainer] = {}
        self.completed: list[SimContainer] = []  # finished, reported at the next heartbeat
        self.reserved: Reservation | None = None
        self.hb_phase = 0
        self.hb_armed = False
        self.aggregate_node_local = 0
        self.overcommit_deadline = -1  # ms; -1: no overcommit timeout ever set

    @property
    def free_mem(self) -> int:
        return self.total_mem - self.alloc_mem

    @property
    def free_vc(self) -> int:
        return self.total_vc - self.alloc_vc

    @property
    def http_address(self) -> str:
        return f"{self.host}:{NM_HTTP_PORT}"

    def __repr__(self) -> str:
        return (f"SimNode({self.id}, {self.alloc_mem}/{self.total_mem} MB, "
                f"{self.alloc_vc}/{self.total_vc} vcores)")


def build_nodes(cluster: Cluster, heartbeat_ms: int) -> list[SimNode]:
    """The nodes of ``cluster``, named ``node0001...``, heartbeats spread evenly
    over one interval (node i at ``i * interval / N``)."""
    nodes: list[SimNode] = []
    count = cluster.node_count
    for group in cluster.groups:
        for k in range(group.count):
            i = len(nodes)
            if group.rack:
                rack = group.rack if group.rack.startswith("/") else f"/{group.rack}"
            elif cluster.nodes_per_rack > 0:
                rack = f"/rack{i // cluster.nodes_per_rack + 1:02d}"
            else:
                rack = "/default-rack"
            host = group.hosts[k] if k < len(group.hosts) else f"node{i + 1:04d}"
            node = SimNode(
                i, host, rack, group.memory_mb, group.vcores,
                group.real_memory_mb or group.memory_mb, group.real_cpu or float(group.vcores),
                group.label, frozenset(group.tags))
            node.hb_phase = (i * heartbeat_ms) // max(count, 1)
            nodes.append(node)
    return nodes


class BlockMap:
    """Where each HDFS block's replicas are: block id -> node indices.

    Pool blocks (ids ``0..pool-1``) are placed at start; a map that reads a
    fresh block gets one placed by :meth:`new_block`.
    """

    def __init__(self, nodes: list[SimNode], hdfs: Hdfs, rng: random.Random) -> None:
        self.nodes = nodes
        self.hdfs = hdfs
        self.rng = rng
        self.replicas: list[tuple[int, ...]] = []
        self._racks: dict[str, list[int]] = {}
        for n in nodes:
            self._racks.setdefault(n.rack, []).append(n.index)
        # every rack but one, in rack order: new_block draws a block's second rack here
        # (a list built per block was 5 % of a 1000-job FB-2010 sidecar run's CPU)
        self._other_racks = {r: [x for x in self._racks if x != r] for r in self._racks}
        if hdfs.pool_blocks:
            if hdfs.placement == "even":
                self._place_even(hdfs.pool_blocks)
            else:
                for _ in range(hdfs.pool_blocks):
                    self.new_block()

    def _place_even(self, blocks: int) -> None:
        """Round-robin over nodes, so every node holds about the same number of
        replicas and no block has two replicas on one node (Matchmaking Sec. IV-A)."""
        n = len(self.nodes)
        r = min(self.hdfs.replication, n)
        order = list(range(n))
        self.rng.shuffle(order)
        cursor = 0
        for _ in range(blocks):
            chosen: list[int] = []
            while len(chosen) < r:
                cand = order[cursor % n]
                cursor += 1
                if cand not in chosen:
                    chosen.append(cand)
            self.replicas.append(tuple(chosen))

    def new_block(self) -> int:
        """Place one block by HDFS's default policy; returns its id."""
        n = len(self.nodes)
        r = min(self.hdfs.replication, n)
        first = self.rng.randrange(n)
        chosen = [first]
        if r >= 2:
            other_racks = self._other_racks[self.nodes[first].rack]
            if other_racks:
                rack = self.rng.choice(other_racks)
                second = self.rng.choice(self._racks[rack])
            else:
                second = self._other(chosen, self._racks[self.nodes[first].rack])
            chosen.append(second)
        if r >= 3:
            same = [x for x in self._racks[self.nodes[chosen[1]].rack] if x not in chosen]
            chosen.append(self.rng.choice(same) if same else self._other(chosen, range(n)))
        while len(chosen) < r:
            chosen.append(self._other(chosen, range(n)))
        self.replicas.append(tuple(chosen))
        return len(self.replicas) - 1

    def _other(self, chosen: list[int], pool: range | list[int]) -> int:
        candidates = [x for x in pool if x not in chosen]
        if not candidates:
            candidates = [x for x in range(len(self.nodes)) if x not in chosen]
        return self.rng.choice(candidates)

    def pool_block(self) -> int:
        """A pool block drawn uniformly (popularity is uniform in Matchmaking)."""
        return self.rng.randrange(self.hdfs.pool_blocks)
