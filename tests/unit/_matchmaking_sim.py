"""The Matchmaking paper's scripted-heartbeat comparison: a test oracle, not production code.

Replays a *scripted* heartbeat sequence against three map-task assignment
rules so the matchmaking technique can be compared with delay scheduling at a
given ``D`` (and Hadoop's FIFO):

* ``fifo``: the first job only; its local tasks while slots are free, else
  one non-local task and stop (section II.A).
* ``delay`` (Zaharia et al.): jobs in order; a job without a local task is
  skipped and its wait starts; once it has waited ``>= D`` time units it may
  launch non-local tasks (several per heartbeat, as the paper notes); a local
  launch resets its wait. ``D = 0`` disables the delay.
* ``matchmaking`` (Tables 1-2): any job's local task first; otherwise the
  node's locality marker decides (see ``matchmaking.core``). A miss after
  local assignments in the same heartbeat counts as a first miss (Table 1).

Wait of a task = its assignment time minus its job's arrival time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from yarn_advisor.advisor.policies.matchmaking.core import Marker, locality_rate

Algorithm = Literal["matchmaking", "delay", "fifo"]


@dataclass(frozen=True)
class SimJob:
    """A job: arrival time and, per map task, the nodes holding its input."""

    id: str
    arrival: float
    tasks: tuple[frozenset[str], ...]


@dataclass(frozen=True)
class Heartbeat:
    """A node reporting ``free_slots`` free map slots at ``time``."""

    time: float
    node: str
    free_slots: int = 1


@dataclass(frozen=True)
class Assignment:
    """One map task launched on a node."""

    time: float
    node: str
    job: str
    task: int
    local: bool
    wait: float


@dataclass(frozen=True)
class SimResult:
    """Outcome of one simulated rule on one script."""

    algorithm: str
    assignments: tuple[Assignment, ...]
    unassigned: int
    locality_rate: float | None
    mean_wait: float | None

    @property
    def local(self) -> int:
        """Number of local assignments (``l`` of Eq 1)."""
        return sum(a.local for a in self.assignments)


@dataclass
class _Job:
    spec: SimJob
    left: list[int] = field(default_factory=list)
    wait_start: float | None = None

    def local_task(self, node: str) -> int | None:
        for t in self.left:
            if node in self.spec.tasks[t]:
                return t
        return None


def simulate(
    algorithm: Algorithm,
    jobs: Sequence[SimJob],
    heartbeats: Iterable[Heartbeat],
    delay: float = 0.0,
) -> SimResult:
    """Run one rule over the heartbeat script (heartbeats in time order)."""
    pending = sorted(jobs, key=lambda j: (j.arrival, j.id))
    queue: list[_Job] = []
    markers: dict[str, Marker] = {}
    out: list[Assignment] = []
    for hb in heartbeats:
        while pending and pending[0].arrival <= hb.time:
            spec = pending.pop(0)
            queue.append(_Job(spec, list(range(len(spec.tasks)))))
            markers = {}  # Table 2 (only matchmaking reads markers)
        live = [j for j in queue if j.left]
        if algorithm == "matchmaking":
            _matchmaking(hb, live, markers, out)
        elif algorithm == "delay":
            _delay(hb, live, delay, out)
        else:
            _fifo(hb, live, out)
    left = sum(len(j.left) for j in queue) + sum(len(j.tasks) for j in pending)
    n = len(out)
    return SimResult(
        algorithm,
        tuple(out),
        left,
        locality_rate(sum(a.local for a in out), n),
        sum(a.wait for a in out) / n if n else None,
    )


def compare_with_delay(
    jobs: Sequence[SimJob], heartbeats: Sequence[Heartbeat], delay: float
) -> dict[str, SimResult]:
    """Matchmaking vs delay scheduling at ``delay`` (and FIFO) on one script."""
    return {
        "matchmaking": simulate("matchmaking", jobs, heartbeats),
        "delay": simulate("delay", jobs, heartbeats, delay),
        "fifo": simulate("fifo", jobs, heartbeats),
    }


def _launch(hb: Heartbeat, job: _Job, task: int, local: bool, out: list[Assignment]) -> None:
    job.left.remove(task)
    out.append(Assignment(hb.time, hb.node, job.spec.id, task, local, hb.time - job.spec.arrival))


def _matchmaking(
    hb: Heartbeat, live: list[_Job], markers: dict[str, Marker], out: list[Assignment]
) -> None:
    s = hb.free_slots
    while s > 0:
        found = False
        for job in live:
            t = job.local_task(hb.node) if job.left else None
            if t is not None:
                _launch(hb, job, t, True, out)
                m = markers.get(hb.node)
                markers[hb.node] = 1 if m is None else m + 1
                s -= 1
                found = True
                break
        if found:
            continue
        if markers.get(hb.node) == 0:
            first = next((j for j in live if j.left), None)
            if first is not None:
                _launch(hb, first, first.left[0], False, out)
        else:
            markers[hb.node] = 0
        return


def _delay(hb: Heartbeat, live: list[_Job], delay: float, out: list[Assignment]) -> None:
    s = hb.free_slots
    while s > 0:
        launched = False
        for job in live:
            if not job.left:
                continue
            t = job.local_task(hb.node)
            if t is not None:
                _launch(hb, job, t, True, out)
                job.wait_start = None
                launched = True
                break
            if job.wait_start is None:
                job.wait_start = hb.time
            if hb.time - job.wait_start >= delay:
                _launch(hb, job, job.left[0], False, out)
                launched = True
                break
        if not launched:
            return
        s -= 1


def _fifo(hb: Heartbeat, live: list[_Job], out: list[Assignment]) -> None:
    s = hb.free_slots
    while s > 0:
        job = next((j for j in live if j.left), None)
        if job is None:
            return
        t = job.local_task(hb.node)
        if t is None:
            _launch(hb, job, job.left[0], False, out)
            return
        _launch(hb, job, t, True, out)
        s -= 1
