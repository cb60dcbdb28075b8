"""The advisor keeps working across several ticket lifetimes, with no operator kinit.

The KDC issues tickets of ``LIFETIME_S`` seconds (tests/kerberos/conftest.py). The
advisor daemon (dry-run) runs cycles for two and a half lifetimes: every cycle must
read the cluster, and the KDC's own log must show the advisor logging in again (at
least once a lifetime).
Then the same login writes (a scheduler-conf change the harness reads back).
Then its keytab is replaced by a stale one: once the ticket it holds runs out, the
cycle is skipped with reason ``auth`` and a one-line why; with the keytab restored,
the next cycle reads the cluster again.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest
from _advisor import advisor_config, live_advisor
from _kdc import Kdc, write_keytab
from rmwrites import JsonWrites
from yarnmini import MiniCluster

from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.connectors.kerberos import SpnegoAuth
from yarn_advisor.connectors.rm.client import RMClient

pytestmark = [pytest.mark.kerberos, pytest.mark.cluster]
CYCLE_S = 3.0
DELAY = "yarn.scheduler.capacity.node-locality-delay"


def delay(cluster: MiniCluster) -> str:
    """The RM's live node-locality-delay, read by the harness (its own principal)."""
    props = cluster.read(f"{cluster.rm_url}/ws/v1/cluster/scheduler-conf")["property"]
    return str(next(p["value"] for p in props if p["name"] == DELAY))


@pytest.mark.slow  # two and a half ticket lifetimes of real time: minutes
def test_renewal_across_lifetimes_and_a_stale_keytab(kdc: Kdc, kerberized_cluster: MiniCluster,
                                                     tmp_path: Path) -> None:
    lifetime = kdc.lifetime_s  # the KDC's ticket lifetime (tests/kerberos/conftest.py)
    keytab = tmp_path / "advisor.keytab"
    shutil.copy(kdc.keytab("advisor.keytab"), keytab)
    cfg = advisor_config(kdc, kerberized_cluster, tmp_path / "state",
                         {"rm": {"auth": {"keytab": str(keytab)}}})
    advisor, http = live_advisor(cfg)
    assert isinstance(http.session.auth, SpnegoAuth)
    login = http.session.auth.login
    principal = kdc.principal("advisor")

    issued_before = kdc.initial_tickets(principal)
    started = time.monotonic()
    reports: list[CycleReport] = []
    while time.monotonic() - started < 2.5 * lifetime:
        reports.append(advisor.run_once())
        time.sleep(CYCLE_S)
    elapsed = time.monotonic() - started
    issued = kdc.initial_tickets(principal) - issued_before
    print(f"\n{len(reports)} cycles over {elapsed:.0f}s ({elapsed / lifetime:.1f} ticket "
          f"lifetimes of {lifetime}s): the KDC issued {issued} initial tickets to "
          f"{principal}, the advisor saw {login.tickets}", file=sys.stderr)
    assert [r.reason for r in reports if r.outcome != "ok"] == []
    assert all(s.ok and not s.errors for r in reports for s in r.sources.values())
    # at least one login per lifetime; at most one each time MIT finds the ticket due
    # (less than 30 s left, or half its life gone): the ticket cache is reused between
    lifetimes = int(elapsed // lifetime)
    assert lifetimes + 1 <= issued <= elapsed / min(lifetime - 30, lifetime / 2) + 2
    assert login.tickets >= lifetimes + 1

    # past the lifetimes, the same login still writes: a scheduler-conf change the
    # harness reads back (as its own principal), then restored
    writer = JsonWrites(RMClient(http, list(cfg.rm.urls)))
    before = delay(kerberized_cluster)
    out = writer.apply(Kind.UPDATE_SCHEDULER_CONF, "scheduler", {DELAY: int(before) + 5})
    assert out.status == "applied" and delay(kerberized_cluster) == str(int(before) + 5)
    writer.apply(Kind.UPDATE_SCHEDULER_CONF, "scheduler", {DELAY: int(before)})
    assert delay(kerberized_cluster) == before
    print(f"write after {(time.monotonic() - started) / lifetime:.1f} lifetimes: "
          f"{DELAY} {before} -> {int(before) + 5} -> {before}", file=sys.stderr)

    # a stale keytab (the key was changed in the KDC since it was written)
    write_keytab(tmp_path / "stale.keytab", principal, "not-the-password")
    shutil.copy(tmp_path / "stale.keytab", keytab)
    deadline = time.monotonic() + lifetime + 30
    while (report := advisor.run_once()).outcome == "ok":
        assert time.monotonic() < deadline, "the stale keytab went unnoticed"
        time.sleep(CYCLE_S)
    print(f"stale keytab: {report.reason}", file=sys.stderr)
    assert report.reason.startswith("auth: ")
    assert f"kerberos: {principal} with keytab ***/{keytab.name} cannot log in: " \
        in report.reason
    assert str(keytab) not in report.reason
    assert "the keytab's key does not match the KDC's" in report.reason
    assert "\n" not in report.reason

    shutil.copy(kdc.keytab("advisor.keytab"), keytab)
    report = advisor.run_once()
    assert report.outcome == "ok", report.reason
