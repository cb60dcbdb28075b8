"""The layer contract: imports only go down the layers (DESIGN.md, advisor/__init__.py).

Every module of the project belongs to one layer, named by the longest package
prefix below; a module may import its own layer and the layers under it, never
one above (imports anywhere in a module count: under ``TYPE_CHECKING`` and
inside functions too). Within the classifier, the model and the trace readers
are independent of each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "yarn_advisor."

# bottom first; one entry per layer (the packages in it)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("config", "advisor._root"),
    ("advisor.model",),
    ("connectors", "classifiers"),
    ("advisor.policies",),
    ("advisor.engine",),
    ("advisor.act",),
    ("advisor.ha",),
    ("advisor.loop",),
    ("advisor.observe",),
    ("simulator",),
    ("advisor.cli",),
)
FOLDERS = ("advisor", "connectors", "classifiers", "config", "simulator")


def _modules() -> dict[str, Path]:
    out = {}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def layer_of(module: str) -> int | None:
    """The layer of ``module`` (dotted, without the ``yarn_advisor.`` prefix)."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for rank, packages in enumerate(LAYERS):
        for pkg in packages:
            if (module == pkg or module.startswith(pkg + ".")) and (
                    best is None or len(pkg) > best[0]):
                best = (len(pkg), rank)
    return None if best is None else best[1]


def imports_of(path: Path) -> set[str]:
    """Project modules and packages ``path`` imports (without the prefix)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if layer_of(node.module[len(PREFIX):]) is None:  # from yarn_advisor.advisor import x
                names = [f"{node.module}.{a.name}" for a in node.names]
        found |= {n[len(PREFIX):] for n in names if n.startswith(PREFIX)}
    return found


def violations(modules: dict[str, Path]) -> list[str]:
    out = []
    for module, path in sorted(modules.items()):
        own = layer_of(module)
        for imported in sorted(imports_of(path)):
            theirs = layer_of(imported)
            if own is not None and theirs is not None and theirs > own:
                out.append(f"{module} (layer {LAYERS[own]}) imports {imported} "
                           f"(layer {LAYERS[theirs]})")
    return out


def test_every_module_has_a_layer() -> None:
    loose = [m for m in _modules() if m not in FOLDERS and layer_of(m) is None]
    assert loose == []


def test_imports_only_go_down_the_layers() -> None:
    assert violations(_modules()) == []


def test_the_classifier_model_and_the_trace_readers_are_independent() -> None:
    modules = _modules()
    bad = [f"{m} imports {i}" for m, p in sorted(modules.items())
           for i in sorted(imports_of(p))
           if (m.startswith("classifiers.model") and i.startswith("classifiers.readers"))
           or (m.startswith("classifiers.readers") and i.startswith("classifiers.model"))]
    assert bad == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The contract check itself: an engine module importing the loop is reported,
    the loop importing the engine is not."""
    up = tmp_path / "up.py"
    up.write_text("from yarn_advisor.advisor.loop.daemon import Advisor\n")
    down = tmp_path / "down.py"
    down.write_text("def f():\n    from yarn_advisor.advisor.engine.decide import decide\n")
    found = violations({"advisor.engine.up": up, "advisor.loop.down": down})
    assert found == ["advisor.engine.up (layer ('advisor.engine',)) imports "
                     "advisor.loop.daemon (layer ('advisor.loop',))"]
