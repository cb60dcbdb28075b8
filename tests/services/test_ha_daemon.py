"""Two advisors, one writer: the daemon's HA on the real mini cluster and a real ZooKeeper.

In-process advisors (built as ``yarn-advisor run`` builds them, each with its
own journal in one shared ``state_dir``) take the cycle's act steps with a
fixed recommendation (the policies' own recommendations depend on the
workload; the gate, the journal and the state hand-over do not). The RM is
read back with plain urllib. ZooKeeper killed, and the quorum of a 3-server
ensemble lost: no writes until it is back. The CLI test runs two real
``yarn-advisor run --replay`` processes and kills the leader with SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from halib import drop_chroot, expire_session, make_chroot, scrape, spawn_cli_advisor, wait_until
from kazoo.client import KazooClient
from yarnmini import MiniCluster, SubmittedApp
from zkserver import Ensemble, ZooKeeperServer, free_port

from yarn_advisor.advisor.cli.main import main as cli_main
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.ha.coordinator import HaCoordinator, per_advisor_config, start_ha
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.wiring import build_live_advisor
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import Priority
from yarn_advisor.advisor.model.recommendation import Explanation, Recommendation

pytestmark = [pytest.mark.services, pytest.mark.cluster]
LIGHT_SENSE = {"mapreduce": {"enabled": False}, "nm_jmx": {"enabled": False}, "rm_jmx": False}
SESSION_S = 2.0


def rm(cluster: MiniCluster, path: str, body: Any = None) -> Any:
    url = f"{cluster.rm_url}/ws/v1/cluster{path}?user.name=yarn-advisor"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "PUT",
                                 headers={"Accept": "application/json",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


@pytest.fixture(scope="module")
def app(mini_cluster: MiniCluster) -> Iterator[SubmittedApp]:
    submitted = mini_cluster.distributed_shell(queue="default", containers=1,
                                               command="sleep 600", name="ha-writer")
    wait_until(lambda: rm(mini_cluster, f"/apps/{submitted.app_id}")["app"]["state"]
               == "RUNNING", 180, step=1.0)
    yield submitted
    with contextlib.suppress(urllib.error.HTTPError):
        rm(mini_cluster, f"/apps/{submitted.app_id}/state", {"state": "KILLED"})
    submitted.proc.kill()


def priority(aid: str, value: int) -> Recommendation:
    return Recommendation(Kind.SET_APP_PRIORITY, aid, Priority(value), "test",
                          Explanation("test.ha", "one writer"), Priority(0))


def settings(cluster: MiniCluster, hosts: str, state: Path, name: str,
             cooldown_s: float = 600) -> dict[str, Any]:
    """The configuration of one enforcing advisor of the pair (one shared ``state``)."""
    return {"rm": {"urls": [cluster.rm_url]}, "sense": LIGHT_SENSE, "dry_run": False,
            "state_dir": str(state), "actuator": {"cooldown_s": cooldown_s},
            "ha": {"zookeeper": {"hosts": hosts, "session_timeout_s": SESSION_S},
                   "advisor_id": name}}


def make_advisor(cluster: MiniCluster, hosts: str, state: Path, name: str,
                 cooldown_s: float = 600) -> Advisor:
    cfg = per_advisor_config(load_config(None, settings(cluster, hosts, state, name,
                                                        cooldown_s)))
    advisor = build_live_advisor(cfg)
    advisor.ha = start_ha(cfg, advisor)
    return advisor


def coord(advisor: Advisor) -> HaCoordinator:
    assert isinstance(advisor.ha, HaCoordinator)
    return advisor.ha


def act(advisor: Advisor, *recs: Recommendation) -> dict[str, int]:
    """The cycle's HA and act steps, as run_once takes them, on a fresh snapshot."""
    ha = coord(advisor)
    ha.before_cycle(advisor)
    snap = advisor.sensor.sense(int(time.time() * 1000))
    counts = advisor.actuator.act(list(recs), snap)
    ha.after_act(advisor)
    ha.after_cycle(advisor)
    return {outcome: n for (_, _, outcome), n in counts.items()}


