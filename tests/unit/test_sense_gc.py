"""The sensor pauses the cyclic garbage collector for its whole step (every read,
parse and the Snapshot build), and gives it back afterwards, also when a required
source fails (see ``LiveSensor.sense``)."""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import Any

import pytest
from test_sense_ha import BUSY, FakeHttp, _manifest_urls, _sensor

from yarn_advisor.advisor.loop.sense import SenseError
from yarn_advisor.connectors.lean_json import RawJSON


class GcWatchingHttp(FakeHttp):
    """Notes whether the collector was enabled at each read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gc_enabled: list[bool] = []

    def get_raw(self, url: str, params: Mapping[str, str] | None = None) -> RawJSON:
        self.gc_enabled.append(gc.isenabled())
        return super().get_raw(url, params)


def test_the_collector_is_paused_for_every_read_and_back_after() -> None:
    assert gc.isenabled()
    http = GcWatchingHttp(BUSY / "cycle-0020.yaml")
    (url,) = _manifest_urls(BUSY)
    snap = _sensor(http, [url]).sense(1_795_308_500_000)
    assert snap.nodes and snap.containers  # the reads went through
    assert len(http.gc_enabled) > 5 and not any(http.gc_enabled)
    assert gc.isenabled()


def test_the_collector_is_back_after_a_failed_required_read() -> None:
    http = GcWatchingHttp(BUSY / "cycle-0020.yaml", fail=("/ws/v1/cluster/nodes",))
    (url,) = _manifest_urls(BUSY)
    with pytest.raises(SenseError):
        _sensor(http, [url]).sense(1_795_308_500_000)
    assert http.gc_enabled and not any(http.gc_enabled)
    assert gc.isenabled()
