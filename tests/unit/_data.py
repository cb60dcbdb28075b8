"""Locate and load the shared example bodies (``/work/shared/data``).

The directory is ``<repo>/../shared/data``; set ``YARN_ADVISOR_SHARED`` to
the ``shared`` directory (or straight to its ``data``) to use another copy.
Every load returns a fresh object, so tests may modify what they get.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def data_dir() -> Path:
    env = os.environ.get("YARN_ADVISOR_SHARED")
    if env:
        base = Path(env)
        return base / "data" if (base / "data").is_dir() else base
    return Path(__file__).resolve().parents[3] / "shared" / "data"


DATA = data_dir()
REST_DOCS = DATA / "hadoop-rest-docs"


def rest_doc(prefix: str) -> Any:
    """The decoded REST doc example whose file name starts with ``prefix``
    (e.g. ``"rm__06"``)."""
    matches = sorted(REST_DOCS.glob(f"{prefix}__*.json"))
    if len(matches) != 1:
        raise FileNotFoundError(f"expected one {prefix}__*.json in {REST_DOCS}, got {matches}")
    return json.loads(matches[0].read_text())


def load(relative: str) -> Any:
    """A decoded JSON file below the data directory, e.g. ``"bk-base-yarn-examples/x.json"``."""
    return json.loads((DATA / relative).read_text())


def get_examples(prefix: str) -> list[tuple[str, str, Any]]:
    """(file, url, body) of every parsed GET response example in the index whose
    file starts with ``prefix`` (``rm__``, ``mram__``, ``jhs__``)."""
    index = json.loads((REST_DOCS / "_index.json").read_text())
    out = []
    for entry in index:
        name = entry["file"]
        if (
            name.startswith(prefix)
            and entry["kind"] == "response"
            and entry["method"] == "GET"
            and entry["parse"] == "ok"
        ):
            out.append((name, entry["url"], json.loads((REST_DOCS / name).read_text())))
    return out


HUGE = 10**400  # a 401-digit integer: float(HUGE) overflows
DEEP: Any = []
for _ in range(50):
    DEEP = [DEEP]
JUNK: tuple[Any, ...] = (None, "junk", "", [], {}, -1.5, True, [3], HUGE, -HUGE, str(HUGE),
                         float("nan"), "1e999", DEEP, {"x": DEEP})


def each_mutation(body: Any) -> Iterator[Any]:
    """Yield ``body`` once per (position, junk value) with that one value replaced.

    The body is changed in place and restored before the next yield, so consume
    each yielded body before advancing."""

    def walk(node: Any) -> Iterator[Any]:
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            value = node[key]
            for junk in JUNK:
                node[key] = junk
                yield body
            node[key] = value
            if isinstance(value, (dict, list)):
                yield from walk(value)

    yield from walk(body)


def junk_outcomes(parse: Callable[[Any], object], body: Any) -> dict[str, int]:
    """Run ``parse`` on every junk mutation of ``body`` (see :func:`each_mutation`):
    how many parsed and how many raised ParseError; anything else propagates."""
    from yarn_advisor.connectors.errors import ParseError

    outcomes = {"ok": 0, "ParseError": 0}
    for mutated in each_mutation(body):
        try:
            parse(mutated)
            outcomes["ok"] += 1
        except ParseError:
            outcomes["ParseError"] += 1
    return outcomes
