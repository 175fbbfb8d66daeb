"""Uncertainty on a bucket table: bootstrap intervals and a test of perfect calibration.

Both resample the bucket table, never the raw arrays, so a replicate costs O(m) (m buckets)
whatever the number of rounds T, and any metric that takes a :class:`~fastcdl.BucketStats`
can be used: fc.cdl, fc.ece, fc.cdl_monotone, fc.cutoff_ce, fc.smce, ... (docs/estimators.md).

- :func:`bootstrap`: rounds are drawn with replacement. A replicate draws the counts of the
  2m cells (bucket i, y) from a multinomial with probabilities (n_i - s_i)/T and s_i/T; each
  bucket keeps its value q_i. Percentile or BCa intervals.
- :func:`calibration_test`: consistency resampling (Broecker and Smith 2007). Under perfect
  calibration s_i ~ Binomial(n_i, q_i); the p-value compares the metric of the table with
  its values on n_sim such tables.

Both are seeded and reproducible: the same table and seed give the same numbers, so a
table merged from chunks gives the same interval as the table of all the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl import _validate
from fastcdl._kernels import resample as _k
from fastcdl.measures import MEASURES
from fastcdl.metrics import _stats, sample_size_check_off
from fastcdl.stats import BucketStats, bin_cuts

__all__ = ["bootstrap", "calibration_test", "default_interval", "BootstrapResult", "CalibrationTest", "METRICS"]

# Metrics that may be named by a string (each takes a BucketStats): every measure of
# fastcdl.measures.
METRICS = tuple(MEASURES)

# Cells per batch of replicates drawn at once (bounds the memory of the count arrays).
_BATCH_CELLS = 1 << 21


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap interval.

    Attributes
    ----------
    value : float
        The metric of the table itself.
    lo, hi : float
        The interval's ends.
    level : float
        Its nominal coverage.
    method : str
        "percentile" or "bca".
    n_boot : int
        The number of replicates.
    replicates : ndarray of float64
        The metric on each replicate table.

    Examples
    --------
    >>> import fastcdl as fc
    >>> r = fc.bootstrap("ece", [0, 1, 1, 0, 1, 1], [0.2, 0.8, 0.8, 0.2, 0.6, 0.6], n_boot=200, seed=0)
    >>> r.n_boot, r.replicates.shape
    (200, (200,))
    """

    value: float
    lo: float
    hi: float
    level: float
    method: str
    n_boot: int
    replicates: np.ndarray

    def __repr__(self) -> str:
        return (
            f"BootstrapResult(value={self.value:.6g}, {100 * self.level:g}% {self.method} interval "
            f"[{self.lo:.6g}, {self.hi:.6g}], n_boot={self.n_boot})"
        )


@dataclass(frozen=True)
class CalibrationTest:
    """A consistency-resampling test of perfect calibration.

    Attributes
    ----------
    statistic : float
        The metric of the table.
    p_value : float
        (1 + #{null >= statistic}) / (1 + n_sim).
    n_sim : int
        The number of tables simulated under perfect calibration.
    metric : str
        The metric's name.
    null : ndarray of float64
        The metric on each simulated table.

    Examples
    --------
    >>> import fastcdl as fc
    >>> t = fc.calibration_test([0, 1] * 50, [0.5] * 100, n_sim=99, seed=0)
    >>> t.metric, t.n_sim, t.null.shape
    ('cutoff_ce', 99, (99,))
    """

    statistic: float
    p_value: float
    n_sim: int
    metric: str
    null: np.ndarray

    def __repr__(self) -> str:
        return (
            f"CalibrationTest({self.metric} = {self.statistic:.6g}, p_value={self.p_value:.4g}, "
            f"n_sim={self.n_sim})"
        )


# --------------------------------------------------------------------------------------
# helpers


def _metric(metric):
    """(callable, name) from a callable or the name of a fastcdl metric."""
    if isinstance(metric, str):
        _validate.check_name(metric, METRICS, "metric")
        return MEASURES[metric].func, metric
    if not callable(metric):
        raise _validate.ValidationError(
            "metric", "must be a callable taking a BucketStats or a metric name",
            message=f"metric must be a callable taking a BucketStats, or one of {', '.join(METRICS)}; got {metric!r}",
        )
    return metric, getattr(metric, "__name__", type(metric).__name__)


def _rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(_validate.check_seed(seed))


def _weighted_stats_error():
    return _validate.ValidationError(
        "y_true", "is a weighted BucketStats",
        message="a weighted BucketStats does not keep the weights of its rounds, which resampling needs: "
        "pass y_true, y_prob and sample_weight instead",
    )


@dataclass(frozen=True)
class _Cells:
    """A table and its cells: bucket index, outcome, round weight and number of rounds."""

    stats: BucketStats
    bucket: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    count: np.ndarray


