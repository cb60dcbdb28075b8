"""The wheel's package list: every package under the fixed folders, under yarn_advisor."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_in_the_tree_is_installed_under_yarn_advisor() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]  # type: ignore[index]
    mapped = setuptools["package-dir"]
    listed = set(setuptools["packages"])
    found = set()
    for prefix, folder in mapped.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([prefix, *rel.parts]))
    assert found == listed
    assert all(name.startswith("yarn_advisor.") for name in listed)


def test_mypy_sees_the_tree_under_its_import_names() -> None:
    link = ROOT / ".ci" / "typecheck" / "yarn_advisor"
    assert link.is_symlink() and link.resolve() == ROOT
