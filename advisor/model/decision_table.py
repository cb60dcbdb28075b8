"""The decision table: what the advisor asks the RM plug-in to apply at each heartbeat.

Precision mode (DESIGN.md) keeps every decision outside the RM; a thin jar
inside it applies the latest table the advisor published, at every
allocation attempt, and falls back to YARN's default behaviour whenever the
table is missing, expired or does not name the application or node. The
wire format is ``docs/decision-table.md``; this module is its one reader and
writer on the advisor's side.

Two layers:

* :class:`Decisions`: what the policies computed this cycle (per application
  its request decisions and its rank, rules matched on application
  attributes, per node the lent room and who may use it). The engine builds
  it; :meth:`Decisions.merge` joins the policies' parts.
* :class:`DecisionTable`: one published version: the decisions stamped with
  the publication sequence number, ``generated_at_ms`` (the snapshot's time),
  the TTL and the leader's identity. Only the actuator's publish step makes
  one.

Every decision can only *skip* an (application, request priority, node)
attempt (``precheckNode`` returning false) or order applications; none can
force a placement. Decisions that apply to one attempt combine by OR: the
first that vetoes skips it.

JSON: :meth:`DecisionTable.to_json` / :meth:`DecisionTable.from_json`
(strict: unknown keys, wrong types and an unknown format version are
refused with the path of the problem).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

FORMAT = "yarn-advisor-decision-table"
VERSION = 1  # the wire format's version; a reader refuses any other


class Reason(StrEnum):
    """Why an attempt is skipped: the plug-in counts its vetoes by these."""

    MATCHMAKING_NONLOCAL = "matchmaking.nonlocal"  # no local ask here, node not marked
    ANACRAC_HOST = "anacrac.host"  # not one of the app's allowed hosts
    ANACRAC_CAP = "anacrac.cap"  # the app holds its maximum containers on the node
    HASTE_FITNESS = "haste.fitness"  # the request fits what is left on the node badly
    HASTE_HOLDBACK = "haste.reduce_holdback"  # reduces wait while the app's maps are asked
    OPERA_LENT = "opera.lent_room"  # the node's lent room is for tasks predicted short


class Unranked(StrEnum):
    """Where applications the table does not rank go in a leaf queue's order."""

    FIRST = "first"
    LAST = "last"


class TableError(ValueError):
    """A decision table's JSON that cannot be read (the message names the path)."""


# --- decisions ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hold:
    """Skip the request on every node; with ``while_pending``, only while the app
    still asks for containers at one of those request priorities."""

    reason: Reason
    while_pending: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Allow:
    """Admit the request only on these nodes; skip it on every other."""

    nodes: frozenset[str]
    reason: Reason


@dataclass(frozen=True, slots=True)
class Cap:
    """Skip the request on a node where the app already runs ``max_per_node``
    containers (its AM not counted; counted live by the RM)."""

    max_per_node: int
    reason: Reason


@dataclass(frozen=True, slots=True)
class LocalOnly:
    """Admit the request only on nodes where it has a node-local ask, or that are in
    ``except_nodes`` (Matchmaking's marked nodes). A request without any host or
    rack ask is not restricted. ``max_skips``: after that many attempts skipped in a
    row by this decision, it skips no more until the request gets a container."""

    reason: Reason
    except_nodes: frozenset[str] = frozenset()
    max_skips: int | None = None


@dataclass(frozen=True, slots=True)
class Fit:
    """Skip the request on a node whose unallocated resource it fits badly: the
    cosine between the request and the node's unallocated (memory, vcores), each
    divided by the node's total, is under ``min_alignment`` (HaSTE's Eq 1 idea,
    scale-free). ``max_skips`` as for :class:`LocalOnly`."""

    min_alignment: float
    reason: Reason
    max_skips: int | None = None


@dataclass(frozen=True, slots=True)
class RequestDecision:
    """The decisions on one request priority of an app (``priority`` None: on every
    request priority of the app). Absent parts decide nothing."""

    priority: int | None = None
    hold: Hold | None = None
    allow: Allow | None = None
    veto: Mapping[str, Reason] = field(default_factory=dict)  # node id -> reason
    cap: Cap | None = None
    local_only: LocalOnly | None = None
    fit: Fit | None = None

    def applies_to(self, priority: int) -> bool:
        return self.priority is None or self.priority == priority


@dataclass(frozen=True, slots=True)
class AppDecisions:
    """One application: its rank in its leaf queue's order (None: unranked) and the
    decisions on its requests."""

    rank: int | None = None
    requests: tuple[RequestDecision, ...] = ()


