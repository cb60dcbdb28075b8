"""The advisor's configuration: typed sections, their defaults and their checks.

A YAML file overrides any key of the defaults (``config/defaults.yaml``
documents each one and equals the defaults below; a test checks it). The
``policies`` section has one entry per registered policy, each ``{enabled,
dry_run, params}``; the policies' ``Params`` models come from the caller
(:func:`load` takes them), so this layer imports nothing from the advisor.
Every problem is reported at once, with its key path (:mod:`.base`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import typing
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import Field, ValidationInfo, create_model, field_validator, model_validator

from yarn_advisor.config.base import ConfigError, ConfigModel, Seq, validate
from yarn_advisor.config.secrets import redact_url

DEFAULTS = Path(__file__).with_name("defaults.yaml")
_HTTP = ("http://", "https://")


MAX_CONFIG_BYTES = 4 << 20  # a configuration file larger than this is a mistake (/dev/zero)


def _url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an RM or JobHistory address, or None: a scheme, a host
    and a port in range (``http://`` and port 99999 passed and failed every cycle)."""
    if not url.startswith(_HTTP):
        return "must start with http:// or https://"
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when out of range or not a number
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if not parts.hostname:
        return "has no host"
    if port == 0:
        return "port 0 is not a port"
    return None


def _connect_string(hosts: str) -> str:
    """A ZooKeeper connect string (``zk1:2181,zk2:2181[/chroot]``), each host named and
    its port in range, or ValueError (``:::`` failed only when the client started)."""
    servers, _, _chroot = hosts.strip().partition("/")
    for i, one in enumerate(servers.split(",")):
        try:
            parts = urlsplit("//" + one.strip())
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"server {i + 1} {one!r}: {exc}") from None
        if not parts.hostname or port == 0:
            raise ValueError(f"server {i + 1} {one!r}: needs a host and a port in 1-65535")
    return hosts


def _http_url(url: str) -> str:
    why = _url_problem(url)
    if why:
        raise ValueError(why)
    return url


class Auth(ConfigModel):
    method: Literal["simple", "kerberos", "none"] = "simple"
    user: str = "yarn-advisor"
    principal: str | None = None
    keytab: str | None = None  # kerberos: the advisor logs itself in and renews

    @model_validator(mode="after")
    def _kerberos_settings(self) -> Auth:
        if self.keytab is not None and not self.principal:
            raise ValueError("keytab needs principal (the keytab's principal to log in as)")
        if (self.keytab is not None or self.principal) and self.method != "kerberos":
            raise ValueError("principal and keytab are for method kerberos")
        return self


class Tls(ConfigModel):
    verify: bool = True
    ca_bundle: str | None = None
    client_cert: str | None = None
    client_key: str | None = None

    @model_validator(mode="after")
    def _key_needs_cert(self) -> Tls:
        if self.client_key and not self.client_cert:
            raise ValueError("client_key needs client_cert")
        return self


class Timeout(ConfigModel):
    connect_s: float = Field(3.0, gt=0)
    read_s: float = Field(10.0, gt=0)
    total_s: float = Field(30.0, gt=0)  # a whole answer, however slowly it trickles


class Body(ConfigModel):
    """Bounds on one answer's body: an endless body or a decompression bomb (served by
    an RM, or by an application master through /proxy, which users control) must
    cost one failed read, not the daemon's memory."""

    max_mb: float = Field(256.0, gt=0)  # decoded; a 10,000-node cluster's apps fit
    max_inflation: float = Field(100.0, ge=1)  # decoded / received, past the first MiB


class Retry(ConfigModel):
    attempts: int = Field(3, ge=1, le=10)
    base_delay_s: float = Field(0.25, ge=0)
    max_delay_s: float = Field(2.0, ge=0)
    deadline_s: float = Field(10.0, gt=0)

    @field_validator("max_delay_s")
    @classmethod
    def _ordered(cls, max_delay_s: float, info: ValidationInfo) -> float:
        low = info.data.get("base_delay_s")
        if low is not None and max_delay_s < low:
            raise ValueError("must be >= base_delay_s")
        return max_delay_s


