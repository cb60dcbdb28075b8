"""Shared test fixtures: the vendored public files, the real mini cluster.

The cluster is started once per test session (``mini_cluster``), only when a
test marked ``cluster`` asks for it; ``YARN_ADVISOR_SKIP_CLUSTER=1`` skips
those tests (fast local runs), CI never sets it.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))
sys.path.insert(0, str(ROOT / "tests"))  # rmwrites: the cluster tests' JSON-valued writes
# tests that check a bench's own helpers import them by name (bench_policies, paper_tables);
# appended, so a test's own modules come first
sys.path.append(str(ROOT / "bench"))

from yarnmini import MiniCluster, classpath  # noqa: E402

from yarn_advisor.advisor.loop.daemon import Advisor  # noqa: E402
from yarn_advisor.advisor.loop.report import CycleReport  # noqa: E402

# The public files the tests read, vendored with their provenance (tests/fixtures/PROVENANCE.md).
FIXTURES = ROOT / "tests" / "fixtures"
RECORDING = ROOT / "examples" / "recordings" / "mini-hetero"


# A test that asks for a real component's fixture belongs to that layer, marked or not:
# the fast loop (a bare ``pytest``, see pyproject.toml) never starts one by accident.
LAYER_FIXTURES = {
    "mini_cluster": "cluster", "hadoop_jars": "cluster",
    "sls_cluster": "sls",
    "kdc": "kerberos", "kerberized_cluster": "kerberos",
    "zk_server": "services", "private_zk": "services", "zk_ensemble": "services",
    "replay_prometheus": "deploy",
}


# The real layers may run in two processes (``YARN_ADVISOR_REAL_WORKERS=2 .ci/test``:
# ``-n 2 --dist loadgroup``). A JVM cluster
# is started once per process that asks for it, so every test of one cluster goes to one
# process: the group is named after the cluster; any other test stays with its module (its
# module-scoped fixtures start once). ZooKeeper and Prometheus start in a second or two and
# may run once in each process.
CLUSTER_GROUPS = {
    "mini_cluster": "mini-cluster", "standby_url": "mini-cluster",
    "kdc": "kerberos", "kerberized_cluster": "kerberos",
    "sls_cluster": "sls",
}
LAYERS = ("cluster", "sls", "kerberos", "services", "deploy", "chaos", "slow")


def process_group(item: pytest.Item) -> str | None:
    """The group of a real layer's test (None in the fast loop, which runs files apart)."""
    if not any(item.get_closest_marker(layer) for layer in LAYERS):
        return None
    asked = set(getattr(item, "fixturenames", ()))
    return next((g for f, g in CLUSTER_GROUPS.items() if f in asked),
                item.nodeid.split("::", 1)[0])


