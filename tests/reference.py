"""Slow, obviously-correct references for the binary metrics (like stumpy's tests/naive.py).

Everything here is written from the definitions of docs/metrics.md and docs/exact-cdl.md, with plain
Python loops and, wherever a tie decides the answer, exact rational arithmetic
(fractions.Fraction of the float inputs; qhat_i = Fraction(s_i) / Fraction(n_i)).
Nothing is derived from the kernels in fastcdl/.

A bucket table is three equal-length sequences (q, n, s): prediction values, counts (or
weights) and counts (or weights) of y = 1. Tables passed to the metric references must
have distinct q; :func:`canonical_table` merges duplicates.

REGISTRY maps each public metric name to its reference (and, where one exists, a peer
library's function); tests and benchmarks both read it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction as F

import numpy as np
from scipy.optimize import linprog

HALF = F(1, 2)

# --------------------------------------------------------------------------------------
# tables


def canonical_table(q, n, s):
    """Merge equal predictions, drop empty buckets, sort by q. Returns float64 arrays."""
    acc = defaultdict(lambda: [0.0, 0.0])
    exact_n = defaultdict(F)
    exact_s = defaultdict(F)
    for qi, ni, si in zip(q, n, s):
        key = float(qi) + 0.0  # -0.0 and 0.0 are the same prediction
        exact_n[key] += F(float(ni))
        exact_s[key] += F(float(si))
        acc[key]
    keys = sorted(k for k in acc if exact_n[k] > 0)
    return (
        np.array(keys, dtype=np.float64),
        np.array([float(exact_n[k]) for k in keys], dtype=np.float64),
        np.array([float(exact_s[k]) for k in keys], dtype=np.float64),
    )


def bin_index_ref(p, edges):
    """Index j of the bin holding p: [e_0, e_1] for j = 0, (e_j, e_{j+1}] otherwise, where an
    interior edge counts as e (1 + 2^-50), 4 to 8 ulps above it (docs/metrics.md)."""
    last = len(edges) - 2
    for j in range(len(edges) - 1):
        cut = edges[j + 1] if j == last else edges[j + 1] * (1.0 + 2.0**-50)
        if p <= cut:
            return j
    raise AssertionError(f"{p!r} is above the last edge")


def uniform_edges_ref(m):
    """Edges of bins=m: the float64 nearest to i/m (Python's correctly rounded i / m)."""
    return [i / m for i in range(m + 1)]


def quantile_edges_ref(p, m, sample_weight=None):
    """Edges of bins=m, strategy="quantile" (docs/metrics.md, "Quantile bins"), from the definition:
    for k = 1..m-1 the smallest prediction v with weight(p <= v) >= k W / m (W the total weight,
    exact Fractions); equal edges once; none at or above the largest prediction or at 1; an
    edge at 0 becomes the smallest positive float. Plain loops over the sorted distinct values."""
    p = [float(v) + 0.0 for v in np.asarray(p, dtype=np.float64).tolist()]
    w = [F(1)] * len(p) if sample_weight is None else [F(float(v)) for v in np.asarray(sample_weight).tolist()]
    mass = defaultdict(F)
    for pt, wt in zip(p, w):
        mass[pt] += wt
    values = sorted(v for v in mass if mass[v] > 0)
    W = sum(mass[v] for v in values)
    inner = []
    for k in range(1, m):
        acc = F(0)
        for v in values:
            acc += mass[v]
            if acc * m >= k * W:
                break
        if v < values[-1] and v < 1.0 and v not in inner:
            inner.append(v)
    inner = [5e-324 if v == 0.0 else v for v in inner]
    return [0.0] + sorted(set(inner)) + [1.0]


def quantile_edges_sorted_ref(p, m):
    """quantile_edges_ref for many unweighted rounds, from one np.sort: the k-th edge is the
    order statistic of rank ceil(k T / m) (exact integers), k = 1..m-1; the same rules for
    ties, the largest prediction, 1 and 0, in plain Python over the m - 1 picks."""
    srt = np.sort(np.asarray(p, dtype=np.float64)).tolist()
    T = len(srt)
    top = srt[-1] + 0.0
    inner = set()
    for k in range(1, m):
        v = srt[-(-k * T // m) - 1] + 0.0
        if v < top and v < 1.0:
            inner.add(5e-324 if v == 0.0 else v)
    return [0.0] + sorted(inner) + [1.0]


def table_ref(y, p, bins=None, sample_weight=None):
    """Group raw rounds into buckets with a plain dict (docs/metrics.md).

    bins=None: one bucket per distinct prediction. bins=int m: the intervals [0, 1/m],
    ((i-1)/m, i/m] (edges i/m as float64); bins=edges: the same with those edges. A
    binned bucket's value is the (weighted) mean prediction inside it.

    Returns (q, n, s, prob_sums, idx) for the NON-EMPTY buckets (positive total weight)
    sorted by q: float arrays, except n and s are int64 without weights; idx is the bin
    index of each bucket (None when bins is None). Sums are exact (Fractions), then
    rounded once.
    """
    y = [int(v) for v in np.asarray(y).tolist()]
    p = [float(v) + 0.0 for v in np.asarray(p, dtype=np.float64).tolist()]
    w = [1] * len(p) if sample_weight is None else [F(float(v)) for v in np.asarray(sample_weight).tolist()]
    if bins is None:
        edges = None
        key_of = lambda pt: pt  # noqa: E731
    else:
        edges = uniform_edges_ref(bins) if isinstance(bins, (int, np.integer)) else [float(e) for e in bins]
        key_of = lambda pt: bin_index_ref(pt, edges)  # noqa: E731
    n = defaultdict(int)
    s = defaultdict(int)
    ps = defaultdict(F)
    for yt, pt, wt in zip(y, p, w):
        k = key_of(pt)
        n[k] += wt
        s[k] += wt * yt
        ps[k] += F(wt) * F(pt)
    keys = sorted(k for k in n if n[k] > 0)
    if bins is None:
        q = [float(k) for k in keys]
    else:
        q = [float(ps[k] / F(n[k])) for k in keys]
    order = sorted(range(len(keys)), key=lambda i: q[i])
    keys = [keys[i] for i in order]
    q = [q[i] for i in order]
    dtype = np.int64 if sample_weight is None else np.float64
    return (
        np.array(q, dtype=np.float64),
        np.array([n[k] if sample_weight is None else float(n[k]) for k in keys], dtype=dtype),
        np.array([s[k] if sample_weight is None else float(s[k]) for k in keys], dtype=dtype),
        np.array([float(ps[k]) for k in keys], dtype=np.float64),
        None if bins is None else np.array(keys, dtype=np.int64),
    )


def _exact(q, n, s):
    """(q, n, s, qhat) as lists of Fractions."""
    qs = [F(float(v)) for v in q]
    ns = [F(float(v)) for v in n]
    ss = [F(float(v)) for v in s]
    return qs, ns, ss, [si / ni for si, ni in zip(ss, ns)]


# --------------------------------------------------------------------------------------
# ECE and K2 (docs/metrics.md)


def ece_ref(q, n, s):
    """(1/T) sum_i n_i |q_i - qhat_i|."""
    qs, ns, ss, qh = _exact(q, n, s)
    return float(sum(ni * abs(qi - hi) for qi, ni, hi in zip(qs, ns, qh)) / sum(ns))


def k2_ref(q, n, s):
    """(1/T) sum_i n_i (q_i - qhat_i)^2."""
    qs, ns, ss, qh = _exact(q, n, s)
    return float(sum(ni * (qi - hi) ** 2 for qi, ni, hi in zip(qs, ns, qh)) / sum(ns))


# --------------------------------------------------------------------------------------
# The V-shaped curve f (docs/metrics.md)


def v_ref(q, qhat, mu):
    """v_i(mu) = |qhat - mu| if q < mu < qhat or qhat < mu <= q, else 0 (exact)."""
    q, qhat, mu = F(q), F(qhat), F(mu)
    if q < mu < qhat or qhat < mu <= q:
        return abs(qhat - mu)
    return F(0)


def v_plus_ref(q, qhat, mu):
    """The other tie rule, the right limit v_i(mu+): q <= mu < qhat or qhat < mu < q."""
    q, qhat, mu = F(q), F(qhat), F(mu)
    if q <= mu < qhat or qhat < mu < q:
        return abs(qhat - mu)
    return F(0)


def _f_exact(q, n, s, mu, v=v_ref):
    qs, ns, ss, qh = _exact(q, n, s)
    return sum(ni * v(qi, hi, mu) for qi, ni, hi in zip(qs, ns, qh)) / sum(ns)


def f_ref(q, n, s, mu):
    """f(mu) = (1/T) sum_i n_i v_i(mu), with the asymmetric tie rule of docs/metrics.md."""
    return float(_f_exact(q, n, s, F(float(mu))))


def f_plus_ref(q, n, s, mu):
    """f(mu+), the right limit of f (the other tie rule)."""
    return float(_f_exact(q, n, s, F(float(mu)), v_plus_ref))


def cfdl_mu_ref(q, n, s, mu):
    """CFDL of the V task with kink mu: f(mu) / max(mu, 1 - mu)."""
    mu = F(float(mu))
    return float(_f_exact(q, n, s, mu) / max(mu, 1 - mu))


def v_task(mu):
    """The V task with kink mu as a payoff matrix whose ties follow f's rule.

    c = 1 / max(mu, 1 - mu) keeps payoffs in [0, 1]; the right action (good when y = 1)
    is row 0 so that at p = mu the decision maker takes it, which is what makes
    mu = q_i count exactly when q_i is above qhat_i. Entries are Fractions (exact kink).
    """
    mu = F(mu)
    c = 1 / max(mu, 1 - mu)
    return [[F(0), c * (1 - mu)], [c * mu, F(0)]]


# --------------------------------------------------------------------------------------
# Decision tasks by direct best responses (docs/metrics.md)


def best_response_ref(U, p):
    """argmax_a (1-p) U(a,0) + p U(a,1), exact, ties to the lowest action index."""
    best, best_val = 0, None
    for a, (u0, u1) in enumerate(U):
        val = (1 - p) * u0 + p * u1
        if best_val is None or val > best_val:
            best, best_val = a, val
    return best


def _payoff_exact(payoff):
    return [[F(u) if isinstance(u, F) else F(float(u)) for u in row] for row in payoff]


def cfdl_ref(q, n, s, payoff):
    """CFDL_U = (1/T) sum_i n_i [E_qhat U(a*(qhat_i)) - E_qhat U(a*(q_i))], exactly."""
    U = _payoff_exact(payoff)
    qs, ns, ss, qh = _exact(q, n, s)
    total = F(0)
    for qi, ni, si, hi in zip(qs, ns, ss, qh):
        a = best_response_ref(U, qi)
        h = best_response_ref(U, hi)
        total += (ni - si) * (U[h][0] - U[a][0]) + si * (U[h][1] - U[a][1])
    return float(total / sum(ns))


def swap_regret_ref(y, p, payoff, sample_weight=None):
    """(1/T) sum_a max_a' sum_{t: a*(p_t) = a} [U(a', y_t) - U(a, y_t)], from raw rounds."""
    U = _payoff_exact(payoff)
    w = [1] * len(p) if sample_weight is None else [F(float(v)) for v in sample_weight]
    outcome_weight = defaultdict(lambda: [F(0), F(0)])  # per action: weight of y = 0, y = 1
    for yt, pt, wt in zip(np.asarray(y).tolist(), np.asarray(p, dtype=np.float64).tolist(), w):
        outcome_weight[best_response_ref(U, F(pt))][int(yt)] += wt
    total = F(0)
    for a, (w0, w1) in outcome_weight.items():
        total += max(w0 * (U[b][0] - U[a][0]) + w1 * (U[b][1] - U[a][1]) for b in range(len(U)))
    return float(total / sum(F(v) for v in w))


def quadratic_task(N):
    """Actions a = j/N of the quadratic rule S(a, y) = 1 - (a - y)^2, as exact Fractions."""
    return [[1 - F(j, N) ** 2, 1 - (1 - F(j, N)) ** 2] for j in range(N + 1)]


# --------------------------------------------------------------------------------------
# VCDL (docs/metrics.md): a dense grid of kinks plus every breakpoint with both one-sided values


def _breakpoints(q, n, s, extra=()):
    qs, ns, ss, qh = _exact(q, n, s)
    return sorted(set(qs) | set(qh) | {F(0), HALF, F(1)} | {F(x) for x in extra})


def vcdl_breakpoint_ref(q, n, s):
    """max over breakpoints b of max(f(b), f(b+)) / max(b, 1 - b), exactly."""
    best = F(0)
    for b in _breakpoints(q, n, s):
        val = max(_f_exact(q, n, s, b), _f_exact(q, n, s, b, v_plus_ref)) / max(b, 1 - b)
        best = max(best, val)
    return float(best)


def vcdl_grid_ref(q, n, s, points=20001):
    """max of CFDL_mu over mu = float64 grid in [0, 1]; f is evaluated exactly at each mu.

    Between breakpoints numpy float evaluation is exact enough; grid points within 1e-9
    of a breakpoint (where the tie rule decides) are re-evaluated with Fractions.
    """
    q = np.asarray(q, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    qhat = s / n
    mu = np.linspace(0.0, 1.0, points)
    M, Q, H, N = mu[:, None], q[None, :], qhat[None, :], n[None, :]
    active = ((Q < M) & (M < H)) | ((H < M) & (M <= Q))
    f = (N * np.where(active, np.abs(H - M), 0.0)).sum(axis=1) / n.sum()
    vals = f / np.maximum(mu, 1.0 - mu)
    near = np.min(np.abs(mu[:, None] - np.concatenate([q, qhat])[None, :]), axis=1) < 1e-9
    for j in np.flatnonzero(near):
        vals[j] = cfdl_mu_ref(q, n, s, mu[j])
    return float(vals.max())


def vcdl_ref(q, n, s, points=20001):
    """VCDL = sup_mu CFDL_mu: the larger of the dense-grid and the breakpoint maxima."""
    return max(vcdl_grid_ref(q, n, s, points), vcdl_breakpoint_ref(q, n, s))


# --------------------------------------------------------------------------------------
# CDL and UCal as linear programs over proper scoring rules (docs/metrics.md, k = 2)

_LP_OPTIONS = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
}


def _proper_lp(points, objective):
    """max sum_x c(x,0) S(x,0) + c(x,1) S(x,1) over S in [0,1] proper on the point set.

    points: sorted distinct floats; objective: dict point -> [c0, c1].
    Properness: for every ordered pair (x, x'), (1-x) S(x,0) + x S(x,1) >= (1-x) S(x',0) + x S(x',1).
    """
    K = len(points)
    index = {x: k for k, x in enumerate(points)}
    c = np.zeros(2 * K)
    for x, (c0, c1) in objective.items():
        c[2 * index[x]] += c0
        c[2 * index[x] + 1] += c1
    rows = []
    for a, x in enumerate(points):
        for b in range(K):
            if a == b:
                continue
            r = np.zeros(2 * K)
            # -( (1-x)(S(x,0) - S(x',0)) + x (S(x,1) - S(x',1)) ) <= 0
            r[2 * a] -= 1.0 - x
            r[2 * b] += 1.0 - x
            r[2 * a + 1] -= x
            r[2 * b + 1] += x
            rows.append(r)
    A = np.array(rows) if rows else None
    b_ub = np.zeros(len(rows)) if rows else None
    res = linprog(-c, A_ub=A, b_ub=b_ub, bounds=(0.0, 1.0), method="highs", options=_LP_OPTIONS)
    assert res.status == 0, res.message
    return -res.fun


def cdl_lp(q, n, s):
    """CDL: max over proper S with values in [0,1] on {q_i} ∪ {qhat_i} ∪ {0, 1} of
    (1/T) sum_i [(n_i - s_i)(S(qhat_i,0) - S(q_i,0)) + s_i (S(qhat_i,1) - S(q_i,1))]."""
    q = [float(v) + 0.0 for v in q]
    n = [float(v) for v in n]
    s = [float(v) for v in s]
    T = sum(n)
    qhat = [si / ni + 0.0 for si, ni in zip(s, n)]
    points = sorted(set(q) | set(qhat) | {0.0, 1.0})
    objective = defaultdict(lambda: [0.0, 0.0])
    for qi, ni, si, hi in zip(q, n, s, qhat):
        w0, w1 = (ni - si) / T, si / T
        objective[hi][0] += w0
        objective[hi][1] += w1
        objective[qi][0] -= w0
        objective[qi][1] -= w1
    return _proper_lp(points, objective)


def ucal_lp(q, n, s):
    """UCal: the same LP with the empirical frequency replaced by pbar = sum s / sum n:
    (1/T) sum_i [(n_i - s_i)(S(pbar,0) - S(q_i,0)) + s_i (S(pbar,1) - S(q_i,1))]."""
    q = [float(v) + 0.0 for v in q]
    n = [float(v) for v in n]
    s = [float(v) for v in s]
    T = sum(n)
    pbar = sum(s) / T + 0.0
    qhat = [si / ni + 0.0 for si, ni in zip(s, n)]
    points = sorted(set(q) | set(qhat) | {pbar, 0.0, 1.0})
    objective = defaultdict(lambda: [0.0, 0.0])
    for qi, ni, si in zip(q, n, s):
        w0, w1 = (ni - si) / T, si / T
        objective[pbar][0] += w0
        objective[pbar][1] += w1
        objective[qi][0] -= w0
        objective[qi][1] -= w1
    return _proper_lp(points, objective)


# --------------------------------------------------------------------------------------
# The envelope theorem (docs/exact-cdl.md) in exact arithmetic, by brute force over chords.
# A second, independent oracle used to check the LPs and, on bigger tables, the kernels.


def _envelope_at_half(points):
    """Upper concave envelope of a finite point set {(b, h)} read at 1/2: the best chord."""
    best = None
    for b1, h1 in points:
        for b2, h2 in points:
            if b1 <= HALF <= b2:
                val = h1 if b1 == b2 else h1 + (h2 - h1) * (HALF - b1) / (b2 - b1)
                best = val if best is None else max(best, val)
    return best


def cdl_envelope_ref(q, n, s):
    """2 fbar(1/2), fbar the concave majorant of the points (b, max(f(b), f(b+)))."""
    pts = [(b, max(_f_exact(q, n, s, b), _f_exact(q, n, s, b, v_plus_ref))) for b in _breakpoints(q, n, s)]
    return float(2 * _envelope_at_half(pts))


def _g_exact(q, n, s, mu, v):
    qs, ns, ss, qh = _exact(q, n, s)
    pbar = sum(ss) / sum(ns)
    return sum(ni * (v(qi, hi, mu) - v(pbar, hi, mu)) for qi, ni, hi in zip(qs, ns, qh)) / sum(ns)


def ucal_envelope_ref(q, n, s):
    """2 gbar(1/2), gbar the concave majorant of max(g, 0) at both one-sided values."""
    qs, ns, ss, qh = _exact(q, n, s)
    pbar = sum(ss) / sum(ns)
    pts = [
        (b, max(_g_exact(q, n, s, b, v_ref), _g_exact(q, n, s, b, v_plus_ref), F(0)))
        for b in sorted(set(_breakpoints(q, n, s)) | {pbar})
    ]
    return float(2 * _envelope_at_half(pts))


# --------------------------------------------------------------------------------------
# Peer library


def sklearn_binned_ece(y, p, m):
    """Binned ECE from sklearn.calibration.calibration_curve(strategy="uniform").

    sum over non-empty bins of (count / T) |prob_true - prob_pred|, with counts from
    np.bincount over the same bin ids sklearn uses (searchsorted of linspace edges).
    """
    from sklearn.calibration import calibration_curve

    y = np.asarray(y)
    p = np.asarray(p, dtype=np.float64)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=m, strategy="uniform")
    edges = np.linspace(0.0, 1.0, m + 1)
    counts = np.bincount(np.searchsorted(edges[1:-1], p), minlength=m)
    counts = counts[counts > 0]
    return float(np.sum(counts / p.shape[0] * np.abs(prob_true - prob_pred)))


# --------------------------------------------------------------------------------------
# The registry: public name -> reference (and peer). "input" says what the reference takes:
# "table" = (q, n, s), "table+payoff" = (q, n, s, payoff), "rounds+payoff" = (y, p, payoff).

REGISTRY = {
    "ece": {"reference": ece_ref, "input": "table", "tol": 1e-12, "peer": sklearn_binned_ece},
    "k2": {"reference": k2_ref, "input": "table", "tol": 1e-12},
    "vcdl": {"reference": vcdl_ref, "input": "table", "tol": 1e-12},
    "cdl": {"reference": cdl_lp, "input": "table", "tol": 1e-8, "exact": cdl_envelope_ref},
    "ucal": {"reference": ucal_lp, "input": "table", "tol": 1e-8, "exact": ucal_envelope_ref},
    "cfdl": {"reference": cfdl_ref, "input": "table+payoff", "tol": 1e-12},
    "swap_regret": {"reference": swap_regret_ref, "input": "rounds+payoff", "tol": 1e-12},
    "decision_loss_curve": {"reference": cfdl_mu_ref, "input": "table+kink", "tol": 1e-12},
}


# The sample estimators (docs/estimators.md): their references live in sample_reference.py,
# which builds on this module, so they are looked up when called (either module may be
# imported first). "input": "table" = (q, n, s); "rounds" = (y, p). One registry holds every
# public metric; tests/test_registry.py checks that it does and runs each entry.
def _sample_ref(name):
    def ref(*args):
        import sample_reference

        return getattr(sample_reference, name)(*args)

    ref.__name__ = name
    return ref


def _rmsce_ref(q, n, s):
    return math.sqrt(k2_ref(q, n, s))


def _mce_ref(q, n, s):
    return max(abs(F(float(qi)) - F(float(si)) / F(float(ni))) for qi, ni, si in zip(q, n, s) if ni > 0)


def _atb_unbiased_ref(y, p):
    T = len(p)
    return (T * _sample_ref("atb_ref")(y, p) - _sample_ref("brier_ref")(y, p)) / (T - 1)


def brier_resolution_ref(q, n, s):
    """Murphy's resolution (1/T) sum_i n_i (qhat_i - ybar)^2, ybar = sum s / sum n (exact)."""
    qs, ns, ss, qh = _exact(q, n, s)
    ybar = sum(ss) / sum(ns)
    return float(sum(ni * (hi - ybar) ** 2 for ni, hi in zip(ns, qh)) / sum(ns))


def brier_uncertainty_ref(q, n, s):
    """Murphy's uncertainty ybar (1 - ybar) (exact)."""
    _, ns, ss, _ = _exact(q, n, s)
    ybar = sum(ss) / sum(ns)
    return float(ybar * (1 - ybar))


REGISTRY.update(
    {
        "brier_reliability": {"reference": k2_ref, "input": "table", "tol": 1e-12},
        "brier_resolution": {"reference": brier_resolution_ref, "input": "table", "tol": 1e-12},
        "brier_uncertainty": {"reference": brier_uncertainty_ref, "input": "table", "tol": 1e-12},
        "cdl_monotone": {
            "reference": _sample_ref("cdl_monotone_lp"),
            "input": "table",
            "tol": 1e-8,
            "exact": _sample_ref("cdl_monotone_envelope_ref"),
        },
        "vcdl_monotone": {"reference": _sample_ref("vcdl_monotone_ref"), "input": "table", "tol": 1e-12},
        "cutoff_ce": {"reference": _sample_ref("cutoff_ce_ref"), "input": "rounds", "tol": 1e-12},
        "atb": {"reference": _sample_ref("atb_ref"), "input": "rounds", "tol": 1e-12},
        "atb_unbiased": {"reference": _atb_unbiased_ref, "input": "rounds", "tol": 1e-12},
        "smce": {"reference": _sample_ref("smce_lp_table"), "input": "table", "tol": 1e-8},
        "cdl_monotone_crossfit": {
            "reference": _sample_ref("cdl_monotone_crossfit_ref"),
            "input": "rounds",
            "tol": 1e-12,
        },
        "vcdl_monotone_crossfit": {
            "reference": _sample_ref("vcdl_monotone_crossfit_ref"),
            "input": "rounds",
            "tol": 1e-12,
        },
        "k2_debiased": {"reference": _sample_ref("k2_debiased_ref"), "input": "rounds", "tol": 1e-12},
        "ece_sweep": {"reference": _sample_ref("ece_sweep_ref"), "input": "rounds", "tol": 1e-12},
        "mce": {"reference": lambda q, n, s: float(_mce_ref(q, n, s)), "input": "table", "tol": 1e-12},
        "rmsce": {"reference": _rmsce_ref, "input": "table", "tol": 1e-12},
        "brier": {"reference": _sample_ref("brier_ref"), "input": "rounds", "tol": 1e-12},
    }
)


# --------------------------------------------------------------------------------------
# KL-calibration (docs/pseudo.md), from its definition: (1/N) sum_j n_j KL(qhat_j || q_j)
# with 0 ln 0 = 0 and +inf when a stated 0 met y = 1 or a stated 1 met y = 0.


def kl_ref(q, n, s):
    """(1/N) sum_j n_j [qhat ln(qhat / q) + (1 - qhat) ln((1 - qhat) / (1 - q))], term by term."""
    total = 0.0
    N = 0.0
    for qi, ni, si in zip(q, n, s):
        qi, ni, si = float(qi), float(ni), float(si)
        if ni <= 0:
            continue
        N += ni
        a = si / ni
        for share, target in ((a, qi), (1.0 - a, 1.0 - qi)):
            if share > 0.0:
                if target <= 0.0:
                    return math.inf
                total += ni * share * math.log(share / target)
    return total / N if N > 0 else 0.0


REGISTRY.update(
    {
        "klcal": {"reference": kl_ref, "input": "table", "tol": 1e-12},
        # the pseudo measures are the table measures of a run's expected-count table
        "pseudo_ece": {"reference": ece_ref, "input": "table", "tol": 1e-12},
        "pseudo_k2": {"reference": k2_ref, "input": "table", "tol": 1e-12},
        "pseudo_klcal": {"reference": kl_ref, "input": "table", "tol": 1e-12},
        "pseudo_cdl": {"reference": cdl_lp, "input": "table", "tol": 1e-8, "exact": cdl_envelope_ref},
    }
)


def _score_ref(name):
    def ref(*args):
        import model_score_reference

        return getattr(model_score_reference, name)(*args)

    ref.__name__ = name
    return ref


# the measures of model scores (tests/model_score_reference.py); the report's LDTC program and the
# reference's each sit within half their grid step above the true value: 1/400 and 1/800
REGISTRY.update(
    {
        "smece": {"reference": _score_ref("smece_ref"), "input": "rounds", "tol": 1e-6},
        "intce": {"reference": _score_ref("intce_ref"), "input": "table", "tol": 1e-12},
        "ici": {"reference": _score_ref("ici_ref"), "input": "rounds", "tol": 1e-12},
        "corp": {"reference": _score_ref("corp_mcb_ref"), "input": "rounds", "tol": 1e-12},
        "ldtc": {"reference": _score_ref("ldtc_ref"), "input": "table", "tol": 1 / 400 + 1 / 800},
    }
)


def log_loss_ref(y, p):
    """(1/T) sum -log(probability given to the outcome), one round at a time; inf for a
    zero-probability outcome, 0 for a certain and right one."""
    total = 0.0
    for yi, pi in zip(y, p):
        given = float(pi) if int(yi) == 1 else 1.0 - float(pi)
        if given <= 0.0:
            return math.inf
        total -= math.log(given)
    return total / len(y)


REGISTRY.update({"log_loss": {"reference": log_loss_ref, "input": "rounds", "tol": 1e-12}})