class RmZooKeeper(ConfigModel):
    """Active RM discovery through the RMs' own election lock in ZooKeeper."""

    hosts: str | None = None  # None: ha.zookeeper.hosts (and its auth)
    cluster_id: str = ""  # yarn.resourcemanager.cluster-id
    base_path: str = Field("/yarn-leader-election", pattern=r"^/.*[^/]$")
    rm_ids: dict[str, str] = Field(default_factory=dict)  # rm id -> web URL

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, hosts: str | None) -> str | None:
        return None if hosts is None else _connect_string(hosts)

    @field_validator("rm_ids")
    @classmethod
    def _http_urls(cls, rm_ids: dict[str, str]) -> dict[str, str]:
        return {rm_id: _http_url(url) for rm_id, url in rm_ids.items()}


class Rm(ConfigModel):
    urls: Seq[str] = Field(("http://127.0.0.1:8088",), min_length=1)
    discovery: Literal["probe", "zookeeper"] = "probe"  # how the active RM is found
    zookeeper: RmZooKeeper = RmZooKeeper()
    history_url: str | None = None
    auth: Auth = Auth()
    tls: Tls = Tls()
    timeout: Timeout = Timeout()
    retry: Retry = Retry()
    body: Body = Body()

    @field_validator("urls")
    @classmethod
    def _urls(cls, urls: tuple[str, ...]) -> tuple[str, ...]:
        bad = [f"urls[{i}]: {why}" for i, u in enumerate(urls) if (why := _url_problem(u))]
        if bad:
            raise ValueError("; ".join(bad))
        return urls

    @field_validator("history_url")
    @classmethod
    def _history(cls, url: str | None) -> str | None:
        return None if url is None else _http_url(url)

    @model_validator(mode="after")
    def _discovery_is_complete(self) -> Rm:
        z = self.zookeeper
        if self.discovery != "zookeeper":
            return self
        if not (z.cluster_id and z.rm_ids):
            raise ValueError("discovery zookeeper needs zookeeper.cluster_id and "
                             "zookeeper.rm_ids (rm id -> web URL)")
        listed = {u.rstrip("/") for u in self.urls}
        stray = sorted(i for i, u in z.rm_ids.items() if u.rstrip("/") not in listed)
        if stray:
            raise ValueError(f"zookeeper.rm_ids {stray}: their URLs must be in urls")
        return self


class MapReduceSense(ConfigModel):
    enabled: bool = True
    jobs_limit: int = Field(200, ge=0)
    attempts_limit: int = Field(2000, ge=0)
    history: bool = True


class NmJmxSense(ConfigModel):
    enabled: bool = True
    nodes_limit: int = Field(200, ge=0)
    scheme: Literal["http", "https"] = "http"


class Sense(ConfigModel):
    interval_s: float = Field(30.0, ge=0)
    app_details_limit: int = Field(500, ge=0)
    fetch_workers: int = Field(8, ge=1, le=64)
    # the sense step's deadline: optional reads still out then are given up (their
    # source degraded), so a cycle never acts on data read long before (a trickling
    # AM proxy held cycles at 31 s)
    deadline_s: float = Field(20.0, gt=0)
    rm_jmx: bool = True
    scheduler_conf: bool = True
    rm_conf_keys: Seq[str] = ("yarn.cluster.max-application-priority",)
    # RM settings taken as given instead of read from /conf, which shows what the RM
    # started with (e.g. after `yarn rmadmin -refreshClusterMaxPriority`)
    rm_conf_values: dict[str, str] = Field(default_factory=dict)
    mapreduce: MapReduceSense = MapReduceSense()
    nm_jmx: NmJmxSense = NmJmxSense()
    # the RM plug-in's MBean (docs/plugin.md): "auto" reads it while precision mode is on
    rm_plugin: Literal["auto", "on", "off"] = "auto"


class Classifier(ConfigModel):
    enabled: bool = True
    threshold_s: float = Field(60.0, gt=0)
    min_confidence: float = Field(0.9, ge=0.5, le=1.0)
    min_support: int = Field(3, ge=1, le=1000)
    relaxed_confidence: float = Field(0.85, ge=0.5, le=1.0)
    relaxed_budget: float = Field(0.01, ge=0.0, le=0.1)
    # opt-in: at the defaults it cost OPERA's workloads their gain in the simulator
    # (MR -36 % -> -10 %, MR+Spark -4 % -> +30 %): fewer short calls, less lent room
    calibrate: bool = False
    long_budget: float = Field(0.02, gt=0.0, le=0.2)
    checkpoint: str | None = None