def journal(advisor: Advisor, phase: str) -> list[dict[str, Any]]:
    return [e.to_json() for e in advisor.actuator.journal.entries() if e.phase.value == phase]


@pytest.fixture
def advisors(mini_cluster: MiniCluster, zk_hosts: str,
             tmp_path: Path) -> Iterator[list[Advisor]]:
    made = [make_advisor(mini_cluster, zk_hosts, tmp_path, n) for n in ("a", "b")]
    yield made
    for a in made:
        coord(a).stop()


def test_one_writer_then_takeover_with_the_saved_state(
        mini_cluster: MiniCluster, app: SubmittedApp, advisors: list[Advisor],
        zk_hosts: str) -> None:
    aid = app.app_id
    rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})
    wait_until(lambda: sorted(coord(a).status().role for a in advisors)
               == ["follower", "leader"], 30)
    leader, follower = sorted(advisors, key=lambda a: coord(a).status().role != "leader")
    assert (journal(leader, "intent"), journal(follower, "intent")) == ([], [])
    assert leader.actuator.journal.path != follower.actuator.journal.path  # one state_dir

    # both sense and decide; only the leader writes
    assert act(follower, priority(aid, 5)) == {"blocked": 1}
    assert act(leader, priority(aid, 5)) == {"applied": 1}
    assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 5}
    assert [e["reason"] for e in journal(follower, "blocked")] == ["not_leader"]
    assert [e["target"] for e in journal(leader, "intent")] == [aid]
    assert coord(leader).status().state_bytes > 0

    # the leader's session expires (a frozen or partitioned leader): the follower
    # takes over with the saved state, so the same action is not applied twice
    client: KazooClient = coord(leader).zk.client
    t0 = time.monotonic()
    expire_session(zk_hosts, client)
    took = wait_until(lambda: coord(follower).status().role == "leader", 3 * SESSION_S + 5)
    assert act(follower, priority(aid, 5)) == {"blocked": 1}
    assert journal(follower, "blocked")[-1]["reason"] == "cooldown"
    assert journal(follower, "intent") == []
    saved = coord(follower).problems
    assert saved == {}, saved
    # the old leader, back with a new session, is a follower and writes nothing
    wait_until(lambda: coord(leader).status().role == "follower", 15)
    assert act(leader, priority(aid, 6)) == {"blocked": 1}
    assert journal(leader, "blocked")[-1]["reason"] == "not_leader"
    assert len(journal(leader, "intent")) + len(journal(follower, "intent")) == 1
    assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 5}
    print(f"takeover after forced expiry: {took - t0:.2f}s", file=sys.stderr)


def test_a_write_journaled_but_not_saved_is_not_applied_twice(
        mini_cluster: MiniCluster, app: SubmittedApp, advisors: list[Advisor],
        zk_hosts: str) -> None:
    """The leader dies between its RM write and the state save (mid-cycle): the new
    leader reads that write from the old leader's journal (one shared state_dir)."""
    aid = app.app_id
    rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})
    wait_until(lambda: sorted(coord(a).status().role for a in advisors)
               == ["follower", "leader"], 30)
    leader, follower = sorted(advisors, key=lambda a: coord(a).status().role != "leader")
    assert act(leader) == {}  # a cycle without writes: the actuator part is saved
    coord(leader).before_cycle(leader)
    snap = leader.sensor.sense(int(time.time() * 1000))
    assert leader.actuator.act([priority(aid, 3)], snap)  # written, journaled, not saved
    assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 3}
    expire_session(zk_hosts, coord(leader).zk.client)
    wait_until(lambda: coord(follower).status().role == "leader", 3 * SESSION_S + 5)
    assert act(follower, priority(aid, 3)) == {"blocked": 1}
    assert journal(follower, "blocked")[-1]["reason"] == "cooldown"
    assert journal(follower, "intent") == []
    assert len(journal(leader, "intent")) == 1


