"""Run the advisor on a recording: the real connectors against recorded answers.

A replay is always dry-run and keeps its state (the actuator's journal) in a
temporary directory, never in ``state_dir``, removed with the advisor; its clock
is each recorded snapshot's, so cooldowns and windows behave as on the recorded
cluster.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator
from typing import Any, TypeVar

from yarn_advisor.advisor.engine.settings import with_overrides
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.replay import Recording, replaying

_T = TypeVar("_T")


def remove_with(owner: _T, path: str) -> _T:
    """``owner``, with ``path`` removed when ``owner`` is collected or the process
    exits, so that a replay or an explain leaves nothing behind in the temp dir."""
    weakref.finalize(owner, shutil.rmtree, path, ignore_errors=True)
    return owner


def replay_config(recording: Recording, cfg: AdvisorConfig, state_dir: str) -> AdvisorConfig:
    """``cfg`` pointed at the recorded cluster's addresses, dry-run, state in ``state_dir``."""
    manifest = recording.manifest
    return with_overrides(cfg, {
        "rm": {"urls": recording.rm_urls, "history_url": recording.history_url,
               "auth": {"method": manifest.get("auth_method", "simple"),
                        "user": manifest.get("auth_user", "yarn-advisor"), "principal": None},
               "retry": {"attempts": 1, "base_delay_s": 0.0, "max_delay_s": 0.0,
                         "deadline_s": 1.0}},
        "dry_run": True,
        "state_dir": state_dir,
        "actuator": {"journal_path": None},
    })


def replay_advisor(recording: Recording, cfg: AdvisorConfig) -> Advisor:
    """An Advisor sensing the recording (see the module docstring)."""
    scratch = tempfile.mkdtemp(prefix="yarn-advisor-replay-")
    cfg = replay_config(recording, cfg, scratch)
    advisor = build_advisor(cfg, build_sensor(cfg), persist=False, snapshot_clock=True)
    return remove_with(advisor, scratch)


def replay_cycles(advisor: Advisor, recording: Recording) -> Iterator[CycleReport]:
    """One cycle per recorded cycle, each at its recorded time."""
    for cycle in recording.cycles:
        with replaying(cycle):
            yield advisor.run_once(cycle.taken_at)


def report_json(report: CycleReport) -> dict[str, Any]:
    """The JSON form of one replayed cycle (DESIGN.md, Interfaces)."""
    s = report.snapshot
    summary = None if s is None else {
        "nodes": len(s.nodes), "queues": len(s.queues), "apps": len(s.apps),
        "containers": len(s.containers), "pending_requests": s.pending_requests,
        "tasks": len(s.tasks), "finished_tasks": len(s.finished_tasks),
        "sources": dict(s.sources),
    }
    return {"cycle": report.number, "taken_at": s.taken_at if s else None,
            "outcome": report.outcome, "reason": report.reason, "snapshot": summary,
            "recommendations": [r.to_dict() for r in report.recommendations]}
