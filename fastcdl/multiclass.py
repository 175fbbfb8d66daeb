"""Calibration decision loss for more than two outcomes, by linear programming (docs/metrics.md).

For k outcomes and predictions on a finite set of distributions, CDL is the value of a
linear program over score vectors s_q in [0, 1]^k, one per distribution q in
R = Q ∪ {empirical distributions qhat_i}:

    maximise  (1/T) sum_i n_i sum_y qhat_i(y) (s_{qhat_i,y} - s_{q_i,y})
    subject to sum_y q(y) s_{q,y} >= sum_y q(y) s_{q',y}   for every q in Q and q' != q in R.

A proper score with values in [0, 1] on R is the same as a decision task with payoffs in
[0, 1] whose actions are the best responses to the distributions in R, so the LP is the
supremum over tasks of the payoff gained by replacing each prediction with its bucket's
empirical distribution. Properness is needed only at the predictions Q: a score vector of
an empirical distribution that is not its best response there only lowers the objective
(the task's decision maker at qhat_i takes the best of all vectors), and the point masses
of the first formulation (fastcdl/multiclass.py before 0.2, kept as :func:`_cdl_lp_all_pairs`
for tests and benchmarks) change nothing for the same reason.

The LP is solved by constraint generation with HiGHS's interior-point method and crossover
(scipy.optimize.linprog, scipy.sparse constraint matrices), in the variables s_q and the
values u_q = q . s_q of the predictions: rows u_q - q . s_q = 0 and q . s_q' - u_q <= 0,
each with at most k + 1 nonzeros. It starts from the pairs of each prediction with its
nearest points of R, adds at every round the ten most violated pairs per prediction, and
stops when no pair is violated by more than 1e-10: the solution is then feasible for the
full LP and optimal for a relaxation of it, so its value is the full LP's.
"""

from __future__ import annotations

import numpy as np

from fastcdl._validate import ValidationError, check_distributions, check_positive_int

__all__ = ["cdl_multiclass", "ROW_SUM_TOL", "MAX_ROWS"]

ROW_SUM_TOL = 1e-9  # float64 rows; float32 rows: k * 4 * eps(float32) (fastcdl._validate)
MAX_ROWS = 1000

_TOL = 1e-10  # feasibility tolerance of HiGHS and of the generated constraints
_SEED = 40  # nearest points of R paired with each prediction before the first solve
_PER_ROUND = 10  # most violated pairs added per prediction and round
_OPTIONS = {"primal_feasibility_tolerance": _TOL, "dual_feasibility_tolerance": _TOL}


def _solve(R, obj, qi, a, b):
    """Maximise obj . s subject to u = R[qi] . s_qi and R[a] . s_b <= u_a for the pairs (a, b).

    Returns (value, S (N, k)). Variables: s (N k, in [0, 1]) then u (one per prediction, free).
    """
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    N, k = R.shape
    nq = qi.shape[0]
    pos = np.full(N, -1, dtype=np.int64)
    pos[qi] = np.arange(nq)
    nv = N * k + nq
    rows = np.repeat(np.arange(nq), k + 1)
    cols = np.concatenate([qi[:, None] * k + np.arange(k), (N * k + np.arange(nq))[:, None]], axis=1).ravel()
    vals = np.concatenate([-R[qi], np.ones((nq, 1))], axis=1).ravel()
    keep = vals != 0.0
    A_eq = csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(nq, nv))
    n = a.shape[0]
    rows = np.repeat(np.arange(n), k + 1)
    cols = np.concatenate([b[:, None] * k + np.arange(k), (N * k + pos[a])[:, None]], axis=1).ravel()
    vals = np.concatenate([R[a], -np.ones((n, 1))], axis=1).ravel()
    keep = vals != 0.0
    A_ub = csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n, nv))
    bounds = np.zeros((nv, 2))
    bounds[: N * k, 1] = 1.0
    bounds[N * k :] = (-np.inf, np.inf)
    res = linprog(
        np.concatenate([-obj.ravel(), np.zeros(nq)]),
        A_ub=A_ub if n else None,
        b_ub=np.zeros(n) if n else None,
        A_eq=A_eq,
        b_eq=np.zeros(nq),
        bounds=bounds,
        method="highs-ipm",
        options=_OPTIONS,
    )
    if res.status != 0:  # pragma: no cover - the LP is feasible (s = 0) and bounded
        raise RuntimeError(f"HiGHS did not solve the CDL linear program: {res.message}")
    return -res.fun, res.x[: N * k].reshape(N, k)