def test_rollback_and_explain_after_a_failover_read_both_advisors_journals(
        mini_cluster: MiniCluster, app: SubmittedApp, zk_hosts: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each advisor journals to its own file; after a failover, rollback and explain run
    with either advisor's configuration see the actions of both, in time order, and a
    rollback run on the old leader's host holds the target on the new leader too."""
    aid = app.app_id
    rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})
    pair = [make_advisor(mini_cluster, zk_hosts, tmp_path, n, cooldown_s=0) for n in "ab"]
    configs = {}
    for name in "ab":
        configs[name] = tmp_path / f"advisor-{name}.yaml"
        configs[name].write_text(json.dumps(settings(mini_cluster, zk_hosts, tmp_path, name)))
    try:
        wait_until(lambda: sorted(coord(a).status().role for a in pair)
                   == ["follower", "leader"], 30)
        first, second = sorted(pair, key=lambda a: coord(a).status().role != "leader")
        assert act(first, priority(aid, 5)) == {"applied": 1}
        expire_session(zk_hosts, coord(first).zk.client)
        wait_until(lambda: coord(second).status().role == "leader", 3 * SESSION_S + 5)
        assert act(second, priority(aid, 8)) == {"applied": 1}
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 8}
        ids = [journal(a, "intent")[0]["id"] for a in (first, second)]
        files = sorted(a.actuator.journal.path.name for a in pair)
        assert files == ["journal.a.jsonl", "journal.b.jsonl"]

        for name in "ab":  # on either host: both actions, newest first
            assert cli_main(["rollback", "--since", "1h", "--dry-run", "--json",
                             "--config", str(configs[name])]) == 0
            out = json.loads(capsys.readouterr().out)
            assert sorted(Path(p).name for p in out["read"]) == files
            assert Path(out["journal"]).name == f"journal.{name}.jsonl"  # its own steps
            assert [(s["rollback_of"], s["value"]) for s in out["steps"]] == [
                (ids[1], 5), (ids[0], 0)]
        assert cli_main(["explain", aid, "--json", "--config", str(configs["a"])]) == 0
        acted = json.loads(capsys.readouterr().out)["actions"]
        assert [(x["id"], x["value"], x["outcome"]) for x in acted] == [
            (ids[0], 5, "applied"), (ids[1], 8, "applied")]
        assert [x["journal"] for x in acted] == [f"journal.{coord(a).ident}.jsonl"
                                                 for a in (first, second)]
        # undone for real from the old leader's host: the RM is back at 0, and the new
        # leader leaves the target alone (the hold, read from the other journal)
        assert cli_main(["rollback", "--since", "1h", "--config",
                         str(configs[coord(first).ident])]) == 0
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 0}
        print(capsys.readouterr().out, file=sys.stderr)
        assert act(second, priority(aid, 8)) == {"blocked": 1}
        assert journal(second, "blocked")[-1]["reason"] == "rollback_hold"
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 0}
    finally:
        for a in pair:
            coord(a).stop()


def test_zookeeper_down_no_writes_until_it_is_back(
        mini_cluster: MiniCluster, app: SubmittedApp, private_zk: ZooKeeperServer,
        tmp_path: Path) -> None:
    aid = app.app_id
    rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})
    advisor = make_advisor(mini_cluster, private_zk.address, tmp_path, "solo")
    try:
        wait_until(lambda: coord(advisor).status().role == "leader", 30)
        private_zk.kill()
        wait_until(lambda: coord(advisor).status().role in ("suspended", "lost"), 3 * SESSION_S)
        assert act(advisor, priority(aid, 4)) == {"blocked": 1}
        assert journal(advisor, "blocked")[-1]["reason"] == "not_leader"
        assert journal(advisor, "intent") == []
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 0}
        private_zk.start()
        wait_until(lambda: coord(advisor).status().role == "leader", 60)
        assert act(advisor, priority(aid, 4)) == {"applied": 1}  # state re-read first
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 4}
    finally:
        coord(advisor).stop()
        rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})


