"""The RM plug-in's jar (rm-plugin/, docs/plugin.md) for the tests and benches: where it is,
building it when its sources are newer, running its JUnit tests and its precheck bench; and
:class:`TableServer`, a stand-in of the advisor's ``/decision-table`` endpoint.

Maven runs offline here (``-o``): ``.ci/setup`` built the jar once online, which put the
build plugins and the Hadoop 3.4.2 jars in ``~/.m2``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from yarnmini import classpath, java_home

from yarn_advisor.advisor.model.decision_table import DecisionTable

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "rm-plugin"
JAR = PROJECT / "target" / "yarn-advisor-rm-plugin.jar"
BENCH = "io.github.yarnadvisor.plugin.PrecheckBench"
ALLOCATOR = "io.github.yarnadvisor.plugin.AdvisorPlacementAllocator"
ORDERING = "io.github.yarnadvisor.plugin.AdvisorOrderingPolicy"
MBEAN = "Hadoop:service=ResourceManager,name=AdvisorPlugin"


def wait_for(cond: Callable[[], Any], what: str, timeout: float = 120,
             every: float = 0.3) -> Any:
    """``cond()``'s first truthy value, polled every ``every`` s; TimeoutError naming
    ``what`` after ``timeout`` s (the plug-in polls its table, the RM heartbeats)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(every)
    raise TimeoutError(f"timed out waiting for {what}")


def rm_conf(*, url: str | None = None, file: Path | None = None, poll_ms: int = 200,
            timeout_ms: int | None = None) -> dict[str, Any]:
    """The plug-in's keys in the RM's yarn-site.xml (docs/plugin.md, *Install*): the
    allocator class and where the table comes from (the advisor's endpoint or its file),
    polled every ``poll_ms``; ``timeout_ms`` None keeps the plug-in's default (500)."""
    if (url is None) == (file is None):
        raise ValueError("rm_conf: give the table's url or its file, not both")
    conf: dict[str, Any] = {"yarn.scheduler.app-placement-allocator.class": ALLOCATOR,
                            "yarn.advisor.plugin.poll-ms": poll_ms}
    if url is not None:
        conf["yarn.advisor.plugin.table.url"] = url
    if file is not None:
        conf["yarn.advisor.plugin.table.file"] = str(file)
    if timeout_ms is not None:
        conf["yarn.advisor.plugin.timeout-ms"] = timeout_ms
    return conf


def _env() -> dict[str, str]:
    return os.environ | {"JAVA_HOME": java_home()}


def _newest_source() -> float:
    files = [PROJECT / "pom.xml", *(PROJECT / "src" / "main").rglob("*.java")]
    return max(p.stat().st_mtime for p in files)


def build(timeout: float = 600) -> Path:
    """The jar, built (offline, tests skipped) unless it is newer than every source."""
    if JAR.exists() and JAR.stat().st_mtime >= _newest_source():
        return JAR
    run = subprocess.run(["mvn", "-B", "-o", "-q", "-f", str(PROJECT / "pom.xml"), "package",
                          "-DskipTests"], capture_output=True, text=True, timeout=timeout,
                         env=_env())
    if run.returncode != 0 or not JAR.exists():
        raise RuntimeError(f"rm-plugin build failed:\n{run.stdout[-4000:]}{run.stderr[-2000:]}")
    return JAR


def maven_test(timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``mvn -o test`` of the jar (its JUnit tests); the caller checks the result."""
    return subprocess.run(["mvn", "-B", "-o", "-q", "-f", str(PROJECT / "pom.xml"), "test"],
                          capture_output=True, text=True, timeout=timeout, env=_env())


def precheck_bench(runs: int, calls: int, timeout: float = 900) -> dict[str, Any]:
    """One run of the jar's PrecheckBench on the RM's own classes: its JSON."""
    cp = f"{classpath()}:{build()}"
    out = subprocess.run(["java", "-Xmx256m", "-cp", cp, BENCH, str(runs), str(calls)],
                         capture_output=True, text=True, timeout=timeout, env=_env(), check=True)
    line = next(x for x in reversed(out.stdout.splitlines()) if x.startswith("{"))
    result: dict[str, Any] = json.loads(line)
    return result


class TableServer:
    """The advisor's /decision-table endpoint: the Python side's own serialization of the
    table it holds (404 without one), as advisor/observe/server.py serves it."""

    def __init__(self) -> None:
        self.body: bytes | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = outer.body
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # a poll that timed out has closed its end: the plug-in counts it, not us
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/decision-table"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, table: DecisionTable | None) -> None:
        self.body = None if table is None else table.dumps().encode()

    def kill(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def served() -> Iterator[TableServer]:
    """A :class:`TableServer` for a test module's fixture (``yield from served()``),
    shut down when the module is done."""
    server = TableServer()
    try:
        yield server
    finally:
        server.kill()
