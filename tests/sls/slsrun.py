"""Hadoop's Scheduler Load Simulator (SLS) as a real ResourceManager with hundreds of nodes.

SLS (hadoop-sls 3.4.2, jars from Maven Central via ``pom.xml`` beside this
file, cached in ``~/.m2``) runs the real ResourceManager and CapacityScheduler
in one JVM with simulated NodeManagers and MapReduce AMs that talk to it
in-process, replaying a trace in real time. This module writes the
configuration (the same queues and levers as the mini cluster), a nodes file
and a trace (``workload.py``), compiles and starts ``SlsLauncher.java``
(why a launcher: see its header), waits until every simulated node is RUNNING,
and reads progress and per-app times back from the RM's REST API.

Never submit an application to this RM from outside: SLS's ``MockAMLauncher``
finds no simulated AM for it and throws in the RM's dispatcher.

Command line::

    python tests/sls/slsrun.py up [--nodes 500] [--racks 20] [--load 0.9] [--window 480]
    python tests/sls/slsrun.py classpath
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "minicluster"))
sys.path.insert(0, str(HERE))

from slsconf import SimSettings, write_conf  # noqa: E402
from workload import (  # noqa: E402
    SimNode,
    TraceJob,
    TraceSpec,
    TraceSummary,
    build_trace,
    make_nodes,
    manifest_path,
    read_manifest,
    summary_dict,
    write_nodes,
    write_trace,
)
from yarnmini import JDK17_OPENS, java_home  # noqa: E402
from yarnmini import free_port as free_port  # noqa: E402

POM = HERE / "pom.xml"
JAVA_SOURCES = (HERE / "SlsLauncher.java", HERE / "UnregisterFirstMRAMSimulator.java")
CACHE = Path(os.environ.get("YARN_ADVISOR_CACHE", Path.home() / ".cache" / "yarn-advisor"))
FINAL_STATES = ("FINISHED", "KILLED", "FAILED")


def classpath() -> str:
    """Resolve hadoop-sls and the RM with Maven (cached by the pom's hash)."""
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:16]
    cp_file = CACHE / f"sls-classpath-{digest}.txt"
    if not cp_file.exists() or not all(Path(p).exists() for p in cp_file.read_text().split(":")):
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = cp_file.with_suffix(".tmp")
        subprocess.run(["mvn", "-B", "-q", "-f", str(POM), "dependency:build-classpath",
                        f"-Dmdep.outputFile={tmp}"], check=True)
        tmp.replace(cp_file)
    return cp_file.read_text().strip()


def launcher_classes(cp: str) -> Path:
    """Compile our Java (SlsLauncher and the AM simulator) against ``cp``; cached
    by the sources' and the classpath's hash."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in JAVA_SOURCES)
                            + cp.encode()).hexdigest()[:16]
    out = CACHE / f"sls-launcher-{digest}"
    if not (out / "SlsLauncher.class").exists():
        tmp = out.with_name(out.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(tmp),
                        *map(str, JAVA_SOURCES)], check=True, capture_output=True)
        if not out.exists():
            tmp.replace(out)
    return out


@dataclass(frozen=True)
class AppTimes:
    """One trace job as the RM saw it (epoch ms; finished 0 = not yet). SLS's
    RM never knows launch times (-1, see README): MockAMLauncher sends the
    attempt's LAUNCHED event without a timestamp."""

    job_id: str
    app_id: str
    queue: str
    state: str
    started_ms: int
    launched_ms: int
    finished_ms: int


