"""The advisor's configuration: typed sections, defaults, and validation.

The YAML file is read over ``config/defaults.yaml`` (the documented
defaults) and checked against the dataclasses below: unknown keys, wrong
types and out-of-range values are all collected, each with its key path
(``rm.timeout.read_s: must be > 0``), and reported at once in one
:class:`ConfigError`. Policy sections are validated by the policy registry
(``advisor.policies``), which owns each policy's parameters.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

DEFAULTS = Path(__file__).with_name("defaults.yaml")


class ConfigError(ValueError):
    """Every problem found in a configuration, one per line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("invalid configuration:\n  " + "\n  ".join(errors))
        self.errors = errors


def _check(cond: bool, msg: str) -> list[str]:
    return [] if cond else [msg]


@dataclass(frozen=True)
class Auth:
    method: str = "simple"
    user: str = "yarn-advisor"
    principal: str | None = None

    def validate(self) -> list[str]:
        return _check(self.method in ("simple", "kerberos", "none"),
                      "method: must be one of simple, kerberos, none")


@dataclass(frozen=True)
class Tls:
    verify: bool = True
    ca_bundle: str | None = None
    client_cert: str | None = None
    client_key: str | None = None

    def validate(self) -> list[str]:
        return _check(not (self.client_key and not self.client_cert),
                      "client_key: needs client_cert")


@dataclass(frozen=True)
class Timeout:
    connect_s: float = 3.0
    read_s: float = 10.0

    def validate(self) -> list[str]:
        return (_check(self.connect_s > 0, "connect_s: must be > 0")
                + _check(self.read_s > 0, "read_s: must be > 0"))


@dataclass(frozen=True)
class Retry:
    attempts: int = 3
    base_delay_s: float = 0.25
    max_delay_s: float = 2.0
    deadline_s: float = 10.0

    def validate(self) -> list[str]:
        return (_check(1 <= self.attempts <= 10, "attempts: must be 1..10")
                + _check(self.base_delay_s >= 0, "base_delay_s: must be >= 0")
                + _check(self.max_delay_s >= self.base_delay_s,
                         "max_delay_s: must be >= base_delay_s")
                + _check(self.deadline_s > 0, "deadline_s: must be > 0"))


@dataclass(frozen=True)
class Rm:
    urls: list[str] = field(default_factory=lambda: ["http://127.0.0.1:8088"])
    history_url: str | None = None
    auth: Auth = field(default_factory=Auth)
    tls: Tls = field(default_factory=Tls)
    timeout: Timeout = field(default_factory=Timeout)
    retry: Retry = field(default_factory=Retry)

    def validate(self) -> list[str]:
        errs = _check(len(self.urls) > 0, "urls: at least one RM address is needed")
        for i, url in enumerate(self.urls):
            errs += _check(url.startswith(("http://", "https://")),
                           f"urls[{i}]: must start with http:// or https://")
        if self.history_url is not None:
            errs += _check(self.history_url.startswith(("http://", "https://")),
                           "history_url: must start with http:// or https://")
        return errs


@dataclass(frozen=True)
class MapReduceSense:
    enabled: bool = True
    jobs_limit: int = 200
    attempts_limit: int = 2000
    history: bool = True

    def validate(self) -> list[str]:
        return (_check(self.jobs_limit >= 0, "jobs_limit: must be >= 0")
                + _check(self.attempts_limit >= 0, "attempts_limit: must be >= 0"))


@dataclass(frozen=True)
class NmJmxSense:
    enabled: bool = True
    nodes_limit: int = 200
    scheme: str = "http"

    def validate(self) -> list[str]:
        return (_check(self.nodes_limit >= 0, "nodes_limit: must be >= 0")
                + _check(self.scheme in ("http", "https"), "scheme: must be http or https"))


@dataclass(frozen=True)
class Sense:
    interval_s: float = 30.0
    app_details_limit: int = 500
    fetch_workers: int = 8
    rm_jmx: bool = True
    scheduler_conf: bool = True
    rm_conf_keys: list[str] = field(
        default_factory=lambda: ["yarn.cluster.max-application-priority"])
    mapreduce: MapReduceSense = field(default_factory=MapReduceSense)
    nm_jmx: NmJmxSense = field(default_factory=NmJmxSense)

    def validate(self) -> list[str]:
        return (_check(self.interval_s >= 0, "interval_s: must be >= 0 (0 runs one cycle)")
                + _check(self.app_details_limit >= 0, "app_details_limit: must be >= 0")
                + _check(1 <= self.fetch_workers <= 64, "fetch_workers: must be 1..64"))


@dataclass(frozen=True)
class Classifier:
    enabled: bool = True
    threshold_s: float = 60.0
    min_confidence: float = 0.9
    min_support: int = 3
    checkpoint: str | None = None

    def validate(self) -> list[str]:
        return (_check(self.threshold_s > 0, "threshold_s: must be > 0")
                + _check(0.5 <= self.min_confidence <= 1.0, "min_confidence: must be 0.5..1")
                + _check(1 <= self.min_support <= 1000, "min_support: must be 1..1000"))


@dataclass(frozen=True)
class Server:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 9135

    def validate(self) -> list[str]:
        return _check(0 <= self.port <= 65535, "port: must be 0..65535")


@dataclass(frozen=True)
class Logging:
    level: str = "INFO"
    json: bool = False

    def validate(self) -> list[str]:
        return _check(self.level in ("DEBUG", "INFO", "WARNING", "ERROR"),
                      "level: must be DEBUG, INFO, WARNING or ERROR")


