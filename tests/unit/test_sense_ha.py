"""The sensor, the snapshot it builds, and RM HA following, with fake connectors.

The fake HTTP client serves the bodies of recorded cycles (a real standby RM and
a real active one in ``ha-standby``; the busy mini cluster in ``mini-hetero``)
by URL, and can make a URL fail as an unreachable server does. Everything above
it is the production code: RMClient's HA following, the sensor, build_snapshot.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
import yaml

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.sense import Connectors, LiveSensor, SenseError
from yarn_advisor.connectors.errors import HTTPStatusError, StandbyError, UnavailableError
from yarn_advisor.connectors.jmx.client import JmxClient
from yarn_advisor.connectors.lean_json import RawJSON
from yarn_advisor.connectors.mapreduce.client import MapReduceClient
from yarn_advisor.connectors.replay import open_recording
from yarn_advisor.connectors.rm import parse_apps
from yarn_advisor.connectors.rm.client import RMClient

FAST_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: recordings are MBs

ROOT = Path(__file__).resolve().parents[2]
HA = ROOT / "examples" / "recordings" / "ha-standby"
BUSY = ROOT / "examples" / "recordings" / "mini-hetero"
LIVE = "NEW%2CNEW_SAVING%2CSUBMITTED%2CACCEPTED%2CRUNNING"


def _key(url: str) -> str:
    """A URL without the user.name parameter, query parameters sorted."""
    parts = urlsplit(url)
    query = sorted(p for p in parts.query.split("&") if p and not p.startswith("user.name="))
    return f"{parts.scheme}://{parts.netloc}{parts.path}" + ("?" + "&".join(query) if query else "")


class FakeHttp:
    """Answers GETs with recorded bodies; ``fail`` lists URL substrings that are down."""

    def __init__(self, *cycles: Path, fail: tuple[str, ...] = ()) -> None:
        self.bodies: dict[str, tuple[int, str]] = {}
        for path in cycles:
            for item in yaml.load(path.read_text(), Loader=FAST_YAML)["responses"]:
                r = item["response"]
                self.bodies.setdefault(_key(r["url"]), (int(r["status"]), r["body"]))
        self.fail = fail
        self.asked: list[str] = []

    def get_raw(self, url: str, params: Mapping[str, str] | None = None) -> RawJSON:
        full = _key(url + ("?" + urlencode(params) if params else ""))
        self.asked.append(full)
        if any(f in full for f in self.fail) or full not in self.bodies:
            raise UnavailableError(f"GET {full}: connection refused")
        status, body = self.bodies[full]
        if status >= 300:
            raise HTTPStatusError(status, full, body)
        return RawJSON(full, body.encode())

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        return json.loads(self.get_raw(url, params).data)


def _manifest_urls(recording: Path) -> list[str]:
    return list(open_recording(recording).rm_urls)


def _sensor(http: FakeHttp, urls: list[str], history: str | None = None) -> LiveSensor:
    rm = RMClient(http, urls)  # type: ignore[arg-type]
    cfg = load_config()
    return LiveSensor(Connectors(rm, JmxClient(http, rm), MapReduceClient(http, rm, history)),  # type: ignore[arg-type]
                      cfg.sense)


# --- RM HA following ----------------------------------------------------------------

def test_failover_order_skips_a_dead_address_and_a_real_standby() -> None:
    dead, standby, active = _manifest_urls(HA)
    http = FakeHttp(HA / "cycle-0001.yaml")
    rm = RMClient(http, [dead, standby, active])  # type: ignore[arg-type]
    assert rm.active_url == active
    assert http.asked == [f"{u}/ws/v1/cluster/info" for u in (dead, standby, active)]
    http.asked.clear()
    assert rm.active_url == active and http.asked == []  # remembered, not probed again


def test_no_active_rm_is_a_standby_error_naming_each_rm() -> None:
    dead, standby, _ = _manifest_urls(HA)
    rm = RMClient(FakeHttp(HA / "cycle-0003.yaml"), [standby])  # type: ignore[arg-type]
    with pytest.raises(StandbyError, match="STANDBY"):
        rm.resolve()
    both = RMClient(FakeHttp(HA / "cycle-0003.yaml"), [dead, standby])  # type: ignore[arg-type]
    with pytest.raises(UnavailableError) as exc:
        both.resolve()
    assert dead in str(exc.value) and "STANDBY" in str(exc.value)


def test_a_307_from_a_standby_re_resolves_once_and_reads_from_the_active() -> None:
    _, standby, active = _manifest_urls(HA)
    # the standby's real 307 for a data path (cycle 3), the active's bodies (cycle 1)
    http = FakeHttp(HA / "cycle-0003.yaml", HA / "cycle-0001.yaml")
    rm = RMClient(http, [standby, active])  # type: ignore[arg-type]
    rm._active = standby  # it was active a moment ago: a failover happened since
    http.bodies[f"{standby}/ws/v1/cluster/apps?states={LIVE}"] = \
        http.bodies[f"{standby}/ws/v1/cluster/apps"]  # the standby's real 307, for this query
    assert parse_apps(rm.live_apps())
    assert rm.active_url == active
    assert http.asked == [f"{standby}/ws/v1/cluster/apps?states={LIVE}",
                          f"{standby}/ws/v1/cluster/info", f"{active}/ws/v1/cluster/info",
                          f"{active}/ws/v1/cluster/apps?states={LIVE}"]


def test_a_307_with_no_active_rm_anywhere_fails_after_one_re_resolution() -> None:
    _, standby, _ = _manifest_urls(HA)
    http = FakeHttp(HA / "cycle-0003.yaml")
    rm = RMClient(http, [standby])  # type: ignore[arg-type]
    rm._active = standby
    with pytest.raises(StandbyError):
        rm.get("/ws/v1/cluster/apps")
    assert http.asked.count(f"{standby}/ws/v1/cluster/apps") == 1


def test_the_sensor_follows_the_active_rm_of_an_ha_pair() -> None:
    dead, standby, active = _manifest_urls(HA)
    sensor = _sensor(FakeHttp(HA / "cycle-0001.yaml"), [dead, standby, active])
    snap = sensor.sense(1_795_389_300_000)
    assert snap.rm_url == active and snap.cluster.ha_state == "ACTIVE"
    assert len(snap.nodes) == 2
    only_standby = _sensor(FakeHttp(HA / "cycle-0003.yaml"), [dead, standby])
    with pytest.raises(SenseError) as exc:
        only_standby.sense(1_795_389_400_000)
    assert exc.value.source == "info" and not only_standby.stats["rm"].ok


# --- the sensor and build_snapshot on a busy cluster ---------------------------------

def _items(value: Any) -> list[Any]:
    """Jersey renders a one-element list as the bare object."""
    return value if isinstance(value, list) else [value]


def _body(http: FakeHttp, fragment: str) -> Any:
    (key,) = [k for k in http.bodies if fragment in k]
    return json.loads(http.bodies[key][1])


def test_the_snapshot_holds_what_the_rm_said() -> None:
    cycle = BUSY / "cycle-0020.yaml"
    http = FakeHttp(cycle)
    (url,) = _manifest_urls(BUSY)
    snap = _sensor(http, [url]).sense(1_795_308_500_000)
    assert len(snap.nodes) == len(_body(http, "/cluster/nodes")["nodes"]["node"])
    live = _body(http, "/cluster/apps?states=NEW")["apps"]["app"]
    assert sorted(a.id for a in snap.apps) == sorted(a["id"] for a in live)
    containers = [c for k, (_, b) in http.bodies.items() if k.endswith("/containers")
                  for c in _items(json.loads(b)["container"])]
    assert sorted(c.id for c in snap.containers) == sorted(c["containerId"] for c in containers)
    assert all(snap.app_by_id[c.app_id] for c in snap.containers)
    assert all(c.node_id in snap.node_by_id for c in snap.containers)
    measured = [c for c in snap.containers if c.usage is not None]
    assert measured  # NM JMX usage joined to the containers by id
    assert snap.sources == {"rm": True, "containers": True, "nm_jmx": True, "rm_jmx": True,
                            "scheduler_conf": True, "rm_conf": True, "mapreduce": True}
    # (no JobHistory address configured here: that source is not read at all)
    assert {t.app_id for t in snap.tasks} <= {j.app_id for j in snap.jobs}


def test_one_failing_per_app_read_degrades_the_source_and_loses_only_that_app() -> None:
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    full = _sensor(FakeHttp(cycle), [url]).sense(1_795_308_500_000)
    bad_app = "application_1795308405919_0003"
    sensor = _sensor(FakeHttp(cycle, fail=(f"/apps/{bad_app}/appattempts",)), [url])
    snap = sensor.sense(1_795_308_500_000)
    assert snap.sources["containers"] is False  # not whole: a policy must not take it for all
    assert sensor.stats["containers"].errors == 1
    assert "1 of " in sensor.stats["containers"].last_error
    assert {c.id for c in snap.containers} == {c.id for c in full.containers
                                              if c.app_id != bad_app}
    assert bad_app in snap.app_by_id  # the app itself is still there


def test_every_read_of_an_optional_source_failing_marks_it_down() -> None:
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    sensor = _sensor(FakeHttp(cycle, fail=("/appattempts", "/jmx")), [url])
    snap = sensor.sense(1_795_308_500_000)
    assert snap.containers == () and not snap.sources["containers"]
    assert not snap.sources["nm_jmx"] and not snap.sources["rm_jmx"]
    assert snap.sources["mapreduce"] and snap.tasks  # the others still read


def test_a_required_source_failing_skips_the_cycle() -> None:
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    sensor = _sensor(FakeHttp(cycle, fail=("/cluster/nodes",)), [url])
    with pytest.raises(SenseError) as exc:
        sensor.sense(1_795_308_500_000)
    assert exc.value.source == "nodes" and exc.value.reason == "unavailable"


def test_an_am_answering_a_huge_progress_does_not_kill_the_cycle() -> None:
    """The reliability probe's case: one AM's task attempt with a 401-digit progress
    (float() of it overflowed and the whole cycle died with a traceback)."""
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    http = FakeHttp(cycle)
    key = next(k for k in http.bodies if k.endswith("/attempts"))
    status, body = http.bodies[key]
    data = json.loads(body)
    items = data["taskAttempts"]["taskAttempt"]
    (items if isinstance(items, list) else [items])[0]["progress"] = 10**400
    http.bodies[key] = (status, json.dumps(data))
    snap = _sensor(http, [url]).sense(1_795_308_500_000)
    assert snap.sources["mapreduce"] and snap.tasks


def test_an_optional_parser_raising_anything_degrades_that_source_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a parser of outside data raises is mapped at the sensor's boundary."""
    from yarn_advisor.connectors import jmx

    def broken(body: object) -> object:
        raise KeyError("a shape no test foresaw")

    monkeypatch.setattr(jmx, "parse_beans", broken)
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    sensor = _sensor(FakeHttp(cycle), [url])
    snap = sensor.sense(1_795_308_500_000)
    assert not snap.sources["nm_jmx"] and not snap.sources["rm_jmx"]
    assert "unreadable data: KeyError" in sensor.stats["rm_jmx"].last_error
    assert snap.sources["containers"] and snap.containers


