"""The lower distance to calibration and the interval calibration error of Blasiok, Gopalan, Hu
and Nakkiran ("A Unifying Theory of Distance from Calibration", STOC 2023): :func:`ldtc`,
:func:`intce`.

The lower distance to calibration of a table of predictions u with outcomes y is the least
E|u - v| over joint laws of (u, v, y) that keep the law of (u, y) and make v calibrated,
E[y | v] = v: how far the predictions must move, on average, to become calibrated, when the
move may be randomised. It is within constant factors of the smooth calibration error
(:func:`fastcdl.smce`): for any such coupling and any 1-Lipschitz test w bounded by 1,
E[w(u)(y - u)] = E[(w(u) - w(v))(y - u)] + E[w(v)(v - u)] <= 2 E|u - v|, so smCE <= 2 LDTC,
and the paper bounds LDTC by a constant times smCE. fastcdl computes it by a linear program
(scipy's HiGHS) over couplings to calibrated values on a grid, with a proven error bound
(docs/distance-to-calibration.md).

The interval calibration error is the paper's binned estimate with its bin width as a penalty:
for bins of width eps shifted by a uniform random amount, E_shift[binned ECE] + eps, minimised
over eps; :func:`intce` takes eps dyadic from 1 down to 1/1024 as the authors' relplot does
(``intCE_rand``), but computes the expectation over the shift exactly where relplot draws 100
shifts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_count

__all__ = ["LDTC", "ldtc", "intce", "LDTC_MAX_VARIABLES", "INTCE_WIDTHS"]

#: The largest linear program :func:`ldtc` builds: 2 x buckets x grid points variables.
LDTC_MAX_VARIABLES = 60_000

#: The bin widths :func:`intce` minimises over: 1, 1/2, ..., 1/1024 (relplot's, eps = 0.001).
INTCE_WIDTHS = tuple(2.0**-k for k in range(11))


@dataclass(frozen=True)
class LDTC:
    """The lower distance to calibration of a table, bracketed.

    Attributes
    ----------
    value : float
        The linear program's value: the least E|u - v| over couplings to calibrated values on
        the grid (of the table, or of its rebinned table).
    lower, upper : float
        The true lower distance to calibration of the table lies in [lower, upper]:
        value - grid_spacing / 2 - moved and value + moved.
    grid_spacing : float
        The largest gap between grid points (the grid holds 0, 1, every prediction and a uniform
        grid of this spacing).
    moved : float
        How far a prediction moved when the table was rebinned to keep the program small (the
        bin width), or 0.
    buckets : int
        The buckets of the program.
    method : str
        "lp" (the table itself) or "lp on k bins" (the table rebinned to k equal-width bins).

    Examples
    --------
    >>> r = ldtc([0, 1, 1, 1], [0.25, 0.25, 0.75, 0.75], grid=100)
    >>> round(r.value, 4), r.lower <= r.value <= r.upper
    (0.25, True)
    """

    value: float
    lower: float
    upper: float
    grid_spacing: float
    moved: float
    buckets: int
    method: str


def _lp(q, n, s, grid):
    """min sum |q_i - v_j| x_ijy over x >= 0 with the bucket masses kept and every level v_j
    calibrated: sum_i (1 - v_j) x_ij1 - v_j x_ij0 = 0. Sparse, scipy's HiGHS."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack

    m, G = q.shape[0], grid.shape[0]
    T = n.sum()
    # variable index: (i * G + j) * 2 + y
    i = np.repeat(np.arange(m), G)
    j = np.tile(np.arange(G), m)
    cost = np.repeat(np.abs(q[i] - grid[j]), 2)
    nvar = 2 * m * G
    cols = np.arange(nvar)
    # the masses: row 2 i + y sums x_i.y
    rows_mass = 2 * np.repeat(i, 2) + np.tile([0, 1], m * G)
    A_mass = coo_matrix((np.ones(nvar), (rows_mass, cols)), shape=(2 * m, nvar))
    b_mass = np.empty(2 * m)
    b_mass[0::2] = (n - s) / T
    b_mass[1::2] = s / T
    # calibration at each level j
    jj = np.repeat(j, 2)
    vals = np.empty(nvar)
    vals[0::2] = -grid[j]
    vals[1::2] = 1.0 - grid[j]
    A_cal = coo_matrix((vals, (jj, cols)), shape=(G, nvar))
    res = linprog(
        cost,
        A_eq=vstack([A_mass, A_cal]).tocsr(),
        b_eq=np.concatenate([b_mass, np.zeros(G)]),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"the LDTC linear program did not solve: {res.message}")
    return float(res.fun)


