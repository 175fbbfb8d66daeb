"""Calibration decision loss for more than two outcomes, by linear programming (docs/metrics.md).

For k outcomes and predictions on a finite set of distributions, CDL is the value of a
linear program over score vectors s_{q,y} in [0, 1], one per distribution q in
R = Q ∪ {empirical distributions qhat_i} ∪ {point masses e_y}:

    maximise  (1/T) sum_i n_i sum_y qhat_i(y) (s_{qhat_i,y} - s_{q_i,y})
    subject to sum_y q(y) s_{q,y} >= sum_y q(y) s_{q',y}   for every ordered pair q != q' in R.

A proper score with values in [0, 1] on R is the same as a decision task with payoffs in
[0, 1] whose actions are the best responses to the distributions in R, so the LP is the
supremum over tasks of the payoff gained by replacing each prediction with its bucket's
empirical distribution. The LP has k |R| variables and |R| (|R| - 1) constraints; it is
solved with HiGHS (scipy.optimize.linprog).
"""

from __future__ import annotations

import numpy as np

from fastcdl._validate import ValidationError, check_distributions, check_positive_int

__all__ = ["cdl_multiclass", "ROW_SUM_TOL", "MAX_ROWS"]

ROW_SUM_TOL = 1e-9
MAX_ROWS = 400


def _lp(R, obj):
    """Maximise obj . s over score vectors s (rows of R) in [0,1] that are proper on R."""
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


def cdl_multiclass(y_true, P, *, max_rows=MAX_ROWS) -> float:
    """Calibration decision loss of k-outcome forecasts (docs/metrics.md), by linear programming.

    y_true: integer labels in 0..k-1 (shape (T,)); P: predicted distributions, shape
    (T, k), each row in [0, 1]^k summing to 1 within ROW_SUM_TOL = 1e-9 (rows are used as
    given, never renormalised). The distinct rows of P are the buckets. Returns the most
    any decision maker with payoffs in [0, 1] gains per round by acting on each bucket's
    empirical distribution instead of its prediction; 0 exactly when calibrated, equal to
    :func:`fastcdl.cdl` for k = 2 (up to the LP tolerance, about 1e-9).

    Cost: O(T k log T) to find the buckets, then an LP with k N variables and N (N - 1)
    constraints, N = |distinct rows ∪ empirical distributions ∪ point masses|; HiGHS
    takes under a second for N = 100 and about a minute for N = 400 (k = 3). N above
    ``max_rows`` (default 400) raises ValueError at once instead of running for hours;
    bucket the predictions first (for example round them) if you have more.

    Raises ValueError naming the problem for NaN or infinite entries, entries outside
    [0, 1], rows not summing to 1, labels outside 0..k-1, wrong shapes, or empty input.

    >>> import fastcdl as fc
    >>> P = [[0.5, 0.5, 0.0]] * 4
    >>> round(fc.cdl_multiclass([0, 1, 0, 1], P), 9)
    0.0
    >>> round(fc.cdl_multiclass([0, 0, 1, 1], [[0.75, 0.25]] * 2 + [[0.25, 0.75]] * 2), 9)
    0.25
    """
    check_positive_int(max_rows, "max_rows")
    y, P = check_distributions(y_true, P, ROW_SUM_TOL)
    T, k = P.shape
    Q, bucket = np.unique(P, axis=0, return_inverse=True)
    bucket = bucket.ravel()
    m = Q.shape[0]
    if m > max_rows:
        raise ValidationError(
            "P", f"has more than max_rows={max_rows} distinct rows", value=m,
            message=f"P has {m} distinct rows, more than max_rows={max_rows}: the LP would have "
            f"about {m * m} constraints; round or bin the predictions first, or raise max_rows",
        )
    counts = np.bincount(bucket * k + y, minlength=m * k).reshape(m, k).astype(np.float64)
    n = counts.sum(axis=1)
    Qhat = counts / n[:, None]
    R, idx = np.unique(np.concatenate([Q, Qhat, np.eye(k)]), axis=0, return_inverse=True)
    idx = idx.ravel()
    if R.shape[0] > max_rows:
        raise ValidationError(
            "P", f"needs more than max_rows={max_rows} score vectors", value=R.shape[0],
            message=f"the LP needs {R.shape[0]} score vectors (the {m} distinct rows of P, their "
            f"empirical distributions and the {k} point masses), more than max_rows={max_rows}; "
            f"round or bin the predictions first, or raise max_rows",
        )
    i_q, i_qhat = idx[:m], idx[m : 2 * m]
    obj = np.zeros((R.shape[0], k))
    gain = (n / T)[:, None] * Qhat  # n_i qhat_i(y) / T
    np.add.at(obj, i_qhat, gain)
    np.add.at(obj, i_q, -gain)
    if not np.any(obj):
        return 0.0
    return max(float(_lp(R, obj)), 0.0)