class FailsOverAfterApps(FakeHttp):
    """The active RM of cycle 1 fails over right after the required reads: from then
    on it answers as the real standby of cycle 3 did (info STANDBY, data paths 307)."""

    def __init__(self, active: str, standby: str) -> None:
        super().__init__(HA / "cycle-0001.yaml", HA / "cycle-0003.yaml")
        self.active, self.standby, self.failed_over = active, standby, False
        self.redirect = self.bodies[f"{standby}/ws/v1/cluster/apps"]  # the real 307
        self.standby_info = self.bodies[f"{standby}/ws/v1/cluster/info"]

    def get_raw(self, url: str, params: Mapping[str, str] | None = None) -> RawJSON:
        full = _key(url + ("?" + urlencode(params) if params else ""))
        if self.failed_over and full.startswith(self.active):
            self.asked.append(full)
            if full.endswith("/ws/v1/cluster/info"):
                return RawJSON(full, self.standby_info[1].encode())
            raise HTTPStatusError(self.redirect[0], full, self.redirect[1])
        raw = super().get_raw(url, params)
        if full == f"{self.active}/ws/v1/cluster/apps?states={LIVE}":
            self.failed_over = True
        return raw


def test_a_failover_mid_cycle_skips_the_cycle_as_standby() -> None:
    """Optional reads meet a 307 after the required ones; re-resolving finds no active
    RM. The cycle is skipped with reason ``standby`` (it was a StandbyError escaping
    the sensor: an "internal error" with a traceback)."""
    _, standby, active = _manifest_urls(HA)
    http = FailsOverAfterApps(active, standby)
    sensor = _sensor(http, [standby, active])
    with pytest.raises(SenseError) as exc:
        sensor.sense(1_795_389_300_000)
    assert exc.value.reason == "standby" and exc.value.source == "rm"
    assert "failed over during the cycle" in str(exc.value)
    assert not sensor.stats["rm"].ok
    assert any(u.startswith(active) and "/jmx" in u for u in http.asked)  # it did get there


