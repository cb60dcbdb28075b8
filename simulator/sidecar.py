"""The sidecar mode: the advisor's own daemon beside the simulated RM.

The same ``Advisor`` the ``run`` command builds (engine, classifier, policies,
actuator and its guardrails) runs every ``sense.interval_s`` of simulated
time. It senses :func:`~yarn_advisor.simulator.snapshot.snapshot` of the
simulated RM and writes through the advisor's own writer over the simulated
RM's levers (:class:`~yarn_advisor.simulator.levers.SimLevers`), so its writes
change the simulation exactly where the real levers would
change the RM, one cycle late as in production. Guardrail windows follow the
simulated clock. The journal and the classifier's checkpoint go to a scratch
directory (a copy of the configured checkpoint, when there is one).

What the what-if assumes: enforce mode (the top-level ``dry_run`` is set to
false; a policy whose own ``dry_run`` is true stays advisory, as it would in
production).

The ``plugin`` mode (:func:`run_plugin`) is the same daemon with precision mode
on: its actuator also publishes the decision table each cycle, and the
simulated RM applies it through :class:`~yarn_advisor.simulator.plugin.SimPlugin`
(the jar's semantics and staleness) on top of the sidecar's levers. Only the
CapacityScheduler calls the plug-in (as in YARN 3.4.2, where only its
``RegularContainerAllocator`` calls ``precheckNode``); on another scheduler the
table is published and nothing applies it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.settings import load_config, with_overrides
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.sense import SourceStat
from yarn_advisor.advisor.loop.wiring import build_advisor
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Payload
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.simulator.levers import SimLevers
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.plugin import SimPlugin
from yarn_advisor.simulator.schedulers.base import Scheduler
from yarn_advisor.simulator.schedulers.capacity import CapacityScheduler
from yarn_advisor.simulator.simulation import Progress, Simulation
from yarn_advisor.simulator.snapshot import snapshot
from yarn_advisor.simulator.spec import Workload


class SimSensor:
    """The daemon's ``Sensor`` over a simulation: every source answers, always."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.stats: dict[str, SourceStat] = {}

    def sense(self, now_ms: int) -> Snapshot:
        return snapshot(self.sim)


@dataclass
class AdvisorTally:
    """What the advisor did along a sidecar run."""

    cycles: int = 0
    skipped: int = 0
    actions: dict[str, int] = field(default_factory=dict)  # "policy kind outcome" -> count
    blocked: dict[str, int] = field(default_factory=dict)  # guardrail reason -> count
    # every write sent: (simulated ms, kind, target, value)
    sent: list[tuple[int, Kind, str, Payload]] = field(default_factory=list)

    plugin: dict[str, object] | None = None  # plugin mode: tables taken up, vetoes by reason
    trips: dict[str, int] = field(default_factory=dict)  # the harm watchdog's: "policy signal"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"cycles": self.cycles, "skipped": self.skipped,
                                  "actions": self.actions, "blocked": self.blocked}
        if self.plugin is not None:
            out["plugin"] = self.plugin
        if self.trips:
            out["trips"] = self.trips
        return out


def sidecar_config(cfg: AdvisorConfig | None, state_dir: str,
                   checkpoint: str | None, precision: bool = False) -> AdvisorConfig:
    """``cfg`` (or the defaults) in enforce mode, without the HTTP server, with its
    journal under ``state_dir`` and the classifier's checkpoint at ``checkpoint``
    (a scratch copy: a simulation never writes the user's files; None: no
    checkpoint, the model lives for one run); ``precision``: with precision mode on
    (no table file: the simulated plug-in is the one reader)."""
    base = cfg if cfg is not None else load_config()
    over: dict[str, object] = {
        "dry_run": False, "server": {"enabled": False}, "state_dir": state_dir,
        "actuator": {"journal_path": None}, "classifier": {"checkpoint": checkpoint}}
    over["precision"] = {"enabled": True, "table_file": None} if precision else \
        {"enabled": False}
    return with_overrides(base, over)


