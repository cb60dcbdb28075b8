"""Replaying the bundled real recording: snapshots, faults, metrics, the CLI."""

from __future__ import annotations

import gc
import itertools
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from yarn_advisor.advisor.cli.main import main as cli_main
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.wiring import build_advisor, build_sensor
from yarn_advisor.advisor.observe.server import AdvisorServer
from yarn_advisor.connectors.replay import Recording, open_recording, replaying

if TYPE_CHECKING:  # the session's replay (tests/conftest.py)
    from conftest import ReplayRun

FAST_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: recordings are MBs


@pytest.fixture(scope="module")
def recording(recording_dir: Path) -> Recording:
    return open_recording(recording_dir)


@pytest.fixture(scope="module")
def reports(recorded_replay: ReplayRun) -> list[CycleReport]:
    return list(recorded_replay.reports)


def test_recording_is_well_formed(recording: Recording) -> None:
    assert len(recording.cycles) >= 20
    times = [c.taken_at for c in recording.cycles]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert [c.number for c in recording.cycles] == list(range(1, len(times) + 1))
    assert "workload" in recording.manifest["note"]


def test_every_recorded_cycle_replays(reports: list[CycleReport]) -> None:
    assert [r.outcome for r in reports] == ["ok"] * len(reports), [r.reason for r in reports]
    for r in reports:
        assert r.snapshot is not None
        assert all(r.snapshot.sources.values()), (r.number, r.snapshot.sources)


def test_recording_shows_the_heterogeneous_workload(reports: list[CycleReport]) -> None:
    snaps = [r.snapshot for r in reports if r.snapshot]
    apps = {a.id: a for s in snaps for a in s.apps}
    assert Counter(a.type for a in apps.values()) == {"MAPREDUCE": 4, "YARN": 1}
    assert {a.queue for a in apps.values()} == {"root.etl", "root.default", "root.adhoc"}
    sizes = {c.allocated.memory_mb for s in snaps for c in s.containers if not c.is_am}
    assert {768, 1024, 512, 256, 1536} <= sizes
    assert {c.node_id for s in snaps for c in s.containers} == {n.id for n in snaps[0].nodes}
    assert any(s.pending_requests > 0 for s in snaps)
    assert any(c.usage and c.usage.samples > 0 for s in snaps for c in s.containers)
    assert {t.phase for s in snaps for t in s.tasks} >= {"MAP", "SHUFFLE"}


def test_finished_tasks_are_reported_once_each(reports: list[CycleReport]) -> None:
    finished = [t for r in reports if r.snapshot for t in r.snapshot.finished_tasks]
    ids = Counter(t.id for t in finished)
    assert ids and max(ids.values()) == 1
    assert Counter(t.type for t in finished)["MAP"] >= 6
    assert all(t.state in ("SUCCEEDED", "FAILED", "KILLED") for t in finished)
    assert all(t.elapsed_time > 0 for t in finished)


# --- faults derived from the real recording -----------------------------------

def _mutated(recording: Recording, tmp: Path, cycle: int,
             change: Callable[[dict[str, Any]], None], pattern: str) -> Recording:
    """Copy the recording, apply ``change`` to the first exchange whose URL
    matches ``pattern`` in cycle ``cycle``."""
    out = tmp / "rec"
    shutil.copytree(recording.path, out)
    path = out / f"cycle-{cycle:04d}.yaml"
    doc = yaml.load(path.read_text(), Loader=FAST_YAML)
    hit = next(e["response"] for e in doc["responses"] if re.search(pattern, e["response"]["url"]))
    change(hit)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    return open_recording(out)


def _run(rec: Recording, upto: int) -> tuple[Advisor, list[CycleReport]]:
    advisor = replay_advisor(rec, load())
    out = []
    for cycle in rec.cycles[:upto]:
        with replaying(cycle):
            out.append(advisor.run_once(cycle.taken_at))
    return advisor, out