def _cdl_lp(Q, Qhat, w) -> float:
    """CDL of buckets with distinct predictions Q (m, k), empirical distributions Qhat and
    weights w = n_i / T, by constraint generation (module docstring)."""
    m, k = Q.shape
    R, idx = np.unique(np.concatenate([Q, Qhat]), axis=0, return_inverse=True)
    idx = idx.ravel()
    obj = np.zeros(R.shape)
    gain = w[:, None] * Qhat
    np.add.at(obj, idx[m:], gain)
    np.add.at(obj, idx[:m], -gain)
    if not np.any(obj):
        return 0.0
    N = R.shape[0]
    qi = np.unique(idx[:m])
    nq = qi.shape[0]
    if N == 1:  # pragma: no cover - obj would be zero
        return 0.0
    have = np.zeros((nq, N), dtype=bool)
    have[np.arange(nq), qi] = True
    # seed: each prediction against its nearest points of R
    sq = np.einsum("ij,ij->i", R, R)
    dist = sq[qi][:, None] + sq[None, :] - 2.0 * (R[qi] @ R.T)
    dist[np.arange(nq), qi] = np.inf
    near = np.argsort(dist, axis=1, kind="stable")[:, : min(_SEED, N - 1)]
    rows = np.repeat(np.arange(nq), near.shape[1])
    have[rows, near.ravel()] = True
    a, b = qi[rows], near.ravel()
    per = min(_PER_ROUND, N - 1)
    while True:
        value, S = _solve(R, obj, qi, a, b)
        V = R[qi] @ S.T
        viol = V - V[np.arange(nq), qi][:, None]
        viol[have] = -np.inf
        top = np.argsort(-viol, axis=1, kind="stable")[:, :per]
        sel = np.take_along_axis(viol, top, axis=1) > _TOL
        if not sel.any():
            return max(float(value), 0.0)
        r = np.repeat(np.arange(nq), per).reshape(nq, per)[sel]
        c = top[sel]
        have[r, c] = True
        a = np.concatenate([a, qi[r]])
        b = np.concatenate([b, c])


