"""The CapacityScheduler's JSON mapping rules: the advisor's block, merged with the operator's.

Hadoop 3.4.2's ``CSMappingPlacementRule`` places an application at submission
(``RMAppManager``, before its AM request is built) by the first rule of
``yarn.scheduler.capacity.mapping-rule-json`` that matches it (with
``yarn.scheduler.capacity.mapping-rule-format=json``). A rule
(``placement.schema.Rule``) matches ``type`` ``user``, ``group`` or
``application`` (the exact application name, ``VariableMatcher``'s
``equals``) against ``matches``; the advisor's rules place with policy
``custom`` into ``customPlacement`` (its queue), ``create: false``, and fall
back with ``skip`` (a missing queue passes the application on to the next
rule). Each carries :data:`MARK` (Jackson keeps unknown properties in the
rule's ``additionalProperties``), which is how the advisor finds its own block.

Merging: the advisor's block goes **first**, the operator's rules follow,
unchanged and in their order (never dropped). First, because the first match
wins: an operator's catch-all (``user *``) would otherwise shadow every rule
after it; the advisor's rules name single applications, and skip when their
queue is gone. The RM applies mapping rules only to applications submitted to
``default`` (or to no queue), unless ``queue-mappings-override.enable``.
Rollback writes the two settings read before the first write back verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from yarn_advisor.advisor.model.jsonvalue import JsonValue

FORMAT_KEY = "yarn.scheduler.capacity.mapping-rule-format"
JSON_KEY = "yarn.scheduler.capacity.mapping-rule-json"
JSON_FILE_KEY = "yarn.scheduler.capacity.mapping-rule-json-file"
LEGACY_KEYS = ("yarn.scheduler.capacity.queue-mappings",
               "yarn.scheduler.queue-placement-rules.app-name")
MARK = "x-yarn-advisor"  # the advisor's rules carry their name under this property
TYPES = frozenset({"user", "group", "application"})


def rm_rule(name: str, type_: str, matches: str, queue: str) -> dict[str, JsonValue]:
    """One advisor rule in the RM's JSON form."""
    return {"type": type_, "matches": matches, "policy": "custom", "customPlacement": queue,
            "create": False, "fallbackResult": "skip", MARK: name}


def _document(raw: str | None) -> dict[str, JsonValue]:
    """The RM's mapping-rule JSON as an object (empty when unset); ValueError if not one."""
    if raw is None or not raw.strip():
        return {}
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{JSON_KEY} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rules", []), list):
        raise ValueError(f"{JSON_KEY} is not an object with a 'rules' list")
    return doc


def advisor_block(raw: str | None) -> list[JsonValue]:
    """The advisor's rules in the RM's JSON (those carrying :data:`MARK`), in order."""
    rules = _document(raw).get("rules", [])
    assert isinstance(rules, list)
    return [r for r in rules if isinstance(r, dict) and MARK in r]


def merged(raw: str | None, block: Sequence[dict[str, JsonValue]]) -> str:
    """``raw`` with its advisor block replaced by ``block``, put first; every other
    rule and property kept, in order."""
    doc = _document(raw)
    rules = doc.get("rules", [])
    assert isinstance(rules, list)
    theirs = [r for r in rules if not (isinstance(r, dict) and MARK in r)]
    doc["rules"] = [*block, *theirs]
    return json.dumps(doc, separators=(",", ":"))


def placement(conf: Mapping[str, str], app_name: str, user: str, queue: str,
              exists: Callable[[str], bool]) -> str | None:
    """The queue ``conf``'s JSON mapping rules place a submission into (None: no rule
    applies), as ``CSMappingPlacementRule`` does for the rules the simulator models:
    only a submission to ``default`` (unless override is on), the first rule whose
    ``user`` or ``application`` equals, policy ``custom`` (a ``skip`` fallback when
    whose queue does not ``exist`` falls back with ``skip``: the next rule is tried)."""
    if (conf.get(FORMAT_KEY) or "").strip().lower() != "json":
        return None
    override = (conf.get("yarn.scheduler.capacity.queue-mappings-override.enable")
                or "").strip().lower() == "true"
    if queue not in ("default", "root.default") and not override:
        return None
    try:
        rules = _document(conf.get(JSON_KEY)).get("rules", [])
    except ValueError:
        return None
    assert isinstance(rules, list)
    for r in rules:
        if not isinstance(r, dict) or r.get("policy") != "custom":
            continue
        who = {"user": user, "application": app_name}.get(str(r.get("type")))
        if who is not None and r.get("matches") in (who, "*" if r.get("type") == "user" else None):
            target = r.get("customPlacement")
            if isinstance(target, str) and exists(target):
                return target
    return None


def blocked_by(conf: dict[str, str | None]) -> str | None:
    """Why the advisor may not write mapping rules over ``conf`` (None: it may):
    the operator's rules in the legacy format or in a JSON file would be dropped by
    switching to the JSON setting."""
    fmt = (conf.get(FORMAT_KEY) or "legacy").strip().lower()
    if fmt != "json":
        legacy = [k for k in LEGACY_KEYS if (conf.get(k) or "").strip()]
        if legacy:
            return (f"the operator's mapping rules are in the legacy format ({', '.join(legacy)}):"
                    f" convert them to {JSON_KEY} first (writing it would drop them)")
    if (conf.get(JSON_FILE_KEY) or "").strip() and not (conf.get(JSON_KEY) or "").strip():
        return (f"the operator's mapping rules are in {JSON_FILE_KEY}: move them into "
                f"{JSON_KEY} first (setting it would override the file)")
    return None
