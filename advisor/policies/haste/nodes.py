"""HaSTE RTA for every node at once: which pending request each node serves next.

Same answer as :func:`yarn_advisor.advisor.policies.haste.core.score` applied node by node
(AM requests first, then the highest Eq 6 preference among the requests that
fit the node's residual capacity), computed with numpy without the
nodes x requests matrix:

1. requests are grouped by capability ("types", K of them); a node's
   candidate set is determined by which types fit it, so nodes are grouped by
   that fit mask (G groups);
2. fitness depends only on (type, node), so normalised fitness is a K x N
   computation; urgency/alignment normalisation depends only on the group;
3. inside a type fitness is constant, so the best request of a type is the
   best of ``beta2*nU + beta3*nA``, found on the type's (U, A) Pareto front.

Cost: ``O(N*K + G*front + M log M)`` for N nodes, M requests. Exact ties are
broken towards the lower request index, as in ``score``; floating-point
rounding may differ from ``score`` by an ulp, so a near-tie can go the other
way (the preference value is the same to 1e-12).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from yarn_advisor.advisor.policies.haste.core import Weights

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class NodeChoice:
    """The request a node should serve next, with its scores."""

    node: int
    candidate: int
    n_candidates: int
    fitness: float
    n_fitness: float
    n_urgency: float
    n_alignment: float
    preference: float


def best_per_node(
    avail: IntArray,
    cand_res: IntArray,
    urgency: FloatArray,
    alignment: FloatArray,
    is_am: BoolArray,
    w: Weights,
    beta: tuple[float, float, float],
    decimals: int | None = None,
) -> list[NodeChoice]:
    """One :class:`NodeChoice` per node (row of ``avail``) that fits a request.

    ``decimals`` rounds the reported scores (the choice uses full precision).
    """
    if len(avail) == 0 or len(cand_res) == 0:
        return []
    types, type_of = np.unique(cand_res, axis=0, return_inverse=True)
    type_of = type_of.reshape(-1)
    k_n = len(types)
    fit = (types[None, :, 0] <= avail[:, None, 0]) & (types[None, :, 1] <= avail[:, None, 1])
    nodes = np.nonzero(fit.any(axis=1))[0]
    if len(nodes) == 0:
        return []
    _, first, ginv = np.unique(
        np.packbits(fit[nodes], axis=1), axis=0, return_index=True, return_inverse=True
    )
    ginv = ginv.reshape(-1)

    u_lo, u_hi, a_lo, a_hi, count, has_am = _type_stats(type_of, urgency, alignment, is_am, k_n)
    fronts = {am: _fronts(type_of, urgency, alignment, is_am == am) for am in (True, False)}
    u = w.memory_unit_mb
    wr_m = w.memory * (types[:, 0] / u)
    wr_c = w.vcores * types[:, 1].astype(np.float64)
    c_m = avail[:, 0] / u
    c_c = avail[:, 1].astype(np.float64)

    out: list[NodeChoice] = []
    order = np.argsort(ginv, kind="stable")
    bounds = np.searchsorted(ginv[order], np.arange(len(first) + 1))
    for g in range(len(first)):
        members = nodes[order[bounds[g] : bounds[g + 1]]]
        mask = fit[nodes[first[g]]]
        ks = np.nonzero(mask)[0]
        ulo, usp = u_lo[ks].min(), u_hi[ks].max() - u_lo[ks].min()
        alo, asp = a_lo[ks].min(), a_hi[ks].max() - a_lo[ks].min()
        f_idx, f_type = fronts[bool(has_am[ks].any())]
        sel = mask[f_type]
        cidx, ctype = f_idx[sel], f_type[sel]
        nu = (urgency[cidx] - ulo) / usp if usp > 0 else np.zeros(len(cidx))
        na = (alignment[cidx] - alo) / asp if asp > 0 else np.zeros(len(cidx))
        ua = beta[1] * nu + beta[2] * na
        pick = np.lexsort((cidx, -ua, ctype))
        _, starts = np.unique(ctype[pick], return_index=True)
        best = pick[starts]  # one per eligible type, in type order
        etypes, eidx, eua = ctype[best], cidx[best], ua[best]

        fk = wr_m[ks][:, None] * c_m[None, members] + wr_c[ks][:, None] * c_c[None, members]
        flo = fk.min(axis=0)
        fsp = fk.max(axis=0) - flo
        pos = np.searchsorted(ks, etypes)
        fe = fk[pos]
        nf = np.divide(fe - flo, fsp, out=np.zeros_like(fe), where=fsp > 0)
        pref = beta[0] * nf + eua[:, None]
        top = pref.max(axis=0)
        big = np.iinfo(np.int64).max
        win_row = np.where(pref == top, eidx[:, None], big).argmin(axis=0)
        win_c = eidx[win_row]
        n_cand = int(count[ks].sum())
        cols = np.arange(len(members))
        picked = best[win_row]
        columns = [
            fe[win_row, cols],
            nf[win_row, cols],
            nu[picked],
            na[picked],
            pref[win_row, cols],
        ]
        if decimals is not None:
            columns = [np.round(x, decimals) for x in columns]
        fit_l, nf_l, nu_l, na_l, pref_l = (x.tolist() for x in columns)
        for j, (node, c) in enumerate(zip(members.tolist(), win_c.tolist(), strict=True)):
            out.append(NodeChoice(node, c, n_cand, fit_l[j], nf_l[j], nu_l[j], na_l[j], pref_l[j]))
    out.sort(key=lambda ch: ch.node)
    return out


def _type_stats(
    type_of: IntArray, urgency: FloatArray, alignment: FloatArray, is_am: BoolArray, k_n: int
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, IntArray, BoolArray]:
    u_lo = np.full(k_n, np.inf)
    u_hi = np.full(k_n, -np.inf)
    a_lo = np.full(k_n, np.inf)
    a_hi = np.full(k_n, -np.inf)
    np.minimum.at(u_lo, type_of, urgency)
    np.maximum.at(u_hi, type_of, urgency)
    np.minimum.at(a_lo, type_of, alignment)
    np.maximum.at(a_hi, type_of, alignment)
    count = np.bincount(type_of, minlength=k_n).astype(np.int64)
    has_am = np.zeros(k_n, dtype=bool)
    has_am[type_of[is_am]] = True
    return u_lo, u_hi, a_lo, a_hi, count, has_am


def _fronts(
    type_of: IntArray, urgency: FloatArray, alignment: FloatArray, member: BoolArray
) -> tuple[IntArray, IntArray]:
    """Per type, the (U, A) Pareto front of the member requests.

    Returns ``(request indices, their types)``. A request is dropped when
    another of the same type has U and A at least as large and comes first
    in the (U desc, A desc, index asc) order.
    """
    idx = np.nonzero(member)[0]
    if len(idx) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort((idx, -alignment[idx], -urgency[idx], type_of[idx]))
    keep: list[int] = []
    last_type = -1
    best_a = -np.inf
    for i in idx[order].tolist():
        t = int(type_of[i])
        if t != last_type:
            last_type, best_a = t, -np.inf
        a = float(alignment[i])
        if a > best_a:
            keep.append(i)
            best_a = a
    kept = np.array(keep, dtype=np.int64)
    return kept, type_of[kept].astype(np.int64)


def rank_on(
    capacity: tuple[float, float],
    cand_res: IntArray,
    urgency: FloatArray,
    alignment: FloatArray,
    is_am: BoolArray,
    w: Weights,
    beta: tuple[float, float, float],
    require_fit: bool = True,
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Vectorised :func:`~yarn_advisor.advisor.policies.haste.core.score` on one capacity.

    Returns ``(order, fitness, n_fitness, n_urgency, n_alignment, preference)``:
    ``order`` lists the (fitting) request indices best first; the score
    arrays are indexed by request (0 for requests left out).
    """
    n = len(cand_res)
    zeros = np.zeros(n)
    if n == 0:
        return np.zeros(0, dtype=np.int64), zeros, zeros, zeros, zeros, zeros
    u = w.memory_unit_mb
    f = (w.memory * (cand_res[:, 0] / u)) * (capacity[0] / u) + (
        w.vcores * cand_res[:, 1].astype(np.float64)
    ) * capacity[1]
    ok = np.ones(n, dtype=bool)
    if require_fit:
        ok = (cand_res[:, 0] <= capacity[0]) & (cand_res[:, 1] <= capacity[1])
    idx = np.nonzero(ok)[0]
    if len(idx) == 0:
        return idx.astype(np.int64), f, zeros, zeros, zeros, zeros
    nf, nu, na = (_minmax(x, idx) for x in (f, urgency, alignment))
    pref = beta[0] * nf + (beta[1] * nu + beta[2] * na)
    order = idx[np.lexsort((idx, -pref[idx], ~is_am[idx]))]
    return order.astype(np.int64), f, nf, nu, na, pref


def _minmax(x: FloatArray, idx: IntArray) -> FloatArray:
    out = np.zeros(len(x))
    lo = x[idx].min()
    span = x[idx].max() - lo
    if span > 0:
        out[idx] = (x[idx] - lo) / span
    return out
