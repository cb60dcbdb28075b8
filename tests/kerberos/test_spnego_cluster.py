"""The advisor reads and writes a Kerberized RM and JobHistoryServer through SPNEGO.

The cluster (``conftest.kerberized_cluster``) runs Kerberos RPC and SPNEGO-only web
endpoints with YARN ACLs on. The advisor logs in from its own keytab; every write is
read back by the harness (its own GSSAPI code, as another principal).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from _advisor import advisor_config, advisor_raw, kerberos_http, live_advisor
from _kdc import Kdc
from rmwrites import JsonWrites
from yarnmini import MiniCluster

from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.connectors.errors import AuthError
from yarn_advisor.connectors.http import AuthConfig, HttpClient, RetryPolicy
from yarn_advisor.connectors.rm.client import RMClient

pytestmark = [pytest.mark.kerberos, pytest.mark.cluster]
DELAY = "yarn.scheduler.capacity.node-locality-delay"


def nodes(cluster: MiniCluster) -> list[dict[str, Any]]:
    return list(cluster.read(f"{cluster.rm_url}/ws/v1/cluster/nodes")["nodes"]["node"])


def node_total(cluster: MiniCluster, node_id: str, expected: dict[str, int],
               timeout: float = 20) -> dict[str, int]:
    """The node's total resource as the harness reads it, once it is ``expected`` or
    ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        total = next(n for n in nodes(cluster) if n["id"] == node_id)["totalResource"]
        now = {"memory_mb": total["memory"], "vcores": total["vCores"]}
        if now == expected or time.monotonic() > deadline:
            return now
        time.sleep(0.5)


def test_no_ticket_no_answer(kerberized_cluster: MiniCluster) -> None:
    """Without SPNEGO (no auth, or simple auth's user.name) every web endpoint says 401:
    the RM's, the JobHistoryServer's and a NodeManager's."""
    nm = nodes(kerberized_cluster)[0]["nodeHTTPAddress"]
    urls = [f"{kerberized_cluster.rm_url}/ws/v1/cluster/info",
            f"{kerberized_cluster.jhs_url}/ws/v1/history/info", f"http://{nm}/jmx"]
    for method in ("none", "simple"):
        client = HttpClient(auth=AuthConfig(method), retry=RetryPolicy(attempts=1))
        for url in urls:
            with pytest.raises(AuthError) as err:
                client.get_json(url)
            assert err.value.status == 401 and err.value.reason == "auth", url


def test_a_cycle_reads_every_source(kdc: Kdc, kerberized_cluster: MiniCluster,
                                    tmp_path: Path) -> None:
    """One advisor cycle: the RM (REST and JMX), the NodeManagers' JMX and the
    JobHistoryServer, all through SPNEGO; the RM knows the caller as the advisor."""
    advisor, http = live_advisor(advisor_config(kdc, kerberized_cluster, tmp_path))
    report = advisor.run_once()
    assert report.outcome == "ok", report.reason
    bad = {name: s.last_error for name, s in report.sources.items() if not s.ok or s.errors}
    assert not bad and report.sources, bad
    assert report.snapshot is not None
    assert {n.host for n in report.snapshot.nodes} == {"127.0.0.2", "127.0.0.3"}
    assert {"default", "etl", "adhoc"} <= {q.name for q in report.snapshot.queues}
    # the signed cookies the services' authentication filters answered with name the
    # caller (one per host: the RM's and the JobHistoryServer's share 127.0.0.1)
    cookies = {c.domain: c.value or "" for c in http.session.cookies if c.name == "hadoop.auth"}
    assert set(cookies) >= {"127.0.0.1", "127.0.0.2", "127.0.0.3"}, cookies
    for value in cookies.values():
        assert f"u=advisor&p={kdc.principal('advisor')}&t=kerberos" in value