def test_quorum_lost_on_the_ensemble_no_writes_until_it_is_back(
        mini_cluster: MiniCluster, app: SubmittedApp, zk_ensemble: Ensemble,
        tmp_path: Path) -> None:
    """Two of three ZooKeeper servers stopped: the survivor stops serving, the leader's
    session is suspended, and the daemon writes nothing until the quorum is back."""
    aid = app.app_id
    rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})
    hosts = make_chroot(zk_ensemble.hosts)
    advisor = make_advisor(mini_cluster, hosts, tmp_path, "quorum")
    down = zk_ensemble.servers[:2]
    try:
        wait_until(lambda: coord(advisor).status().role == "leader", 30)
        t_lost = time.monotonic()
        for server in down:
            server.stop()
        wait_until(lambda: zk_ensemble.servers[2].mode() == "", 15)  # no quorum: not serving
        stopped = wait_until(lambda: coord(advisor).status().role in ("suspended", "lost"),
                             3 * SESSION_S + 5)
        for _ in range(3):  # cycles while the quorum is lost: nothing written
            assert act(advisor, priority(aid, 4)) == {"blocked": 1}
        assert journal(advisor, "blocked")[-1]["reason"] == "not_leader"
        assert journal(advisor, "intent") == []
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 0}
        for server in down:
            server.start(wait=False)
        for server in down:
            server.wait_serving(60)
        back = wait_until(lambda: coord(advisor).status().role == "leader", 60)
        assert act(advisor, priority(aid, 4)) == {"applied": 1}  # state re-read first
        assert rm(mini_cluster, f"/apps/{aid}/priority") == {"priority": 4}
        assert len(journal(advisor, "intent")) == 1
        print(f"quorum lost: writes stopped {stopped - t_lost:.2f}s after two of three "
              f"servers stopped, leader again {back - t_lost:.2f}s after; modes "
              f"{zk_ensemble.modes()}", file=sys.stderr)
    finally:
        coord(advisor).stop()
        for server in down:
            if not server.running:
                server.start(wait=False)
        drop_chroot(hosts)
        rm(mini_cluster, f"/apps/{aid}/priority", {"priority": 0})


def health(port: int) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
            return dict(json.load(resp))
    except urllib.error.HTTPError as exc:  # 503 while starting or on a skipped cycle
        return dict(json.load(exc))


def test_two_cli_advisors_on_a_replay_one_leader_then_kill_9(
        zk_hosts: str, recording_dir: Path, tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    procs = [spawn_cli_advisor(zk_hosts, p, recording_dir, tmp_path, SESSION_S) for p in ports]
    try:
        seen: list[float | None] = []

        def one_leader() -> bool:
            seen[:] = [scrape(p, "yarn_advisor_leader") for p in ports]
            return sorted(x if x is not None else -1.0 for x in seen) == [0.0, 1.0]

        wait_until(one_leader, 60, step=0.2)
        first = seen.index(1.0)
        other = 1 - first
        with urllib.request.urlopen(f"http://127.0.0.1:{ports[other]}/recommendations",
                                    timeout=5) as resp:
            assert "recommendations" in json.load(resp)
        assert [health(p)["role"] for p in (ports[first], ports[other])] == ["leader", "follower"]
        os.kill(procs[first].pid, signal.SIGKILL)
        t0 = time.monotonic()
        took = wait_until(lambda: scrape(ports[other], "yarn_advisor_leader") == 1.0,
                          SESSION_S + 1 + 5, step=0.05) - t0
        print(f"CLI takeover after kill -9: {took:.2f}s", file=sys.stderr)
        assert took <= SESSION_S + 1 + 2
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