def run_plugin(wl: Workload, scheduler: str | Scheduler | None = None,
               cfg: AdvisorConfig | None = None, progress: Progress | None = None,
               sample_ms: int = 0, warm: int = 0) -> tuple[Report, AdvisorTally, Simulation]:
    """:func:`run_sidecar` with precision mode on: the ``plugin`` mode (its decision
    kinds from ``cfg``'s ``precision.decisions``, every kind by default)."""
    return run_sidecar(wl, scheduler, cfg, progress, sample_ms, warm, precision=True)


def run_sidecar(wl: Workload, scheduler: str | Scheduler | None = None,
                cfg: AdvisorConfig | None = None, progress: Progress | None = None,
                sample_ms: int = 0, warm: int = 0,
                precision: bool = False) -> tuple[Report, AdvisorTally, Simulation]:
    """Run ``wl`` with the advisor beside the scheduler: the report, what the advisor
    did, and the simulation (for its timeline).

    The classifier starts from the configuration's checkpoint when it names one
    (a copy), else empty. ``warm`` runs of the same workload come first, unmeasured,
    each on a fresh simulated cluster with a fresh journal: the checkpoint carries
    what they taught the classifier, as it carries a production cluster's history
    across restarts (jobs recur). ``warm`` 0 and no checkpoint: every job is new.
    """
    with tempfile.TemporaryDirectory(prefix="yarn-advisor-sidecar-") as scratch:
        checkpoint = Path(scratch) / "classifier.json"
        given = cfg.classifier.checkpoint if cfg is not None else None
        if given and Path(given).is_file():
            shutil.copyfile(given, checkpoint)
        for i in range(warm):
            _one_run(wl, scheduler, sidecar_config(cfg, f"{scratch}/warm{i}", str(checkpoint),
                                                   precision), None, sample_ms)
        # the daemon checkpoints its model every cycle; with nothing to start from and
        # no run after this one, that is only cost (16 % of the first 400 SWIM jobs)
        carried = checkpoint.is_file() or warm > 0
        return _one_run(wl, scheduler, sidecar_config(cfg, f"{scratch}/run", str(checkpoint),
                                                      precision),
                        progress, sample_ms, persist=carried)


def _one_run(wl: Workload, scheduler: str | Scheduler | None, conf: AdvisorConfig,
             progress: Progress | None, sample_ms: int, persist: bool = True
             ) -> tuple[Report, AdvisorTally, Simulation]:
    """One measured (or warm-up) run; ``persist`` False: the classifier starts empty
    and keeps no checkpoint (nothing to start from, no run after this one)."""
    mode = "plugin" if conf.precision.enabled else "sidecar"
    sim = Simulation(wl, scheduler=scheduler, mode=mode, sample_ms=sample_ms)
    levers = SimLevers(sim, conf.actuator.overcommit_timeout_ms)
    advisor = build_advisor(conf, SimSensor(sim), Writer(levers), persist=persist,
                            snapshot_clock=True)
    plugin = None
    if advisor.actuator.publisher is not None:
        plugin = SimPlugin(sim)
        advisor.actuator.publisher.sinks.append(plugin)
        if isinstance(sim.scheduler, CapacityScheduler):
            sim.scheduler.plugin = plugin
    tally = AdvisorTally()
    interval_ms = max(1000, int(conf.sense.interval_s * 1000))

    def cycle(s: Simulation) -> None:
        _count(tally, advisor.run_once(s.cluster_ts + s.now))

    sim.every(interval_ms, cycle)
    report = sim.run(progress=progress)
    tally.blocked = {b.value: n for b, n in advisor.actuator.blocked.items()}
    tally.trips = {f"{p} {sig.value}": n for (p, sig), n in sorted(advisor.actuator.trips.items())}
    tally.sent = levers.sent
    if plugin is not None:
        tally.plugin = {"published": plugin.published, "tables": plugin.polls_applied,
                        "vetoes": dict(sorted(plugin.vetoes.items()))}
    return report, tally, sim


def _count(tally: AdvisorTally, report: CycleReport) -> None:
    tally.cycles += 1
    if report.outcome != "ok":
        tally.skipped += 1
    for (kind, policy, outcome), n in report.actions.items():
        key = f"{policy} {kind.value} {outcome}"
        tally.actions[key] = tally.actions.get(key, 0) + n