def _lp_all_pairs(R, obj):
    """The first formulation: maximise obj . s over score vectors s (rows of R) in [0, 1] that
    are proper on all of R, |R| (|R| - 1) constraints (HiGHS's default method). Kept for tests
    and scripts/bench_multiclass.py; about N^4 in time."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    N, k = R.shape
    a, b = np.nonzero(~np.eye(N, dtype=bool))  # ordered pairs (truth a, report b), a != b
    n_pairs = a.shape[0]
    # row p: sum_y R[a,y] s[b,y] - sum_y R[a,y] s[a,y] <= 0
    rows = np.repeat(np.arange(n_pairs), 2 * k)
    cols = np.concatenate([b[:, None] * k + np.arange(k), a[:, None] * k + np.arange(k)], axis=1).ravel()
    vals = np.concatenate([R[a], -R[a]], axis=1).ravel()
    keep = vals != 0.0
    A = csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n_pairs, N * k))
    res = linprog(
        -obj.ravel(),
        A_ub=A,
        b_ub=np.zeros(n_pairs),
        bounds=(0.0, 1.0),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0:  # pragma: no cover - the LP is feasible (s = 0) and bounded
        raise RuntimeError(f"HiGHS did not solve the CDL linear program: {res.message}")
    return -res.fun


def _buckets(y, P, w=None):
    """(distinct rows Q float64, empirical distributions Qhat, weights n_i / T, rounds per
    bucket); rows of zero weight are left out."""
    T, k = P.shape
    if w is not None:
        keep = w > 0
        y, P, w = y[keep], P[keep], w[keep]
    Q, bucket = np.unique(P, axis=0, return_inverse=True)
    bucket = bucket.ravel()
    m = Q.shape[0]
    counts = np.bincount(bucket * k + y, weights=w, minlength=m * k).reshape(m, k).astype(np.float64)
    n = counts.sum(axis=1)
    return Q.astype(np.float64), counts / n[:, None], n / n.sum(), np.bincount(bucket, minlength=m)


def _cdl_lp_all_pairs(y_true, P) -> float:
    """cdl_multiclass by the first formulation (:func:`_lp_all_pairs`, point masses in R)."""
    y, P = check_distributions(y_true, P)
    k = P.shape[1]
    Q, Qhat, w, _ = _buckets(y, P)
    m = Q.shape[0]
    R, idx = np.unique(np.concatenate([Q, Qhat, np.eye(k)]), axis=0, return_inverse=True)
    idx = idx.ravel()
    obj = np.zeros((R.shape[0], k))
    gain = w[:, None] * Qhat
    np.add.at(obj, idx[m : 2 * m], gain)
    np.add.at(obj, idx[:m], -gain)
    if not np.any(obj):
        return 0.0
    return max(float(_lp_all_pairs(R, obj)), 0.0)


def cdl_multiclass(y_true, P, *, sample_weight=None, max_rows=MAX_ROWS) -> float:
    """Calibration decision loss of k-outcome forecasts (docs/metrics.md), by linear programming.

    The distinct rows of P are the buckets.

    Parameters
    ----------
    y_true : array-like of int, shape (T,)
        Labels in 0..k-1.
    P : array-like of shape (T, k)
        Predicted distributions, each row in [0, 1]^k summing to 1 within its precision
        (1e-9 for float64 rows; k * 4 * eps(float32), about k * 4.8e-7, for float32 rows as
        torch, JAX and TensorFlow return them, and for float64 arrays of float32 values);
        rows are used as given, never renormalised.
    sample_weight : array-like of shape (T,), optional
        Non-negative weights of the rounds.
    max_rows : int, default 1000
        The most distinct rows to solve for; more raise ValueError at once.

    Returns
    -------
    float
        The most any decision maker with payoffs in [0, 1] gains per round by acting on each
        bucket's empirical distribution instead of its prediction; 0 exactly when
        calibrated, equal to :func:`fastcdl.cdl` for k = 2 (up to the LP tolerance, about
        1e-9).

    Raises
    ------
    ValidationError
        (a ValueError) naming the problem, for NaN or infinite entries, entries outside
        [0, 1], rows not summing to 1, labels outside 0..k-1, wrong shapes, empty input, or
        more than ``max_rows`` distinct rows.

    Warns
    -----
    SampleSizeWarning
        When at least half of the rounds (with weights, of the weight) sit in rows that
        occur in a single round (of positive weight).

    Notes
    -----
    Cost: O(T k log T) to find the m distinct rows, then the LP of the module docstring
    (constraint generation, HiGHS interior point): k = 10 and m = 100, 200, 400 distinct
    rows take about 1, 5 and 25 s (results/benchmarks/multiclass.md). m above
    ``max_rows`` (default 1000) raises ValueError at once instead of running for an hour;
    bucket the predictions first (round them, or use multiclass="top-label" with the
    binary metrics) if you have more. For continuous rows (every row distinct) the exact
    CDL measures sampling noise, not miscalibration: use the top-label or class-wise
    reductions of the binary metrics with bins. It says so with
    :class:`fastcdl.SampleSizeWarning`, under the binary metrics' rule with the distinct rows
    as buckets: when at least half of the rounds (with weights, of the weight) sit in rows
    that occur in a single round (of positive weight).

    Examples
    --------
    >>> import fastcdl as fc
    >>> P = [[0.5, 0.5, 0.0]] * 4
    >>> round(fc.cdl_multiclass([0, 1, 0, 1], P), 9)
    0.0
    >>> round(fc.cdl_multiclass([0, 0, 1, 1], [[0.75, 0.25]] * 2 + [[0.25, 0.75]] * 2), 9)
    0.25
    """
    return cdl_multiclass_within(y_true, P, sample_weight, max_rows)


def cdl_multiclass_within(y_true, P, sample_weight, max_rows, row_sum_tol=None):
    """cdl_multiclass with the rows' tolerance given (fastcdl.cli: rows read from text were
    checked against the digits they were printed with, and are used as written)."""
    check_positive_int(max_rows, "max_rows")
    y, P = check_distributions(y_true, P, row_sum_tol=row_sum_tol)
    w = None
    if sample_weight is not None:
        from fastcdl._validate import check_rounds, prepare_rounds

        T = P.shape[0]
        w = prepare_rounds(np.zeros(T, np.uint8), np.zeros(T), sample_weight)[2]
        check_rounds(np.zeros(T, np.uint8), np.zeros(T), w)
    weighted = w is not None
    Q, Qhat, w, rounds = _buckets(y, P, w)
    m = Q.shape[0]
    if m > max_rows:
        raise ValidationError(
            "P",
            f"has more than max_rows={max_rows} distinct rows",
            value=m,
            message=f"P has {m} distinct rows, more than max_rows={max_rows}: the LP would take "
            "minutes to hours; round or bin the predictions first (or measure the top-label or "
            "class-wise reductions, fc.ece(y, P, multiclass='top-label', bins=15)), or raise max_rows",
        )
    from fastcdl.exact import single_round_share, warn_sample_size

    T = int(rounds.sum())
    what = f"the weight of the {T} rounds" if weighted else f"the {T} rounds"
    warn_sample_size(single_round_share(rounds, w), "cdl_multiclass", what, stacklevel=3)
    return _cdl_lp(Q, Qhat, w)
