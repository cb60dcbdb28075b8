"""Fixtures of the SLS tests: one 500-node SLS for the whole session.

Started only when a test asks for it (all are marked ``cluster``);
``YARN_ADVISOR_SKIP_CLUSTER=1`` skips them, as it does the mini-cluster tests.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from slsrun import SlsCluster
from workload import TEST_TRACE

SLS_NODES = 500
SLS_RACKS = 20


def skip_without_cluster() -> None:
    if os.environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip("YARN_ADVISOR_SKIP_CLUSTER=1")


@pytest.fixture(scope="session")
def sls_cluster() -> Iterator[SlsCluster]:
    """SLS with 500 nodes replaying the tests' trace (the standard spec, 7 min of
    arrivals at ~0.9 offered load, on the vendored sources): busy within a minute,
    so levers meet a loaded RM."""
    skip_without_cluster()
    workdir = Path(tempfile.mkdtemp(prefix="yarn-sls-test-"))
    cluster = SlsCluster(workdir, nodes=SLS_NODES, racks=SLS_RACKS, trace=TEST_TRACE)
    cluster.start()
    print(f"\nSLS up in {cluster.start_s:.1f}s, {cluster.rss_mb()} MiB RSS, "
          f"{cluster.nodes} nodes, RM {cluster.rm_url}", file=sys.stderr)
    yield cluster
    cluster.stop()
    shutil.rmtree(workdir, ignore_errors=True)