@pytest.hookimpl(tryfirst=True)  # before -m deselects, and before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        asked = set(getattr(item, "fixturenames", ()))
        for fixture, layer in LAYER_FIXTURES.items():
            if fixture in asked and item.get_closest_marker(layer) is None:
                item.add_marker(layer)
        group = process_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def fast_loop_expression(config: pytest.Config) -> str | None:
    """The ``-m`` expression of the default options: the fast loop's."""
    opts = list(config.getini("addopts"))
    return opts[opts.index("-m") + 1] if "-m" in opts[:-1] else None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): the fast loop on every core; any run that
    selects a layer with real components (``-m ""``, ``-m sls``...) in this one
    process, so each JVM cluster starts once per run and its tests share it
    (an explicit ``-n 2 --dist loadgroup``, as .ci/test gives, keeps that: see
    ``process_group``)."""
    if config.option.markexpr != fast_loop_expression(config):
        return 0
    return os.cpu_count() or 1


# What only a marked layer may start: a JVM (Hadoop, SLS, the KDC, ZooKeeper) or Prometheus.
REAL_PROGRAMS = {"java", "prometheus"}


@pytest.fixture(autouse=True)
def _the_fast_loop_starts_nothing_real(request: pytest.FixtureRequest,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """In the fast loop, a test that starts a JVM or Prometheus fails, naming the program:
    it belongs to a layer, and its marker keeps it out of the loop."""
    if request.config.option.markexpr != fast_loop_expression(request.config):
        return
    start = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def guarded(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> Any:
        argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        program = os.path.basename(os.fsdecode(argv[0])).split(" ")[0] if argv else ""
        if program in REAL_PROGRAMS:
            raise AssertionError(f"{request.node.nodeid} starts {program} in the fast loop: "
                                 "give it its layer's marker (pyproject.toml)")
        return start(self, args, *rest, **kw)

    monkeypatch.setattr(subprocess.Popen, "_execute_child", guarded)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the golden files from the current output")


@pytest.fixture(autouse=True)
def _no_stream_handler_outlives_its_test() -> Iterator[None]:
    """The CLI's logging setup (``basicConfig(force=True)`` on ``sys.stderr``), run
    in-process by a test, binds the root logger to that test's captured stderr.
    A library thread that logs later (kazoo reconnecting) then wrote to a closed
    file and printed a "Logging error" traceback into CI's output."""
    root = logging.getLogger()
    before, level = set(root.handlers), root.level
    yield
    for handler in root.handlers[:]:
        if handler not in before and type(handler) is logging.StreamHandler:
            root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def fixture_data() -> Path:
    """tests/fixtures: the public files the tests read (see its PROVENANCE.md)."""
    return FIXTURES


@pytest.fixture(scope="session")
def recording_dir() -> Path:
    return RECORDING


@pytest.fixture(scope="session")
def recording_head(recording_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled recording's first 12 cycles, a recording of its own: for the tests of
    a command's plumbing (the CLI end to end), which need real cycles, not all 40."""
    head = tmp_path_factory.mktemp("recording-head")
    shutil.copy(recording_dir / "recording.json", head)
    for n in range(1, 13):
        shutil.copy(recording_dir / f"cycle-{n:04d}.yaml", head)
    return head


@dataclass(frozen=True)
class ReplayRun:
    """A whole recording replayed once, and the advisor that replayed it."""

    advisor: Advisor
    reports: tuple[CycleReport, ...]


@pytest.fixture(scope="session")
def recorded_replay(recording_dir: Path) -> ReplayRun:
    """The bundled mini-hetero recording replayed once with the default configuration,
    for the tests that only read what it produced (its reports, its advisor's metrics):
    they must not change either."""
    from yarn_advisor.advisor.engine.settings import load_config
    from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles
    from yarn_advisor.connectors.replay import open_recording

    recording = open_recording(recording_dir)
    advisor = replay_advisor(recording, load_config(None))
    return ReplayRun(advisor, tuple(replay_cycles(advisor, recording)))


@pytest.fixture(scope="session")
def hadoop_jars() -> str:
    """The Hadoop jars (for Hadoop's own tools, such as Rumen); skipped with the cluster."""
    if os.environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip("YARN_ADVISOR_SKIP_CLUSTER=1")
    return classpath()


@pytest.fixture(scope="session")
def mini_cluster() -> Iterator[MiniCluster]:
    if os.environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip("YARN_ADVISOR_SKIP_CLUSTER=1")
    workdir = Path(tempfile.mkdtemp(prefix="yarn-mini-test-"))
    cluster = MiniCluster(workdir)
    t0 = time.monotonic()
    cluster.start()
    print(f"\nmini cluster up in {time.monotonic() - t0:.1f}s, {cluster.rss_mb()} MiB RSS, "
          f"RM {cluster.rm_url}", file=sys.stderr)
    yield cluster
    cluster.stop()
    shutil.rmtree(workdir, ignore_errors=True)  # logs and HDFS blocks: tens of MB a session


@pytest.fixture(scope="session")
def standby_url(mini_cluster: MiniCluster) -> str:
    """A real standby RM beside the session's cluster (one for every test that needs
    one; it stops with the cluster): see ``MiniCluster.start_standby_rm``."""
    return mini_cluster.start_standby_rm()