@accepts_multiclass(kind="report")
@fill_docstring
def ldtc(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", grid=None):
    """The lower distance to calibration (Blasiok, Gopalan, Hu and Nakkiran 2023), by a linear
    program with an error bound.

    The least E|u - v| over couplings of the table's predictions u (with their outcomes) to
    calibrated values v, E[y | v] = v, with v restricted to a grid: 0, 1, every prediction and
    ``grid`` + 1 equally spaced points. Restricting v to a grid of spacing h costs at most h / 2:
    a calibrated level v between grid points g < v < g + h splits into the levels g and g + h,
    each with its own frequency, by moving a share (v - g) / h of the level's mass (of either
    outcome, in the level's own proportion) up to g + h and the rest down to g, which keeps both
    calibrated and moves v by 2 (v - g)(g + h - v) / h <= h / 2 on average. So the true value
    lies in [value - h / 2, value]. The program has 2 m G variables (m buckets, G grid points):
    when that passes LDTC_MAX_VARIABLES, the table is first rebinned to equal-width bins of
    width w (each prediction moves to its bin's mean, by less than w, which moves the distance
    by less than w), and the bracket widens by w on both sides (``method`` says so). Cost: a
    sparse linear program (HiGHS), seconds at a few hundred buckets. On a table of continuous
    scores (one round per bucket) it is the distance of the sample, an estimator whose bias
    falls with the rounds; :func:`fastcdl.smce` is the O(m log m) stand-in within a factor 2.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    grid : int, optional
        Equally spaced grid intervals besides the predictions (the spacing is 1 / grid). Default:
        as many as keep the program within LDTC_MAX_VARIABLES, at most 1000.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    LDTC

    Raises
    ------
    {{raises}}
        Also for a grid below 1, or a grid too fine for the program's size limit with the table's
        buckets.

    Examples
    --------
    >>> r = ldtc([0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5], grid=10)
    >>> r.value, r.method
    (0.0, 'lp')
    """
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    if grid is not None:
        check_count(grid, "grid", 1)
    moved = 0.0
    method = "lp"
    m = st.n_buckets
    if grid is not None:
        K = grid
        if 2 * m * (K + 1 + m) > LDTC_MAX_VARIABLES:
            raise ValidationError(
                "grid",
                "is too fine for the table",
                message=f"grid={grid} with {m} buckets makes a linear program of {2 * m * (grid + 1 + m):,} variables, "
                f"more than LDTC_MAX_VARIABLES = {LDTC_MAX_VARIABLES:,}: use a coarser grid, bin the predictions "
                "(bins=...), or leave grid out to let the table be rebinned",
            )
    else:
        # the finest grid within the limit with the table's buckets, at most 1000 intervals; below
        # 100 intervals the table is rebinned to 100 equal-width bins instead
        K = min(1000, LDTC_MAX_VARIABLES // (2 * m) - m - 1)
        if K < 100:
            k = 100
            K = LDTC_MAX_VARIABLES // (2 * k) - k - 1
            st = st.rebin(k)
            moved = 1.0 / k
            method = f"lp on {k} bins"
    q, n, s = st.table()
    q = np.asarray(q, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    pts = np.unique(np.concatenate([np.arange(K + 1) / K, q, [0.0, 1.0]]))
    h = float(np.diff(pts).max()) if pts.shape[0] > 1 else 0.0
    value = _lp(q, n, s, pts)
    return LDTC(value, max(value - h / 2 - moved, 0.0), value + moved, h, moved, int(q.shape[0]), method)


def _expected_binned_error(q, r, T, eps):
    """E over a shift s ~ U[0, eps) of (1/T) sum_k |sum of r_i over q_i + s in [k eps, (k+1) eps)|.

    At s = 0 bucket i sits in bin floor(q_i / eps); as s grows it moves to the next bin at
    s_i = eps - (q_i mod eps) (never, when q_i mod eps = 0), so the binned error is constant
    between the sorted s_i: one pass, O(m log m)."""
    k0 = np.floor(q / eps).astype(np.int64)
    frac = q - k0 * eps
    nb = int(k0.max()) + 2
    B = np.bincount(k0, r, minlength=nb)
    A = float(np.abs(B).sum())
    move = np.flatnonzero(frac > 0)
    at = eps - frac[move]
    order = np.argsort(at, kind="stable")
    total = 0.0
    last = 0.0
    for idx in order:
        i = move[idx]
        s_i = at[idx]
        total += A * (s_i - last)
        last = s_i
        k = k0[i]
        old = abs(B[k]) + abs(B[k + 1])
        B[k] -= r[i]
        B[k + 1] += r[i]
        A += abs(B[k]) + abs(B[k + 1]) - old
    total += A * (eps - last)
    return total / eps / T


@accepts_multiclass()
@fill_docstring
def intce(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """The interval calibration error: min over bin widths eps of the expected binned error under
    a uniformly random shift of the bins, plus eps (Blasiok, Gopalan, Hu and Nakkiran 2023).

    For eps in 1, 1/2, ..., 1/1024 (``INTCE_WIDTHS``, relplot's ``intCE_rand``): the bins
    [k eps - s, (k + 1) eps - s) with s uniform on [0, eps), the binned error
    (1/T) sum_k |sum of (p - y) over the rounds in bin k|, its expectation over s (computed
    exactly, where relplot averages 100 random shifts), plus eps; the least of these. It is an
    upper bound of the distance to calibration up to constants, and never below the width that
    attains it. O(m log m) per width after the table. On a binned table the bin means stand for
    the predictions.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        intCE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> round(intce([0, 1, 1, 0], [0.25, 0.25, 0.75, 0.75]), 6)
    0.250977
    """
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    q, n, s = st.table()
    q = np.asarray(q, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    r = q * n - np.asarray(s, dtype=np.float64)
    T = float(n.sum())
    return float(min(_expected_binned_error(q, r, T, eps) + eps for eps in INTCE_WIDTHS))
