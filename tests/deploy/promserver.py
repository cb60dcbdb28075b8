"""A real Prometheus server for tests: Debian's ``prometheus`` on a loopback port.

``PrometheusServer(workdir, targets).start()`` writes a configuration that
scrapes the given ``host:port`` targets (one job each) every
``scrape_interval_s``, keeps its data in ``workdir``, listens on a free
127.0.0.1 port and waits until ``/-/ready`` answers. ``query`` and
``query_range`` call the HTTP API and return the result list, raising
:class:`PromQLError` with Prometheus's own message on a bad query.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import requests
import yaml

READY_TIMEOUT_S = 30.0


class PromQLError(Exception):
    """Prometheus refused a query (its errorType and error in the message)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prometheus_binary() -> str | None:
    return shutil.which("prometheus")


class PrometheusServer:
    """One Prometheus process; ``targets`` maps a job name to ``host:port`` addresses."""

    def __init__(self, workdir: Path, targets: Mapping[str, list[str]],
                 scrape_interval_s: float = 1.0) -> None:
        self.workdir = workdir
        self.targets = dict(targets)
        self.scrape_interval_s = scrape_interval_s
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> dict[str, Any]:
        interval = f"{int(self.scrape_interval_s * 1000)}ms"
        return {
            "global": {"scrape_interval": interval, "scrape_timeout": interval,
                       "evaluation_interval": interval},
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": addrs}]}
                for job, addrs in self.targets.items()
            ],
        }

    def start(self) -> PrometheusServer:
        binary = prometheus_binary()
        if binary is None:
            raise RuntimeError("no prometheus binary on PATH: run bash .ci/setup")
        self.workdir.mkdir(parents=True, exist_ok=True)
        cfg = self.workdir / "prometheus.yml"
        cfg.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        for _attempt in range(3):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            log = (self.workdir / "prometheus.log").open("ab")
            self.proc = subprocess.Popen(
                [binary, f"--config.file={cfg}", f"--storage.tsdb.path={self.workdir / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn",
                 "--storage.tsdb.retention.time=1d"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
            log.close()
            if self._wait_ready():
                return self
            self.stop()
        raise RuntimeError(f"prometheus did not become ready; see {self.workdir}/prometheus.log")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            try:
                if requests.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return True
            except requests.RequestException:
                pass
            time.sleep(0.1)
        return False

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the HTTP API -----------------------------------------------------------
    def _api(self, path: str, params: Mapping[str, str | float]) -> Any:
        resp = requests.get(f"{self.url}/api/v1/{path}", params=params, timeout=10)
        body = resp.json()
        if body.get("status") != "success":
            raise PromQLError(f"{body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Instant query; the result vector (or a one-element list for a scalar)."""
        params: dict[str, str | float] = {"query": expr}
        if at is not None:
            params["time"] = at
        data = self._api("query", params)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return list(data["result"])

    def query_range(self, expr: str, start: float, end: float,
                    step_s: float = 1.0) -> list[dict[str, Any]]:
        data = self._api("query_range", {"query": expr, "start": start, "end": end,
                                         "step": step_s})
        return list(data["result"])

    def label_values(self, label: str, match: str) -> list[str]:
        """What Grafana's ``label_values(match, label)`` lists."""
        resp = requests.get(f"{self.url}/api/v1/label/{label}/values",
                            params={"match[]": match}, timeout=10)
        body = resp.json()
        if body.get("status") != "success":
            raise PromQLError(f"{body.get('errorType')}: {body.get('error')}")
        return [str(v) for v in body["data"]]

    def active_targets(self) -> list[dict[str, Any]]:
        return list(self._api("targets", {"state": "active"})["activeTargets"])

    def wait_for(self, expr: str, timeout_s: float) -> list[dict[str, Any]]:
        """Poll ``expr`` until it returns data; the result, or [] at the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = self.query(expr)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.25)
