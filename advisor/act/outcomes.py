"""What became of a recommendation, and which guardrail blocked it: the one list of each.

The actuator returns these, the journal records their values, and metrics
exports every one of them from the first scrape (a dashboard never shows "no
data" for a reason that simply has not happened yet). :class:`Block` lists
the guardrails in the order the actuator checks them (the first that fires
blocks), then the reasons a live RM check or a write ends the cycle's writes.
"""

from __future__ import annotations

from enum import StrEnum

from yarn_advisor.connectors.errors import ConnectorError


class Outcome(StrEnum):
    """What one recommendation (or rollback step) came to."""

    ADVISORY = "advisory"  # an advise_* kind: published, never written
    DRY_RUN = "dry_run"  # journaled as what would have been done
    BLOCKED = "blocked"  # a guardrail stopped it (see Block)
    APPLIED = "applied"  # written, and the RM holds the value
    NOOP = "noop"  # the RM already held the value: nothing sent
    NOT_HELD = "not_held"  # accepted, but the RM kept another value (e.g. a capped priority)
    REFUSED = "refused"  # the RM answered 4xx
    INVALID = "invalid"  # a value the lever cannot send: nothing sent
    UNKNOWN = "unknown"  # the answer was lost and the read-back could not tell
    STANDBY = "standby"  # the RM turned standby
    UNAVAILABLE = "unavailable"  # the RM could not be reached before anything was sent
    FAILED = "failed"  # anything else
    # rollback's own outcomes for steps that cannot be taken
    IRREVERSIBLE = "irreversible"
    NO_PREVIOUS_VALUE = "no_previous_value"

    @property
    def done(self) -> bool:
        """The target holds the value now (a rollback step may go on)."""
        return self in (Outcome.APPLIED, Outcome.NOOP)


class Block(StrEnum):
    """Why a recommendation was not sent, in the order the guardrails are checked."""

    KILL_SWITCH = "kill_switch"
    STALE_SNAPSHOT = "stale_snapshot"
    RM_RESYNC = "rm_resync"
    RM_NOT_ACTIVE = "rm_not_active"
    NOT_LEADER = "not_leader"
    LEVER_UNAVAILABLE = "lever_unavailable"
    KILL_LIKE_DISABLED = "kill_like_disabled"
    OUT_OF_SCOPE = "out_of_scope"
    UNKNOWN_TARGET = "unknown_target"
    ROLLBACK_HOLD = "rollback_hold"
    POLICY_CONFLICT = "policy_conflict"
    COOLDOWN = "cooldown"
    MAX_PER_TARGET = "max_per_target"
    MAX_PER_CYCLE = "max_per_cycle"
    MIN_CHANGE = "min_change"
    # the live RM check before the cycle's first write, or a write that found the RM so
    RM_UNAVAILABLE = "rm_unavailable"
    RM_TIMEOUT = "rm_timeout"
    RM_STANDBY = "rm_standby"
    RM_AUTH = "rm_auth"
    RM_PARSE = "rm_parse"
    RM_HTTP_STATUS = "rm_http_status"
    RM_ERROR = "rm_error"

    @classmethod
    def of_rm(cls, exc: ConnectorError) -> Block:
        """The block of a failed live RM check (``rm_<reason>``; rm_error if unknown)."""
        try:
            return cls(f"rm_{exc.reason}")
        except ValueError:
            return cls.RM_ERROR

    @classmethod
    def of_outcome(cls, outcome: Outcome) -> Block | None:
        """A write's outcome that ends the cycle's writes (the RM turned standby or
        became unreachable), as the block of the recommendations after it."""
        return {Outcome.STANDBY: cls.RM_STANDBY,
                Outcome.UNAVAILABLE: cls.RM_UNAVAILABLE}.get(outcome)
