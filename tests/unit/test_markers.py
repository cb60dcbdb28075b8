"""The layers' markers agree everywhere they are named: registered in pyproject.toml,
left out of the fast loop (its default ``-m``), selected by .ci/test's second run, and
given by tests/conftest.py to a test that asks for a layer's fixture."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    assert '--dist loadgroup' in (ROOT / ".ci" / "test").read_text()
