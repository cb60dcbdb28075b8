"""The cycle's decision table: each policy's part, joined (precision mode). Pure.

After the policies have advised, each enabled policy that has a planner
(``PLANNERS``) turns what it computed -- its result (recommendations and next
state), its parameters and what it reads -- into its part of the decision
table, for the decision kinds the configuration asks for
(``precision.decisions``). The parts are joined in precedence order
(:meth:`~yarn_advisor.advisor.model.decision_table.Decisions.merge`). A policy
configured ``dry_run: true`` contributes nothing (its decisions stay
advisory, as its writes do); a planner that raises is reported as that
policy's error and the others still plan. Publishing is the actuator's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from yarn_advisor.advisor.model.decision_table import Decisions
from yarn_advisor.advisor.model.snapshot import Snapshot
from yarn_advisor.advisor.policies import AnyPolicy, PolicyResult, Reads
from yarn_advisor.advisor.policies.anacrac import decisions as anacrac
from yarn_advisor.advisor.policies.haste import decisions as haste
from yarn_advisor.advisor.policies.matchmaking import decisions as matchmaking
from yarn_advisor.advisor.policies.opera import decisions as opera
from yarn_advisor.config.schema import PolicySection

# (snapshot, the policy's result, its Params, what it reads, the kinds asked for)
Planner = Callable[[Snapshot, PolicyResult[object], Any, Reads, frozenset[str]], Decisions]

PLANNERS: dict[str, Planner] = {
    "haste": haste.plan,
    "matchmaking": matchmaking.plan,
    "opera": opera.plan,
    "anacrac": anacrac.plan,
}


def plan_table(snapshot: Snapshot, results: Mapping[str, PolicyResult[object]],
               reads: Reads, sections: Mapping[str, PolicySection],
               order: Sequence[str], registry: Mapping[str, AnyPolicy], kinds: frozenset[str],
               ) -> tuple[Decisions, list[tuple[str, Exception]]]:
    """The joined parts of the policies in ``order`` that advised this cycle
    (``results``), and the planners that failed."""
    parts: list[Decisions] = []
    failed: list[tuple[str, Exception]] = []
    if not kinds:
        return Decisions(), failed
    for name in order:
        planner, result = PLANNERS.get(name), results.get(name)
        section = sections.get(name) or PolicySection()
        if planner is None or result is None or section.dry_run is True:
            continue
        model = registry[name].params
        params = section.params if isinstance(section.params, model) else model()
        try:
            parts.append(planner(snapshot, result, params, reads, kinds))
        except Exception as exc:  # one planner must not cost the others their part
            failed.append((name, exc))
    return Decisions.merge(parts), failed