def test_the_levers_change_the_rm(kdc: Kdc, kerberized_cluster: MiniCluster,
                                  tmp_path: Path) -> None:
    """Scheduler configuration, node resource and application priority, each written
    through SPNEGO and read back by the harness, then restored."""
    c = kerberized_cluster
    app = c.sleep_job(maps=1, reduces=0, map_ms=120_000, queue="etl")
    http = kerberos_http(advisor_config(kdc, c, tmp_path))
    writer = JsonWrites(RMClient(http, [c.rm_url]))
    conf = f"{c.rm_url}/ws/v1/cluster/scheduler-conf"

    def delay() -> str:
        props = c.read(conf)["property"]
        return next(p["value"] for p in props if p["name"] == DELAY)

    before = delay()
    out = writer.apply(Kind.UPDATE_SCHEDULER_CONF, "scheduler", {DELAY: 7})
    assert out.status == "applied" and delay() == "7"
    writer.apply(Kind.UPDATE_SCHEDULER_CONF, "scheduler", {DELAY: int(before)})
    assert delay() == before

    # the RM answers a node resource update at once but applies it through its event
    # dispatcher (RMNodeResourceUpdateEvent): read back until it shows, within 20 s
    node = nodes(c)[1]
    total = {"memory_mb": node["totalResource"]["memory"],
             "vcores": node["totalResource"]["vCores"]}
    for value in ({"memory_mb": 8192, "vcores": 8}, total):
        out = writer.apply(Kind.UPDATE_NODE_RESOURCE, node["id"], value)
        assert out.status == "applied" and out.answer["status"] == 200, out
        assert node_total(c, node["id"], value) == value

    app_url = f"{c.rm_url}/ws/v1/cluster/apps/{app.app_id}"
    deadline = time.monotonic() + 120
    while c.read(app_url)["app"]["state"] not in ("ACCEPTED", "RUNNING"):
        assert time.monotonic() < deadline, "the application did not start"
        time.sleep(1)
    out = writer.apply(Kind.SET_APP_PRIORITY, app.app_id, 6)
    assert out.status == "applied" and c.read(app_url)["app"]["priority"] == 6
    assert c.read(app_url)["app"]["user"] == "alice"  # another user's application
    writer.apply(Kind.KILL_APP, app.app_id, "KILLED")


def test_a_principal_without_admin_rights_is_refused(kdc: Kdc, kerberized_cluster: MiniCluster,
                                                     tmp_path: Path) -> None:
    """Authenticated is not authorised: bob is not in yarn.admin.acl, so the RM answers
    his scheduler-conf write with 403, a reason-``auth`` error, and keeps its conf."""
    c = kerberized_cluster
    cfg = advisor_config(kdc, c, tmp_path, {"rm": {"auth": {
        "principal": kdc.principal("bob"), "keytab": str(kdc.keytab("bob.keytab"))}}})
    writer = JsonWrites(RMClient(kerberos_http(cfg), [c.rm_url]))
    with pytest.raises(AuthError) as err:
        writer.send("PUT", "/scheduler-conf", xml="<sched-conf><global-updates><entry>"
                    f"<key>{DELAY}</key><value>3</value></entry></global-updates></sched-conf>")
    assert err.value.status == 403 and err.value.reason == "auth"
    props = c.read(f"{c.rm_url}/ws/v1/cluster/scheduler-conf")["property"]
    assert next(p["value"] for p in props if p["name"] == DELAY) != "3"


def test_a_clock_behind_is_corrected_by_mit_kerberos(kdc: Kdc, kerberized_cluster: MiniCluster,
                                                     tmp_path: Path) -> None:
    """``yarn-advisor run --once`` with its clock 10 min behind the KDC's and the RM's
    (libfaketime), MIT's defaults: the library takes the KDC's time from its reply
    (kdc_timesync) and the RM accepts the authenticators. Here the advisor runs in
    the ticket-cache mode with MIT's client keytab (KRB5_CLIENT_KTNAME, no
    rm.auth.keytab): the library logs in from it by itself too."""
    raw = advisor_raw(kdc, kerberized_cluster, tmp_path / "state")
    del raw["rm"]["auth"]["keytab"]
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    env = os.environ | {"KRB5_CONFIG": str(kdc.krb5_conf), "KRB5CCNAME": "MEMORY:advisor",
                        "KRB5_CLIENT_KTNAME": str(kdc.keytab("advisor.keytab"))}
    cmd = ["faketime", "-f", "-10m", str(Path(sys.executable).with_name("yarn-advisor")),
           "run", "--once", "--config", str(cfg)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-2000:]  # 0: the cycle's outcome was ok
    assert "cycle 1: 2 nodes" in done.stderr, done.stderr[-2000:]


def test_yarn_advisor_run_logs_in_from_its_keytab(kdc: Kdc, kerberized_cluster: MiniCluster,
                                                  tmp_path: Path) -> None:
    """``yarn-advisor run --once`` with ``rm.auth.keytab``, no ticket cache and no
    client keytab in the environment: the start-up check and the cycle log in from
    the configured keytab alone."""
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump(advisor_raw(kdc, kerberized_cluster, tmp_path / "state")))
    env = {k: v for k, v in os.environ.items() if k != "KRB5_CLIENT_KTNAME"}
    env |= {"KRB5_CONFIG": str(kdc.krb5_conf), "KRB5CCNAME": f"FILE:{tmp_path / 'none'}"}
    cmd = [str(Path(sys.executable).with_name("yarn-advisor")), "run", "--once",
           "--config", str(cfg)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cycle 1: 2 nodes" in done.stderr, done.stderr[-2000:]
