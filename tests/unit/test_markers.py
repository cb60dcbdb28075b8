"""The layers' markers agree everywhere they are named: registered in pyproject.toml,
left out of the fast loop (its default ``-m``), selected by .ci/test's second run, and
given by tests/conftest.py to a test that asks for a layer's fixture."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS_EXPRESSION = re.search(r'^layers="([^"]+)"$', (ROOT / ".ci" / "test").read_text(),
                              re.M).group(1)  # type: ignore[union-attr]


def _names(expression: str) -> set[str]:
    return set(re.findall(r"\b(?!not\b|or\b|and\b)\w+", expression))


def test_every_layer_is_registered_deselected_and_run_by_ci() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {m.split(":")[0] for m in ini["markers"]}
    assert "--strict-markers" in ini["addopts"]
    fast = ini["addopts"][ini["addopts"].index("-m") + 1]
    assert fast.startswith("not (") and _names(fast) == registered
    layers = re.search(r'^layers="([^"]+)"$', (ROOT / ".ci" / "test").read_text(), re.M)
    assert layers and _names(layers.group(1)) == registered
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    given = set(re.findall(r'"\w+": "(\w+)"', conftest[conftest.index("LAYER_FIXTURES"):]))
    assert given and given <= registered


class _Item:
    """What ``process_group`` reads of a collected test."""

    def __init__(self, nodeid: str, fixtures: tuple[str, ...], markers: tuple[str, ...]):
        self.nodeid, self.fixturenames, self._markers = nodeid, fixtures, markers

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self._markers else None


def test_each_cluster_s_tests_share_one_process_of_the_real_run(
        pytestconfig: pytest.Config) -> None:
    # tests/conftest.py as pytest loaded it (``import conftest`` may find another folder's)
    conftest = next(p for p in pytestconfig.pluginmanager.get_plugins()
                    if getattr(p, "__file__", None) == str(ROOT / "tests" / "conftest.py"))
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert set(conftest.LAYERS) == {m.split(":")[0] for m in ini["markers"]}
    group = conftest.process_group
    # every test of one JVM cluster in one group, whichever module it is in
    assert group(_Item("tests/chaos/a.py::t", ("tmp_path", "mini_cluster"), ("chaos",))) == \
        group(_Item("tests/cluster/b.py::t", ("standby_url",), ("cluster",))) == "mini-cluster"
    assert group(_Item("tests/kerberos/c.py::t", ("kerberized_cluster",), ("kerberos",))) == \
        group(_Item("tests/kerberos/d.py::t", ("kdc",), ("kerberos",))) == "kerberos"
    assert group(_Item("tests/sls/e.py::t", ("sls_cluster",), ("sls",))) == "sls"
    # a test of no shared cluster stays with its module (module-scoped fixtures)
    assert group(_Item("tests/services/f.py::t[1]", ("zk_server",), ("services",))) == \
        "tests/services/f.py"
    # the fast loop's tests get no group (it runs whole files per process)
    assert group(_Item("tests/unit/g.py::t", ("mini_cluster",), ())) is None
    assert '--shard "$k/$shards"' in (ROOT / ".ci" / "test").read_text()


def _conftest(pytestconfig: pytest.Config) -> Any:
    return next(p for p in pytestconfig.pluginmanager.get_plugins()
                if getattr(p, "__file__", None) == str(ROOT / "tests" / "conftest.py"))


def test_the_shard_plan_puts_each_group_in_one_shard_and_balances_them(
        pytestconfig: pytest.Config) -> None:
    conftest = _conftest(pytestconfig)
    counts = {"mini-cluster": 60, "kerberos": 10, "sls": 13, "tests/chaos/a.py": 30,
              "tests/services/b.py": 20, "tests/deploy/c.py": 2}
    plan = conftest.shard_plan(counts, 2)
    assert set(plan) == set(counts) and set(plan.values()) == {0, 1}
    # the heaviest group alone until the others catch up: the mini cluster's shard gets
    # nothing else while it is heavier than the rest together
    weights = {g: conftest.GROUP_SECONDS.get(g, conftest.OTHER_TEST_S * n)
               for g, n in counts.items()}
    loads = [sum(weights[g] for g in plan if plan[g] == k) for k in (0, 1)]
    assert abs(loads[0] - loads[1]) <= max(weights.values())
    assert conftest.shard_plan(counts, 2) == plan  # every shard process computes the same
    assert conftest.shard_plan(counts, 1) == dict.fromkeys(counts, 0)
    assert set(conftest.shard_plan(counts, 3).values()) == {0, 1, 2}


@pytest.mark.parametrize("text", ["2/2", "-1/2", "a/b", "1", "0/0"])
def test_a_bad_shard_is_a_usage_error(pytestconfig: pytest.Config, text: str) -> None:
    with pytest.raises(pytest.UsageError, match="--shard"):
        _conftest(pytestconfig).parse_shard(text)


def _collected(*args: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-m", LAYERS_EXPRESSION, *args, "tests/cluster", "tests/kerberos", "tests/sls"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=True).stdout
    return [line for line in out.splitlines() if "::" in line]


@pytest.mark.slow  # three collections of the three clusters' tests: about a minute
def test_the_shards_together_run_every_real_test_once_and_each_cluster_in_one() -> None:
    every = _collected()
    shards = [_collected("--shard", f"{k}/2") for k in (0, 1)]
    assert sorted(shards[0] + shards[1]) == sorted(every) and shards[0] and shards[1]
    mini = {t for t in every if t.startswith(("tests/cluster/test_live_snapshot.py",
                                              "tests/cluster/test_write_levers.py"))}
    assert mini and any(mini <= set(s) for s in shards)

