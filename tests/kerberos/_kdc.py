"""Hadoop's own test KDC (``hadoop-minikdc`` 3.4.2, Apache Kerby inside) in a JVM.

``TestKdc.java`` beside this file starts ``org.apache.hadoop.minikdc.MiniKdc``
on a free loopback port with a short maximum ticket lifetime, writes one keytab
per role, and stops when its standard input closes (so it never outlives the
test session). The KDC logs every ticket it issues (``AS_REQ ISSUE: ...
advisor@EXAMPLE.COM for krbtgt/...``): :meth:`Kdc.initial_tickets` counts them,
an independent witness of how often a client logged in again.

The krb5.conf written here serves both the MIT library (the advisor, through
python-gssapi; ``kinit``) and the JVMs (``-Djava.security.krb5.conf``).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "minicluster"))

from yarnmini import classpath, java_home  # noqa: E402

KDC_POM = HERE / "pom.xml"
KDC_MAIN = HERE / "TestKdc.java"


@dataclass
class Kdc:
    """One MiniKdc; ``keytabs`` maps a keytab's file name to the principals it holds
    (written without the realm, as MiniKdc takes them)."""

    workdir: Path
    keytabs: dict[str, list[str]]
    lifetime_s: int = 60
    realm: str = ""
    port: int = 0
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def krb5_conf(self) -> Path:
        return self.workdir / "krb5.conf"

    @property
    def log(self) -> Path:
        return self.workdir / "kdc.log"

    def keytab(self, name: str) -> Path:
        return self.workdir / name

    def principal(self, name: str) -> str:
        return f"{name}@{self.realm}"

    def start(self, timeout: float = 120) -> Kdc:
        self.workdir.mkdir(parents=True, exist_ok=True)
        specs = [f"{self.keytab(name)}={','.join(princs)}" for name, princs in self.keytabs.items()]
        cmd = ["java", "-Xmx192m", "-cp", classpath(KDC_POM), str(KDC_MAIN),
               str(self.workdir), str(self.lifetime_s), *specs]
        with open(self.log, "wb") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                env={"PATH": "/usr/bin:/bin", "JAVA_HOME": java_home()},
                start_new_session=True)
        props = self.workdir / "kdc.properties"
        deadline = time.monotonic() + timeout
        while not props.exists() or b"READY" not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the KDC did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.2)
        values = dict(line.split("=", 1) for line in props.read_text().splitlines()
                      if "=" in line and not line.startswith("#"))
        self.realm, self.port = values["realm"], int(values["port"])
        self.write_krb5_conf(self.krb5_conf)
        return self

    def write_krb5_conf(self, path: Path, **libdefaults: object) -> Path:
        """A krb5.conf for this KDC; ``libdefaults`` add or override settings (e.g.
        ``kdc_timesync=0``). No DNS: host names are taken as written."""
        settings: dict[str, object] = {
            "default_realm": self.realm,
            "dns_lookup_realm": "false",
            "dns_lookup_kdc": "false",
            "rdns": "false",
            "dns_canonicalize_hostname": "false",
            "udp_preference_limit": 1,
            "forwardable": "false",
        } | libdefaults
        lines = ["[libdefaults]", *(f"  {k} = {v}" for k, v in settings.items()),
                 "[realms]", f"  {self.realm} = {{", f"    kdc = 127.0.0.1:{self.port}", "  }",
                 "[domain_realm]", f"  localhost = {self.realm}", ""]
        path.write_text("\n".join(lines))
        return path

    def initial_tickets(self, principal: str) -> int:
        """How many initial tickets (AS exchanges) the KDC issued to ``principal``."""
        needle = f"{principal} for krbtgt/".encode()
        return sum(1 for line in self.log.read_bytes().splitlines()
                   if b"AS_REQ ISSUE" in line and needle in line)

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def write_keytab(path: Path, principal: str, password: str,
                 enctype: str = "aes128-cts-hmac-sha1-96") -> Path:
    """A keytab holding ``principal``'s key derived from ``password`` (MIT ``ktutil``):
    for a principal the KDC knows, a key the KDC does not have (a stale keytab); for
    one it does not know, a keytab of a principal that does not exist."""
    script = (f"addent -password -p {principal} -k 1 -e {enctype}\n{password}\n"
              f"wkt {path}\nquit\n")
    subprocess.run(["ktutil"], input=script, text=True, check=True, capture_output=True,
                   timeout=30)
    return path
