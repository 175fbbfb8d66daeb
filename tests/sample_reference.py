"""Slow references for the sample estimators (docs/estimators.md), from the definitions.

Plain Python loops, exact rational arithmetic (fractions.Fraction of the float inputs) where
a tie or a cancellation decides the answer, and linear programs solved by HiGHS (scipy)
where the definition is an optimisation. Nothing here is derived from the kernels of
fastcdl/_compiled/estimators.py: the monotone CDL is the LP over proper scores with the PAV
values as recalibration targets, smCE the LP over all pairwise Lipschitz constraints of the
raw rounds, cutoff CE the maximum over every interval, ATB the integral over its pieces.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction as F

import numpy as np
from scipy.optimize import linprog

from reference import HALF, _envelope_at_half, _exact, _payoff_exact, _proper_lp, best_response_ref

_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


# --------------------------------------------------------------------------------------
# isotonic regression and the monotone CDL


def pav_ref(n, s):
    """Weighted isotonic (non-decreasing) regression of qhat_i = s_i / n_i with weights n_i,
    by pooling adjacent violators, exactly. Returns one Fraction per bucket."""
    blocks = []  # [sum n, sum s, number of buckets]
    for ni, si in zip(n, s):
        blocks.append([F(float(ni)), F(float(si)), 1])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] > blocks[-1][1] / blocks[-1][0]:
            bn, bs, c = blocks.pop()
            blocks[-1][0] += bn
            blocks[-1][1] += bs
            blocks[-1][2] += c
    out = []
    for bn, bs, c in blocks:
        out += [bs / bn] * c
    return out


def cdl_monotone_lp(q, n, s):
    """CDL relative to non-decreasing recalibrations: max over proper S with values in [0, 1]
    of (1/T) sum_i [(n_i - s_i)(S(iso_i, 0) - S(q_i, 0)) + s_i (S(iso_i, 1) - S(q_i, 1))],
    iso the PAV values (optimal for every proper score among monotone recalibrations)."""
    q = [float(v) + 0.0 for v in q]
    nn = [float(v) for v in n]
    ss = [float(v) for v in s]
    T = sum(nn)
    iso = [float(v) + 0.0 for v in pav_ref(n, s)]
    points = sorted(set(q) | set(iso) | {0.0, 1.0})
    objective = defaultdict(lambda: [0.0, 0.0])
    for qi, ni, si, hi in zip(q, nn, ss, iso):
        w0, w1 = (ni - si) / T, si / T
        objective[hi][0] += w0
        objective[hi][1] += w1
        objective[qi][0] -= w0
        objective[qi][1] -= w1
    return _proper_lp(points, objective)


def f_monotone_exact(q, n, s, mu, right=False):
    """f_M(mu) from its definition: the best upper set of buckets {q_i >= c} (every set a
    non-decreasing recalibration can act on at threshold mu) against the forecaster's own
    acting set {q_i >= mu} ({q_i > mu} for the right limit), per round, exactly."""
    qs, ns, ss, _ = _exact(q, n, s)
    mu = F(mu)
    order = sorted(range(len(qs)), key=lambda i: qs[i])
    gains = [ss[i] - mu * ns[i] for i in order]
    best = max(sum(gains[j:]) for j in range(len(gains) + 1))
    own = sum(ss[i] - mu * ns[i] for i in range(len(qs)) if (qs[i] > mu if right else qs[i] >= mu))
    return (best - own) / sum(ns)


def _monotone_points(q, n, s, extra=()):
    qs = [F(float(v)) for v in q]
    iso = set(pav_ref(n, s))
    return sorted(set(qs) | iso | {F(0), HALF, F(1)} | {F(x) for x in extra})


def cdl_monotone_envelope_ref(q, n, s):
    """2 fbar_M(1/2) by brute force over chords of the points (b, max(f_M(b), f_M(b+))) at the
    predictions, the PAV values, 0, 1/2 and 1, exactly."""
    pts = [
        (b, max(f_monotone_exact(q, n, s, b), f_monotone_exact(q, n, s, b, True))) for b in _monotone_points(q, n, s)
    ]
    return float(2 * _envelope_at_half(pts))


def vcdl_monotone_ref(q, n, s, grid=401):
    """sup over mu of f_M(mu) / max(mu, 1 - mu): both one-sided values at the predictions, the
    PAV values, 0, 1/2, 1 and a grid of kinks, exactly."""
    extra = [F(k, grid - 1) for k in range(grid)]
    best = F(0)
    for b in _monotone_points(q, n, s, extra):
        val = max(f_monotone_exact(q, n, s, b), f_monotone_exact(q, n, s, b, True)) / max(b, 1 - b)
        best = max(best, val)
    return float(best)


def cfdl_recalibrated_ref(q, n, s, targets, payoff):
    """(1/T) sum_i n_i [E_{y~qhat_i} U(a*(t_i), y) - E_{y~qhat_i} U(a*(q_i), y)]: what task U
    gains by acting on the targets t_i instead of the predictions q_i, exactly."""
    U = _payoff_exact(payoff)
    qs, ns, ss, _ = _exact(q, n, s)
    total = F(0)
    for qi, ni, si, ti in zip(qs, ns, ss, targets):
        a = best_response_ref(U, qi)
        b = best_response_ref(U, F(ti))
        total += (ni - si) * (U[b][0] - U[a][0]) + si * (U[b][1] - U[a][1])
    return float(total / sum(ns))


# --------------------------------------------------------------------------------------
# cutoff CE, ATB, Brier, smCE, from raw rounds


def _rounds(y, p, w=None):
    y = [F(int(v)) for v in np.asarray(y).tolist()]
    p = [F(float(v)) for v in np.asarray(p, dtype=np.float64).tolist()]
    w = [F(1)] * len(p) if w is None else [F(float(v)) for v in np.asarray(w).tolist()]
    return y, p, w


def cutoff_ce_ref(y, p, sample_weight=None):
    """sup over intervals I of |sum_{t: p_t in I} w_t (y_t - p_t)| / sum w: every interval
    [a, b] between distinct predictions (and the empty one), O(T m^2), exactly."""
    y, p, w = _rounds(y, p, sample_weight)
    values = sorted(set(p))
    best = F(0)
    for i, a in enumerate(values):
        for b in values[i:]:
            tot = sum(wt * (yt - pt) for yt, pt, wt in zip(y, p, w) if a <= pt <= b)
            best = max(best, abs(tot))
    return float(best / sum(w))


def atb_ref(y, p):
    """ATB = int_0^1 (1/T^2) [(sum_{p_t < u} (p_t - y_t))^2 + (sum_{p_t >= u} (p_t - y_t))^2] du:
    the integrand is constant between consecutive distinct predictions (and 0, 1), so the
    integral is a sum over those pieces, evaluated at each piece's midpoint, exactly."""
    y, p, _ = _rounds(y, p)
    T = len(p)
    cuts = sorted(set(p) | {F(0), F(1)})
    total = F(0)
    for a, b in zip(cuts[:-1], cuts[1:]):
        u = (a + b) / 2
        below = sum(pt - yt for yt, pt in zip(y, p) if pt < u)
        above = sum(pt - yt for yt, pt in zip(y, p) if pt >= u)
        total += (b - a) * (below**2 + above**2)
    return float(total / T**2)


