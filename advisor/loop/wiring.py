"""Build the advisor from a validated configuration: connectors, sensor, actuator, classifier."""

from __future__ import annotations

from pathlib import Path

from yarn_advisor.advisor.act.actuator import build_actuator
from yarn_advisor.advisor.act.publish import build_publisher
from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.classify import TaskClassifier
from yarn_advisor.advisor.engine.decide import AdvisorState, EngineConfig, initial_states
from yarn_advisor.advisor.loop.daemon import Advisor, Sensor
from yarn_advisor.advisor.loop.sense import Connectors, LiveSensor
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.http import AuthConfig, HttpClient, Recorder, RetryPolicy
from yarn_advisor.connectors.jmx.client import JmxClient
from yarn_advisor.connectors.mapreduce.client import MapReduceClient
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers


def http_client(cfg: AdvisorConfig, recorder: Recorder | None = None) -> HttpClient:
    """The one HTTP client (timeouts, retries, auth, TLS) for ``cfg``'s RM and JobHistory."""
    rm = cfg.rm
    verify: bool | str = rm.tls.ca_bundle if rm.tls.verify and rm.tls.ca_bundle else rm.tls.verify
    cert: str | tuple[str, str] | None = None
    if rm.tls.client_cert:
        cert = (rm.tls.client_cert, rm.tls.client_key) if rm.tls.client_key else rm.tls.client_cert
    return HttpClient(
        timeout=(rm.timeout.connect_s, rm.timeout.read_s),
        total_timeout=rm.timeout.total_s,
        max_body_bytes=int(rm.body.max_mb * (1 << 20)),
        max_inflation=rm.body.max_inflation,
        retry=RetryPolicy(rm.retry.attempts, rm.retry.base_delay_s, rm.retry.max_delay_s,
                          rm.retry.deadline_s),
        auth=AuthConfig(rm.auth.method, rm.auth.user, rm.auth.principal, rm.auth.keytab),
        verify=verify,
        client_cert=cert,
        recorder=recorder,
    )


def build_sensor(cfg: AdvisorConfig, recorder: Recorder | None = None) -> LiveSensor:
    """The sensor reading the RM (and JobHistory) that ``cfg`` names."""
    http = http_client(cfg, recorder)
    rm = RMClient(http, list(cfg.rm.urls))
    if cfg.rm.discovery == "zookeeper":  # the RMs' election lock names the active RM
        from yarn_advisor.advisor.ha.coordinator import rm_discovery_config
        from yarn_advisor.connectors.rm.active import ZooKeeperRMClient

        z = cfg.rm.zookeeper
        rm = ZooKeeperRMClient(http, list(cfg.rm.urls), z.rm_ids, z.cluster_id,
                               rm_discovery_config(cfg), z.base_path)
    connectors = Connectors(
        rm=rm,
        jmx=JmxClient(http, rm, cfg.sense.nm_jmx.scheme),
        mapreduce=MapReduceClient(http, rm, cfg.rm.history_url),
    )
    return LiveSensor(connectors, cfg.sense, rm_plugin=reads_plugin(cfg))


def reads_plugin(cfg: AdvisorConfig) -> bool:
    """Whether the sensor reads the RM plug-in's MBean: ``sense.rm_plugin`` on, or auto
    while this advisor publishes a decision table (precision mode)."""
    mode = cfg.sense.rm_plugin
    return mode == "on" or (mode == "auto" and cfg.precision.enabled)


def build_classifier(cfg: AdvisorConfig, persist: bool = True) -> TaskClassifier | None:
    """The task classifier (checkpointed in ``state_dir`` unless ``persist`` is False)."""
    if not cfg.classifier.enabled:
        return None
    c = cfg.classifier
    path = Path(c.checkpoint or Path(cfg.state_dir) / "classifier.json") if persist else None
    return TaskClassifier.load(path, threshold_s=c.threshold_s,
                               min_confidence=c.min_confidence, min_support=c.min_support,
                               relaxed_confidence=c.relaxed_confidence,
                               relaxed_budget=c.relaxed_budget, calibrate=c.calibrate,
                               long_budget=c.long_budget)


def build_advisor(cfg: AdvisorConfig, sensor: Sensor, writer: Writer | None = None,
                  persist: bool = True, snapshot_clock: bool = False) -> Advisor:
    """The daemon for ``cfg``, sensing with ``sensor`` (live, replayed or simulated).

    ``writer`` None: the actuator can only dry-run. ``persist`` False keeps the
    classifier in memory only. ``snapshot_clock``: time is the snapshot's
    (replays and the simulator), so guardrail windows follow its clock.
    """
    actuator = build_actuator(cfg, writer, snapshot_clock)
    actuator.publisher = build_publisher(cfg, actuator.journal.path)
    classifier = build_classifier(cfg, persist)
    return Advisor(sensor, EngineConfig.from_config(cfg), actuator, classifier,
                   AdvisorState(initial_states(), classifier))


def build_live_advisor(cfg: AdvisorConfig) -> Advisor:
    """The daemon against the live RM: it may write when ``cfg`` enforces."""
    sensor = build_sensor(cfg)
    writer = Writer(RMLevers(sensor.connectors.rm, cfg.actuator.overcommit_timeout_ms))
    return build_advisor(cfg, sensor, writer)