class Server(ConfigModel):
    """The HTTP endpoints. Each connection has ``connection_timeout_s`` per socket
    read or write and at most ``max_connections`` are served at once (one thread
    each); more are closed at once: 1,019 idle connections took 1,016 threads and
    every file descriptor of a server without either."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(9135, ge=0, le=65535)
    connection_timeout_s: float = Field(5.0, gt=0)
    max_connections: int = Field(32, ge=1, le=1024)


Level = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


class Logging(ConfigModel):
    """``level`` is the advisor's own; other libraries' loggers (kazoo, urllib3, ...)
    log at INFO at most unless ``loggers`` names them: at DEBUG, kazoo logs every
    request it sends, its ZooKeeper ``Auth`` among them."""

    level: Level = "INFO"
    json_lines: bool = Field(False, alias="json")
    loggers: Mapping[str, Level] = Field(default_factory=dict)


class Scope(ConfigModel):
    """fnmatch patterns: an empty ``allow`` admits everything; ``deny`` always wins."""

    allow: Seq[str] = ()
    deny: Seq[str] = ()

    def admits(self, *names: str) -> bool:
        """True if one of ``names`` is allowed and none is denied."""
        def hit(patterns: tuple[str, ...]) -> bool:
            return any(fnmatchcase(n, p) for n in names if n for p in patterns)

        return (not self.allow or hit(self.allow)) and not hit(self.deny)


class KindLimits(ConfigModel):
    """Per-target limits for one kind of action, in place of the actuator-wide ones."""

    cooldown_s: float | None = Field(None, ge=0)
    max_actions_per_target: int | None = Field(None, ge=1)


# the kinds the actuator writes (advisor.model.kinds.Kind minus the advisory ones;
# a unit test checks the two agree: the configuration imports nothing of the advisor)
LEVER_KINDS = ("set_app_priority", "move_app_queue", "kill_app", "update_scheduler_conf",
               "replace_node_labels", "update_node_resource", "signal_container",
               "add_cluster_labels", "remove_cluster_labels", "set_mapping_rules")

# a node's schedulable resource follows measured use (OPERA's ramp and its return):
# a few changes an hour would leave the lent headroom idle for most of it
NODE_RESOURCE_LIMITS = KindLimits(cooldown_s=20.0, max_actions_per_target=60)


class WatchdogSettings(ConfigModel):
    """The harm watchdog of enforce mode (advisor/act/watchdog.py): past a threshold a
    policy is switched to dry-run for ``hold_s`` and its live changes are rolled back."""

    enabled: bool = True
    window_s: float = Field(1800.0, gt=0)  # how far back harm is counted
    hold_s: float = Field(86400.0, ge=0)  # a tripped policy stays in dry-run this long
    task_failures: int = Field(5, ge=1)  # failed or killed tasks on a policy's changed nodes
    failure_ratio: float = Field(2.0, ge=1)  # ... at this many times the other nodes' rate
    unhealthy_nodes: int = Field(1, ge=1)  # changed nodes turned UNHEALTHY or LOST
    failed_apps: int = Field(2, ge=1)  # apps failed, with task failures on changed nodes
    refused_writes: int = Field(3, ge=1)  # writes refused, failed or lost
    am_failures: int = Field(2, ge=1)  # AM attempts failed: of apps it changed, on its nodes
    preemptions: int = Field(10, ge=1)  # containers preempted from apps or queues it changed
    slow_jobs: int = Field(2, ge=1)  # runs slowed against their own recent ones, on its raises
    slow_factor: float = Field(2.0, gt=1)  # ... elapsed past this many times their median
    slow_margin_s: float = Field(60.0, ge=0)  # ... and past it by at least this long
    slow_min_runs: int = Field(3, ge=1)  # ... of at least this many recent runs (same user+name)


class ActuatorSettings(ConfigModel):
    """The one writer's guardrails (enforce itself: top-level and per-policy ``dry_run``)."""

    journal_path: str | None = None
    journal_max_mb: float = Field(64.0, gt=0)
    journal_keep: int = Field(4, ge=1)
    kill_switch: bool = False
    kill_switch_file: str | None = None
    allow_kill_like: bool = False
    queues: Scope = Scope()
    apps: Scope = Scope()
    nodes: Scope = Scope()
    max_actions_per_cycle: int = Field(10, ge=0)
    max_actions_per_target: int = Field(3, ge=1)
    target_window_s: float = Field(3600.0, gt=0)
    cooldown_s: float = Field(300.0, ge=0)
    min_change_fraction: float = Field(0.1, ge=0, lt=1)
    min_priority_delta: int = Field(1, ge=0)
    max_snapshot_age_s: float = Field(120.0, gt=0)
    # node resource writes: the RM kills what a lowered node cannot hold (non-AM, newest
    # first) at its first heartbeat this long after the write (-1 never; see OPERA's README)
    overcommit_timeout_ms: int = Field(120_000, ge=-1)
    rollback_hold_s: float = Field(3600.0, ge=0)
    watchdog: WatchdogSettings = WatchdogSettings()
    kinds: dict[str, KindLimits] = Field(
        default_factory=lambda: {"update_node_resource": NODE_RESOURCE_LIMITS})

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, kinds: dict[str, KindLimits]) -> dict[str, KindLimits]:
        bad = [k for k in kinds if k not in LEVER_KINDS]
        if bad:
            raise ValueError(f"unknown kind(s) {', '.join(bad)} "
                             f"(known: {', '.join(sorted(LEVER_KINDS))})")
        return kinds

    def cooldown_s_for(self, kind: str) -> float:
        limits = self.kinds.get(kind)
        return self.cooldown_s if limits is None or limits.cooldown_s is None else \
            limits.cooldown_s

    def max_actions_per_target_for(self, kind: str) -> int:
        limits = self.kinds.get(kind)
        return self.max_actions_per_target if limits is None or \
            limits.max_actions_per_target is None else limits.max_actions_per_target