def brier_ref(y, p, sample_weight=None):
    y, p, w = _rounds(y, p, sample_weight)
    return float(sum(wt * (pt - yt) ** 2 for yt, pt, wt in zip(y, p, w)) / sum(w))


def murphy_ref(q, n, s):
    """(reliability, resolution, uncertainty) of a table, exactly."""
    qs, ns, ss, qh = _exact(q, n, s)
    T = sum(ns)
    ybar = sum(ss) / T
    rel = sum(ni * (qi - hi) ** 2 for qi, ni, hi in zip(qs, ns, qh)) / T
    res = sum(ni * (hi - ybar) ** 2 for ni, hi in zip(ns, qh)) / T
    return float(rel), float(res), float(ybar * (1 - ybar))


def smce_lp_rounds(y, p, sample_weight=None):
    """smCE = max (1/sum w) sum_t w_t v_t (y_t - p_t) over |v_t| <= 1 and |v_t - v_u| <= |p_t - p_u|
    for EVERY pair of rounds (the definition: v is a 1-Lipschitz function of the prediction,
    so tied predictions get equal v), solved by HiGHS. O(T^2) constraints."""
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    w = np.ones(p.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    T = p.shape[0]
    rows, bounds = [], []
    for t in range(T):
        for u in range(T):
            if t != u:
                r = np.zeros(T)
                r[t], r[u] = 1.0, -1.0
                rows.append(r)
                bounds.append(abs(p[t] - p[u]))
    res = linprog(
        -(w * (y - p)) / w.sum(),
        A_ub=np.array(rows) if rows else None,
        b_ub=np.array(bounds) if rows else None,
        bounds=(-1.0, 1.0),
        method="highs",
        options=_LP_OPTIONS,
    )
    assert res.status == 0, res.message
    return -res.fun


def smce_lp_table(q, n, s):
    """The same LP on a bucket table: one v per bucket, all pairs constrained."""
    q = np.asarray(q, dtype=np.float64)
    r = (np.asarray(s, dtype=np.float64) - q * np.asarray(n, dtype=np.float64)) / float(np.sum(n))
    m = q.shape[0]
    rows, bounds = [], []
    for i in range(m):
        for j in range(m):
            if i != j:
                a = np.zeros(m)
                a[i], a[j] = 1.0, -1.0
                rows.append(a)
                bounds.append(abs(q[i] - q[j]))
    res = linprog(
        -r,
        A_ub=np.array(rows) if rows else None,
        b_ub=np.array(bounds) if rows else None,
        bounds=(-1.0, 1.0),
        method="highs",
        options=_LP_OPTIONS,
    )
    assert res.status == 0, res.message
    return -res.fun


def smce_lp_chain(q, n, s):
    """The smCE LP of a sorted bucket table with the constraints between neighbours only
    (on a line they imply all the others) and the full box [-1, 1], as a sparse HiGHS
    problem: the reference for tables of thousands of buckets."""
    from scipy.sparse import coo_matrix

    q = np.asarray(q, dtype=np.float64)
    r = (np.asarray(s, dtype=np.float64) - q * np.asarray(n, dtype=np.float64)) / float(np.sum(n))
    m = q.shape[0]
    if m == 1:
        return abs(r[0])
    k = np.arange(m - 1)
    rows = np.r_[k, k, k + m - 1, k + m - 1]
    cols = np.r_[k + 1, k, k, k + 1]
    vals = np.r_[np.ones(m - 1), -np.ones(m - 1), np.ones(m - 1), -np.ones(m - 1)]
    A = coo_matrix((vals, (rows, cols)), shape=(2 * (m - 1), m)).tocsr()
    gaps = np.diff(q)
    res = linprog(-r, A_ub=A, b_ub=np.r_[gaps, gaps], bounds=(-1.0, 1.0), method="highs", options=_LP_OPTIONS)
    assert res.status == 0, res.message
    return -res.fun


# --------------------------------------------------------------------------------------
# the binned estimators of the literature


def k2_debiased_edges_ref(y, p, edges, merge=False):
    """Kumar, Liang and Ma's debiased squared calibration error over the bins of ``edges``
    (a round goes to the first bin whose upper edge it does not exceed, an interior edge
    widened by the library's documented slack: e (1 + 2^-50) in float64, docs/metrics.md
    "Binned tables"), exactly: sum_b (n_b / T) [(ybar_b - pbar_b)^2 - ybar_b (1 - ybar_b) /
    (n_b - 1)]; with merge, a bin of one round first joins the next bin (the last the one
    before), one at a time from the left."""
    y, p, _ = _rounds(y, p)
    last = len(edges) - 1
    edges = [
        F(float(e) if k in (0, last) else float(np.float64(e) * np.float64(1 + 2**-50))) for k, e in enumerate(edges)
    ]
    groups = defaultdict(list)
    for yt, pt in zip(y, p):
        b = next(k for k in range(1, len(edges)) if pt <= edges[k] or k == len(edges) - 1)
        groups[b].append((yt, pt))
    groups = [groups[k] for k in sorted(groups)]
    while merge and len(groups) > 1 and any(len(g) < 2 for g in groups):
        i = next(i for i, g in enumerate(groups) if len(g) < 2)
        j = i + 1 if i + 1 < len(groups) else i - 1
        groups[j] = groups[j] + groups[i]
        del groups[i]
    total = F(0)
    for rounds in groups:
        nb = len(rounds)
        ybar = sum(r[0] for r in rounds) / nb
        pbar = sum(r[1] for r in rounds) / nb
        total += nb * ((ybar - pbar) ** 2 - ybar * (1 - ybar) / (nb - 1))
    return float(total / len(p))


def k2_debiased_ref(y, p):
    """k2_debiased_edges_ref over round(T^(1/3)) equal-mass bins, whose edges are those
    fastcdl.bucket_stats makes (the binning is tested on its own in test_quantile_bins.py)."""
    import fastcdl as fc

    return k2_debiased_edges_ref(y, p, fc.bucket_stats(y, p, bins="auto", strategy="quantile").edges, merge=True)


def ece_sweep_ref(y, p, sample_weight=None):
    """Roelofs et al.'s monotone sweep, from its definition: for b = 1, 2, ... put each round
    of rank j (rounds sorted by prediction, tied rounds ranked by the first of them, ranks
    counting weight) in bin floor(b j / T); stop at the first b whose non-empty bins' frequencies
    decrease somewhere, or when b exceeds the distinct predictions; the ECE over the last b
    before, sum_b |sum w (y - p)| / T, exactly."""
    y, p, w = _rounds(y, p, sample_weight)
    order = sorted(range(len(p)), key=lambda t: p[t])
    T = sum(w)
    first_rank = {}
    rank = F(0)
    for t in order:
        first_rank.setdefault(p[t], rank)
        rank += w[t]
    best = None
    for b in range(1, len(first_rank) + 1):
        bins = defaultdict(list)
        for t in order:
            bins[int(b * first_rank[p[t]] // T)].append(t)
        keys = sorted(bins)
        freq = [sum(w[t] * y[t] for t in bins[k]) / sum(w[t] for t in bins[k]) for k in keys]
        if any(b2 < a2 for a2, b2 in zip(freq, freq[1:])):
            break
        best = sum(abs(sum(w[t] * (y[t] - p[t]) for t in bins[k])) for k in keys) / T
    return float(best)


# --------------------------------------------------------------------------------------
# the cross-fitted monotone CDL


def crossfit_ref(q, n_a, s_a, n_b, s_b):
    """(CDL, VCDL) of the cross-fitted V-kink curve, exactly: the PAV recalibration of each half
    (pav_ref, its values rounded to doubles), extended to every prediction as the value of the last fitted bucket at or below
    it (the first's below them all), judges the other half's rounds:
    f(mu) = (1/T) sum_t (y_t - mu)(1{h(p_t) >= mu} - 1{p_t >= mu}). f is linear between the
    predictions and the fitted values, so its sup and its concave envelope are read at those
    points, taking f(x) and its right limit f(x+) = the same sum over the rounds with
    min(p, h) <= x < max(p, h)."""
    q = [F(float(v)) for v in q]

    def fit(n, s):
        idx = [i for i in range(len(q)) if n[i] > 0]
        # the block means as doubles (correctly rounded, as the division of two exact integer
        # sums gives them): a mean of 3/5 is the double 0.6, equal to a prediction 0.6, where
        # the exact 3/5 would lie 2e-17 above it and open a sliver (0.6, 3/5] of kinks
        iso = [F(float(v)) for v in pav_ref([n[i] for i in idx], [s[i] for i in idx])]

        def h(x):
            below = [k for k, i in enumerate(idx) if q[i] <= x]
            return iso[below[-1]] if below else iso[0]

        return h

    terms = []  # (h(p), p, s, n) of the judged buckets
    for (nf, sf), (nj, sj) in (((n_a, s_a), (n_b, s_b)), ((n_b, s_b), (n_a, s_a))):
        if not any(v > 0 for v in nf):
            continue
        h = fit(nf, sf)
        terms += [(h(q[i]), q[i], F(int(sj[i])), F(int(nj[i]))) for i in range(len(q)) if nj[i] > 0]
    T = F(int(sum(n_a) + sum(n_b)))

    def f(mu, right):
        tot = F(0)
        for h, p, s, n in terms:
            if right:
                act_h, act_p = h > mu, p > mu
            else:
                act_h, act_p = h >= mu, p >= mu
            tot += (s - mu * n) * (int(act_h) - int(act_p))
        return tot / T

    xs = sorted({F(0), HALF, F(1)} | {t[0] for t in terms} | {t[1] for t in terms})
    pts = [(x, max(f(x, False), f(x, True) if x < 1 else f(x, False))) for x in xs]
    vcdl = max(v / max(x, 1 - x) for x, v in pts)
    return float(2 * _envelope_at_half(pts)), float(vcdl)


def _crossfit_rounds_ref(which):
    def ref(y, p):
        import fastcdl as fc
        from fastcdl.sample import crossfit_split

        st = fc.bucket_stats(y, p)  # the split is tested on its own in test_crossfit.py
        return crossfit_ref(st.values, *crossfit_split(st, 0))[which]

    return ref


cdl_monotone_crossfit_ref = _crossfit_rounds_ref(0)
vcdl_monotone_crossfit_ref = _crossfit_rounds_ref(1)
