"""The HA metrics: who writes, the ZooKeeper session, and the shared state's size and age.

- ``yarn_advisor_leader``: 1 while this advisor is the ZooKeeper leader (its
  session connected, holding the lock), else 0; always 1 for an advisor running
  alone (no ``ha`` section). The leader writes once it has re-read the state.
- ``yarn_advisor_zookeeper_session_state{state}``: 1 for the session's current
  state (``CONNECTED``, ``SUSPENDED``, ``LOST``), 0 for the others (all 0 alone).
- ``yarn_advisor_state_bytes``: bytes of the state this advisor last saved to or
  loaded from ZooKeeper (all parts, before compression).
- ``yarn_advisor_state_checkpoint_age_seconds``: seconds since that state was
  last saved or loaded (NaN before the first, and alone).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

SESSION_STATES = ("CONNECTED", "SUSPENDED", "LOST")


@dataclass(frozen=True)
class HaStatus:
    """One advisor's HA status, as /metrics and /healthz show it."""

    role: str  # alone | connecting | follower | leader | suspended | lost | stopped
    session_state: str | None  # one of SESSION_STATES; None when running alone
    state_bytes: int = 0
    checkpoint_at: float | None = None  # wall-clock time of the last save or load


ALONE = HaStatus("alone", None)


class HaCollector(Collector):
    """Reads an :class:`HaStatus` at each scrape."""

    def __init__(self, status: Callable[[], HaStatus],
                 clock: Callable[[], float] = time.time) -> None:
        self._status = status
        self._clock = clock

    def collect(self) -> Iterator[GaugeMetricFamily]:
        s = self._status()
        yield GaugeMetricFamily("yarn_advisor_leader",
                                "1 while this advisor leads (connected, holding the lock) or "
                                "runs alone: the one that writes to the RM",
                                value=1.0 if s.role in ("leader", "alone") else 0.0)
        # every series from the first scrape, alone too (a dashboard never shows "no
        # data" for a question that has an answer): no session is 0 for every state
        session = GaugeMetricFamily("yarn_advisor_zookeeper_session_state",
                                    "1 for the ZooKeeper session's current state (all 0: "
                                    "running alone, no session)", labels=["state"])
        for state in SESSION_STATES:
            session.add_metric([state], 1.0 if state == s.session_state else 0.0)
        yield session
        yield GaugeMetricFamily("yarn_advisor_state_bytes",
                                "bytes of the state last saved to or loaded from ZooKeeper",
                                value=float(s.state_bytes))
        age = math.nan if s.checkpoint_at is None else max(0.0, self._clock() - s.checkpoint_at)
        yield GaugeMetricFamily("yarn_advisor_state_checkpoint_age_seconds",
                                "seconds since the state was last saved to or loaded from "
                                "ZooKeeper (NaN before the first, and when running alone)",
                                value=age)