class ZooKeeperAuth(ConfigModel):
    """How the advisor authenticates to ZooKeeper; its znodes are then ACL'd to that user."""

    method: Literal["none", "digest", "sasl"] = "none"
    user: str | None = None  # digest and sasl DIGEST-MD5
    password_file: str | None = None  # digest and sasl DIGEST-MD5: one line, the password
    sasl_mechanism: Literal["GSSAPI", "DIGEST-MD5"] = "GSSAPI"
    sasl_service: str = "zookeeper"
    principal: str | None = None  # sasl GSSAPI: the advisor's principal (ticket cache/keytab)

    @model_validator(mode="after")
    def _complete(self) -> ZooKeeperAuth:
        needs_password = self.method == "digest" or (
            self.method == "sasl" and self.sasl_mechanism == "DIGEST-MD5")
        if needs_password and not (self.user and self.password_file):
            raise ValueError(f"{self.method} needs user and password_file")
        return self


class ZooKeeper(ConfigModel):
    hosts: str = Field(min_length=1)  # connect string: zk1:2181,zk2:2181,zk3:2181[/chroot]

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, hosts: str) -> str:
        return _connect_string(hosts)
    path: str | None = Field(None, pattern=r"^/.*[^/]$")  # None: /yarn-advisor/<cluster_name>
    session_timeout_s: float = Field(10.0, ge=0.4, le=600)
    connect_timeout_s: float = Field(15.0, gt=0)
    auth: ZooKeeperAuth = ZooKeeperAuth()


class Ha(ConfigModel):
    """Two advisors, one writer: leader election and shared state in ZooKeeper."""

    zookeeper: ZooKeeper
    cluster_name: str = Field("default", pattern=r"^[A-Za-z0-9._-]+$")
    advisor_id: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]+$")


# precision mode's decision kinds (docs/decision-table.md), each computed by one policy
DecisionKind = Literal["haste.holdback", "haste.order", "haste.fitness",
                       "matchmaking.local_only", "anacrac.rules", "opera.lending"]
DECISION_KINDS: tuple[DecisionKind, ...] = typing.get_args(DecisionKind)


class Precision(ConfigModel):
    """Precision mode: the decision table the RM plug-in applies at every heartbeat
    (docs/decision-table.md). Published only in enforce mode, as the leader, with the
    kill switch released; ``ttl_s`` None: three cycles (at least 10 s)."""

    enabled: bool = False
    ttl_s: float | None = Field(None, gt=0)
    table_file: str | None = None
    decisions: Seq[DecisionKind] = DECISION_KINDS

    def ttl_ms(self, interval_s: float) -> int:
        """The TTL the published tables carry, in milliseconds."""
        return int(1000 * (self.ttl_s if self.ttl_s is not None else max(10.0, 3 * interval_s)))


