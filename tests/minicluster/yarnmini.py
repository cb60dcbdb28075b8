"""A real, small Hadoop YARN cluster for yarn-advisor's tests, recordings and demos.

It runs the real daemons from the Hadoop jars that Maven fetches from Maven
Central (``pom.xml`` beside this file; ``~/.m2`` is the jar cache): one
ResourceManager, one JVM per NodeManager (each with its own size and its own
loopback address, 127.0.0.2, 127.0.0.3, ...) and the MapReduce
JobHistoryServer.

Why separate JVMs rather than ``MiniMRYarnCluster`` in one JVM: Guice's
``GuiceFilter`` keeps its pipeline in a static field, so in a single JVM the
last web app started (a NodeManager's) answers every web app's REST routes:
the RM's ``/ws/v1/cluster/*`` and the JobHistory ``/ws/v1/history/*`` return
404 "controller for v1 not found". One JVM per daemon also gives each
NodeManager its own JMX (per-container ``ContainerResource_*`` beans) and its
own size, as on a real cluster.

Configuration: CapacityScheduler with leaf queues ``default``, ``etl`` and
``adhoc``; application priorities (max 10); node labels (centralized, file
store); the scheduler-conf mutation API (in-memory store); container metrics
every second; JobHistory moving finished jobs every 2 s.

Command line (for recordings and demos)::

    python tests/minicluster/yarnmini.py up [--workdir DIR]   # Ctrl-C stops it
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hadoopconf import LOG4J_CONSOLE, capacity_scheduler, rm_yarn_site, write_conf_dir

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
CACHE = Path(os.environ.get("YARN_ADVISOR_CACHE", Path.home() / ".cache" / "yarn-advisor"))

JDK17_OPENS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(
        f"--add-opens=java.base/{pkg}=ALL-UNNAMED"
        for pkg in (
            "java.io", "java.lang", "java.lang.reflect", "java.math", "java.net", "java.text",
            "java.util", "java.util.concurrent", "java.util.zip", "sun.security.util",
            "sun.security.x509",
        )
    ),
]

RM_CLASS = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NM_CLASS = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
JHS_CLASS = "org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer"
SLEEP_JOB = "org.apache.hadoop.mapreduce.SleepJob"
DSHELL = "org.apache.hadoop.yarn.applications.distributedshell.Client"
EXAMPLES = "org.apache.hadoop.examples.ExampleDriver"
TRACE_BUILDER = "org.apache.hadoop.tools.rumen.TraceBuilder"
ANONYMIZER = "org.apache.hadoop.tools.rumen.Anonymizer"


def classpath(pom: Path = POM) -> str:
    """Resolve the jars of ``pom`` (the Hadoop cluster's by default) with Maven,
    cached by the pom's hash."""
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    cp_file = CACHE / f"classpath-{digest}.txt"
    if not cp_file.exists() or not all(Path(p).exists() for p in cp_file.read_text().split(":")):
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = cp_file.with_suffix(".tmp")
        subprocess.run(
            ["mvn", "-B", "-q", "-f", str(pom), "dependency:build-classpath",
             f"-Dmdep.outputFile={tmp}"],
            check=True,
        )
        tmp.replace(cp_file)
    return cp_file.read_text().strip()


def rumen_trace(history: Path, trace: Path) -> Path:
    """Run Hadoop's own Rumen ``TraceBuilder`` over the job history files (and
    job confs) under ``history``, writing the job trace to ``trace``."""
    topology = trace.with_name(trace.name + ".topology.json")
    _rumen(TRACE_BUILDER, "-recursive", trace.resolve().as_uri(),
           topology.resolve().as_uri(), history.resolve().as_uri())
    return trace


def rumen_anonymize(trace: Path, out: Path) -> Path:
    """Run Rumen's ``Anonymizer`` (what public traces go through) on ``trace``."""
    _rumen(ANONYMIZER, "-trace", trace.resolve().as_uri(), out.resolve().as_uri())
    return out


def _rumen(tool: str, *args: str, timeout: float = 120) -> None:
    cmd = ["java", "-Xmx512m", "-cp", classpath(), tool, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=os.environ | {"JAVA_HOME": java_home()})
    if done.returncode != 0:
        raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}")


