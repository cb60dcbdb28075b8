"""OPERA's name and parameters: rho = 0.95 is the paper's, alpha = 2 its "doubled"."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from yarn_advisor.advisor.policies.opera import core as oc
from yarn_advisor.config.base import ConfigModel

NAME = "opera"


class Params(ConfigModel):
    """See README.md for where each default comes from."""

    relief_policy: Literal["AGGRESSIVE", "NEUTRAL", "PRESERVE"] = "PRESERVE"
    rho: float = Field(0.95, gt=0, le=1)
    alpha: float = Field(2.0, gt=1)
    br_initial_memory_mb: int = Field(1024, ge=0)
    br_initial_vcores: int = Field(1, ge=0)
    bt_initial_s: float = Field(60.0, gt=0)
    bt_max_s: float = 3600.0
    # none: the RM keeps its own reservations, OPERA only lends (see README);
    # strict / multi_chance: Alg 3 / Alg 4 replayed across cycles, as in the RM
    reservation: Literal["none", "strict", "multi_chance"] = "none"
    eps_r: int = Field(3, ge=0)
    eps_s: int = Field(3, ge=0)
    node_updates_per_cycle: int = Field(1, ge=1)
    min_confidence: float = Field(0.5, ge=0, le=1)
    resource_calculator: Literal["auto", "memory", "dominant"] = "auto"
    # short: only tasks the classifier calls short borrow (the paper); any: every
    # pending task may run on measured idle headroom (overcommit by measured use)
    lend_to: Literal["short", "any"] = "short"
    # lend only to the tasks that the unallocated room of their partition cannot take
    # this cycle (the RM places the others itself; false: the paper's per-heartbeat Alg 2)
    lend_only_overflow: bool = True
    # a container younger than this (or not RUNNING yet) counts its whole allocation as
    # used: it has not grown to its working size (0: trust the measurement at once)
    settle_s: float = Field(10.0, ge=0)
    # lend only while measured use + lent stays under this share of C_i (1.0: Eq 4)
    lend_up_to: float = Field(0.8, gt=0, le=1)
    # memory is lent too (a node's memory raised past C_i). Off by default: memory is not
    # compressible, a container may grow into its allocation at any time, and the NM then
    # kills it (a failed attempt; 4 fail the job). On only where containers stay well
    # under their asks (over-sized JVM requests). Vcores are lent either way.
    lend_memory: bool = False
    # a node's schedulable capacity never exceeds this multiple of C_i (null: no cap)
    max_overcommit: float | None = Field(1.5, ge=1)
    # per cycle a node grows by at most this share of C_i (null: no ramp)
    ramp_step: float | None = Field(0.25, gt=0)
    # a raised node keeps its capacity this long after it last lent (no contention):
    # jobs come in waves, and a ramp down and up again would lag each wave
    return_after_s: float = Field(120.0, ge=0)
    signal_containers: bool = False
    signal: Literal["GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN", "OUTPUT_THREAD_DUMP"] = (
        "GRACEFUL_SHUTDOWN"
    )

    @field_validator("bt_max_s")
    @classmethod
    def _above_initial(cls, bt_max_s: float, info: ValidationInfo) -> float:
        low = info.data.get("bt_initial_s")
        if low is not None and bt_max_s < low:
            raise ValueError(f"must be >= bt_initial_s ({low}), got {bt_max_s}")
        return bt_max_s

    @property
    def floor(self) -> oc.Block:
        """The initial (and minimum) BR and BT."""
        br = (float(self.br_initial_memory_mb), float(self.br_initial_vcores))
        return oc.Block(br, self.bt_initial_s * 1000.0, None)