def test_a_nodes_list_that_disagrees_with_the_cluster_metrics_skips_the_cycle() -> None:
    """The recorded nodes body with its node list emptied, beside the recorded metrics
    that count the nodes active: Matchmaking wrote a delay for no nodes on it."""
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    http = FakeHttp(cycle)
    key = next(k for k in http.bodies if k.endswith("/ws/v1/cluster/nodes"))
    status, body = http.bodies[key]
    data = json.loads(body)
    active = json.loads(http.bodies[next(k for k in http.bodies
                                         if k.endswith("/cluster/metrics"))][1])
    assert active["clusterMetrics"]["activeNodes"] >= 2
    data["nodes"]["node"] = []
    http.bodies[key] = (status, json.dumps(data))
    sensor = _sensor(http, [url])
    with pytest.raises(SenseError) as exc:
        sensor.sense(1_795_308_500_000)
    assert exc.value.source == "nodes" and exc.value.reason == "parse"
    assert "0 RUNNING nodes" in str(exc.value)
    assert _sensor(FakeHttp(cycle), [url]).sense(1_795_308_500_000).nodes  # as recorded: fine


class SlowAm(FakeHttp):
    """The recorded cycle, with the application masters' reads (through the RM's
    /proxy) taking ``delay_s`` each: a trickling AM."""

    def __init__(self, *cycles: Path, delay_s: float) -> None:
        super().__init__(*cycles)
        self.delay_s = delay_s

    def get_raw(self, url: str, params: Mapping[str, str] | None = None) -> RawJSON:
        if "/proxy/" in url:
            time.sleep(self.delay_s)
        return super().get_raw(url, params)