def java_home() -> str:
    """JAVA_HOME for the daemons and the containers they launch."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if not java:
        raise RuntimeError("java not found: install a JDK 17 (see .ci/setup)")
    return str(Path(java).resolve().parent.parent)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class NodeSpec:
    """The schedulable size of one NodeManager."""

    memory_mb: int
    vcores: int


@dataclass(frozen=True)
class KerberosSetup:
    """What a Kerberized cluster needs from a KDC (tests/kerberos/_kdc.py starts one).

    Every daemon logs in from ``service_keytab`` (rm/, nm/ and jhs/ at ``host``, and
    the HTTP/ principals of every web address: the RM's, the JobHistoryServer's and
    each NodeManager's loopback address); their web endpoints take SPNEGO only. The
    harness itself reads the REST API as ``client_principal`` from ``client_keytab``.
    """

    realm: str
    krb5_conf: Path
    service_keytab: Path
    client_keytab: Path
    client_principal: str
    host: str = "localhost"
    # seconds a hadoop.auth cookie stays valid (Hadoop's default is 10 h); short,
    # so clients go through SPNEGO again within one ticket lifetime
    cookie_validity_s: int = 10

    def principal(self, service: str) -> str:
        return f"{service}/{self.host}@{self.realm}"


@dataclass
class SubmittedApp:
    """A client JVM that submitted (and, for MapReduce, waits on) one application."""

    proc: subprocess.Popen[str]
    log: Path
    app_id: str = ""

    def wait(self, timeout: float = 600) -> int:
        return self.proc.wait(timeout=timeout)


@dataclass
class MiniCluster:
    """One RM, N NodeManagers of the given sizes, and the JobHistoryServer."""

    workdir: Path
    nodes: tuple[NodeSpec, ...] = (NodeSpec(6144, 6), NodeSpec(3072, 3))
    extra_conf: dict[str, object] = field(default_factory=dict)
    kerberos: KerberosSetup | None = None
    # jars on the ResourceManager's classpath only, before Hadoop's (the RM plug-in's)
    rm_classpath: tuple[str, ...] = ()
    # a NodeManager's address instead of 127.0.0.<i+2> (``localhost``: the host a local
    # file's splits name, so MapReduce maps over file:// input have a node-local ask there)
    node_hosts: tuple[str, ...] = ()
    # capacity-scheduler.xml entries beside the queues' defaults (read at the RM's start)
    scheduler_conf: dict[str, object] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    ports: dict[str, int] = field(default_factory=dict)
    clients: list[subprocess.Popen[str]] = field(default_factory=list)

    # --- addresses -------------------------------------------------------
    @property
    def rm_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['rm_web']}"

    @property
    def jhs_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['jhs_web']}"

    @property
    def client_conf_dir(self) -> Path:
        return self.workdir / "conf" / "client"

    @property
    def history_done_dir(self) -> Path:
        """Where the JobHistoryServer keeps finished jobs' ``.jhist`` and confs."""
        return self.workdir / "history" / "done"

    # --- configuration ---------------------------------------------------
    def _common_yarn(self, cp: str) -> dict[str, object]:
        app_cp = f"{self.client_conf_dir}:{cp}"
        return rm_yarn_site(self.workdir, self.ports, max_allocation_mb=4096) | {
            "yarn.nodemanager.aux-services": "mapreduce_shuffle",
            "yarn.nodemanager.aux-services.mapreduce_shuffle.class":
                "org.apache.hadoop.mapred.ShuffleHandler",
            "yarn.nodemanager.container-metrics.period-ms": 1000,
            "yarn.nodemanager.container-metrics.unregister-delay-ms": 5000,
            "yarn.nodemanager.container-monitor.interval-ms": 1000,
            "yarn.nodemanager.resource-monitor.interval-ms": 1000,
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": 100.0,
            "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb": 0,
            "yarn.nodemanager.delete.debug-delay-sec": 0,
            "yarn.application.classpath": app_cp,
            "yarn.resourcemanager.nodemanager-connect-retries": 3,
        }

    def _mapred(self, cp: str) -> dict[str, object]:
        w = self.workdir
        p = self.ports
        return {
            "mapreduce.framework.name": "yarn",
            "yarn.app.mapreduce.am.staging-dir": f"{w}/staging",
            "mapreduce.jobhistory.address": f"127.0.0.1:{p['jhs_rpc']}",
            "mapreduce.jobhistory.webapp.address": f"127.0.0.1:{p['jhs_web']}",
            "mapreduce.jobhistory.admin.address": f"127.0.0.1:{p['jhs_admin']}",
            "mapreduce.jobhistory.intermediate-done-dir": f"{w}/history/intermediate",
            "mapreduce.jobhistory.done-dir": str(self.history_done_dir),
            "mapreduce.jobhistory.move.interval-ms": 2000,
            "mapreduce.application.classpath": f"{self.client_conf_dir}:{cp}",
            "yarn.app.mapreduce.am.resource.mb": 512,
            "yarn.app.mapreduce.am.command-opts": "-Xmx384m",
            "mapreduce.map.memory.mb": 512,
            "mapreduce.reduce.memory.mb": 512,
            "mapreduce.job.ubertask.enable": "false",
            # no speculative attempts: on a loaded 2-core machine they would add
            # containers that tests (and recordings) did not ask for
            "mapreduce.map.speculative": "false",
            "mapreduce.reduce.speculative": "false",
            "mapreduce.job.reduce.slowstart.completedmaps": 1.0,
        }

    def _write_conf(self, name: str, yarn: dict[str, object], mapred: dict[str, object]) -> Path:
        core = {"fs.defaultFS": "file:///", "hadoop.tmp.dir": f"{self.workdir}/tmp/{name}",
                **self._core_security()}
        return write_conf_dir(
            self.workdir / "conf" / name,
            {"core-site": core, "yarn-site": yarn, "mapred-site": mapred,
             "capacity-scheduler": capacity_scheduler(max_am_share=0.5) | self.scheduler_conf},
            "log4j.rootLogger=INFO,console\n" + LOG4J_CONSOLE)

    # --- Kerberos (only with ``kerberos`` set) ----------------------------
    def _core_security(self) -> dict[str, object]:
        """Kerberos for RPC and SPNEGO for every web endpoint (core-site.xml)."""
        k = self.kerberos
        if k is None:
            return {}
        return {
            "hadoop.security.authentication": "kerberos",
            "hadoop.security.authorization": "false",
            # a 60 s test ticket is older than Hadoop's default 60 s relogin guard
            "hadoop.kerberos.min.seconds.before.relogin": 1,
            "hadoop.kerberos.keytab.login.autorenewal.enabled": "true",
            "hadoop.http.filter.initializers":
                "org.apache.hadoop.security.AuthenticationFilterInitializer",
            "hadoop.http.authentication.type": "kerberos",
            # "*": every HTTP/ principal of the keytab, so each daemon answers for the
            # host name a client asks for (localhost, 127.0.0.1, a NodeManager's address)
            "hadoop.http.authentication.kerberos.principal": "*",
            "hadoop.http.authentication.kerberos.keytab": str(k.service_keytab),
            "hadoop.http.authentication.simple.anonymous.allowed": "false",
            "hadoop.http.authentication.token.validity": k.cookie_validity_s,
        }

    def _yarn_security(self) -> dict[str, object]:
        k = self.kerberos
        if k is None:
            return {}
        keytab = str(k.service_keytab)
        return {
            "yarn.resourcemanager.principal": k.principal("rm"),
            "yarn.resourcemanager.keytab": keytab,
            "yarn.resourcemanager.webapp.spnego-principal": "*",
            "yarn.resourcemanager.webapp.spnego-keytab-file": keytab,
            "yarn.nodemanager.principal": k.principal("nm"),
            "yarn.nodemanager.keytab": keytab,
            "yarn.nodemanager.webapp.spnego-principal": "*",
            "yarn.nodemanager.webapp.spnego-keytab-file": keytab,
            # LinuxContainerExecutor would need the setuid container-executor binary
            # (built natively, not on Maven Central) and one OS account per user; the
            # 3.4.2 NodeManager does not insist on it with Kerberos on (containers run
            # as the NodeManager's own user), see tests/kerberos/README.md
            "yarn.nodemanager.container-executor.class": "org.apache.hadoop.yarn.server."
            "nodemanager.DefaultContainerExecutor",
        }

    def _mapred_security(self) -> dict[str, object]:
        k = self.kerberos
        if k is None:
            return {}
        keytab = str(k.service_keytab)
        return {
            "mapreduce.jobhistory.principal": k.principal("jhs"),
            "mapreduce.jobhistory.keytab": keytab,
            "mapreduce.jobhistory.webapp.spnego-principal": "*",
            "mapreduce.jobhistory.webapp.spnego-keytab-file": keytab,
        }

    def _java_security(self) -> list[str]:
        if self.kerberos is None:
            return []
        return [f"-Djava.security.krb5.conf={self.kerberos.krb5_conf}"]

    def kerberos_env(self, ccache: Path) -> dict[str, str]:
        """Environment of a process that uses the KDC (MIT tools, Java clients)."""
        if self.kerberos is None:
            return {}
        return {"KRB5_CONFIG": str(self.kerberos.krb5_conf), "KRB5CCNAME": f"FILE:{ccache}"}

    def _negotiate(self, url: str) -> dict[str, str]:
        """An SPNEGO ``Authorization`` header for ``url`` (python-gssapi, imported only
        in Kerberos mode), from a fresh login with the harness's client keytab."""
        k = self.kerberos
        if k is None:
            return {}
        import base64
        from urllib.parse import urlsplit

        import gssapi  # type: ignore[import-not-found, unused-ignore]

        os.environ.setdefault("KRB5_CONFIG", str(k.krb5_conf))
        creds = gssapi.Credentials(
            name=gssapi.Name(k.client_principal, gssapi.NameType.kerberos_principal),
            usage="initiate",
            store={"client_keytab": str(k.client_keytab),
                   "ccache": f"MEMORY:yarnmini-{id(self)}"})
        target = gssapi.Name(f"HTTP@{urlsplit(url).hostname}",
                             gssapi.NameType.hostbased_service)
        token = gssapi.SecurityContext(name=target, creds=creds, usage="initiate").step()
        return {"Authorization": "Negotiate " + base64.b64encode(token).decode()}

    # --- lifecycle -------------------------------------------------------
    def start(self, timeout: float = 180, attempts: int = 3) -> None:
        """Start every daemon and wait until the RM is active with all its nodes.

        A port picked free (``free_port``) can be taken by another process before its
        daemon binds it (more so with test processes side by side): a start whose daemon
        exits on a taken address is tried again on new ports, up to ``attempts`` times."""
        for attempt in range(1, attempts + 1):
            try:
                self._start_once(timeout)
                return
            except RuntimeError:
                if attempt == attempts or not self._address_was_taken():
                    raise
                self.ports.clear()

    def _address_was_taken(self) -> bool:
        """Whether a daemon's log of the last start says its address was in use."""
        return any(b"Address already in use" in log.read_bytes() or
                   b"BindException" in log.read_bytes()
                   for log in self.workdir.glob("*.log"))

    def _start_once(self, timeout: float) -> None:
        cp = classpath()
        self.workdir.mkdir(parents=True, exist_ok=True)
        for key in ("rm_rpc", "rm_sched", "rm_tracker", "rm_admin", "rm_web",
                    "jhs_rpc", "jhs_web", "jhs_admin"):
            self.ports[key] = free_port()
        yarn = self._common_yarn(cp) | self._yarn_security() | self.extra_conf
        mapred = self._mapred(cp) | self._mapred_security()
        self._write_conf("client", yarn, mapred)
        rm_cp = ":".join((*self.rm_classpath, cp))
        self._spawn("rm", RM_CLASS, self._write_conf("rm", yarn, mapred), rm_cp, heap="768m")
        for i, spec in enumerate(self.nodes):
            host = self.node_hosts[i] if i < len(self.node_hosts) else f"127.0.0.{i + 2}"
            nm = yarn | {
                "yarn.nodemanager.hostname": host,
                "yarn.nodemanager.address": f"{host}:0",
                "yarn.nodemanager.localizer.address": f"{host}:{free_port()}",
                "yarn.nodemanager.webapp.address": f"{host}:{free_port()}",
                "yarn.nodemanager.resource.memory-mb": spec.memory_mb,
                "yarn.nodemanager.resource.cpu-vcores": spec.vcores,
                "yarn.nodemanager.local-dirs": f"{self.workdir}/nm{i}/local",
                "yarn.nodemanager.log-dirs": f"{self.workdir}/nm{i}/logs",
            }
            # mapred-default.xml loads after yarn-site.xml, so the shuffle port
            # (one per NodeManager on this host) must be set in mapred-site.xml.
            nm_mapred = mapred | {"mapreduce.shuffle.port": free_port()}
            self._spawn(f"nm{i}", NM_CLASS, self._write_conf(f"nm{i}", nm, nm_mapred), cp,
                        heap="384m")
        self._spawn("jhs", JHS_CLASS, self._write_conf("jhs", yarn, mapred), cp, heap="512m")
        (self.workdir / "details.json").write_text(json.dumps(
            {"rm_url": self.rm_url, "jhs_url": self.jhs_url, "ports": self.ports}, indent=1))
        self._wait_ready(timeout)

    def _spawn(self, name: str, cls: str, conf: Path, cp: str, heap: str) -> None:
        env = os.environ | {"JAVA_HOME": java_home(), "HADOOP_CONF_DIR": str(conf)}
        cmd = ["java", f"-Xmx{heap}", *JDK17_OPENS, *self._java_security(),
               f"-Dhadoop.log.dir={self.workdir}/logs/{name}", "-cp", f"{conf}:{cp}", cls]
        with open(self.workdir / f"{name}.log", "wb") as log:  # the child keeps its own copy
            self.procs.append(subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                start_new_session=True))
        if len(self.procs) == 1:
            atexit.register(self.stop)

    def _get(self, url: str) -> Any:
        req = urllib.request.Request(url, headers={"Accept": "application/json",
                                                   **self._negotiate(url)})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.load(resp)

    def read(self, url: str) -> Any:
        """GET a JSON body as the harness itself (in Kerberos mode: SPNEGO as its own
        client principal), independently of the advisor's connectors."""
        return self._get(url)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = "nothing answered"
        while time.monotonic() < deadline:
            dead = [p.args[-1] for p in self.procs if p.poll() is not None]
            if dead:
                self.stop()
                raise RuntimeError(f"daemon exited during start-up: {dead}; see {self.workdir}")
            try:
                info = self._get(f"{self.rm_url}/ws/v1/cluster/info")["clusterInfo"]
                nodes = self._get(f"{self.rm_url}/ws/v1/cluster/nodes")["nodes"] or {}
                running = [n for n in nodes.get("node", []) if n["state"] == "RUNNING"]
                self._get(f"{self.jhs_url}/ws/v1/history/info")
                last = f"RM {info['state']}/{info['haState']}, {len(running)} nodes running"
                if info["haState"] == "ACTIVE" and len(running) == len(self.nodes):
                    return
            except (OSError, ValueError, KeyError, TypeError) as exc:
                last = repr(exc)
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"mini cluster not ready after {timeout}s: {last}; see {self.workdir}")

    def start_standby_rm(self, timeout: float = 120) -> str:
        """Start a second, real ResourceManager that stays STANDBY; return its URL.

        It runs in RM HA mode (ids rm1 = the active RM's addresses, rm2 = its
        own) with automatic failover off, so nothing ever makes it active: it
        answers ``/ws/v1/cluster/info`` with haState STANDBY and every other
        REST path the way a real standby does.
        """
        cp = classpath()
        ports = {k: free_port() for k in ("rpc", "sched", "tracker", "admin", "web")}
        conf: dict[str, object] = {
            "yarn.resourcemanager.ha.enabled": "true",
            "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
            "yarn.resourcemanager.ha.id": "rm2",
            "yarn.resourcemanager.cluster-id": "yarn-advisor-test",
            "yarn.resourcemanager.ha.automatic-failover.enabled": "false",
            "yarn.resourcemanager.recovery.enabled": "false",
            "yarn.resourcemanager.scheduler.class": "org.apache.hadoop.yarn.server."
            "resourcemanager.scheduler.capacity.CapacityScheduler",
        }
        for rm_id, p in (("rm1", {"rpc": self.ports["rm_rpc"], "sched": self.ports["rm_sched"],
                                  "tracker": self.ports["rm_tracker"],
                                  "admin": self.ports["rm_admin"], "web": self.ports["rm_web"]}),
                         ("rm2", ports)):
            conf |= {
                f"yarn.resourcemanager.address.{rm_id}": f"127.0.0.1:{p['rpc']}",
                f"yarn.resourcemanager.scheduler.address.{rm_id}": f"127.0.0.1:{p['sched']}",
                f"yarn.resourcemanager.resource-tracker.address.{rm_id}":
                    f"127.0.0.1:{p['tracker']}",
                f"yarn.resourcemanager.admin.address.{rm_id}": f"127.0.0.1:{p['admin']}",
                f"yarn.resourcemanager.webapp.address.{rm_id}": f"127.0.0.1:{p['web']}",
            }
        conf_dir = self._write_conf("rm-standby", conf, {})
        self._spawn("rm-standby", RM_CLASS, conf_dir, cp, heap="512m")
        url = f"http://127.0.0.1:{ports['web']}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self._get(f"{url}/ws/v1/cluster/info")["clusterInfo"]["haState"] == "STANDBY":
                    return url
            except (OSError, ValueError, KeyError, TypeError):
                pass
            time.sleep(0.5)
        raise TimeoutError(f"standby RM did not come up at {url}")

    def stop(self, grace_s: float = 5.0) -> None:
        """End the clients, then the daemons: SIGTERM, ``grace_s`` for their shutdown
        hooks, then SIGKILL. Nothing reads a stopped cluster's files, and Hadoop's hooks
        took about 20 s a teardown (its default hook timeout is 30 s)."""
        for c in self.clients:
            if c.poll() is None:
                c.kill()
            c.wait()
        self.clients.clear()
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.procs.clear()
        self._kill_leftovers()

    def _kill_leftovers(self) -> None:
        """Containers run in sessions of their own; end any still naming our workdir."""
        marker = str(self.workdir).encode()
        for proc_dir in Path("/proc").glob("[0-9]*"):
            try:
                if marker in (proc_dir / "cmdline").read_bytes():
                    os.kill(int(proc_dir.name), signal.SIGKILL)
            except (OSError, ValueError):
                continue

    def rss_mb(self) -> int:
        """Resident memory of the daemons (MiB), for the closing note."""
        total = 0
        for p in self.procs:
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        return total // 1024

    # --- workloads -------------------------------------------------------
    def _client(self, args: list[str], name: str, user: str = "") -> SubmittedApp:
        cp = classpath()
        stamp = time.monotonic_ns()
        log = self.workdir / f"client-{name}-{stamp}.log"
        cmd = ["java", "-Xmx256m", *JDK17_OPENS, *self._java_security(),
               "-cp", f"{self.client_conf_dir}:{cp}", *args]
        env = os.environ | {"JAVA_HOME": java_home(), "HADOOP_CONF_DIR": str(self.client_conf_dir)}
        if user:  # simple authentication: the client submits as this user
            env["HADOOP_USER_NAME"] = user
        if self.kerberos is not None:  # the client JVM reads a fresh ticket cache
            env |= self.kerberos_env(self.workdir / f"client-{name}-{stamp}.cc")
            subprocess.run(["kinit", "-kt", str(self.kerberos.client_keytab),
                            self.kerberos.client_principal], env=env, check=True, timeout=30)
        with open(log, "w") as fh:  # the child keeps its own copy
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, text=True, env=env,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.clients.append(proc)
        return SubmittedApp(proc, log)

    def _await_app_id(self, app: SubmittedApp, timeout: float = 120) -> SubmittedApp:
        deadline = time.monotonic() + timeout
        pattern = re.compile(r"(application_\d+_\d+)")
        while time.monotonic() < deadline:
            m = pattern.search(app.log.read_text(errors="replace"))
            if m:
                app.app_id = m.group(1)
                return app
            if app.proc.poll() is not None:
                tail = app.log.read_text()[-2000:]
                raise RuntimeError(f"client exited before submitting: {tail}")
            time.sleep(0.2)
        raise TimeoutError(f"no application id in {app.log}")

    def sleep_job(self, *, queue: str = "default", maps: int = 2, reduces: int = 1,
                  map_ms: int = 5000, reduce_ms: int = 2000, map_mb: int = 512,
                  reduce_mb: int = 512, map_vcores: int = 1, reduce_vcores: int = 1,
                  priority: int | None = None, tags: str = "",
                  conf: dict[str, object] | None = None, name: str = "",
                  user: str = "") -> SubmittedApp:
        """Submit a real MapReduce SleepJob; returns once the RM knows its id.
        ``name``: the job is named ``Sleep job - <name>`` (SleepJob's -name);
        ``user``: submitted as this user (HADOOP_USER_NAME, simple auth)."""
        d: dict[str, object] = {
            "mapreduce.job.queuename": queue,
            "mapreduce.map.memory.mb": map_mb,
            "mapreduce.reduce.memory.mb": reduce_mb,
            "mapreduce.map.cpu.vcores": map_vcores,
            "mapreduce.reduce.cpu.vcores": reduce_vcores,
        }
        if priority is not None:
            d["mapreduce.job.priority"] = priority
        if user:  # the client refuses a staging directory owned by another (the OS) user
            d["yarn.app.mapreduce.am.staging-dir"] = (
                self.workdir / f"staging-{user}-{time.monotonic_ns()}")
        if tags:
            d["mapreduce.job.tags"] = tags
        d |= conf or {}
        args = [SLEEP_JOB, *(a for k, v in d.items() for a in ("-D", f"{k}={v}")),
                "-m", str(maps), "-r", str(reduces), "-mt", str(map_ms), "-rt", str(reduce_ms)]
        if name:
            args += ["-name", name]
        return self._await_app_id(self._client(args, "sleep", user))

    def example_job(self, program: str, *args: str, queue: str = "default",
                    conf: dict[str, object] | None = None) -> SubmittedApp:
        """Submit a program of hadoop-mapreduce-examples (``wordcount IN OUT``, ...);
        returns once the RM knows its id."""
        d: dict[str, object] = {"mapreduce.job.queuename": queue, **(conf or {})}
        argv = [EXAMPLES, program, *(a for k, v in d.items() for a in ("-D", f"{k}={v}")),
                *args]
        return self._await_app_id(self._client(argv, program))

    def distributed_shell(self, *, queue: str = "adhoc", containers: int = 2,
                          command: str = "sleep 30", container_mb: int = 256,
                          container_vcores: int = 1, master_mb: int = 256,
                          name: str = "dshell", priority: int = 0,
                          task_priority: int = 0) -> SubmittedApp:
        """Submit a real distributed-shell application (``task_priority``: the request
        priority of its shell containers; its AM's is 0)."""
        jar = next(p for p in classpath().split(":") if "distributedshell" in p)
        args = [DSHELL, "-jar", jar, "-shell_command", command,
                "-num_containers", str(containers), "-container_memory", str(container_mb),
                "-container_vcores", str(container_vcores), "-master_memory", str(master_mb),
                "-queue", queue, "-appname", name, "-priority", str(priority),
                "-shell_cmd_priority", str(task_priority)]
        return self._await_app_id(self._client(args, "dshell"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a cluster and keep it up until Ctrl-C")
    up.add_argument("--workdir", type=Path, default=None)
    sub.add_parser("classpath", help="resolve (and cache) the Hadoop jars")
    args = ap.parse_args(argv)
    if args.cmd == "classpath":
        print(f"{len(classpath().split(':'))} jars resolved")
        return 0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="yarn-mini-"))
    cluster = MiniCluster(workdir)
    t0 = time.monotonic()
    cluster.start()
    print(json.dumps({"rm_url": cluster.rm_url, "jhs_url": cluster.jhs_url,
                      "workdir": str(workdir), "start_s": round(time.monotonic() - t0, 1),
                      "rss_mb": cluster.rss_mb()}), flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
