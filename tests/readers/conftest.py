"""Fixtures of the readers' tests: the real files, the Spark codecs' jars."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

LZ4_JAVA = "org.lz4:lz4-java:1.8.0"  # the version Spark 3.2-3.5 ship (.ci/setup resolves it)


@pytest.fixture(scope="session")
def jhist_files(fixture_data: Path) -> list[Path]:
    return sorted((fixture_data / "hadoop-jhist").glob("*.jhist"))


@pytest.fixture(scope="session")
def spark_logs(fixture_data: Path) -> list[Path]:
    return sorted(p for p in (fixture_data / "spark-eventlogs").iterdir() if p.is_file())


@pytest.fixture(scope="session")
def spark_codec_jars(hadoop_jars: str) -> str:
    """lz4-java (resolved into ~/.m2 by .ci/setup; nothing downloads during the tests)
    and the cluster's snappy-java."""
    group, artifact, version = LZ4_JAVA.split(":")
    jar = (Path.home() / ".m2" / "repository" / group.replace(".", "/") / artifact / version
           / f"{artifact}-{version}.jar")
    if not jar.exists():
        message = f"{LZ4_JAVA} is not in ~/.m2: run bash .ci/setup"
        if os.environ.get("CI"):  # under CI a skip would hide a broken set-up
            pytest.fail(message)
        pytest.skip(message)
    snappy = next(p for p in hadoop_jars.split(":") if "snappy-java" in p)
    return f"{jar}:{snappy}"
