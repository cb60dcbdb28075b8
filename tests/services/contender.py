"""An advisor-like contender in its own process, for kill -9 and pause tests.

It runs :class:`ZooKeeperHA` the way the daemon loop does (reload when asked,
write only while ``may_write()``), and prints one JSON line per change of
role or of ``may_write``, stamped with ``time.monotonic()`` (one clock for
every process on the machine, so the test can compare it with its own)::

    python tests/services/contender.py HOSTS --session-timeout 3 [--write]

With ``--write``, while ``may_write()`` it "acts" every 20 ms the way the
actuator must: only after ``confirm_leadership()`` (printed as ``act``, or as
``stale`` when ``may_write()`` was True but the round trip said no), and
saves a ``beat`` state (a refused save is printed as an error).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from typing import Any

from yarn_advisor.connectors.errors import ConnectorError
from yarn_advisor.connectors.zookeeper.election import ZooKeeperConfig, ZooKeeperHA


def emit(**fields: Any) -> None:
    print(json.dumps({"t": time.monotonic(), **fields}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("hosts")
    ap.add_argument("--path", default="/yarn-advisor/test")
    ap.add_argument("--session-timeout", type=float, default=3.0)
    ap.add_argument("--identity", default="contender")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    ha = ZooKeeperHA(ZooKeeperConfig(hosts=args.hosts, path=args.path,
                                     session_timeout_s=args.session_timeout,
                                     identity=args.identity))
    stop = False

    def on_term(_sig: int, _frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    ha.start()
    last: tuple[str, bool] | None = None
    beats = 0
    while not stop:
        try:
            if ha.needs_reload and ha.role in ("leader", "follower"):
                ha.load()
            now = (ha.role, ha.may_write())
            if now != last:
                emit(role=now[0], may_write=now[1])
                last = now
            if args.write and now[1]:
                if not ha.confirm_leadership():
                    emit(stale=True)
                else:
                    beats += 1
                    emit(act=beats)
                ha.save("beat", json.dumps({"by": args.identity, "n": beats}).encode())
        except ConnectorError as exc:
            emit(error=exc.reason, message=str(exc))
        time.sleep(0.02)
    ha.stop()
    emit(role="stopped", may_write=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
