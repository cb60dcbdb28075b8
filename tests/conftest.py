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


# The real layers run as N shards side by side (``pytest -m ... --shard K/N``, what .ci/test
# does): most of their time is waiting on real clusters (AM start-ups, sleep jobs, ticket
# lifetimes), which overlaps well even on two cores. A JVM cluster is started once per
# process that asks for it, so every test of one cluster goes to one shard: the group is
# named after the cluster; any other test stays with its module (its module-scoped fixtures
# start once). ZooKeeper and Prometheus start in a second or two and may run in each shard.
# (pytest-xdist's ``--dist loadgroup`` cannot do this under pytest 9: it groups by a
# ``_nodeid`` attribute pytest 9 no longer reads, so every test became its own group and
# one run started two mini clusters.)
CLUSTER_GROUPS = {
    "mini_cluster": "mini-cluster", "standby_url": "mini-cluster",
    "kdc": "kerberos", "kerberized_cluster": "kerberos",
    "sls_cluster": "sls",
}
LAYERS = ("cluster", "sls", "kerberos", "services", "deploy", "chaos", "slow")
# What a group's tests take in one process, in seconds, for the shard plan (a full run's
# ``--durations``, calls and fixtures); a group not listed counts
# OTHER_TEST_S a test. Only the balance depends on them, never which tests run.
GROUP_SECONDS = {
    "mini-cluster": 650.0, "kerberos": 230.0, "sls": 200.0,
    # modules that start a JVM cluster of their own
    "tests/cluster/test_rm_plugin_minicluster.py": 370.0,
    "tests/cluster/test_watchdog_harm.py": 120.0,
    "tests/simulator/test_parity_cluster.py": 100.0,
    "tests/sls/test_sls_plugin.py": 70.0, "tests/sls/test_sls.py": 60.0,
}
OTHER_TEST_S = 4.0


def process_group(item: pytest.Item) -> str | None:
    """The group of a real layer's test (None in the fast loop, which runs files apart)."""
    if not any(item.get_closest_marker(layer) for layer in LAYERS):
        return None
    asked = set(getattr(item, "fixturenames", ()))
    return next((g for f, g in CLUSTER_GROUPS.items() if f in asked),
                item.nodeid.split("::", 1)[0])


def shard_plan(tests_per_group: dict[str, int], shards: int) -> dict[str, int]:
    """Which shard runs each group: the heaviest group first, onto the least loaded
    shard (ties to the lowest), so every shard process computes the same plan."""
    load = [0.0] * shards
    plan: dict[str, int] = {}
    weight = {g: GROUP_SECONDS.get(g, OTHER_TEST_S * n) for g, n in tests_per_group.items()}
    for group in sorted(weight, key=lambda g: (-weight[g], g)):
        plan[group] = min(range(shards), key=lambda k: (load[k], k))
        load[plan[group]] += weight[group]
    return plan


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` (0 <= K < N) as (K, N); a clear error otherwise."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard {text!r}: expected K/N, such as 0/2") from None
    if not 0 <= k < n:
        raise pytest.UsageError(f"--shard {text!r}: K must be in 0..N-1")
    return k, n


@pytest.hookimpl(tryfirst=True)  # before -m deselects: every shard sees the same groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups: dict[pytest.Item, str | None] = {}
    for item in items:
        asked = set(getattr(item, "fixturenames", ()))
        for fixture, layer in LAYER_FIXTURES.items():
            if fixture in asked and item.get_closest_marker(layer) is None:
                item.add_marker(layer)
        groups[item] = process_group(item)
    if config.getoption("--shard") is None:
        return
    k, n = parse_shard(config.getoption("--shard"))
    counts: dict[str, int] = {}
    for group in groups.values():
        if group is not None:
            counts[group] = counts.get(group, 0) + 1
    plan = shard_plan(counts, n)
    # a test of no layer (the fast loop's) goes with shard 0
    keep = [i for i in items if plan.get(groups[i] or "", 0) == k]
    dropped = [i for i in items if plan.get(groups[i] or "", 0) != k]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def fast_loop_expression(config: pytest.Config) -> str | None:
    """The ``-m`` expression of the default options: the fast loop's."""
    opts = list(config.getini("addopts"))
    return opts[opts.index("-m") + 1] if "-m" in opts[:-1] else None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): the fast loop on every core; any run that
    selects a layer with real components (``-m ""``, ``-m sls``...) in this one
    process, so each JVM cluster starts once per run and its tests share it
    (``--shard K/N`` splits such a run between processes by cluster: see
    ``shard_plan``)."""
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
    parser.addoption("--shard", default=None, metavar="K/N",
                     help="run only shard K of N (0-based) of the selected tests: each JVM "
                          "cluster's tests in one shard (.ci/test runs the shards side by side)")


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
