"""Fixtures of the Kerberos tests: one KDC and one Kerberized mini cluster per session.

The KDC is Hadoop's own (hadoop-minikdc 3.4.2, see ``_kdc.py``) with tickets of
``LIFETIME_S`` seconds, so a test sees the advisor log in again several times in
a couple of minutes. Its principals: the daemons' (rm/, nm/, jhs/ and one HTTP/
per web address), ``advisor`` (the advisor's own keytab), ``alice`` (the harness:
readiness checks, independent read-backs, the applications it submits) and ``bob``
(a principal without YARN admin rights).

These tests need the ``kerberos`` extra (python-gssapi) and MIT's client tools,
both installed by ``.ci/setup-kerberos``; without them they are skipped on a
developer's machine, naming what is missing, and fail under CI (``CI`` set), as the
deployment tests do. ``YARN_ADVISOR_SKIP_CLUSTER=1`` skips them like every cluster
test.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _kdc import Kdc
from yarnmini import KerberosSetup, MiniCluster

LIFETIME_S = 45  # the KDC's maximum ticket lifetime (MIT renews when < 30 s are left)
NM_HOSTS = ("127.0.0.2", "127.0.0.3")  # MiniCluster's default two NodeManagers
SERVICES = ["rm/localhost", "nm/localhost", "jhs/localhost", "HTTP/localhost",
            "HTTP/127.0.0.1", *(f"HTTP/{h}" for h in NM_HOSTS)]


@pytest.fixture(scope="session")
def kdc() -> Iterator[Kdc]:
    if os.environ.get("YARN_ADVISOR_SKIP_CLUSTER") == "1":
        pytest.skip("YARN_ADVISOR_SKIP_CLUSTER=1")
    missing = [tool for tool in ("kinit", "ktutil", "faketime") if shutil.which(tool) is None]
    if importlib.util.find_spec("gssapi") is None:
        missing.insert(0, "python-gssapi (the kerberos extra)")
    if missing:
        message = f"{', '.join(missing)} not installed: run bash .ci/setup-kerberos"
        if os.environ.get("CI"):  # under CI a skip would hide a broken set-up
            pytest.fail(message)
        pytest.skip(message)
    workdir = Path(tempfile.mkdtemp(prefix="yarn-kdc-test-"))
    t0 = time.monotonic()
    keytabs = {"service.keytab": SERVICES, "advisor.keytab": ["advisor"],
               "alice.keytab": ["alice"], "bob.keytab": ["bob"]}
    kdc = Kdc(workdir, keytabs, lifetime_s=LIFETIME_S).start()
    print(f"\nKDC up in {time.monotonic() - t0:.1f}s, realm {kdc.realm}, port {kdc.port}",
          file=sys.stderr)
    # the MIT library of this process (python-gssapi) reads the test KDC's krb5.conf
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
        yield kdc
    kdc.stop()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def kerberized_cluster(kdc: Kdc) -> Iterator[MiniCluster]:
    workdir = Path(tempfile.mkdtemp(prefix="yarn-mini-krb-test-"))
    setup = KerberosSetup(kdc.realm, kdc.krb5_conf, kdc.keytab("service.keytab"),
                          kdc.keytab("alice.keytab"), kdc.principal("alice"))
    cluster = MiniCluster(workdir, kerberos=setup, extra_conf={
        # ACLs on, as on a production secure cluster: the advisor (and the harness)
        # are YARN admins (scheduler-conf and node resource writes), bob is not
        "yarn.acl.enable": "true",
        "yarn.admin.acl": "advisor,alice",
    })
    t0 = time.monotonic()
    cluster.start(timeout=240)
    print(f"\nKerberized mini cluster up in {time.monotonic() - t0:.1f}s, "
          f"{cluster.rss_mb()} MiB RSS, RM {cluster.rm_url}", file=sys.stderr)
    yield cluster
    cluster.stop()
    shutil.rmtree(workdir, ignore_errors=True)