def truncate(r: dict[str, Any]) -> None:
    r["body"] = r["body"][: len(r["body"]) // 2]


def garble(r: dict[str, Any]) -> None:
    r["body"] = "<html><body>Sorry, got error 404</body></html>"
    r["content_type"] = "text/html"


def server_error(r: dict[str, Any]) -> None:
    r["status"], r["body"] = 500, "java.lang.NullPointerException"


def wrong_shape(r: dict[str, Any]) -> None:
    r["body"] = json.dumps({"apps": {"app": [{"name": "no id"}]}})


@pytest.mark.parametrize(("pattern", "change", "reason"), [
    (r"/cluster/apps\?", truncate, "parse"),
    (r"/cluster/scheduler", garble, "parse"),
    (r"/cluster/metrics", server_error, "http_status"),
    (r"/cluster/apps\?", wrong_shape, "parse"),
    (r"/cluster/nodes", lambda r: r.update(url=r["url"] + "&gone=1"), "unavailable"),
])
def test_required_source_fault_skips_the_cycle_and_keeps_state(
        recording: Recording, tmp_path: Path, caplog: pytest.LogCaptureFixture,
        pattern: str, change: Callable[[dict[str, Any]], None], reason: str) -> None:
    bad = 3
    rec = _mutated(recording, tmp_path, bad, change, pattern)
    with caplog.at_level(logging.INFO, logger="yarn_advisor"):
        advisor, out = _run(rec, bad + 2)
    assert [r.outcome for r in out] == ["ok", "ok", "skipped", "ok", "ok"]
    skipped = out[bad - 1]
    assert skipped.reason.startswith(reason), skipped.reason
    assert skipped.snapshot is None and skipped.recommendations == () and not skipped.actions
    assert advisor.totals.cycles == {"ok": 4, "skipped": 1}
    assert f"cycle {bad}: skipped ({reason}" in caplog.text
    # no state lost: a finished task seen before the fault is not reported again
    _, clean = _run(recording, bad + 2)
    seen = Counter(t.id for r in out if r.snapshot for t in r.snapshot.finished_tasks)
    assert max(seen.values(), default=1) == 1
    assert set(seen) <= {t.id for r in clean if r.snapshot for t in r.snapshot.finished_tasks}


def test_optional_source_fault_degrades_but_keeps_the_cycle(
        recording: Recording, tmp_path: Path) -> None:
    rec = _mutated(recording, tmp_path, 5, server_error, r"ContainerResource")
    _, out = _run(rec, 5)
    assert out[4].outcome == "ok" and out[4].snapshot is not None
    assert out[4].sources["nm_jmx"].errors >= 1
    assert out[4].snapshot.sources["containers"] is True


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_rm_down_skips_the_cycle(caplog: pytest.LogCaptureFixture) -> None:
    cfg = load(None, {"rm": {"urls": [f"http://127.0.0.1:{_closed_port()}"],
                             "retry": {"attempts": 2, "base_delay_s": 0.0}}})
    advisor = build_advisor(cfg, build_sensor(cfg), persist=False)
    with caplog.at_level(logging.INFO, logger="yarn_advisor"):
        report = advisor.run_once()
    assert report.outcome == "skipped" and report.reason.startswith("unavailable")
    assert report.sources["rm"].ok is False and not report.actions
    assert "cycle 1: skipped (unavailable" in caplog.text


def test_silent_rm_times_out_and_skips_the_cycle() -> None:
    """A real server that accepts and never answers (a hung RM)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    try:
        cfg = load(None, {"rm": {"urls": [f"http://127.0.0.1:{srv.getsockname()[1]}"],
                                 "timeout": {"connect_s": 0.5, "read_s": 0.3},
                                 "retry": {"attempts": 2, "base_delay_s": 0.0}}})
        advisor = build_advisor(cfg, build_sensor(cfg), persist=False)
        started = time.monotonic()
        report = advisor.run_once()
        assert time.monotonic() - started < 5
        assert report.outcome == "skipped" and report.reason.startswith("timeout"), report.reason
        assert advisor.totals.cycles["skipped"] == 1
    finally:
        srv.close()


# --- metrics, endpoints and the CLI -------------------------------------------

def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_metrics_health_and_recommendations_endpoints(recording: Recording) -> None:
    advisor = replay_advisor(recording, load())
    server = AdvisorServer(advisor, "127.0.0.1", 0, interval_s=30).start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        assert _get(base + "/healthz")[0] == 503  # no cycle yet
        for report in replay_cycles(advisor, recording):
            last = report
        status, text = _get(base + "/metrics")
        assert status == 200
        snap = last.snapshot
        assert snap is not None
        assert f'yarn_advisor_snapshot_objects{{kind="nodes"}} {len(snap.nodes)}.0' in text
        assert (f'yarn_advisor_snapshot_objects{{kind="containers"}} '
                f"{len(snap.containers)}.0") in text
        total = float(snap.metrics.total.memory_mb * 2**20)
        assert f'yarn_advisor_cluster_memory_bytes{{kind="total"}} {total:.9e}' in text
        for source in ("rm", "containers", "nm_jmx", "rm_jmx", "mapreduce", "history"):
            assert f'yarn_advisor_connector_up{{source="{source}"}} 1.0' in text
            assert f'yarn_advisor_connector_latency_seconds{{source="{source}"}}' in text
        n = len(recording.cycles)
        assert f'yarn_advisor_cycles_total{{outcome="ok"}} {n}.0' in text
        assert 'yarn_advisor_cycle_step_seconds{step="sense"}' in text
        assert "container_" not in text  # no container ids as labels
        status, body = _get(base + "/healthz")
        assert status == 200 and json.loads(body)["cycle"] == n
        status, body = _get(base + "/recommendations")
        assert status == 200 and json.loads(body)["recommendations"] == [
            r.to_dict() for r in last.recommendations]
        assert 'yarn_advisor_cycle_step_seconds{step="learn"}' in text
    finally:
        server.close()


def test_replay_json_cli(recording_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["replay", str(recording_dir), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    objs = [json.loads(line) for line in lines]
    assert [o["cycle"] for o in objs] == list(range(1, len(objs) + 1))
    for o in objs:
        assert o["outcome"] == "ok"
        assert isinstance(o["recommendations"], list)
        for rec in o["recommendations"]:
            assert {"policy", "kind", "target", "value", "explanation"} <= set(rec)
        assert o["snapshot"]["nodes"] == 2


def test_a_replay_leaves_nothing_in_the_temp_dir(recording_head: Path, tmp_path: Path) -> None:
    """Its scratch state goes with the process (each run used to leave a directory)."""
    cmd = [sys.executable, "-m", "yarn_advisor.advisor.cli.main", "replay", str(recording_head)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "recommend" in done.stdout.lower()
    assert list(tmp_path.iterdir()) == []


def test_a_replay_advisor_takes_its_scratch_state_with_it(
        recording_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    recording = open_recording(recording_dir)
    advisor = replay_advisor(recording, load())
    for _ in itertools.islice(replay_cycles(advisor, recording), 3):
        pass
    (scratch,) = tmp_path.iterdir()  # the journal's directory, while the advisor lives
    assert scratch.name.startswith("yarn-advisor-replay-")
    del advisor
    gc.collect()
    assert not scratch.exists()


def test_run_replay_serves_metrics_and_stops_on_sigterm(recording_dir: Path) -> None:
    cmd = [sys.executable, "-m", "yarn_advisor.advisor.cli.main", "run",
           "--replay", str(recording_dir), "--interval", "0.2", "--port", "0"]
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            port = None
            deadline = time.monotonic() + 30
            assert proc.stderr is not None
            while port is None and time.monotonic() < deadline:
                line = proc.stderr.readline()
                m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", line)
                port = int(m.group(1)) if m else None
            assert port, "the server did not start"
            while time.monotonic() < deadline:
                _, text = _get(f"http://127.0.0.1:{port}/metrics")
                if 'yarn_advisor_cycles_total{outcome="ok"} 3.0' in text:
                    break
                time.sleep(0.1)
            else:
                pytest.fail("no cycles were replayed")
            proc.send_signal(15)
            assert proc.wait(timeout=15) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_replay_journals_dry_run_actions_in_its_own_directory(recording: Recording,
                                                               tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    advisor = replay_advisor(recording, load(None, {"state_dir": str(state_dir)}))
    reports = list(replay_cycles(advisor, recording))
    outcomes = Counter(o for r in reports for (_, _, o), n in r.actions.items() for _ in range(n))
    assert outcomes["dry_run"] > 0 and outcomes["applied"] == 0
    journal = advisor.actuator.journal.path
    assert not str(journal).startswith(str(state_dir)) and not state_dir.exists()
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert sum(1 for rec in lines if rec.get("outcome") == "dry_run") == outcomes["dry_run"]
    assert all(rec.get("mode") == "dry_run" for rec in lines)
