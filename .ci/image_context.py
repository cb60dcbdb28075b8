"""Emulate the image build's first stage without a Docker engine.

``python .ci/image_context.py OUT`` builds the Docker build context the way the
engine does (every file of the repository, less what ``.dockerignore``
excludes: the last matching pattern wins, a pattern matching a parent
directory matches its files, ``!`` re-includes, ``**`` spans directories),
then replays the ``COPY`` instructions of the Dockerfile's build stage into
``OUT`` (its ``WORKDIR``). ``pip wheel OUT`` then builds the wheel from exactly
the files the image's wheel is built from. It prints, one per line, the
``yarn-advisor`` commands the final stage runs as its own checks.

Only what this Dockerfile uses is understood (``FROM``, ``WORKDIR``, ``COPY``
without ``--from``, ``RUN``); anything else in the build stage is an error, so
a Dockerfile change that this emulation would misread fails the check.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pattern(raw: str) -> tuple[re.Pattern[str], bool]:
    """One .dockerignore line as (regex over a relative path, is an exception)."""
    exclusion = raw.startswith("!")
    text = os.path.normpath(raw[1:] if exclusion else raw).lstrip("/")
    out, i = "", 0
    while i < len(text):
        if text.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif text.startswith("**", i):
            out, i = out + ".*", i + 2
        elif text[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif text[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(text[i]), i + 1
    return re.compile(out + r"\Z"), exclusion


def ignored(rel: str, patterns: list[tuple[re.Pattern[str], bool]]) -> bool:
    """True when the engine leaves ``rel`` out of the build context."""
    parts = rel.split("/")
    candidates = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    out = False
    for rx, exclusion in patterns:
        if any(rx.match(c) for c in candidates):
            out = not exclusion
    return out


def context_files(root: Path) -> list[str]:
    """Relative paths of the files the build context holds."""
    lines = (root / ".dockerignore").read_text().splitlines()
    patterns = [_pattern(s.strip()) for s in lines if s.strip() and not s.startswith("#")]
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if not ignored(rel, patterns):
                files.append(rel)
    return sorted(files)


def build_stage(dockerfile: str) -> tuple[list[tuple[list[str], str]], list[str]]:
    """The build stage's COPY instructions (sources, destination) and the final
    stage's ``yarn-advisor`` commands."""
    text = re.sub(r"\\\n", " ", dockerfile)
    stage, copies, checks = -1, [], []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            stage += 1
        elif stage == 0 and word == "COPY":
            args = rest.split()
            if any(a.startswith("--") for a in args):
                raise SystemExit(f"image_context: unsupported COPY in the build stage: {line}")
            copies.append((args[:-1], args[-1]))
        elif stage == 0 and word not in ("ARG", "RUN", "WORKDIR"):
            raise SystemExit(f"image_context: unsupported instruction in the build stage: {line}")
        elif stage == 0 and word == "WORKDIR" and rest.strip() != "/src":
            raise SystemExit(f"image_context: the build stage's WORKDIR is not /src: {line}")
        elif stage == 1 and word == "RUN":
            checks += [c.strip() for c in rest.split("&&") if c.strip().startswith("yarn-advisor")]
    return copies, checks


def main(out: Path) -> None:
    files = context_files(ROOT)
    copies, checks = build_stage((ROOT / "Dockerfile").read_text())
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for sources, dest in copies:
        for src in sources:
            src_rel = os.path.normpath(src)
            chosen = [f for f in files if f == src_rel or f.startswith(src_rel + "/")]
            if not chosen:
                raise SystemExit(f"image_context: COPY {src}: nothing in the build context")
            for f in chosen:
                inner = f[len(src_rel) + 1:] if f != src_rel else os.path.basename(f)
                target = out / dest / inner
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / f, target)
    print("\n".join(checks))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