def _cells(y_true, y_prob, bins, sample_weight, by_outcome: bool, strategy="uniform") -> _Cells:
    """The table of the data and its cells; by_outcome=False merges the two outcomes of a
    (bucket, weight) cell (consistency resampling redraws the outcomes)."""
    st = _stats(y_true, y_prob, bins, sample_weight, strategy=strategy)
    m = st.n_buckets
    if not st.weighted:
        n = st.counts.astype(np.int64)
        s = st.positives.astype(np.int64)
        idx = np.arange(m, dtype=np.int64)
        if by_outcome:
            bucket = np.concatenate([idx, idx])
            y = np.concatenate([np.zeros(m, np.int64), np.ones(m, np.int64)])
            count = np.concatenate([n - s, s])
        else:
            bucket, y, count = idx, np.zeros(m, np.int64), n
        keep = count > 0
        return _Cells(st, bucket[keep], y[keep], np.ones(int(keep.sum())), count[keep])
    if isinstance(y_true, BucketStats):
        raise _weighted_stats_error()
    # weighted rounds: one cell per distinct (bucket, outcome, weight)
    yy, p, w = _validate.prepare_rounds(y_true, y_prob, sample_weight)
    rows = w > 0
    yy, p, w = yy[rows], p[rows], w[rows]
    if st.edges is None:
        b = np.searchsorted(st.values, p)
    else:
        b = np.searchsorted(st.bins, np.searchsorted(bin_cuts(st.edges)[1:-1], p, side="left"))
    yk = yy.astype(np.int64) if by_outcome else np.zeros(yy.shape[0], np.int64)
    order = np.lexsort((w, yk, b))
    b, yk, w = b[order], yk[order], w[order]
    start = np.flatnonzero(np.r_[True, (b[1:] != b[:-1]) | (yk[1:] != yk[:-1]) | (w[1:] != w[:-1])])
    count = np.diff(np.r_[start, b.shape[0]]).astype(np.int64)
    return _Cells(st, b[start].astype(np.int64), yk[start], w[start].copy(), count)


def _replicate(st: BucketStats, n, s) -> BucketStats:
    """The table with counts n and positives s at the same bucket values (empty buckets dropped)."""
    keep = n > 0
    q = st.values[keep]
    n, s = n[keep], s[keep]
    bins = None if st.bins is None else st.bins[keep]
    return BucketStats(q, n, s, q * n, st.edges, bins)


