"""The lower distance to calibration and the interval calibration error of Blasiok, Gopalan, Hu
and Nakkiran ("A Unifying Theory of Distance from Calibration", STOC 2023, arXiv 2211.16886):
:func:`ldtc` and :func:`intce` (docs/distance-to-calibration.md).

The lower distance to calibration of a table of predictions u with outcomes y is the least
E|u - v| over joint laws of (u, v, y) that keep the law of (u, y) and make v calibrated,
E[y | v] = v: how far the predictions must move, on average, to become calibrated, when the
move may be randomised. :func:`ldtc` computes it by a linear program (scipy's HiGHS) over
couplings to calibrated values on a grid, with a proven bracket.

The interval calibration error is a binned error with the bins' width as a penalty, minimised
over the partitions of [0, 1] into intervals; :func:`intce` computes it exactly by a dynamic
programme over consecutive groups of buckets, or, with ``method="shifted"``, as the authors'
relplot package does (``intCE_rand``: equal-width bins under a uniformly random shift, the
widths 1, 1/2, ..., 1/512), with the expectation over the shift computed exactly.

Both sit within constant factors (smCE) or a square root (intCE) of each other and of
:func:`fastcdl.smce`: smCE <= 2 LDTC <= 4 smCE, LDTC <= intCE <= LDTC + 2 sqrt(2 LDTC), smCE <= intCE.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_count, check_name

__all__ = [
    "LDTC",
    "ldtc",
    "intce",
    "LDTC_MAX_VARIABLES",
    "LDTC_REBIN_BUCKETS",
    "LDTC_MIN_GRID",
    "INTCE_MAX_BUCKETS",
    "INTCE_WIDTHS",
]

#: The largest linear program :func:`ldtc` builds: (bucket, outcome) pairs of positive mass
#: times grid points. About 2 s with HiGHS's interior-point method on a loaded 2-core machine
#: (docs/distance-to-calibration.md).
LDTC_MAX_VARIABLES = 120_000

#: The equal-width bins a table is rebinned to when its default program would pass the limit.
LDTC_REBIN_BUCKETS = 100

#: The fewest uniform grid intervals the default grid may have before the table is rebinned.
LDTC_MIN_GRID = 50

#: The most buckets :func:`intce` takes with ``method="partition"`` (an O(m^2) programme).
INTCE_MAX_BUCKETS = 20_000

#: relplot's bin widths for ``intce(method="shifted")``: 1, 1/2, ..., 1/512 (``eps=0.001``).
INTCE_WIDTHS = tuple(2.0**-k for k in range(10))


@dataclass(frozen=True)
class LDTC:
    """The lower distance to calibration of a table, bracketed.

    Attributes
    ----------
    value : float
        The linear program's value: the least E|u - v| over couplings of the (possibly rebinned)
        table to calibrated values on the grid.
    error_bound : float
        The largest distance of the table's true lower distance to calibration from ``value``:
        grid_spacing / 2 + moved. The true value lies in [lower, upper].
    lower, upper : float
        max(value - grid_spacing / 2 - moved, 0) and value + moved.
    grid_spacing : float
        The largest gap between consecutive grid points (the grid holds 0, 1, every prediction
        of the program's table and the uniform or given points).
    moved : float
        The mean distance the predictions moved when the table was rebinned (each to its bin's
        mean prediction), or 0.
    buckets : int
        The buckets of the program's table.
    variables : int
        The program's variables: (bucket, outcome) pairs of positive mass times grid points.
    method : str
        "lp" (the table itself) or "lp on k bins" (the table rebinned to k equal-width bins).

    Examples
    --------
    >>> r = ldtc([0, 1, 1, 1], [0.25, 0.25, 0.75, 0.75], grid=4)
    >>> round(r.value, 6), r.grid_spacing, r.lower <= r.value <= r.upper
    (0.25, 0.25, True)
    """

    value: float
    error_bound: float
    lower: float
    upper: float
    grid_spacing: float
    moved: float
    buckets: int
    variables: int
    method: str


def _ldtc_program(q, n, s, grid):
    """min sum |q_i - v_j| x_ijy over x >= 0 with every bucket's outcome masses kept,
    sum_j x_ijy = mass_iy, and every level calibrated, sum_iy (y - v_j) x_ijy = 0.
    Only the (i, y) of positive mass get variables. Sparse; HiGHS's interior-point method
    with crossover (a vertex, as the simplex would give: its dual simplex took 30 s on
    programs the interior-point method solves in 1 s)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack

    T = n.sum()
    mass = np.concatenate([(n - s) / T, s / T])
    atom_q = np.concatenate([q, q])
    atom_y = np.concatenate([np.zeros(q.shape[0]), np.ones(q.shape[0])])
    keep = mass > 0
    mass, atom_q, atom_y = mass[keep], atom_q[keep], atom_y[keep]
    a, G = mass.shape[0], grid.shape[0]
    # variable k = atom * G + level
    atom = np.repeat(np.arange(a), G)
    level = np.tile(np.arange(G), a)
    cols = np.arange(a * G)
    A_mass = coo_matrix((np.ones(a * G), (atom, cols)), shape=(a, a * G))
    A_cal = coo_matrix((atom_y[atom] - grid[level], (level, cols)), shape=(G, a * G))
    res = linprog(
        np.abs(atom_q[atom] - grid[level]),
        A_eq=vstack([A_mass, A_cal]).tocsr(),
        b_eq=np.concatenate([mass, np.zeros(G)]),
        bounds=(0, None),
        method="highs-ipm",
    )
    if res.status != 0:
        raise RuntimeError(f"the LDTC linear program did not solve: {res.message}")
    return max(float(res.fun), 0.0)


def _atoms(n, s):
    """The (bucket, outcome) pairs of positive mass."""
    return int(np.count_nonzero(n - s > 0) + np.count_nonzero(s > 0))


def _rebin(q, n, s, k):
    """The table in k equal-width bins, each bucket at its bin's mean prediction, and the mean
    distance the predictions moved."""
    idx = np.minimum((q * k).astype(np.int64), k - 1)
    nb = np.bincount(idx, n, minlength=k)
    sb = np.bincount(idx, s, minlength=k)
    qb = np.bincount(idx, q * n, minlength=k)
    full = nb > 0
    qb[full] /= nb[full]
    moved = float(np.dot(n, np.abs(q - qb[idx])) / n.sum())
    return np.minimum(qb[full], 1.0), nb[full], sb[full], moved


def _check_grid(grid):
    """An int K (the points k / K) or an array of points, strictly increasing, in [0, 1]."""
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        K = check_count(grid, "grid", 1)
        return np.arange(K + 1) / K
    shape = "must be a positive integer or a non-empty 1-D array of points"
    if isinstance(grid, (bool, str, bytes)) or np.ndim(grid) != 1:
        raise ValidationError("grid", shape, message=f"grid {shape}, got {grid!r}")
    try:
        pts = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError("grid", shape, message=f"grid {shape}, got {grid!r}") from None
    if pts.shape[0] == 0:
        raise ValidationError("grid", shape, message=f"grid {shape}, got an empty array")
    bad = np.flatnonzero(~np.isfinite(pts) | (pts < 0) | (pts > 1))
    if bad.shape[0]:
        raise ValidationError("grid", "must lie in [0, 1]", index=int(bad[0]), value=float(pts[bad[0]]))
    down = np.flatnonzero(np.diff(pts) <= 0)
    if down.shape[0]:
        i = int(down[0]) + 1
        raise ValidationError("grid", "must be strictly increasing", index=i, value=float(pts[i]))
    return pts


def _too_large(count, m, G):
    return ValidationError(
        "grid",
        "is too large for the table",
        value=int(count),
        message=f"grid: {G} grid points with {m} buckets make a linear program of {count:,} variables, "
        f"more than LDTC_MAX_VARIABLES = {LDTC_MAX_VARIABLES:,}: use a coarser grid, bin the predictions "
        "(bins=...), leave grid out to let the table be rebinned, or use fastcdl.smce (within a factor 2, "
        "O(m log m))",
    )


@accepts_multiclass("report")
@fill_docstring
def ldtc(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", grid=None) -> LDTC:
    """The lower distance to calibration (Blasiok, Gopalan, Hu and Nakkiran 2023), by a linear
    program on a grid, with a proven bracket.

    LDTC = inf E|u - v| over joint laws of (u, v, y) with (u, y) distributed as the table's
    rounds and E[y | v] = v. The program restricts v to a grid G holding 0, 1, every prediction
    and a uniform grid (or the given points); with h the largest gap of G,
    LDTC <= value <= LDTC + h / 2, since a calibrated level v in (g, g + h) splits into levels
    g and g + h (shares (g + h - v) / h and (v - g) / h of either outcome's mass in proportion)
    that stay calibrated and move the mass by 2 (v - g)(g + h - v) / h <= h / 2 on average.
    The program has a x G variables (a <= 2 m the (bucket, outcome) pairs of positive mass, G the
    grid points) and
    may not pass LDTC_MAX_VARIABLES. The default grid is the finest uniform one within that
    limit (at most 1000 intervals); when that leaves fewer than LDTC_MIN_GRID intervals, the
    table is first rebinned to LDTC_REBIN_BUCKETS equal-width bins, each prediction moving to its
    bin's mean, which moves LDTC by at most the mean distance moved (``moved``, below the bin
    width): the bracket widens by it on both sides and ``method`` says so. Cost: one sparse
    linear program (HiGHS), about 2 s at the limit. :func:`fastcdl.smce` is the O(m log m)
    alternative within a factor 2. On a table of continuous scores (one round per bucket) it
    is the distance of the sample, not of the model.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    grid : int or array-like, optional
        K: the uniform points k / K besides the predictions, 0 and 1 (spacing 1 / K). An array:
        those points, strictly increasing in [0, 1], besides the predictions, 0 and 1. Default:
        the finest uniform grid within LDTC_MAX_VARIABLES, at most K = 1000. A given grid is
        never rebinned for: a program too large raises.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    LDTC
        ``value``, its bracket ``lower``..``upper`` and ``error_bound``; the mean over the classes
        with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for a grid that is not a positive integer or an increasing array in [0, 1], or
        that makes a program of more than LDTC_MAX_VARIABLES variables with the table.

    Examples
    --------
    >>> r = ldtc([0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5], grid=10)
    >>> round(r.value, 6), round(r.error_bound, 6), r.method
    (0.0, 0.05, 'lp')
    """
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    points = None if grid is None else _check_grid(grid)
    q, n, s = (np.asarray(a, dtype=np.float64) for a in st.table())
    moved, method = 0.0, "lp"
    m, a = q.shape[0], _atoms(n, s)
    if points is None:
        K = min(1000, LDTC_MAX_VARIABLES // a - m - 1)
        if K < LDTC_MIN_GRID:
            q, n, s, moved = _rebin(q, n, s, LDTC_REBIN_BUCKETS)
            m, a = q.shape[0], _atoms(n, s)
            method = f"lp on {LDTC_REBIN_BUCKETS} bins"
            K = min(1000, LDTC_MAX_VARIABLES // a - m - 1)
        points = np.arange(K + 1) / K
    G = np.unique(np.concatenate([points, q, [0.0, 1.0]]))
    if a * G.shape[0] > LDTC_MAX_VARIABLES:
        raise _too_large(a * G.shape[0], m, G.shape[0])
    h = float(np.diff(G).max())
    value = _ldtc_program(q, n, s, G)
    return LDTC(
        value=value,
        error_bound=h / 2 + moved,
        lower=max(value - h / 2 - moved, 0.0),
        upper=value + moved,
        grid_spacing=h,
        moved=moved,
        buckets=int(m),
        variables=int(a * G.shape[0]),
        method=method,
    )


def _intce_partition(q, n, r, T):
    """min over groupings of the sorted buckets into consecutive groups of
    sum_groups |sum r_i| + (q_last - q_first) sum n_i, over T: O(m^2) time, O(m) memory."""
    m = q.shape[0]
    R = np.concatenate([[0.0], np.cumsum(r)])
    N = np.concatenate([[0.0], np.cumsum(n)])
    best = np.empty(m + 1)
    best[0] = 0.0
    for j in range(1, m + 1):
        best[j] = np.min(best[:j] + np.abs(R[j] - R[:j]) + (q[j - 1] - q[:j]) * (N[j] - N[:j]))
    return float(best[m] / T)


def _expected_binned_error(q, r, T, eps):
    """E over a shift u ~ U[0, eps) of (1/T) sum_k |sum of r_i over q_i + u in [k eps, (k+1) eps)|.

    At u = 0 bucket i is in bin k_i = floor(q_i / eps); it moves to bin k_i + 1 at
    u = eps - (q_i - k_i eps) (never, when that is eps). Each bin's sum is piecewise constant
    between the moves that touch it, so the expectation is a sum over the events of each bin,
    sorted by bin and time: O(m log m), no loop over buckets."""
    k0 = np.floor(q / eps).astype(np.int64)
    at = eps - (q - k0 * eps)
    move = at < eps
    B0 = np.bincount(k0, r, minlength=int(k0.max()) + 2)
    # each move: leaves bin k0 (-r) and enters bin k0 + 1 (+r) at the same time
    ev_bin = np.concatenate([k0[move], k0[move] + 1])
    ev_at = np.concatenate([at[move], at[move]])
    ev_d = np.concatenate([-r[move], r[move]])
    order = np.lexsort((ev_at, ev_bin))
    ev_bin, ev_at, ev_d = ev_bin[order], ev_at[order], ev_d[order]
    # the bin's sum after each event: its start value plus the events so far in the bin
    first = np.ones(ev_bin.shape[0], dtype=bool)
    first[1:] = ev_bin[1:] != ev_bin[:-1]
    csum = np.cumsum(ev_d)
    start_of_group = np.maximum.accumulate(np.where(first, np.arange(ev_bin.shape[0]), 0))
    before = np.concatenate([[0.0], csum])[start_of_group]
    after = B0[ev_bin] + csum - before
    last = np.ones(ev_bin.shape[0], dtype=bool)
    last[:-1] = ev_bin[:-1] != ev_bin[1:]
    until = np.where(last, eps, np.concatenate([ev_at[1:], [eps]]))
    total = float(np.dot(np.abs(after), until - ev_at))
    # each bin's start value holds until its first event, or all along
    first_at = np.full(B0.shape[0], eps)
    first_at[ev_bin[first]] = ev_at[first]
    total += float(np.dot(np.abs(B0), first_at))
    return total / eps / T


@accepts_multiclass()
@fill_docstring
def intce(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", method="partition") -> float:
    """The interval calibration error (Blasiok, Gopalan, Hu and Nakkiran 2023).

    ``method="partition"`` (the paper's definition, exactly): the least, over partitions of
    [0, 1] into intervals I, of sum_I abs(E[(u - y) 1{u in I}]) + sum_I length(I) P(u in I). An interval
    holds consecutive buckets and need be no wider than their spread (the gaps go to empty
    intervals, which cost nothing), so it is the least over groupings of the sorted buckets
    into consecutive groups of (1/T) sum_groups (abs(sum_i (q_i n_i - s_i)) + (q_last - q_first)
    sum_i n_i): a dynamic programme, O(m^2) time, at most INTCE_MAX_BUCKETS buckets.
    ``method="shifted"`` (relplot's ``intCE_rand``): for eps in 1, 1/2, ..., 1/512
    (INTCE_WIDTHS), the bins [k eps - u, (k + 1) eps - u) with u uniform on [0, eps), the
    expected binned error over u plus eps, least over eps; the expectation is computed
    exactly (relplot draws 100 shifts): O(m log m) per width. It is never below the partition
    value. LDTC <= intCE <= LDTC + 2 sqrt(2 LDTC) and smCE <= intCE <= ECE. On a binned table
    the bin means stand for the predictions.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    method : {"partition", "shifted"}, default "partition"
        The least over all interval partitions, or relplot's random-shift version.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        intCE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for an unknown method, or a table of more than INTCE_MAX_BUCKETS buckets with
        ``method="partition"`` (bin the predictions, or use ``method="shifted"``).

    Examples
    --------
    >>> intce([0, 1, 1, 0], [0.25, 0.25, 0.75, 0.75])
    0.25
    >>> round(intce([0, 1, 1, 0], [0.25, 0.25, 0.75, 0.75], method="shifted"), 6)
    0.251953
    """
    check_name(method, ("partition", "shifted"), "method")
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    q, n, s = (np.asarray(a, dtype=np.float64) for a in st.table())
    r = q * n - s
    T = float(n.sum())
    if method == "shifted":
        return float(min(_expected_binned_error(q, r, T, eps) + eps for eps in INTCE_WIDTHS))
    if q.shape[0] > INTCE_MAX_BUCKETS:
        raise ValidationError(
            "bins",
            "must make at most INTCE_MAX_BUCKETS buckets",
            value=int(q.shape[0]),
            message=f"bins: the table has {q.shape[0]:,} buckets, more than INTCE_MAX_BUCKETS = "
            f"{INTCE_MAX_BUCKETS:,} for the O(m^2) programme of intce(method='partition'): bin the "
            "predictions (bins='auto', strategy='quantile') or use method='shifted'",
        )
    return _intce_partition(q, n, r, T)