@dataclass
class SlsCluster:
    """One SLS JVM: the real RM, ``nodes`` simulated NMs, the trace's simulated AMs."""

    workdir: Path
    nodes: int = 500
    racks: int = 20
    trace: TraceSpec = field(default_factory=TraceSpec)
    heap_mb: int = 1024
    nm_heartbeat_ms: int = 1000
    am_heartbeat_ms: int = 1000
    nm_utilization_ratio: float = 0.5  # see slsconf.SimSettings
    rm_web_port: int = 0  # 0: a free loopback port
    extra_conf: dict[str, object] = field(default_factory=dict)
    # jars before SLS's own on the RM's classpath (the RM plug-in's)
    rm_classpath: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    ports: dict[str, int] = field(default_factory=dict)
    sim_nodes: list[SimNode] = field(default_factory=list)
    summary: TraceSummary | None = None
    trace_zero_ms: int = 0
    start_s: float = 0.0

    # --- files and addresses -------------------------------------------
    @property
    def rm_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['rm_web']}"

    @property
    def conf_dir(self) -> Path:
        return self.workdir / "conf"

    @property
    def nodes_file(self) -> Path:
        return self.workdir / "nodes.json"

    @property
    def trace_file(self) -> Path:
        return self.workdir / "trace.json"

    @property
    def output_dir(self) -> Path:
        return self.workdir / "out"

    @property
    def log_file(self) -> Path:
        return self.workdir / "sls.log"

    def _write_workload(self) -> TraceSummary:
        self.sim_nodes = make_nodes(self.nodes, self.racks)
        write_nodes(self.sim_nodes, self.nodes_file)
        placed, self.summary = build_trace(self.sim_nodes, self.trace)
        write_trace(placed, self.sim_nodes, self.trace.locality, self.trace_file)
        return self.summary

    def _write_hosts(self) -> Path:
        """The JVM's whole name service (``-Djdk.net.hosts.file``): this host and
        the simulated nodes, so nothing in the RM ever asks DNS."""
        path = self.workdir / "hosts"
        names = " ".join(dict.fromkeys(("localhost", socket.gethostname(), socket.getfqdn())))
        path.write_text(f"127.0.0.1 {names}\n"
                        + "".join(f"{n.host} {n.host}\n" for n in self.sim_nodes))
        return path

    # --- lifecycle -------------------------------------------------------
    def start(self, timeout: float = 300) -> None:
        t0 = time.monotonic()
        cp = classpath()
        classes = launcher_classes(cp)
        self.workdir.mkdir(parents=True, exist_ok=True)
        for key in ("rm_rpc", "rm_sched", "rm_tracker", "rm_admin"):
            self.ports[key] = free_port()
        self.ports["rm_web"] = self.rm_web_port or free_port()
        sim = SimSettings(self._write_workload().task_mb, self.nm_heartbeat_ms,
                          self.am_heartbeat_ms, self.nm_utilization_ratio)
        write_conf(self.conf_dir, self.workdir, self.ports, sim, self.extra_conf)
        cmd = ["java", f"-Xmx{self.heap_mb}m", *JDK17_OPENS,
               f"-Djdk.net.hosts.file={self._write_hosts()}",
               f"-Dhadoop.log.dir={self.workdir}/logs",
               "-cp", ":".join((str(self.conf_dir), *self.rm_classpath, str(classes), cp)),
               "SlsLauncher", str(self.output_dir),
               str(manifest_path(self.trace_file)),
               "-tracetype", "RUMEN", "-tracelocation", str(self.trace_file),
               "-nodes", str(self.nodes_file), "-output", str(self.output_dir)]
        env = os.environ | {"JAVA_HOME": java_home(), "HADOOP_CONF_DIR": str(self.conf_dir)}
        with open(self.log_file, "wb") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True)
        atexit.register(self.stop)
        (self.workdir / "details.json").write_text(json.dumps({
            "rm_url": self.rm_url, "ports": self.ports, "pid": self.proc.pid,
            "nodes_file": str(self.nodes_file), "trace_file": str(self.trace_file),
            "trace": summary_dict(self.summary) if self.summary else None}, indent=1))
        self._wait_ready(timeout)
        self.start_s = time.monotonic() - t0

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        ready = self.output_dir / "ready.json"
        last = "nothing answered"
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"SLS exited during start-up; see {self.log_file}:\n"
                                   + self.log_file.read_text(errors="replace")[-3000:])
            try:
                if ready.exists():
                    self.trace_zero_ms = int(json.loads(ready.read_text())["trace_zero_ms"])
                    info = self.get("/ws/v1/cluster/info")["clusterInfo"]
                    running = self.get("/ws/v1/cluster/metrics")["clusterMetrics"]["activeNodes"]
                    last = f"RM {info['haState']}, {running} nodes RUNNING"
                    if info["haState"] == "ACTIVE" and running == self.nodes:
                        return
                else:
                    last = "SLS still registering nodes"
            except (OSError, ValueError, KeyError, TypeError) as exc:
                last = repr(exc)
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"SLS not ready after {timeout}s: {last}; see {self.log_file}")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    # --- measurements ----------------------------------------------------
    def _proc_status(self, key: str) -> int:
        if self.proc is None:
            return 0
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
        return 0

    def rss_mb(self) -> int:
        """Resident memory of the SLS JVM (MiB)."""
        return self._proc_status("VmRSS:") // 1024

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the SLS JVM has used so far."""
        if self.proc is None:
            return 0.0
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    # --- reading the RM --------------------------------------------------
    def get(self, path: str, timeout: float = 30) -> Any:
        req = urllib.request.Request(f"{self.rm_url}{path}",
                                     headers={"Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.load(resp)

    def trace_jobs(self) -> list[TraceJob]:
        """The trace's jobs (id, submission, queue, source), in submission order."""
        return read_manifest(self.trace_file)

    def app_ids(self) -> dict[str, str]:
        """Trace job id -> application id, for the AMs SLS has submitted so far."""
        path = self.output_dir / "apps.tsv"
        if not path.exists():
            return {}
        rows = (line.split("\t") for line in path.read_text().splitlines() if "\t" in line)
        return {job: app for job, app in rows}

    def progress(self) -> dict[str, int]:
        """Counts from /cluster/metrics: every app in this RM comes from the trace."""
        m = self.get("/ws/v1/cluster/metrics")["clusterMetrics"]
        done = sum(int(m[k]) for k in ("appsCompleted", "appsKilled", "appsFailed"))
        return {"trace_jobs": len(self.trace_jobs()), "submitted": int(m["appsSubmitted"]),
                "pending": int(m["appsPending"]), "running": int(m["appsRunning"]),
                "done": done}

    def finished(self) -> bool:
        p = self.progress()
        return p["done"] >= p["trace_jobs"]

    def wait_finished(self, timeout: float, poll_s: float = 5.0) -> dict[str, int]:
        deadline = time.monotonic() + timeout
        while True:
            p = self.progress()
            if p["done"] >= p["trace_jobs"]:
                return p
            if time.monotonic() > deadline:
                raise TimeoutError(f"trace not finished after {timeout}s: {p}")
            time.sleep(poll_s)

    def app_times(self) -> list[AppTimes]:
        """Every trace job the RM knows, with its RM times (from /cluster/apps)."""
        body = self.get("/ws/v1/cluster/apps", timeout=120).get("apps") or {}
        by_app = {a["id"]: a for a in body.get("app") or []}
        out = []
        for job, app_id in self.app_ids().items():
            a = by_app.get(app_id)
            if a is not None:
                out.append(AppTimes(job, app_id, str(a["queue"]), str(a["state"]),
                                    int(a["startedTime"]), int(a.get("launchTime", -1)),
                                    int(a["finishedTime"])))
        return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start SLS and keep it up until Ctrl-C")
    up.add_argument("--workdir", type=Path, default=None)
    up.add_argument("--nodes", type=int, default=500)
    up.add_argument("--racks", type=int, default=20)
    up.add_argument("--load", type=float, default=TraceSpec.load)
    up.add_argument("--window", type=int, default=TraceSpec.window_s,
                    help="arrival window of the trace, seconds")
    up.add_argument("--seed", type=int, default=TraceSpec.seed)
    up.add_argument("--heap-mb", type=int, default=1024)
    up.add_argument("--rm-port", type=int, default=0,
                    help="the RM's web (REST) port on 127.0.0.1; default: a free one")
    sub.add_parser("classpath", help="resolve (and cache) the SLS jars, compile the launcher")
    args = ap.parse_args(argv)
    if args.cmd == "classpath":
        cp = classpath()
        launcher_classes(cp)
        print(f"{len(cp.split(':'))} jars resolved, launcher compiled")
        return 0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="yarn-sls-"))
    cluster = SlsCluster(workdir, nodes=args.nodes, racks=args.racks, heap_mb=args.heap_mb,
                         rm_web_port=args.rm_port,
                         trace=TraceSpec(window_s=args.window, load=args.load, seed=args.seed))
    cluster.start()
    print(json.dumps({"rm_url": cluster.rm_url, "workdir": str(workdir),
                      "nodes_file": str(cluster.nodes_file),
                      "trace_file": str(cluster.trace_file),
                      "trace": summary_dict(cluster.summary) if cluster.summary else None,
                      "start_s": round(cluster.start_s, 1), "rss_mb": cluster.rss_mb()}),
          flush=True)
    stop_on = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_on)  # delivered to sigwait, not fatal
    try:
        signal.sigwait(stop_on)
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