@dataclass(frozen=True, slots=True)
class Match:
    """Which applications a rule applies to: every given attribute must match
    (``application_type`` case-insensitively, ``queue`` as leaf name or full path,
    ``tag`` among the application tags)."""

    application_type: str | None = None
    queue: str | None = None
    tag: str | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """Request decisions for every application that matches, known or not yet
    known to the advisor (its decisions apply from the app's first container).
    Every rule that matches an application applies to it."""

    match: Match
    requests: tuple[RequestDecision, ...]


@dataclass(frozen=True, slots=True)
class Borrower:
    """Who may use a node's lent room: one request priority of an app (None: all)."""

    app: str
    priority: int | None = None


@dataclass(frozen=True, slots=True)
class Lending:
    """A node's lent room: how much of its schedulable resource the advisor raised
    beyond what it really has, and which requests may be placed into it."""

    memory_mb: int = 0
    vcores: int = 0
    borrowers: frozenset[Borrower] = frozenset()


@dataclass(frozen=True, slots=True)
class Decisions:
    """One cycle's decisions, before publication (see the module docstring)."""

    apps: Mapping[str, AppDecisions] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    nodes: Mapping[str, Lending] = field(default_factory=dict)
    unranked: Unranked = Unranked.LAST

    @property
    def empty(self) -> bool:
        return not (self.apps or self.rules or self.nodes)

    @staticmethod
    def merge(parts: Iterable[Decisions]) -> Decisions:
        """Join the policies' parts (in precedence order): request decisions and rules
        accumulate; an app's rank, a node's lending and ``unranked`` come from the
        first part that sets them."""
        apps: dict[str, AppDecisions] = {}
        rules: list[Rule] = []
        nodes: dict[str, Lending] = {}
        unranked: Unranked | None = None
        for part in parts:
            for app_id, a in part.apps.items():
                old = apps.get(app_id)
                apps[app_id] = a if old is None else AppDecisions(
                    old.rank if old.rank is not None else a.rank, old.requests + a.requests)
            rules += part.rules
            for node_id, lend in part.nodes.items():
                nodes.setdefault(node_id, lend)
            if unranked is None and any(a.rank is not None for a in part.apps.values()):
                unranked = part.unranked
        return Decisions(apps, tuple(rules), nodes, unranked or Unranked.LAST)


