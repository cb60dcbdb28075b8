"""Helpers of the Kerberos tests: the advisor's configuration and its live daemon."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import requests
from _kdc import Kdc
from yarnmini import MiniCluster

from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.sense import Connectors, LiveSensor
from yarn_advisor.advisor.loop.wiring import build_advisor, http_client
from yarn_advisor.config.schema import AdvisorConfig, merge
from yarn_advisor.connectors.http import HttpClient
from yarn_advisor.connectors.jmx.client import JmxClient
from yarn_advisor.connectors.mapreduce.client import MapReduceClient
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers


def advisor_raw(kdc: Kdc, cluster: MiniCluster | None, state: Path,
                over: dict[str, Any] | None = None) -> dict[str, Any]:
    """The advisor's configuration (as a YAML file would hold it): Kerberos with its
    own keytab, dry-run, ``over`` laid over it."""
    rm = {"urls": [cluster.rm_url if cluster else "http://localhost:1"],
          "history_url": cluster.jhs_url if cluster else None,
          "auth": {"method": "kerberos", "principal": kdc.principal("advisor"),
                   "keytab": str(kdc.keytab("advisor.keytab"))},
          "retry": {"attempts": 1}}
    raw = {"state_dir": str(state), "server": {"enabled": False}, "rm": rm}
    return merge(raw, over or {})


def advisor_config(kdc: Kdc, cluster: MiniCluster | None, state: Path,
                   over: dict[str, Any] | None = None) -> AdvisorConfig:
    return load_config(None, advisor_raw(kdc, cluster, state, over))


def kerberos_http(cfg: AdvisorConfig) -> HttpClient:
    """The advisor's HTTP client for ``cfg`` as wiring builds it (logged in with
    ``rm.auth.keytab``), on a session of its own."""
    return dataclasses.replace(http_client(cfg), session=requests.Session())


def live_advisor(cfg: AdvisorConfig) -> tuple[Advisor, HttpClient]:
    """The daemon against the live RM, as wiring.build_live_advisor builds it."""
    http = kerberos_http(cfg)
    rm = RMClient(http, list(cfg.rm.urls))
    sensor = LiveSensor(Connectors(rm=rm, jmx=JmxClient(http, rm, cfg.sense.nm_jmx.scheme),
                                   mapreduce=MapReduceClient(http, rm, cfg.rm.history_url)),
                        cfg.sense)
    writer = Writer(RMLevers(rm, cfg.actuator.overcommit_timeout_ms))
    return build_advisor(cfg, sensor, writer), http