def _batches(total, cells):
    size = max(1, _BATCH_CELLS // max(cells, 1))
    for start in range(0, total, size):
        yield min(size, total - start)


# --------------------------------------------------------------------------------------
# bootstrap


def bootstrap(metric, y_true, y_prob=None, *, n_boot=1000, level=0.95, method="percentile", seed=None,
              sample_weight=None, bins=None, strategy="uniform") -> BootstrapResult:
    """Bootstrap interval of ``metric`` over rounds, drawn on the bucket table.

    metric: a callable taking a BucketStats (fc.cdl, fc.smce, your own, ...) or the name of a
    fastcdl metric ("cdl", "cutoff_ce", ...; see METRICS). A replicate draws T rounds with
    replacement as counts of the cells (bucket i, y): a multinomial with probabilities
    (n_i - s_i)/T and s_i/T, O(m) per replicate whatever T. Every bucket keeps its value q_i:
    exact for exact buckets (bins=None); on binned tables the bin's mean prediction is held
    fixed rather than recomputed from the resampled rounds. ``bins`` and ``strategy`` are
    as in :func:`fastcdl.bucket_stats`; quantile edges are those of the data, held fixed
    across replicates.

    method="percentile": the (1 - level)/2 and (1 + level)/2 quantiles of the replicates.
    method="bca": bias-corrected and accelerated (Efron 1987), the acceleration from the
    jackknife over rounds, which needs one metric evaluation per cell (2m for unweighted
    tables) on top of the replicates.

    With sample_weight (raw arrays only) the cells are the distinct (bucket, y, weight)
    triples and each drawn round carries its weight. A weighted BucketStats does not keep
    its rounds' weights and is refused (ValueError).

    seed: None (fresh entropy), an integer, or a numpy Generator. The same table and seed
    give the same interval, so merging tables and then bootstrapping equals bootstrapping
    the merged data.

    Parameters
    ----------
    metric : callable or str
        A callable taking a BucketStats (fc.cdl, fc.smce, your own, ...) or the key of a
        measure of :data:`fastcdl.MEASURES` ("cdl", "cutoff_ce", ...).
    y_true : array-like of shape (T,), or BucketStats
        The outcomes 0/1, or an unweighted bucket table in place of both arrays.
    y_prob : array-like of shape (T,), optional
        The predictions; left out with a BucketStats.
    n_boot : int, default 1000
        Replicates, at least 2.
    level : float, default 0.95
        The nominal coverage, in (0, 1).
    method : {"percentile", "bca"}, default "percentile"
        The interval.
    seed : None, int or numpy.random.Generator, optional
        None draws fresh entropy.
    sample_weight : array-like of shape (T,), optional
        Weights of the rounds (raw arrays only).
    bins, strategy
        As in :func:`fastcdl.bucket_stats`.

    Returns
    -------
    BootstrapResult
        The value, the interval and the replicates.

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown metric name, bad options or rounds, or a weighted
        BucketStats (it does not keep its rounds' weights).

    Examples
    --------
    >>> import fastcdl as fc
    >>> r = bootstrap(fc.ece, [0, 1, 1, 0, 1, 1], [0.2, 0.8, 0.8, 0.2, 0.6, 0.6], n_boot=200, seed=0)
    >>> r.method, r.lo <= r.value <= r.hi
    ('percentile', True)
    """
    func, _ = _metric(metric)
    n_boot = _validate.check_count(n_boot, "n_boot", 2)
    level = _validate.check_real(level, "level", 0.0, 1.0, low_open=True)
    if level >= 1.0:
        raise _validate.ValidationError("level", "must be < 1", value=level)
    method = _validate.check_name(method, ("percentile", "bca"), "method")
    rng = _rng(seed)
    cells = _cells(y_true, y_prob, bins, sample_weight, by_outcome=True, strategy=strategy)
    st = cells.stats
    value = float(func(st))
    K = int(cells.count.sum())
    pvals = cells.count / K
    m = st.n_buckets
    integer = not st.weighted
    reps = np.empty(n_boot)
    k = 0
    with sample_size_check_off():  # the table itself was checked above; its replicates are not
        for size in _batches(n_boot, cells.count.shape[0]):
            counts = rng.multinomial(K, pvals, size=size)
            n, s = _k.scatter_cells(counts, cells.bucket, cells.y, cells.weight, m)
            if integer:
                n, s = n.astype(np.int64), s.astype(np.int64)
            for b in range(size):
                reps[k] = func(_replicate(st, n[b], s[b]))
                k += 1
        alpha = (1.0 - level) / 2.0
        if method == "percentile":
            lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
        else:
            lo, hi = _bca(func, cells, value, reps, alpha)
    return BootstrapResult(value=value, lo=float(lo), hi=float(hi), level=level, method=method,
                           n_boot=n_boot, replicates=reps)


def _bca(func, cells: _Cells, value, reps, alpha):
    """BCa interval ends: bias correction from the share of replicates below the value, the
    acceleration from the jackknife over rounds (one table per cell, weighted by its count)."""
    from scipy.special import ndtr, ndtri  # imported on use: scipy.special is slow to import

    B = reps.shape[0]
    share = (np.sum(reps < value) + 0.5 * np.sum(reps == value)) / B
    if share <= 0.0 or share >= 1.0:
        # every replicate on one side of the value: the bias correction is infinite and the
        # interval undefined (typical of a metric near 0, where the plug-in value is biased)
        return np.nan, np.nan
    z0 = float(ndtri(share))
    st = cells.stats
    K = int(cells.count.sum())
    a = 0.0
    if K >= 2:
        m = st.n_buckets
        base_n = np.zeros(m)
        base_s = np.zeros(m)
        np.add.at(base_n, cells.bucket, cells.count * cells.weight)
        np.add.at(base_s, cells.bucket, cells.count * cells.weight * (cells.y != 0))
        rows = np.bincount(cells.bucket, weights=cells.count, minlength=m)
        theta = np.empty(cells.count.shape[0])
        for c in range(theta.shape[0]):
            n, s = base_n.copy(), base_s.copy()
            i = cells.bucket[c]
            if rows[i] == 1:  # the bucket's only round: the bucket goes
                n[i] = s[i] = 0.0
            else:
                n[i] -= cells.weight[c]
                if cells.y[c]:
                    s[i] -= cells.weight[c]
                s[i] = min(max(s[i], 0.0), n[i])
            if not st.weighted:
                n, s = np.rint(n).astype(np.int64), np.rint(s).astype(np.int64)
            theta[c] = func(_replicate(st, n, s))
        wts = cells.count.astype(np.float64)
        mean = np.sum(wts * theta) / K
        d = mean - theta
        denom = np.sum(wts * d * d)
        if denom > 0.0:
            a = float(np.sum(wts * d**3) / (6.0 * denom**1.5))
    ends = []
    for z in (ndtri(alpha), ndtri(1.0 - alpha)):
        t = z0 + z
        den = 1.0 - a * t
        q = float(ndtr(z0 + t / den)) if den > 0.0 else (1.0 if z > 0 else 0.0)
        ends.append(min(max(q, 0.0), 1.0))
    return np.quantile(reps, ends)


# --------------------------------------------------------------------------------------
# consistency resampling


def calibration_test(y_true, y_prob=None, *, metric="cutoff_ce", n_sim=1000, seed=None,
                     sample_weight=None, bins=None, strategy="uniform") -> CalibrationTest:
    """Test of perfect calibration by consistency resampling (Broecker and Smith 2007).

    Under the hypothesis y_t ~ Bernoulli(p_t) independently, a bucket's positives are
    s_i ~ Binomial(n_i, q_i). The test simulates n_sim such tables (same q_i and n_i), computes
    ``metric`` on each and returns p = (1 + #{stat* >= stat}) / (1 + n_sim): a valid p-value
    for any metric (exactly so for exact buckets, by exchangeability). O(m) per simulation.

    metric: a callable taking a BucketStats or a fastcdl metric name (default "cutoff_ce",
    which has power against any bias that is consistent over an interval of predictions).

    On binned tables the simulation draws Binomial(n_i, q_i) with q_i the bin's mean
    prediction; the null variance of a bin is then n_i q_i (1 - q_i), at least the true
    sum_t p_t (1 - p_t) (the table does not carry sums of p^2), so the test is approximate
    there (typically conservative). With sample_weight (raw arrays only) each distinct
    (bucket, weight) cell is redrawn: s_i = sum over cells of w Binomial(count, q_i).

    Parameters
    ----------
    y_true : array-like of shape (T,), or BucketStats
        The outcomes 0/1, or an unweighted bucket table in place of both arrays.
    y_prob : array-like of shape (T,), optional
        The predictions; left out with a BucketStats.
    metric : callable or str, default "cutoff_ce"
        A callable taking a BucketStats or the key of a measure of :data:`fastcdl.MEASURES`.
    n_sim : int, default 1000
        Tables simulated under perfect calibration.
    seed : None, int or numpy.random.Generator, optional
        None draws fresh entropy.
    sample_weight : array-like of shape (T,), optional
        Weights of the rounds (raw arrays only).
    bins, strategy
        As in :func:`fastcdl.bucket_stats`.

    Returns
    -------
    CalibrationTest
        The statistic, the p-value and the simulated values.

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown metric name, bad options or rounds, or a weighted
        BucketStats.

    Examples
    --------
    >>> r = calibration_test([0, 1] * 50, [0.5] * 100, n_sim=99, seed=0)
    >>> r.statistic, r.p_value
    (0.0, 1.0)
    """
    func, name = _metric(metric)
    n_sim = _validate.check_count(n_sim, "n_sim", 1)
    rng = _rng(seed)
    cells = _cells(y_true, y_prob, bins, sample_weight, by_outcome=False, strategy=strategy)
    st = cells.stats
    stat = float(func(st))
    m = st.n_buckets
    prob = st.values[cells.bucket]
    null = np.empty(n_sim)
    k = 0
    with sample_size_check_off():  # the simulated tables have the buckets of the table checked above
        for size in _batches(n_sim, cells.count.shape[0]):
            draws = rng.binomial(cells.count, prob, size=(size, cells.count.shape[0]))
            s = _k.scatter_positives(draws, cells.bucket, cells.weight, m)
            if not st.weighted:
                s = s.astype(np.int64)
            for b in range(size):
                null[k] = func(BucketStats(st.values, st.counts, s[b], st.prob_sums, st.edges, st.bins))
                k += 1
    p = (1.0 + np.count_nonzero(null >= stat)) / (1.0 + n_sim)
    return CalibrationTest(statistic=stat, p_value=float(p), n_sim=n_sim, metric=name, null=null)


def default_interval(metric, stats, *, level=0.95, n_boot=1000, seed=0):
    """The documented default interval of the measure ``metric`` (a key of fastcdl.measures)
    on the table ``stats``, as a fastcdl.summary.Interval: the percentile bootstrap over
    rounds (:func:`bootstrap`), seeded. docs/estimators.md says where it covers.

    Parameters
    ----------
    metric : str
        A key of :data:`fastcdl.MEASURES`.
    stats : BucketStats
        The table.
    level : float, default 0.95
        The nominal coverage.
    n_boot : int, default 1000
        Replicates.
    seed : int, default 0
        Seeds the resampling.

    Returns
    -------
    fastcdl.summary.Interval

    Examples
    --------
    >>> import fastcdl as fc
    >>> st = fc.bucket_stats([0, 1, 1, 0, 1, 1], [0.2, 0.8, 0.8, 0.2, 0.6, 0.6])
    >>> default_interval("ece", st, n_boot=200).method
    'percentile bootstrap'
    """
    from fastcdl.summary import Interval

    r = bootstrap(metric, stats, n_boot=n_boot, level=level, seed=seed)
    return Interval(r.lo, r.hi, r.level, "percentile bootstrap")
