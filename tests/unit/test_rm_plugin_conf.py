"""The plug-in's RM keys the tests and benches write (tests/minicluster/rmplugin.rm_conf) are
the ones the jar reads: its TableHolder's key constants, and the classes that exist in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rmplugin import ALLOCATOR, ORDERING, PROJECT, rm_conf

SOURCES = PROJECT / "src" / "main" / "java"


def java_class(name: str) -> Path:
    return SOURCES / (name.replace(".", "/") + ".java")


def test_rm_conf_writes_only_the_keys_the_jar_reads() -> None:
    holder = java_class("io.github.yarnadvisor.plugin.TableHolder").read_text()
    keys = set(re.findall(r'static final String \w+_KEY = "([^"]+)"', holder))
    assert {"yarn.advisor.plugin.table.url", "yarn.advisor.plugin.poll-ms"} <= keys
    by_url = rm_conf(url="http://127.0.0.1:1/decision-table", timeout_ms=3000)
    by_file = rm_conf(file=Path("/tmp/table.json"), poll_ms=500)
    for conf in (by_url, by_file):
        assert conf.pop("yarn.scheduler.app-placement-allocator.class") == ALLOCATOR
        assert set(conf) <= keys, set(conf) - keys
    assert by_url["yarn.advisor.plugin.timeout-ms"] == 3000
    assert "yarn.advisor.plugin.table.file" not in by_url
    assert by_file["yarn.advisor.plugin.table.file"] == "/tmp/table.json"
    assert by_file["yarn.advisor.plugin.poll-ms"] == 500


def test_the_class_names_are_the_jars() -> None:
    for name in (ALLOCATOR, ORDERING):
        assert java_class(name).is_file(), name


@pytest.mark.parametrize("kwargs", [{}, {"url": "http://x/t", "file": Path("/t")}])
def test_rm_conf_wants_exactly_one_source(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="url or its file"):
        rm_conf(**kwargs)  # type: ignore[arg-type]
