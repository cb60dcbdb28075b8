"""Writes to a real RM given as the JSON an operator reads in the journal.

The cluster tests (mini cluster, SLS, Kerberos) drive the advisor's own
read-before-write :class:`~yarn_advisor.advisor.act.writer.Writer` over the real
RM's levers; this wrapper only turns their JSON values into the kinds' payload
types and the outcome back into JSON, so an assertion reads like the journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yarn_advisor.advisor.act.writer import Writer
from yarn_advisor.advisor.model.kinds import Kind
from yarn_advisor.advisor.model.payloads import ContainerSignal, Payload, value_from_json
from yarn_advisor.connectors.rm.client import RMClient
from yarn_advisor.connectors.rm.write import RMLevers


@dataclass(frozen=True)
class Outcome:
    """A write's outcome with its values as JSON."""

    status: str
    previous: Any
    observed: Any
    answer: Any


def _json(p: Payload | None) -> Any:
    return None if p is None else p.to_json()


class JsonWrites:
    """``apply`` / ``read`` with JSON values, through the advisor's writer."""

    def __init__(self, rm: RMClient, overcommit_timeout_ms: int = -1) -> None:
        self.levers = RMLevers(rm, overcommit_timeout_ms)
        self.writer = Writer(self.levers)

    def apply(self, kind: str | Kind, target: str, value: Any) -> Outcome:
        k = Kind(kind)
        out = self.writer.apply(k, target, value_from_json(k, value))
        return Outcome(out.status.value, _json(out.previous), _json(out.observed), out.answer)

    def read(self, kind: str | Kind, target: str, value: Any = None) -> Any:
        k = Kind(kind)
        payload = (ContainerSignal("OUTPUT_THREAD_DUMP") if k is Kind.SIGNAL_CONTAINER
                   else value_from_json(k, value))
        return _json(self.writer.read(k, target, payload))

    def send(self, method: str, path: str, **kw: Any) -> Any:
        """One raw request to the RM (a test's setup, not an advisor write)."""
        return self.levers.request(method, path, **kw)