def test_the_sense_step_gives_up_optional_reads_at_its_deadline() -> None:
    """A trickling AM held cycles at 31 s and they acted on data read 31 s before;
    now the reads still out at ``sense.deadline_s`` are given up, their source
    degraded, and the cycle goes on with what came in time."""
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    sensor = _sensor(SlowAm(cycle, delay_s=4.0), [url])
    sensor.params = sensor.params.model_copy(update={"deadline_s": 1.0})
    started = time.monotonic()
    snap = sensor.sense(1_795_308_500_000)
    took = time.monotonic() - started
    assert took < 3.5, took  # one AM read alone is 4 s
    assert snap.sources["mapreduce"] is False
    assert "sense.deadline_s" in sensor.stats["mapreduce"].last_error
    assert snap.nodes and snap.apps  # the required data, read in time


class SlowContainers(FakeHttp):
    """The recorded cycle, with each application's container list taking
    ``delay_s``: a busy RM at 500 nodes spent 8 s of a 20 s deadline there."""

    def __init__(self, *cycles: Path, delay_s: float) -> None:
        super().__init__(*cycles)
        self.delay_s = delay_s

    def get_raw(self, url: str, params: Mapping[str, str] | None = None) -> RawJSON:
        if url.endswith("/containers"):
            time.sleep(self.delay_s)
        return super().get_raw(url, params)


def test_a_slow_fan_out_does_not_starve_the_one_request_sources() -> None:
    """On a loaded 500-node SLS RM the container fan-out used the deadline up and
    the RM's queue metrics (one request) were given up after it. The one-request
    sources are read before the fan-outs, so they come in while those are late."""
    cycle = BUSY / "cycle-0020.yaml"
    (url,) = _manifest_urls(BUSY)
    sensor = _sensor(SlowContainers(cycle, delay_s=3.0), [url])
    sensor.params = sensor.params.model_copy(update={"deadline_s": 1.0})
    snap = sensor.sense(1_795_308_500_000)
    assert snap.sources["containers"] is False
    assert "sense.deadline_s" in sensor.stats["containers"].last_error
    assert snap.sources["rm_jmx"] and snap.queue_metrics
    assert snap.sources["scheduler_conf"] and snap.scheduler_conf
