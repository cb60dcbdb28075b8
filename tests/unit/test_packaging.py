"""The wheel's package list: every package under the fixed folders, under yarn_advisor."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_in_the_tree_is_installed_under_yarn_advisor() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]  # type: ignore[index]
    mapped = {ROOT / folder: prefix for prefix, folder in setuptools["package-dir"].items()}
    listed = set(setuptools["packages"])
    found = set()
    for folder in mapped:
        for init in folder.rglob("__init__.py"):
            # the innermost mapped folder holding it names it (advisor/_root is yarn_advisor)
            home = max((f for f in mapped if init.parent.is_relative_to(f)),
                       key=lambda f: len(f.parts))
            rel = init.parent.relative_to(home)
            found.add(".".join([mapped[home], *rel.parts]))
    assert found == listed
    assert all(name == "yarn_advisor" or name.startswith("yarn_advisor.") for name in listed)


def test_the_package_has_its_version() -> None:
    import yarn_advisor

    assert yarn_advisor.__version__ == metadata.version("yarn-advisor")
    assert yarn_advisor.__version__ == _pyproject()["project"]["version"]  # type: ignore[index]


def test_every_package_is_typed() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]  # type: ignore[index]
    assert all((ROOT / folder / "py.typed").is_file()
               for folder in setuptools["package-dir"].values())


def test_mypy_sees_the_tree_under_its_import_names() -> None:
    """.ci/typecheck/yarn_advisor mirrors the wheel: each mapped folder under its name."""
    link = ROOT / ".ci" / "typecheck" / "yarn_advisor"
    setuptools = _pyproject()["tool"]["setuptools"]  # type: ignore[index]
    for prefix, folder in setuptools["package-dir"].items():
        parts = prefix.split(".")[1:]
        assert link.joinpath(*parts).resolve() == (ROOT / folder).resolve() or (
            not parts and (link / "__init__.py").resolve() == ROOT / folder / "__init__.py")


def _image_context() -> ModuleType:
    path = ROOT / ".ci" / "image_context.py"
    spec = importlib.util.spec_from_file_location("image_context", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_image_context_holds_every_folder_the_wheel_is_built_from() -> None:
    """The Dockerfile's build stage copies each package folder pyproject maps, from a
    build context that .dockerignore does not strip of them (the wheel build failed
    when the simulator was listed in pyproject but left out of the image)."""
    ctx = _image_context()
    copies, checks = ctx.build_stage((ROOT / "Dockerfile").read_text())
    copied = {src.rstrip("/") for sources, _ in copies for src in sources}
    folders = set(_pyproject()["tool"]["setuptools"]["package-dir"].values())  # type: ignore[index]
    assert {"pyproject.toml", "README.md"} <= copied
    assert all(any(f == c or f.startswith(c + "/") for c in copied) for f in folders), folders
    files = ctx.context_files(ROOT)
    for folder in folders:
        assert any(f.startswith(folder + "/") and f.endswith(".py") for f in files), folder
    assert not any("__pycache__" in f or f.startswith((".git/", ".venv/", "tests/"))
                   for f in files)
    assert any(c.startswith("yarn-advisor --help") for c in checks)


def test_dockerignore_rules_as_the_engine_reads_them() -> None:
    """Last match wins, a parent directory's match covers its files, ** spans folders."""
    ctx = _image_context()
    rules = [ctx._pattern(p) for p in ("*", "!advisor/", "**/__pycache__", "!keep/**/x.py")]
    assert ctx.ignored("tests/unit/a.py", rules)
    assert not ctx.ignored("advisor/loop/daemon.py", rules)
    assert ctx.ignored("advisor/loop/__pycache__/daemon.pyc", rules)
    assert not ctx.ignored("keep/a/b/x.py", rules) and ctx.ignored("keep/a/b/y.py", rules)


def test_the_daemon_never_imports_the_simulator() -> None:
    """Only `simulate` loads the simulator: the CLI's parser and a replayed cycle of the
    daemon leave it out of sys.modules (a fresh interpreter: the test session imports
    the simulator elsewhere)."""
    code = (
        "import sys\n"
        "from yarn_advisor.advisor.cli.main import build_parser, main\n"
        "build_parser()\n"
        f"assert main(['replay', {str(ROOT / 'examples/recordings/ha-standby')!r}]) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('yarn_advisor.simulator'))\n"
        "assert not loaded, loaded\n"
        "build_parser(simulator=True)\n"
        "assert 'yarn_advisor.simulator.simulation' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
