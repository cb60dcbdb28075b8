"""Build the connectors and the sensor from a validated configuration."""

from __future__ import annotations

from pathlib import Path

from yarn_advisor.advisor.actuator import build_actuator
from yarn_advisor.advisor.classify import ClassifierHook
from yarn_advisor.advisor.daemon import Advisor
from yarn_advisor.advisor.decider import Decider
from yarn_advisor.advisor.engine import config_from_dict
from yarn_advisor.advisor.sense import Connectors, Sensor
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.http import AuthConfig, HttpClient, Recorder, RetryPolicy
from yarn_advisor.connectors.jmx import JmxClient
from yarn_advisor.connectors.mapreduce import MapReduceClient
from yarn_advisor.connectors.rm import RMClient


def http_client(cfg: AdvisorConfig, recorder: Recorder | None = None) -> HttpClient:
    rm = cfg.rm
    verify: bool | str = rm.tls.ca_bundle if rm.tls.verify and rm.tls.ca_bundle else rm.tls.verify
    cert: str | tuple[str, str] | None = None
    if rm.tls.client_cert:
        cert = (rm.tls.client_cert, rm.tls.client_key) if rm.tls.client_key else rm.tls.client_cert
    return HttpClient(
        timeout=(rm.timeout.connect_s, rm.timeout.read_s),
        retry=RetryPolicy(rm.retry.attempts, rm.retry.base_delay_s, rm.retry.max_delay_s,
                          rm.retry.deadline_s),
        auth=AuthConfig(rm.auth.method, rm.auth.user, rm.auth.principal),
        verify=verify,
        client_cert=cert,
        recorder=recorder,
    )


def build_sensor(cfg: AdvisorConfig, recorder: Recorder | None = None) -> Sensor:
    http = http_client(cfg, recorder)
    rm = RMClient(http, cfg.rm.urls)
    connectors = Connectors(
        rm=rm,
        jmx=JmxClient(http, rm, cfg.sense.nm_jmx.scheme),
        mapreduce=MapReduceClient(http, rm, cfg.rm.history_url),
    )
    return Sensor(connectors, cfg.sense)


def build_advisor(cfg: AdvisorConfig, sensor: Sensor, persist: bool = True) -> Advisor:
    """The daemon for ``cfg``, sensing with ``sensor`` (live or replayed).

    ``persist`` False (replays) keeps the classifier in memory only and gives
    the actuator no RM to write to (it can only dry-run, journaled in the
    configured journal).
    """
    hook = None
    if cfg.classifier.enabled:
        path = cfg.classifier.checkpoint or str(Path(cfg.state_dir) / "classifier.json")
        hook = ClassifierHook.load(Path(path) if persist else None,
                                   threshold_s=cfg.classifier.threshold_s,
                                   min_confidence=cfg.classifier.min_confidence,
                                   min_support=cfg.classifier.min_support)
    actuator = build_actuator(cfg, sensor.connectors.rm if persist else None,
                              replay=not persist)
    return Advisor(sensor, decide=Decider(config_from_dict(cfg.policies), classifier=hook),
                   act=actuator.act, actuator=actuator)
