"""The hierarchical back-off estimate of P(short) over the nested levels.

The levels of :mod:`~yarn_advisor.classifiers.model.features` form a main chain,
coarse to fine (the cluster's stage > the user > the application > its
reduce group > its shape > the job itself), and side branches that refine one level of it. Every
feature's row holds ``[short, long, tasks, short tasks]``: the numbers of
tasks learned and of those short, and ``short`` and ``long`` as the finer
level *hands them up*:

- the job level counts its tasks;
- a level above counts each child group as its *effective number* of tasks,
  ``n / (1 + (n - 1) rho)`` (Kish's design effect): tasks of one job are
  alike (intra-job correlation ``rho_job``), so 200 maps of one job are not
  200 independent pieces of evidence about the next job; likewise the jobs
  of one shape (``rho_shape``) about a job of another shape.

The estimate walks the chain from the root with a Beta prior: at each level,
``q = (s + a q_parent) / (n + a)`` over the level's tasks *not* in the finer
level (each task counted once, so a user with one application is not counted
twice), the finest level with all of its tasks; ``a`` is the prior weight.
The root's prior is 1/2: the class prior of the cluster enters only through
the root's own tasks, weighted like any other level's, so on a cluster where
92 % of tasks are long, a user whose tasks were short is called short on its
own evidence. A side branch (the job's progress) shifts the log-odds by how
much the short share of its value's tasks differs from that of its parent's
other tasks (naive Bayes between the branch and the chain), in task counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from yarn_advisor.classifiers.model.features import LEVEL_NAMES, LEVELS

Row = list[float]  # [short, long, tasks, short tasks]: see the module docstring


@dataclass(frozen=True, slots=True)
class Structure:
    """The main chain (root first), the discount each chain level applies to
    what it hands up, and the branches with their parent on the chain."""

    chain: tuple[int, ...]
    rho: tuple[float, ...]
    branches: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, discounts: dict[str, float]) -> Structure:
        """The structure of :data:`LEVELS`; ``discounts``: rho by level name."""
        leaf = next(i for i, lv in enumerate(LEVELS) if not lv.branch and not any(
            other.parent == i and not other.branch for other in LEVELS))
        chain = []
        i = leaf
        while i >= 0:
            chain.append(i)
            i = LEVELS[i].parent
        chain.reverse()
        branches = tuple((i, lv.parent) for i, lv in enumerate(LEVELS) if lv.branch)
        rho = tuple(discounts.get(LEVEL_NAMES[i], 0.0) for i in chain)
        return cls(tuple(chain), rho, branches)


def share(short: float, long: float, rho: float) -> tuple[float, float]:
    """What a group of tasks hands up: its effective number n / (1 + (n - 1) rho)."""
    n = short + long
    if rho <= 0.0 or n <= 1.0:
        return short, long
    w = 1.0 / (1.0 + (n - 1.0) * rho)
    return short * w, long * w


def add(counts: dict[str, Row], feats: Sequence[str], is_long: bool, st: Structure,
        n: int = 1) -> None:
    """Learn ``n`` tasks of one class and features: every level counts them;
    their job level gains them, and the change of what each chain level hands
    up travels up the chain."""
    d_short, d_long = (0.0, float(n)) if is_long else (float(n), 0.0)
    short = 0 if is_long else n
    for b, _ in st.branches:
        branch = _row(counts, feats[b])
        branch[2] += n
        branch[3] += short
    for k in range(len(st.chain) - 1, -1, -1):
        row = _row(counts, feats[st.chain[k]])
        before_s, before_l = row[0], row[1]
        row[0] += d_short
        row[1] += d_long
        row[2] += n
        row[3] += short
        if st.rho[k]:
            old = share(before_s, before_l, st.rho[k])
            new = share(row[0], row[1], st.rho[k])
            d_short, d_long = new[0] - old[0], new[1] - old[1]


def _row(counts: dict[str, Row], feat: str) -> Row:
    row = counts.get(feat)
    if row is None:
        row = counts[feat] = [0.0, 0.0, 0, 0]
    return row


def estimate(rows: Sequence[Row | None], st: Structure, a: float) -> float | None:
    """P(short) of a task whose levels' rows are ``rows``; None if none is known."""
    chain, rho, branches = st.chain, st.rho, st.branches
    q, known, last = 0.5, False, len(chain) - 1
    prior_of: dict[int, float] = {}  # the estimate of a branch parent's siblings
    for k, i in enumerate(chain):
        if branches:
            prior_of[i] = q
        row = rows[i]
        if row is None:
            continue
        known = True
        s, n = row[0], row[0] + row[1]
        finer = rows[chain[k + 1]] if k < last else None
        if finer is not None:  # each task counted once: the finer level's go below
            fs, fl = share(finer[0], finer[1], rho[k + 1])
            s, n = max(0.0, s - fs), max(0.0, n - fs - fl)
        q = (s + a * q) / (n + a)
    if not known:
        return None
    shift = 0.0
    for b, parent in branches:
        row, whole = rows[b], rows[parent]
        if row is None or whole is None or parent not in prior_of:
            continue
        rest_n, rest_s = whole[2] - row[2], whole[3] - row[3]
        if rest_n <= 0:
            continue  # all of the parent's tasks are the branch's: it adds nothing
        prior = prior_of[parent]
        at_parent = (whole[3] + a * prior) / (whole[2] + a)
        others = (rest_s + a * prior) / (rest_n + a)  # the parent's other values
        shift += _logit((row[3] + a * others) / (row[2] + a)) - _logit(at_parent)
    if shift == 0.0:
        return q
    return 1.0 / (1.0 + math.exp(-max(-700.0, min(700.0, _logit(q) + shift))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return math.log(p / (1.0 - p))