class PolicySection(ConfigModel):
    """One policy's section; ``params`` is that policy's own ``Params`` model.
    An empty section (``haste:`` with nothing under it) means all defaults."""

    enabled: bool = True
    dry_run: bool | None = None  # None: the top-level dry_run decides
    params: ConfigModel = ConfigModel()

    @model_validator(mode="before")
    @classmethod
    def _empty_is_default(cls, raw: object) -> object:
        return {} if raw is None else raw

    @field_validator("params", mode="before")
    @classmethod
    def _no_params_is_default(cls, raw: object) -> object:
        return {} if raw is None else raw


class Policies(ConfigModel):
    """One :class:`PolicySection` per registered policy (fields made by :func:`model_for`)."""

    @model_validator(mode="before")
    @classmethod
    def _empty_is_default(cls, raw: object) -> object:
        return {} if raw is None else raw

    def sections(self) -> dict[str, PolicySection]:
        """Every policy's section, in registry order."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class AdvisorConfig(ConfigModel):
    """The whole configuration (see ``config/defaults.yaml`` for each key)."""

    dry_run: bool = True
    state_dir: str = "./var"
    rm: Rm = Rm()
    sense: Sense = Sense()
    server: Server = Server()
    classifier: Classifier = Classifier()
    logging: Logging = Logging()
    actuator: ActuatorSettings = ActuatorSettings()
    policies: Policies = Policies()
    precision: Precision = Precision()
    ha: Ha | None = None  # None: this advisor runs alone

    @model_validator(mode="after")
    def _rm_discovery_has_a_zookeeper(self) -> AdvisorConfig:
        if (self.rm.discovery == "zookeeper" and self.rm.zookeeper.hosts is None
                and self.ha is None):
            raise ValueError("rm.discovery zookeeper needs rm.zookeeper.hosts or "
                             "ha.zookeeper.hosts")
        return self

    def redacted(self) -> dict[str, Any]:
        """The configuration as JSON, with the user and password of every URL and the
        path of every keytab hidden (what the start-up log line shows)."""
        text = json.dumps(_masked(self.model_dump(mode="json", by_alias=True)), sort_keys=True)
        return dict(json.loads(redact_url(text)))

    def fingerprint(self) -> str:
        """A short hash of the effective configuration (shown in metrics and logs)."""
        text = json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


HIDDEN_KEYS = frozenset({"keytab"})  # settings whose value is itself sensitive


def _masked(value: Any) -> Any:
    """``value`` with every set ``HIDDEN_KEYS`` setting shown as ``***``."""
    if isinstance(value, dict):
        return {k: "***" if k in HIDDEN_KEYS and v is not None else _masked(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


ParamsModels = Mapping[str, type[ConfigModel]]


@functools.cache
def _model(policies: tuple[tuple[str, type[ConfigModel]], ...]) -> type[AdvisorConfig]:
    fields: dict[str, Any] = {}
    for name, params in policies:
        section = create_model(f"{name.title()}Section", __base__=PolicySection,
                               params=(params, params()))
        fields[name] = (section, section())
    policies_model = create_model("PolicySections", __base__=Policies, **fields)
    return create_model("AdvisorConfigWithPolicies", __base__=AdvisorConfig,
                        policies=(policies_model, policies_model()))


def model_for(policies: ParamsModels) -> type[AdvisorConfig]:
    """The configuration model whose ``policies`` section holds these policies' Params."""
    return _model(tuple(policies.items()))


def load(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None,
         policies: ParamsModels | None = None) -> AdvisorConfig:
    """Defaults, then the file at ``path`` (if any), then ``overrides``; validated once."""
    data: dict[str, Any] = {}
    if path is not None:
        data = read_yaml(Path(path))
    if overrides:
        data = merge(data, overrides)
    return from_dict(data, policies)


def from_dict(data: object, policies: ParamsModels | None = None) -> AdvisorConfig:
    """Validate a decoded configuration mapping (every error at once)."""
    return validate(model_for(policies or {}), data)


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (YAML keeps the
    last one silently, so a repeated key would hide the setting the operator meant)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping, or ConfigError saying why not (unreadable, not
    UTF-8, not YAML, a key given twice, empty, or not a mapping)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError([f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB: not a "
                               "configuration file"])
        text = raw.decode("utf-8")
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError([f"{path}: cannot read: {' '.join(str(exc).split())}"]) from None
    if data is None:
        raise ConfigError([f"{path}: the file is empty (leave out --config to run with "
                           "the defaults)"])
    if not isinstance(data, dict):
        raise ConfigError([f"{path}: the top level must be a mapping, not {type(data).__name__}"])
    return data


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base``, mapping by mapping (lists are replaced whole)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
