"""The layers' markers agree everywhere they are named: registered in pyproject.toml,
left out of the fast loop (its default ``-m``), selected by .ci/test's second run, and
given by tests/conftest.py to a test that asks for a layer's fixture."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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
