"""Load the public example bodies vendored in ``tests/fixtures`` (their provenance
is in ``tests/fixtures/PROVENANCE.md``). Every load returns a fresh object, so
tests may modify what they get.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "fixtures"
REST_DOCS = DATA / "hadoop-rest-docs"


def shared_data(what: str) -> Path:
    """``what`` (a path) in the shared data set that feeds the benches, or skip.

    Only a test that needs a data set too large to vendor reads it: it is found at
    ``$YARN_ADVISOR_SHARED`` (the ``shared`` folder or its ``data``), by default
    ``../shared/data`` beside the repository; without it the test skips, saying so."""
    base = Path(os.environ.get("YARN_ADVISOR_SHARED", Path(__file__).resolve().parents[3]
                               / "shared"))
    path = (base / "data" if (base / "data").is_dir() else base) / what
    if not path.exists():
        import pytest

        pytest.skip(f"needs {what} of the shared data set (too large to vendor): set "
                    "YARN_ADVISOR_SHARED to a copy of it, by default ../shared beside the "
                    "repository")
    return path


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
