"""What the chaos tests share: an advisor that writes every enforce cycle, its
configuration, the cycle loop in a thread, and killing or restarting the mini
cluster's daemons (the session's cluster, restored as found).

Every enforce cycle must write to the real RM, or a fault could never meet a write.
An idle mini cluster gives the policies nothing to change, so each cycle's real
decision gets one more recommendation: the CapacityScheduler's node-locality
delay, toggled between two values (a real, cheap, reversible scheduler-conf
write). Everything else (sense, guardrails, journal, write, rollback) is the
advisor's own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from yarnmini import MiniCluster, classpath

from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.decide import Decision
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop import daemon
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.wiring import build_live_advisor, build_sensor
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ConfUpdate
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.rm.write import RMLevers

DELAY = "yarn.scheduler.capacity.node-locality-delay"
TOGGLE = ("30", "50")
ORIGINAL_DELAY = "40"


def toggle_for(snapshot: Snapshot) -> Recommendation:
    """The extra write of a cycle: the delay its RM does not have now."""
    current = snapshot.scheduler_conf.get(DELAY)
    value = TOGGLE[1] if current == TOGGLE[0] else TOGGLE[0]
    return Recommendation(Kind.UPDATE_SCHEDULER_CONF, "scheduler", ConfUpdate.of({DELAY: value}),
                          "chaos", Explanation("chaos.toggle", "a write every cycle"), None)


def writing_decide(real: Callable[..., Decision]) -> Callable[..., Decision]:
    """The real decide step, plus the toggle (only when the scheduler conf was read)."""
    def decide(snapshot: Snapshot, *args: Any, **kw: Any) -> Decision:
        decision = real(snapshot, *args, **kw)
        if DELAY not in snapshot.scheduler_conf:
            return decision
        return replace(decision, recommendations=(*decision.recommendations,
                                                  toggle_for(snapshot)))
    return decide


def install_writing_decide() -> None:
    """Make every cycle of this process write (see the module docstring)."""
    daemon.decide = writing_decide(daemon.decide)  # type: ignore[assignment]


def chaos_raw(urls: list[str], state_dir: Path, enforce: bool = True,
              **extra: Any) -> dict[str, Any]:
    """The configuration of a chaos advisor (a dict, to write as YAML or load)."""
    raw: dict[str, Any] = {
        "rm": {"urls": urls, "timeout": {"connect_s": 1.0, "read_s": 2.0, "total_s": 4.0},
               "retry": {"attempts": 2, "base_delay_s": 0.05, "max_delay_s": 0.2,
                         "deadline_s": 2.0}},
        "sense": {"mapreduce": {"enabled": False}, "rm_jmx": False},
        "dry_run": not enforce,
        "state_dir": str(state_dir),
        "classifier": {"enabled": False},
        "actuator": {"cooldown_s": 0, "max_actions_per_target": 100_000,
                     "target_window_s": 1.0, "rollback_hold_s": 0},
    }
    for key, value in extra.items():
        raw[key] = value
    return raw


def chaos_config(urls: list[str], state_dir: Path, enforce: bool = True,
                 **extra: Any) -> AdvisorConfig:
    return load_config(None, chaos_raw(urls, state_dir, enforce, **extra))


def live_advisor(cfg: AdvisorConfig) -> Advisor:
    return build_live_advisor(cfg)


@dataclass
class CycleLoop:
    """``advisor.run_once`` every ``interval_s`` in a thread; every report kept with the
    monotonic time it ended."""

    advisor: Advisor
    interval_s: float = 0.5
    reports: list[tuple[float, CycleReport]] = field(default_factory=list)
    crashed: list[BaseException] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> CycleLoop:
        self._thread = threading.Thread(target=self._run, daemon=True, name="cycles")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                report = self.advisor.run_once()
            except BaseException as exc:  # the point of the test: this never happens
                self.crashed.append(exc)
                return
            self.reports.append((time.monotonic(), report))
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def since(self, t: float) -> list[CycleReport]:
        return [r for at, r in list(self.reports) if at >= t]

    def first_ok_after(self, t: float, timeout: float = 120) -> tuple[float, CycleReport]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, r in list(self.reports):
                if at >= t and r.outcome == "ok":
                    return at, r
            time.sleep(0.1)
        raise AssertionError(f"no ok cycle within {timeout}s")

    def wait_cycles(self, n: int, timeout: float = 60) -> None:
        target = len(self.reports) + n
        deadline = time.monotonic() + timeout
        while len(self.reports) < target:
            if time.monotonic() > deadline or self.crashed:
                raise AssertionError(f"cycles stalled: {self.crashed}")
            time.sleep(0.05)


# --- the mini cluster's daemons ---------------------------------------------------
def get_json(url: str, timeout: float = 5) -> Any:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)


def rm_state(rm_url: str) -> tuple[str | None, int]:
    """(haState, RUNNING nodes) as the RM says, (None, 0) when it does not answer."""
    try:
        info = get_json(f"{rm_url}/ws/v1/cluster/info")["clusterInfo"]
        nodes = get_json(f"{rm_url}/ws/v1/cluster/nodes")["nodes"] or {}
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0
    return str(info["haState"]), sum(n["state"] == "RUNNING" for n in nodes.get("node", []))


def daemon_proc(cluster: MiniCluster, name: str) -> subprocess.Popen[bytes]:
    """The cluster's process of daemon ``name`` (``rm``, ``nm0``, ``nm1``, ``jhs``)."""
    marker = f"/logs/{name}"
    for p in cluster.procs:
        args = p.args if isinstance(p.args, list) else [str(p.args)]
        if any(str(a).endswith(marker) for a in args):
            return p
    raise LookupError(f"no daemon {name} in the cluster")


def kill9(cluster: MiniCluster, name: str) -> float:
    """SIGKILL one daemon (its whole process group); returns when it is gone."""
    p = daemon_proc(cluster, name)
    t = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    p.wait(30)
    cluster.procs.remove(p)
    return t


def respawn(cluster: MiniCluster, name: str, cls: str, heap: str) -> None:
    """Start daemon ``name`` again with its own configuration (same ports)."""
    cluster._spawn(name, cls, cluster.workdir / "conf" / name, classpath(), heap=heap)


def wait_rm(rm_url: str, nodes: int, timeout: float = 180) -> float:
    """Wait until the RM is ACTIVE with ``nodes`` RUNNING nodes; the monotonic time."""
    deadline = time.monotonic() + timeout
    last: tuple[str | None, int] = (None, 0)
    while time.monotonic() < deadline:
        last = rm_state(rm_url)
        if last == ("ACTIVE", nodes):
            return time.monotonic()
        time.sleep(0.25)
    raise AssertionError(f"RM not ACTIVE with {nodes} nodes after {timeout}s: {last}")


def restore_delay(rm_url: str) -> None:
    """Put the node-locality delay back as the cluster had it (a failed test's leftovers)."""
    rm = build_sensor(load_config(None, {"rm": {"urls": [rm_url]}})).connectors.rm
    Writer(RMLevers(rm)).apply(Kind.UPDATE_SCHEDULER_CONF, "scheduler",
                               ConfUpdate.of({DELAY: ORIGINAL_DELAY}))


def scheduler_delay(rm_url: str) -> str:
    body = get_json(f"{rm_url}/ws/v1/cluster/scheduler-conf?user.name=yarn-advisor")
    return {p["name"]: p["value"] for p in body["property"]}[DELAY]