@dataclass(frozen=True)
class Scope:
    """fnmatch patterns: an empty ``allow`` admits everything; ``deny`` always wins."""

    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)

    def validate(self) -> list[str]:
        return []

    def admits(self, *names: str) -> bool:
        """True if one of ``names`` is allowed and none is denied."""
        def hit(patterns: list[str]) -> bool:
            return any(fnmatchcase(n, p) for n in names if n for p in patterns)

        return (not self.allow or hit(self.allow)) and not hit(self.deny)


@dataclass(frozen=True)
class ActuatorSettings:
    """The one writer's guardrails (enforce itself: top-level and per-policy ``dry_run``)."""

    journal_path: str | None = None
    kill_switch: bool = False
    kill_switch_file: str | None = None
    allow_kill_like: bool = False
    queues: Scope = field(default_factory=Scope)
    apps: Scope = field(default_factory=Scope)
    nodes: Scope = field(default_factory=Scope)
    max_actions_per_cycle: int = 10
    max_actions_per_target: int = 3
    target_window_s: float = 3600.0
    cooldown_s: float = 300.0
    min_change_fraction: float = 0.1
    min_priority_delta: int = 1
    max_snapshot_age_s: float = 120.0
    overcommit_timeout_ms: int = -1
    rollback_hold_s: float = 3600.0

    def validate(self) -> list[str]:
        return (_check(self.max_actions_per_cycle >= 0, "max_actions_per_cycle: must be >= 0")
                + _check(self.max_actions_per_target >= 1,
                         "max_actions_per_target: must be >= 1")
                + _check(self.target_window_s > 0, "target_window_s: must be > 0")
                + _check(self.cooldown_s >= 0, "cooldown_s: must be >= 0")
                + _check(0 <= self.min_change_fraction < 1,
                         "min_change_fraction: must be in [0, 1)")
                + _check(self.min_priority_delta >= 0, "min_priority_delta: must be >= 0")
                + _check(self.max_snapshot_age_s > 0, "max_snapshot_age_s: must be > 0")
                + _check(self.overcommit_timeout_ms >= -1,
                         "overcommit_timeout_ms: must be >= -1 (-1: never preempt)")
                + _check(self.rollback_hold_s >= 0, "rollback_hold_s: must be >= 0"))


@dataclass(frozen=True)
class AdvisorConfig:
    """The whole configuration (see ``config/defaults.yaml`` for each key)."""

    dry_run: bool = True
    state_dir: str = "./var"
    rm: Rm = field(default_factory=Rm)
    sense: Sense = field(default_factory=Sense)
    server: Server = field(default_factory=Server)
    classifier: Classifier = field(default_factory=Classifier)
    logging: Logging = field(default_factory=Logging)
    actuator: ActuatorSettings = field(default_factory=ActuatorSettings)
    policies: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> list[str]:
        return []


def load(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> AdvisorConfig:
    """Read defaults, then ``path`` (if any), then ``overrides``; validate all."""
    data = _read_yaml(DEFAULTS, [])
    errors: list[str] = []
    if path is not None:
        data = _merge(data, _read_yaml(Path(path), errors))
    if overrides:
        data = _merge(data, overrides)
    if errors:
        raise ConfigError(errors)
    return from_dict(data)


def from_dict(data: Any) -> AdvisorConfig:
    errors: list[str] = []
    cfg = _build(AdvisorConfig, data, "", errors)
    errors += _policy_errors(cfg.policies)
    if errors:
        raise ConfigError(errors)
    assert isinstance(cfg, AdvisorConfig)
    return cfg


def _policy_errors(policies: dict[str, Any]) -> list[str]:
    """Problems in the ``policies`` section, found by the policy registry
    (each policy owns the validation of its parameters)."""
    from yarn_advisor.advisor.engine import config_from_dict
    from yarn_advisor.advisor.policies import ConfigError as PolicyConfigError

    try:
        config_from_dict(policies)
    except PolicyConfigError as exc:
        return list(exc.problems)
    return []


def _read_yaml(path: Path, errors: list[str]) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        errors.append(f"{path}: cannot read: {exc}")
        return {}
    if not isinstance(data, dict):
        errors.append(f"{path}: the top level must be a mapping, not {type(data).__name__}")
        return {}
    return data


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "policies":
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _build(cls: type, data: Any, path: str, errors: list[str]) -> Any:
    where = path or "top level"
    if not isinstance(data, dict):
        errors.append(f"{where}: must be a mapping, not {type(data).__name__}")
        return cls()
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            errors.append(f"{path + '.' if path else ''}{key}: unknown key "
                          f"(known: {', '.join(sorted(names))})")
    kwargs: dict[str, Any] = {}
    for name in names & set(data):
        sub = f"{path}.{name}" if path else name
        value = _coerce(hints[name], data[name], sub, errors)
        if value is not _INVALID:
            kwargs[name] = value
    obj = cls(**kwargs)
    prefix = f"{path}." if path else ""
    errors.extend(prefix + e for e in obj.validate())
    return obj


_INVALID = object()


def _coerce(hint: Any, value: Any, path: str, errors: list[str]) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _build(typing.cast(type, hint), value, path, errors)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(inner[0], value, path, errors)
    if origin is list:
        if not isinstance(value, list):
            errors.append(f"{path}: must be a list")
            return _INVALID
        return [_coerce(args[0], v, f"{path}[{i}]", errors) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            errors.append(f"{path}: must be a mapping")
            return _INVALID
        return value
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if hint in (int, str, bool) and type(value) is hint:
        return value
    errors.append(f"{path}: must be {getattr(hint, '__name__', hint)}, got {value!r}")
    return _INVALID
