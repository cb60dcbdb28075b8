"""The papers' algorithms as the RM's scheduler: the simulator's ``in-rm`` mode.

What an in-RM implementation of each paper would get, to compare with the
advisor beside YARN's own scheduler (the ``sidecar`` mode). One module per
paper; each reuses the advisor's pure policy code where it computes the same
thing, and takes its parameters from the same advisor configuration
(``policies.<paper>.params``, ``classifier``), so both modes run one setting::

    from yarn_advisor.simulator.inrm import run_inrm
    report, sim = run_inrm(workload, "haste-a")           # or build_scheduler(...)

``PAPERS`` names them: ``haste`` and ``haste-a`` (:mod:`.haste`), ``opera``
(:mod:`.opera`, its relief policy from ``policies.opera.params``),
``matchmaking`` (:mod:`.matchmaking`), ``anacrac`` (:mod:`.anacrac`, its
rules from ``policies.anacrac.params.rules``, else derived from the
workload) and ``prism`` (:mod:`.prism`).
"""

from __future__ import annotations

from typing import TypeVar

from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.policies.anacrac.params import Params as AnacracParams
from yarn_advisor.advisor.policies.haste.params import Params as HasteParams
from yarn_advisor.advisor.policies.opera.params import Params as OperaParams
from yarn_advisor.advisor.policies.prism.params import Params as PrismParams
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier
from yarn_advisor.config.base import ConfigModel
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.simulator.inrm.anacrac import AnacracScheduler, derive_rules
from yarn_advisor.simulator.inrm.base import InRMBase
from yarn_advisor.simulator.inrm.eligibility import ClassifierEligibility
from yarn_advisor.simulator.inrm.haste import HasteScheduler
from yarn_advisor.simulator.inrm.matchmaking import MatchmakingScheduler
from yarn_advisor.simulator.inrm.opera import OperaScheduler
from yarn_advisor.simulator.inrm.prism import PrismScheduler
from yarn_advisor.simulator.metrics import Report
from yarn_advisor.simulator.simulation import Progress, Simulation
from yarn_advisor.simulator.spec import PAPERS, Workload

P = TypeVar("P", bound=ConfigModel)
POLICY_OF = {"haste": "haste", "haste-a": "haste", "opera": "opera",
             "matchmaking": "matchmaking", "anacrac": "anacrac", "prism": "prism"}


def paper_params(cfg: AdvisorConfig, paper: str, model: type[P]) -> P:
    """The paper's policy parameters in ``cfg`` (the defaults if absent)."""
    section = cfg.policies.sections().get(POLICY_OF[paper])
    params = section.params if section is not None else None
    return params if isinstance(params, model) else model()


def build_scheduler(paper: str, wl: Workload, cfg: AdvisorConfig | None = None) -> InRMBase:
    """The in-RM scheduler of ``paper`` for ``wl``, parameterised by ``cfg``."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r} (one of {', '.join(PAPERS)})")
    cfg = cfg if cfg is not None else load_config()
    spec = wl.scheduler
    if paper in ("haste", "haste-a"):
        return HasteScheduler(spec, paper_params(cfg, paper, HasteParams), variant=paper)
    if paper == "opera":
        c = cfg.classifier
        model = NaiveBayesTaskClassifier(c.threshold_s, c.min_confidence,
                                         min_support=c.min_support)
        return OperaScheduler(spec, ClassifierEligibility(model),
                              paper_params(cfg, paper, OperaParams))
    if paper == "matchmaking":
        return MatchmakingScheduler(spec)
    if paper == "anacrac":
        rules = paper_params(cfg, paper, AnacracParams).rules or derive_rules(wl)
        return AnacracScheduler(spec, rules)
    return PrismScheduler(spec, paper_params(cfg, paper, PrismParams))


def run_with(wl: Workload, scheduler: InRMBase, progress: Progress | None = None,
             sample_ms: int = 0) -> tuple[Report, Simulation]:
    """Run ``wl`` with ``scheduler`` as the RM's scheduler (mode ``in-rm``)."""
    sim = Simulation(wl, scheduler=scheduler, mode="in-rm", sample_ms=sample_ms)
    scheduler.bind(sim)
    return sim.run(progress=progress), sim


def run_inrm(wl: Workload, paper: str, cfg: AdvisorConfig | None = None,
             progress: Progress | None = None,
             sample_ms: int = 0) -> tuple[Report, Simulation]:
    """Run ``wl`` with ``paper``'s algorithm as the scheduler: the report and the run."""
    return run_with(wl, build_scheduler(paper, wl, cfg), progress, sample_ms)


__all__ = ["PAPERS", "InRMBase", "build_scheduler", "paper_params", "run_inrm", "run_with"]