@dataclass(frozen=True, slots=True)
class DecisionTable:
    """One published version of the decisions (see the module docstring)."""

    seq: int
    generated_at_ms: int
    ttl_ms: int
    leader: str
    decisions: Decisions = field(default_factory=Decisions)
    version: int = VERSION

    def expired(self, now_ms: int) -> bool:
        """True once ``ttl_ms`` has passed since ``generated_at_ms``."""
        return now_ms - self.generated_at_ms > self.ttl_ms

    def to_json(self) -> dict[str, Any]:
        """The wire form (docs/decision-table.md), keys and lists in a stable order."""
        d = self.decisions
        return {
            "format": FORMAT, "version": self.version, "seq": self.seq,
            "generated_at_ms": self.generated_at_ms, "ttl_ms": self.ttl_ms,
            "leader": self.leader, "unranked": d.unranked.value,
            "apps": {k: _app_json(d.apps[k]) for k in sorted(d.apps)},
            "rules": [{"match": _match_json(r.match),
                       "requests": [_request_json(q) for q in r.requests]} for r in d.rules],
            "nodes": {k: _lending_json(d.nodes[k]) for k in sorted(d.nodes)},
        }

    def dumps(self) -> str:
        """Compact JSON text (what the endpoint serves and the file holds)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: object) -> DecisionTable:
        """Read the wire form strictly; TableError naming the first problem's path."""
        r = _Reader()
        top = r.obj(data, "$", {"format", "version", "seq", "generated_at_ms", "ttl_ms",
                                "leader"}, {"unranked", "apps", "rules", "nodes"})
        if top["format"] != FORMAT:
            raise TableError(f"$.format: expected {FORMAT!r}, got {top['format']!r}")
        version = r.int_(top["version"], "$.version")
        if version != VERSION:
            raise TableError(f"$.version: unknown version {version} (this reader knows "
                             f"{VERSION})")
        apps = r.obj(top.get("apps", {}), "$.apps")
        rules = r.list_(top.get("rules", []), "$.rules")
        nodes = r.obj(top.get("nodes", {}), "$.nodes")
        decisions = Decisions(
            apps={r.key(k, "$.apps"): r.app(v, f"$.apps.{k}") for k, v in apps.items()},
            rules=tuple(r.rule(v, f"$.rules[{i}]") for i, v in enumerate(rules)),
            nodes={r.key(k, "$.nodes"): r.lending(v, f"$.nodes.{k}")
                   for k, v in nodes.items()},
            unranked=r.enum(Unranked, top.get("unranked", Unranked.LAST.value),
                            "$.unranked"))
        ttl = r.int_(top["ttl_ms"], "$.ttl_ms")
        if ttl <= 0:
            raise TableError(f"$.ttl_ms: must be positive, got {ttl}")
        return cls(seq=r.int_(top["seq"], "$.seq"),
                   generated_at_ms=r.int_(top["generated_at_ms"], "$.generated_at_ms"),
                   ttl_ms=ttl, leader=r.str_(top["leader"], "$.leader"),
                   decisions=decisions, version=version)

    @classmethod
    def loads(cls, text: str | bytes) -> DecisionTable:
        """:meth:`from_json` of JSON text (TableError if it is not JSON)."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise TableError(f"$: not JSON: {exc}") from None
        return cls.from_json(data)


# --- to JSON --------------------------------------------------------------------------
def _app_json(a: AppDecisions) -> dict[str, Any]:
    out: dict[str, Any] = {"requests": [_request_json(q) for q in a.requests]}
    if a.rank is not None:
        out["rank"] = a.rank
    return out


def _request_json(q: RequestDecision) -> dict[str, Any]:
    out: dict[str, Any] = {"priority": q.priority}
    if q.hold is not None:
        out["hold"] = {"reason": q.hold.reason.value,
                       "while_pending": list(q.hold.while_pending)}
    if q.allow is not None:
        out["allow"] = {"nodes": sorted(q.allow.nodes), "reason": q.allow.reason.value}
    if q.veto:
        out["veto"] = {k: q.veto[k].value for k in sorted(q.veto)}
    if q.cap is not None:
        out["cap"] = {"max_per_node": q.cap.max_per_node, "reason": q.cap.reason.value}
    if q.local_only is not None:
        out["local_only"] = {"reason": q.local_only.reason.value,
                             "except_nodes": sorted(q.local_only.except_nodes),
                             "max_skips": q.local_only.max_skips}
    if q.fit is not None:
        out["fit"] = {"min_alignment": q.fit.min_alignment, "reason": q.fit.reason.value,
                      "max_skips": q.fit.max_skips}
    return out


def _match_json(m: Match) -> dict[str, Any]:
    return {k: v for k, v in (("application_type", m.application_type), ("queue", m.queue),
                              ("tag", m.tag)) if v is not None}


def _lending_json(lend: Lending) -> dict[str, Any]:
    return {"memory_mb": lend.memory_mb, "vcores": lend.vcores,
            "borrowers": [{"app": b.app, "priority": b.priority}
                          for b in sorted(lend.borrowers, key=_borrower_key)]}


def _borrower_key(b: Borrower) -> tuple[str, int]:
    return (b.app, -1 if b.priority is None else b.priority)


# --- from JSON (strict) -----------------------------------------------------------------
class _Reader:
    """Typed reads that name the path of the first problem."""

    def obj(self, v: object, path: str, required: set[str] | None = None,
            optional: set[str] | None = None) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise TableError(f"{path}: expected an object, got {type(v).__name__}")
        if required is not None or optional is not None:
            need, allowed = required or set(), (required or set()) | (optional or set())
            missing = sorted(need - set(v))
            if missing:
                raise TableError(f"{path}: missing key {missing[0]!r}")
            unknown = sorted(set(v) - allowed)
            if unknown:
                raise TableError(f"{path}: unknown key {unknown[0]!r}")
        return v

    def list_(self, v: object, path: str) -> list[Any]:
        if not isinstance(v, list):
            raise TableError(f"{path}: expected a list, got {type(v).__name__}")
        return v

    def key(self, k: str, path: str) -> str:
        if not k:
            raise TableError(f"{path}: empty key")
        return k

    def int_(self, v: object, path: str) -> int:
        if type(v) is not int:
            raise TableError(f"{path}: expected an integer, got {type(v).__name__}")
        return v

    def opt_int(self, v: object, path: str) -> int | None:
        return None if v is None else self.int_(v, path)

    def str_(self, v: object, path: str) -> str:
        if not isinstance(v, str) or not v:
            raise TableError(f"{path}: expected a non-empty string")
        return v

    def opt_str(self, v: object, path: str) -> str | None:
        return None if v is None else self.str_(v, path)

    def enum(self, cls: type[Any], v: object, path: str) -> Any:
        try:
            return cls(v)
        except ValueError:
            raise TableError(f"{path}: unknown value {v!r} (one of "
                             f"{', '.join(m.value for m in cls)})") from None

    def nodes(self, v: object, path: str) -> frozenset[str]:
        return frozenset(self.str_(x, f"{path}[{i}]") for i, x in enumerate(self.list_(v, path)))

    def app(self, v: object, path: str) -> AppDecisions:
        o = self.obj(v, path, {"requests"}, {"rank"})
        return AppDecisions(self.opt_int(o.get("rank"), f"{path}.rank"),
                            self.requests(o["requests"], f"{path}.requests"))

    def requests(self, v: object, path: str) -> tuple[RequestDecision, ...]:
        return tuple(self.request(x, f"{path}[{i}]") for i, x in enumerate(self.list_(v, path)))

    def request(self, v: object, path: str) -> RequestDecision:
        o = self.obj(v, path, {"priority"}, {"hold", "allow", "veto", "cap", "local_only", "fit"})
        hold = allow = cap = local = fit = None
        if "hold" in o:
            h = self.obj(o["hold"], f"{path}.hold", {"reason"}, {"while_pending"})
            hold = Hold(self.enum(Reason, h["reason"], f"{path}.hold.reason"),
                        tuple(self.int_(x, f"{path}.hold.while_pending[{i}]") for i, x in
                              enumerate(self.list_(h.get("while_pending", []),
                                                   f"{path}.hold.while_pending"))))
        if "allow" in o:
            a = self.obj(o["allow"], f"{path}.allow", {"nodes", "reason"})
            allow = Allow(self.nodes(a["nodes"], f"{path}.allow.nodes"),
                          self.enum(Reason, a["reason"], f"{path}.allow.reason"))
        veto = {self.key(k, f"{path}.veto"): self.enum(Reason, r, f"{path}.veto.{k}")
                for k, r in self.obj(o.get("veto", {}), f"{path}.veto").items()}
        if "cap" in o:
            c = self.obj(o["cap"], f"{path}.cap", {"max_per_node", "reason"})
            n = self.int_(c["max_per_node"], f"{path}.cap.max_per_node")
            if n < 0:
                raise TableError(f"{path}.cap.max_per_node: must be >= 0, got {n}")
            cap = Cap(n, self.enum(Reason, c["reason"], f"{path}.cap.reason"))
        if "local_only" in o:
            lo = self.obj(o["local_only"], f"{path}.local_only", {"reason"},
                          {"except_nodes", "max_skips"})
            local = LocalOnly(self.enum(Reason, lo["reason"], f"{path}.local_only.reason"),
                              self.nodes(lo.get("except_nodes", []),
                                         f"{path}.local_only.except_nodes"),
                              self.skips(lo.get("max_skips"), f"{path}.local_only.max_skips"))
        if "fit" in o:
            f = self.obj(o["fit"], f"{path}.fit", {"min_alignment", "reason"}, {"max_skips"})
            a = f["min_alignment"]
            if type(a) not in (int, float) or not 0 < a <= 1:
                raise TableError(f"{path}.fit.min_alignment: a number in (0, 1], got {a!r}")
            fit = Fit(float(a), self.enum(Reason, f["reason"], f"{path}.fit.reason"),
                      self.skips(f.get("max_skips"), f"{path}.fit.max_skips"))
        return RequestDecision(self.opt_int(o["priority"], f"{path}.priority"), hold, allow,
                               veto, cap, local, fit)

    def skips(self, v: object, path: str) -> int | None:
        n = self.opt_int(v, path)
        if n is not None and n < 0:
            raise TableError(f"{path}: must be >= 0, got {n}")
        return n

    def rule(self, v: object, path: str) -> Rule:
        o = self.obj(v, path, {"match", "requests"})
        m = self.obj(o["match"], f"{path}.match", set(), {"application_type", "queue", "tag"})
        match = Match(self.opt_str(m.get("application_type"), f"{path}.match.application_type"),
                      self.opt_str(m.get("queue"), f"{path}.match.queue"),
                      self.opt_str(m.get("tag"), f"{path}.match.tag"))
        if match == Match():
            raise TableError(f"{path}.match: names no attribute (a rule must select apps)")
        return Rule(match, self.requests(o["requests"], f"{path}.requests"))

    def lending(self, v: object, path: str) -> Lending:
        o = self.obj(v, path, {"memory_mb", "vcores", "borrowers"})
        borrowers = []
        for i, b in enumerate(self.list_(o["borrowers"], f"{path}.borrowers")):
            bo = self.obj(b, f"{path}.borrowers[{i}]", {"app", "priority"})
            borrowers.append(Borrower(self.str_(bo["app"], f"{path}.borrowers[{i}].app"),
                                      self.opt_int(bo["priority"],
                                                   f"{path}.borrowers[{i}].priority")))
        mem = self.int_(o["memory_mb"], f"{path}.memory_mb")
        vc = self.int_(o["vcores"], f"{path}.vcores")
        if mem < 0 or vc < 0:
            raise TableError(f"{path}: lent room must be >= 0")
        return Lending(mem, vc, frozenset(borrowers))


__all__ = ["FORMAT", "VERSION", "Allow", "AppDecisions", "Borrower", "Cap", "DecisionTable",
           "Decisions", "Fit", "Hold", "Lending", "LocalOnly", "Match", "Reason", "RequestDecision",
           "Rule", "TableError", "Unranked"]
