"""Failover of two advisors on a real ZooKeeper (run: python bench/bench_failover.py).

Starts Debian's ZooKeeper (tests/services/zkserver.py) on a free loopback
port, then repeats, each in a fresh chroot:

1. ``kill9``: a contender process leads (tests/services/contender.py), an
   in-process advisor follows; the leader gets SIGKILL; measured: kill to the
   follower's ``may_write()`` (its reload included). Bounded by the session
   timeout: the server keeps the dead session until then.
2. ``stop``: the same with SIGTERM (``ha.stop()`` releases the lock at once).
3. ``cli``: two ``yarn-advisor run --replay`` processes with an ``ha``
   section; the one whose /metrics shows ``yarn_advisor_leader 1`` gets
   SIGKILL; measured: kill to the other's /metrics showing 1 (the daemon's
   whole path: election, state re-read, metrics), scraped every 50 ms.
4. ``expiry``: both in-process, the leader's session is expired by force;
   measured: the gap between the old leader's ``may_write()`` turning False
   and the new one's turning True (must be positive: never two writers).

Prints median / min / max per scenario and whether every run passed (the
issue's done-criterion: a failover passing 20 times in a row). ``--json``
prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "services"))

from halib import (  # noqa: E402
    DrivenAdvisor,
    drop_chroot,
    expire_session,
    make_chroot,
    scrape,
    spawn_cli_advisor,
    spawn_contender,
    wait_until,
)
from zkserver import ZooKeeperServer, free_port  # noqa: E402

RECORDING = ROOT / "examples" / "recordings" / "mini-hetero"


def child_then_peer(hosts: str, t: float, how: str) -> float:
    child = spawn_contender(hosts, identity="child", session_timeout_s=t)
    peer = None
    try:
        wait_until(lambda: child.first(role="leader", may_write=True) is not None, 30)
        peer = DrivenAdvisor(hosts, "peer", t).start()
        wait_until(lambda: peer is not None and peer.ha.role == "follower", 10)
        if how == "kill9":
            t0 = child.kill()
        else:
            t0 = time.monotonic()
            child.proc.terminate()
        return wait_until(peer.ha.may_write, 3 * t + 10, step=0.002) - t0
    finally:
        child.close()
        if peer is not None:
            peer.stop()


def cli_takeover(hosts: str, t: float) -> float:
    ports = [free_port(), free_port()]
    work = Path(tempfile.mkdtemp(prefix="bench-ha-cli-"))
    procs = [spawn_cli_advisor(hosts, p, RECORDING, work, t) for p in ports]
    try:
        seen: list[float | None] = []

        def one_leader() -> bool:
            seen[:] = [scrape(p, "yarn_advisor_leader") for p in ports]
            return sorted(x if x is not None else -1.0 for x in seen) == [0.0, 1.0]

        try:
            wait_until(one_leader, 90, step=0.1)
        except TimeoutError:
            logs = [(work / f"advisor-{p}.log").read_text()[-2000:] for p in ports]
            raise TimeoutError(f"no single leader: {seen}; logs: {logs}") from None
        first = seen.index(1.0)
        procs[first].kill()
        t0 = time.monotonic()
        took = wait_until(lambda: scrape(ports[1 - first], "yarn_advisor_leader") == 1.0,
                          3 * t + 10, step=0.05) - t0
        time.sleep(0.5)  # both logs flushed: exactly one leadership each, never a flip
        claims = [(work / f"advisor-{p}.log").read_text().count("leader now") for p in ports]
        if claims != [1, 1]:
            raise AssertionError(f"leadership changed hands {claims} times, not once each")
        return took
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
        shutil.rmtree(work, ignore_errors=True)


def expiry_gap(hosts: str, t: float) -> float:
    old = DrivenAdvisor(hosts, "old", t, period_s=0.002).start()
    new = None
    try:
        wait_until(old.ha.may_write, 10)
        new = DrivenAdvisor(hosts, "new", t, period_s=0.002).start()
        wait_until(lambda: new is not None and new.ha.role == "follower", 10)
        client = old.ha._client
        assert client is not None
        t0 = time.monotonic()
        for _ in range(5):
            expire_session(hosts, client)
            try:
                wait_until(lambda: any(r == "lost" for ts, r in old.ha.history if ts >= t0), 3)
                break
            except TimeoutError:
                continue
        wait_until(new.ha.may_write, 3 * t + 5)
        started, stopped = new.writing_since(), old.stopped_writing_after(t0)
        assert started is not None and stopped is not None
        return started - stopped
    finally:
        old.stop()
        if new is not None:
            new.stop()


def summary(values: list[float], ok: Callable[[float], bool]) -> dict[str, object]:
    return {"runs": len(values), "median_s": round(statistics.median(values), 3),
            "min_s": round(min(values), 3), "max_s": round(max(values), 3),
            "all_passed": all(ok(v) for v in values), "values_s": [round(v, 3) for v in values]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--session-timeout", type=float, default=3.0)
    ap.add_argument("--scenarios", default="kill9,stop,cli,expiry")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t = args.session_timeout
    workdir = Path(tempfile.mkdtemp(prefix="bench-zk-"))
    server = ZooKeeperServer(workdir)
    server.start()
    results: dict[str, object] = {"session_timeout_s": t, "zookeeper": "Debian 3.8.0"}
    checks: dict[str, Callable[[float], bool]] = {
        "kill9": lambda v: v < t + 1.5, "stop": lambda v: v < 1.0,
        "cli": lambda v: v < t + 1.0 + 1.5, "expiry": lambda v: v > 0}
    try:
        for scenario in args.scenarios.split(","):
            values = []
            for _ in range(args.runs):
                hosts = make_chroot(server.address)
                try:
                    if scenario == "expiry":
                        values.append(expiry_gap(hosts, t))
                    elif scenario == "cli":
                        values.append(cli_takeover(hosts, t))
                    else:
                        values.append(child_then_peer(hosts, t, scenario))
                finally:
                    drop_chroot(hosts)
            results[scenario] = summary(values, checks[scenario])
            if not args.json:
                s = results[scenario]
                assert isinstance(s, dict)
                print(f"{scenario:7s} median {s['median_s']:.3f}s  min {s['min_s']:.3f}s  "
                      f"max {s['max_s']:.3f}s  all {len(values)} passed: {s['all_passed']}",
                      flush=True)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
