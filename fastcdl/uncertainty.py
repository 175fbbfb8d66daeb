"""Uncertainty on a bucket table: intervals (debiased by subsampling, or bootstrap) and a test of perfect calibration.

All three resample the bucket table, never the raw arrays, so a replicate costs O(m) (m
buckets) whatever the number of rounds T (interval: O(T) per split of the rounds), and any metric that takes a :class:`~fastcdl.BucketStats`
can be used: fc.cdl, fc.ece, fc.cdl_monotone, fc.cutoff_ce, fc.smce, ... (docs/estimators.md).

- :func:`bootstrap`: rounds are drawn with replacement. A replicate draws the counts of the
  2m cells (bucket i, y) from a multinomial with probabilities (n_i - s_i)/T and s_i/T; each
  bucket keeps its value q_i. Percentile or BCa intervals.
- :func:`interval`: the default interval of the sample estimators. Subsamples of T/4 rounds
  drawn without replacement give a debiased estimate (a Richardson extrapolation in T) and
  the estimate's spread; it covered where percentile and BCa bootstrap intervals of these
  estimators did not (results/estimators-coverage).
- :func:`calibration_test`: consistency resampling (Broecker and Smith 2007). Under perfect
  calibration s_i ~ Binomial(n_i, q_i); the p-value compares the metric of the table with
  its values on n_sim such tables.

All are seeded and reproducible: the same table and seed give the same numbers, so a
table merged from chunks gives the same interval as the table of all the data.
"""

from __future__ import annotations

import math
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from fastcdl._parallel import share, share_started
from fastcdl._validate import ValidationError, check_count, check_name, check_real, check_seed, prepare_rounds
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._compiled import resample as _k
from fastcdl._tables.sample_size import sample_size_check_off
from fastcdl._tables.tabulate import stats_of
from fastcdl.measures import TABLE_MEASURES as MEASURES  # the measures of a bucket table
from fastcdl.bucket_table import BucketStats, bin_cuts

__all__ = [
    "bootstrap",
    "calibration_test",
    "interval",
    "intervals",
    "BootstrapResult",
    "CalibrationTest",
    "Interval",
    "CoverageWarning",
    "METRICS",
    "BIAS_RATES",
]


class CoverageWarning(UserWarning):
    """An interval that is known not to cover at its nominal level for this estimator or this
    sample size (results/estimators-coverage, docs/estimators.md)."""


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
    >>> r = fc.bootstrap("ece", [0, 1, 1, 0, 1, 1] * 2, [0.2, 0.8, 0.8, 0.2, 0.6, 0.6] * 2, n_boot=200, seed=0)
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
        (1 + #{null >= statistic}) / (1 + n_sim), never below 1 / (1 + n_sim): when no
        simulated statistic reaches the observed one (``at_floor``), read it as a bound,
        p < 1 / n_sim, as ``p_value_text`` and the repr print it.
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

    @property
    def at_floor(self) -> bool:
        """True when no simulated statistic reached the observed one: the p-value is then the
        smallest the simulation can give, 1 / (1 + n_sim), and says only that the true
        p-value is below about 1 / n_sim (more simulations would resolve it)."""
        return not bool(np.any(self.null >= self.statistic))

    @property
    def p_value_text(self) -> str:
        """The p-value for print: "< 0.001" (1 / n_sim) when at the floor, else the number."""
        if self.at_floor:
            return f"< {1.0 / self.n_sim:.3g}"
        return f"{self.p_value:.4g}"

    def __repr__(self) -> str:
        return f"CalibrationTest({self.metric} = {self.statistic:.6g}, p_value {self.p_value_text}, n_sim={self.n_sim})"


# --------------------------------------------------------------------------------------
# helpers


def _metric(metric):
    """(callable, name) from a callable or the name of a fastcdl metric."""
    if isinstance(metric, str):
        check_name(metric, MEASURES, "metric")  # the registry as it is now (measures.register)
        import fastcdl.exact as _m
        import fastcdl.sample as _s

        # the public function itself where there is one (the fast paths know it by identity),
        # else the registry's (Brier's parts)
        func = getattr(_m, metric, None) or getattr(_s, metric, None) or MEASURES[metric].func
        return func, metric
    if not callable(metric):
        raise ValidationError(
            "metric",
            "must be a callable taking a BucketStats or a metric name",
            message=f"metric must be a callable taking a BucketStats, or one of {', '.join(MEASURES)}; got {metric!r}",
        )
    return metric, getattr(metric, "__name__", type(metric).__name__)


def _cutoff_ce():
    from fastcdl.sample import cutoff_ce

    return cutoff_ce


def _rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(check_seed(seed))


def _weighted_stats_error():
    return ValidationError(
        "y_true",
        "is a weighted BucketStats",
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
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
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
    yy, p, w = prepare_rounds(y_true, y_prob, sample_weight)
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
    return BucketStats._owned(q, n, s, q * n, st.edges, bins)  # arrays made here: frozen, not copied


def _batches(total, cells):
    size = max(1, _BATCH_CELLS // max(cells, 1))
    for start in range(0, total, size):
        yield min(size, total - start)


# --------------------------------------------------------------------------------------
# checks shared by the resampling functions


def _check_resamplable(st: BucketStats, what: str):
    """A table must hold at least 10 rounds in at least 2 buckets to be resampled."""
    T = int(round(st.rounds.sum())) if getattr(st, "rounds", None) is not None else int(round(st.counts.sum()))
    if st.n_buckets < 2 or T < 10:
        raise ValidationError(
            "y_true",
            "is too small to resample",
            message=f"{what}: the table is too small to resample (it needs at least 10 rounds in at least 2 buckets); "
            f"this one has {T} round(s) in {st.n_buckets} bucket(s)",
        )


def _check_level(level):
    level = check_real(level, "level", 0.0, 1.0, low_open=True)
    if level >= 1.0:
        raise ValidationError(
            "level", "must be < 1", value=level, message=f"level must lie strictly between 0 and 1, got {level}"
        )
    return level


# --------------------------------------------------------------------------------------
# bootstrap


@accepts_multiclass("report", lead=1)
def bootstrap(
    metric,
    y_true,
    y_prob=None,
    *,
    n_boot=1000,
    level=0.95,
    method="percentile",
    seed=None,
    sample_weight=None,
    bins=None,
    strategy="uniform",
) -> BootstrapResult:
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
        Replicates, at least 100.
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
        (a ValueError) for an unknown metric name, bad options or rounds, n_boot < 100, a
        level outside (0, 1), a table of fewer than 10 rounds or of one bucket, or a weighted
        BucketStats (it does not keep its rounds' weights).

    Warns
    -----
    CoverageWarning
        For fastcdl's sample estimators (cdl_monotone, vcdl_monotone, cutoff_ce, smce, atb,
        atb_unbiased): these intervals do not cover the population value. The estimates
        are biased upwards by more than their spread, and the replicates carry the same bias
        on top (coverage 0 at nominal 0.95 for CDL_M from 1,000 to 100,000 rounds in
        results/estimators-coverage); use :func:`interval` for them.

    Examples
    --------
    >>> import fastcdl as fc
    >>> r = bootstrap(fc.ece, [0, 1, 1, 0, 1, 1] * 2, [0.2, 0.8, 0.8, 0.2, 0.6, 0.6] * 2, n_boot=200, seed=0)
    >>> r.method, r.lo <= r.value <= r.hi
    ('percentile', True)
    """
    func, name = _metric(metric)
    n_boot = check_count(n_boot, "n_boot", 100)
    level = _check_level(level)
    method = check_name(method, ("percentile", "bca"), "method")
    rng = _rng(seed)
    cells = _cells(y_true, y_prob, bins, sample_weight, by_outcome=True, strategy=strategy)
    st = cells.stats
    _check_resamplable(st, "bootstrap")
    if _studied(func, name):
        warnings.warn(
            CoverageWarning(
                f"bootstrap: {method} intervals of {name} do not cover its population value: the estimate is "
                "biased upwards by more than its standard error on samples of continuous scores (coverage near 0 "
                "at nominal 0.95 for CDL_M at 1,000 to 100,000 rounds; results/estimators-coverage). "
                "Use fastcdl.interval for a debiased estimate with an interval that covers"
            ),
            stacklevel=2,
        )
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
    return BootstrapResult(
        value=value, lo=float(lo), hi=float(hi), level=level, method=method, n_boot=n_boot, replicates=reps
    )


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
# debiased estimate and interval by subsampling

# The rates assumed for the bias of each studied sample estimator, bias ~ c T^-rate, from its
# entry in fastcdl.measures (Measure.bias_rate, where the study's reasons are given): a range
# (lo, hi), a single rate, or None (unbiased).
BIAS_RATES = {m.key: m.bias_rate for m in MEASURES.values() if m.studied}
_DEFAULT_RATES = (0.5, 2.0 / 3.0)

# From this many rounds on, the default interval of each estimator covered at 0.90 or more
# at nominal 0.95 on the study's models; below, interval warns.
_VALIDATED_FROM = 5000


def _sample_estimators():
    return {_sample_fn(name) for name in BIAS_RATES}


def _studied(func, name) -> bool:
    """A sample estimator of the coverage study, named (a key of fastcdl.measures, whose
    function is the registry's wrapper) or passed as the function itself."""
    return (
        name in BIAS_RATES and MEASURES.get(name) is not None and func is MEASURES[name].func
    ) or func in _sample_estimators()


@dataclass(frozen=True)
class Interval:
    """A debiased estimate with its interval, by subsampling (fastcdl.interval).

    Attributes
    ----------
    value : float
        The metric of the table itself (the plug-in estimate).
    estimate : float
        The debiased estimate, value - (mean of subsamples - value) / (4^r - 1) with r the
        largest of the rates (= value when rate is None: the metric is unbiased). It can be
        negative when the population value is near 0.
    lo, hi : float
        The union over the rates r of estimate_r -/+ z sd, z the normal quantile of the
        level and sd = sqrt(b / (T - b)) times the standard deviation of the subsamples
        (b = T/4 rounds each); for fastcdl's non-negative metrics met with [0, inf) (an
        interval wholly below 0 becomes [0, 0]).
    level : float
        The nominal coverage.
    rate : (float, float), float or None
        The bias rates assumed, bias ~ T^-r.
    n_sub : int
        The number of subsamples (four per random split of the rounds).
    subsamples : ndarray of float64
        The metric on each subsample.
    validated : bool or None
        For fastcdl's sample estimators: False when the table has fewer rounds than the
        estimator's ``Measure.validated_from`` (5,000; 50,000 for the cross-fitted CDL_M),
        below the sizes at which this interval was seen to cover, or when the study found no
        valid interval for it (``Measure.interval_fails``; a CoverageWarning says so), else
        True; None for other metrics, which the coverage study did not cover.

    Examples
    --------
    >>> import numpy as np, fastcdl as fc
    >>> rng = np.random.default_rng(1)
    >>> p = rng.random(8000); y = rng.random(8000) < p
    >>> r = fc.interval("smce", y, p, n_sub=100, seed=0)
    >>> r.level, r.n_sub, r.validated, r.subsamples.shape
    (0.95, 100, True, (100,))
    """

    value: float
    estimate: float
    lo: float
    hi: float
    level: float
    rate: tuple | float | None
    n_sub: int
    subsamples: np.ndarray
    validated: bool | None = True

    def __repr__(self) -> str:
        flag = ", not validated at this size" if self.validated is False else ""
        return (
            f"Interval(estimate={self.estimate:.6g} (plug-in {self.value:.6g}), {100 * self.level:g}% interval "
            f"[{self.lo:.6g}, {self.hi:.6g}], n_sub={self.n_sub}{flag})"
        )


@accepts_multiclass("report", lead=1)
def interval(
    metric,
    y_true,
    y_prob=None,
    *,
    level=0.95,
    n_sub=200,
    rate="auto",
    seed=None,
    sample_weight=None,
    bins=None,
    strategy="uniform",
) -> Interval:
    """Debiased estimate of ``metric`` with an interval that covers: the default interval of
    fastcdl's sample estimators (docs/estimators.md, results/estimators-coverage).

    The rounds are split at random into four quarters, n_sub / 4 times (on the bucket table:
    a random permutation of its rounds), so each subsample is b = T/4 rounds drawn without
    replacement: a sample of the population of size T/4. The subsamples' mean therefore
    estimates E[metric at T/4] without bias, and if the bias falls like c T^-r,
    E[metric at T/4] - E[metric at T] = (4^r - 1) bias(T), whence

        estimate_r = value - (mean of subsamples - value) / (4^r - 1).

    The spread of the subsamples estimates the standard deviation at T: for a statistic
    whose spread falls like T^-1/2, sampling b of T rounds without replacement gives the
    variance at T times (T - b) / b (Politis, Romano and Wolf 1999, subsampling), so
    sd = sqrt(b / (T - b)) sd(subsamples). The interval is the union over the assumed rates r
    of estimate_r -/+ z sd, and the reported estimate is estimate_r at the largest r. Percentile
    and BCa bootstrap intervals of these estimators sit above the population value (they
    resample the estimate's bias instead of removing it: coverage near 0); this one covered
    at 0.92 or more at nominal 0.95 at 10^4 rounds on every model of the study.

    Cost: n_sub evaluations of the metric on tables of T/4 rounds, plus O(T) per split.

    Parameters
    ----------
    metric : callable or str
        A callable taking a BucketStats, or the key of a measure of :data:`fastcdl.MEASURES`.
    y_true : array-like of shape (T,), or BucketStats
        The outcomes 0/1, or an unweighted bucket table in place of both arrays.
    y_prob : array-like of shape (T,), optional
        The predictions; left out with a BucketStats.
    level : float, default 0.95
        The nominal coverage, in (0, 1).
    n_sub : int, default 200
        Subsamples (four per random split of the rounds), at least 100.
    rate : "auto", float, (float, float) or None, default "auto"
        The rates r of the bias, bias ~ T^-r. "auto" takes BIAS_RATES ((1/2, 2/3) for
        cdl_monotone, vcdl_monotone, cutoff_ce and smce: their bias falls like T^-1/2 at a
        calibrated model and faster elsewhere; 1 for atb; None for atb_unbiased, which is
        unbiased) and (1/2, 2/3) for any other metric; or a number in (0, 2], a pair
        (lo, hi) of such numbers, or None for no correction.
    seed : None, int or numpy.random.Generator, optional
        Seeds the splits; None draws fresh entropy.
    sample_weight, bins, strategy
        As in :func:`fastcdl.bucket_stats`.

    Returns
    -------
    Interval
        The plug-in value, the debiased estimate, the interval and the subsamples.

    Raises
    ------
    ValidationError
        (a ValueError) for a level outside (0, 1), n_sub < 100, a table of fewer than 10
        rounds or of one bucket.

    Warns
    -----
    CoverageWarning
        For the sample estimators below 5,000 rounds (the interval was not seen to cover at
        0.90 on every model there: 0.75 to 1.00 at 1,000 rounds, at least 0.92 at 10,000;
        50,000 for the cross-fitted CDL_M),
        for a binned ECE, which estimates the ECE of the binned model: biased for the
        ECE of the scores by an amount no resampling sees, so its interval need not cover
        that; and on every call for ece_sweep and the cross-fitted VCDL_M, whose intervals
        were not seen to cover at 0.90 on every model at any size of the study
        (``Measure.interval_fails`` says what each missed, and what to use instead).

    Examples
    --------
    >>> import numpy as np, fastcdl as fc
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(20000); y = rng.random(20000) < p
    >>> r = interval(fc.cdl_monotone, y, p, seed=0)
    >>> bool(r.lo <= max(r.estimate, 0.0) <= r.hi and r.estimate < r.value)
    True
    """
    return _intervals(
        [metric],
        y_true,
        y_prob,
        level=level,
        n_sub=n_sub,
        rate=rate,
        seed=seed,
        sample_weight=sample_weight,
        bins=bins,
        strategy=strategy,
        stacklevel=3,
    )[0]


@accepts_multiclass("report", lead=1)
def intervals(
    metrics,
    y_true,
    y_prob=None,
    *,
    level=0.95,
    n_sub=200,
    rate="auto",
    seed=None,
    sample_weight=None,
    bins=None,
    strategy="uniform",
) -> dict:
    """:func:`interval` of several metrics on the same subsamples: each subsample's table is
    built once and every metric evaluated on it.

    With an integer seed each metric's :class:`Interval` equals ``interval(metric, ...,
    seed=seed)`` bit for bit (the same splits); with a Generator or None the metrics share
    one stream of splits. Cost: n_sub tables of T/4 rounds, O(T) per split, plus n_sub
    evaluations of each metric (what ``fastcdl metrics`` and :func:`fastcdl.summary` spend on
    their intervals: the tables once instead of once per estimator).

    Parameters
    ----------
    metrics : sequence of callables or str
        As the ``metric`` of :func:`interval`, each.
    y_true, y_prob, level, n_sub, rate, seed, sample_weight, bins, strategy
        As in :func:`interval` (``rate`` applies to every metric).

    Returns
    -------
    dict
        {name: Interval}, in the order given; the name is the key of a measure given as a
        string, or the function's ``__name__``.

    Raises
    ------
    ValidationError
        As :func:`interval`.

    Warns
    -----
    CoverageWarning
        As :func:`interval`, for each metric it concerns.

    Examples
    --------
    >>> import numpy as np, fastcdl as fc
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(20000); y = rng.random(20000) < p
    >>> both = intervals(["cdl_monotone", "smce"], y, p, seed=0)
    >>> one = interval("cdl_monotone", y, p, seed=0)
    >>> (both["cdl_monotone"].lo, both["cdl_monotone"].hi) == (one.lo, one.hi)
    True
    """
    metrics = list(metrics)
    if not metrics:
        raise ValidationError("metrics", "is empty", value=metrics)
    found = _intervals(
        metrics,
        y_true,
        y_prob,
        level=level,
        n_sub=n_sub,
        rate=rate,
        seed=seed,
        sample_weight=sample_weight,
        bins=bins,
        strategy=strategy,
        stacklevel=3,
    )
    return {_metric(m)[1]: r for m, r in zip(metrics, found)}


def _rate_of(rate, func, name):
    """The rates of the bias for this metric: "auto" resolved, a pair sorted, a number checked."""
    if isinstance(rate, str):
        check_name(rate, ("auto",), "rate")
        return next(
            (r for k, r in BIAS_RATES.items() if _studied(func, name) and k == name or func is _sample_fn(k)),
            _DEFAULT_RATES,
        )
    if isinstance(rate, (tuple, list)):
        if len(rate) != 2:
            raise ValidationError("rate", "must be a number, a pair (lo, hi), None or 'auto'", value=rate)
        return tuple(sorted(check_real(r, "rate", 0.0, 2.0, low_open=True) for r in rate))
    if rate is not None:
        return check_real(rate, "rate", 0.0, 2.0, low_open=True)
    return None


def _intervals(metrics, y_true, y_prob, *, level, n_sub, rate, seed, sample_weight, bins, strategy, stacklevel):
    """[Interval] of each metric, the subsample tables built once (interval, intervals)."""
    finish = begin_intervals(
        metrics,
        y_true,
        y_prob,
        level=level,
        n_sub=n_sub,
        rate=rate,
        seed=seed,
        sample_weight=sample_weight,
        bins=bins,
        strategy=strategy,
        now=False,
    )
    return finish(stacklevel + 1)


def begin_intervals(metrics, y_true, y_prob, *, level, n_sub, rate, seed, sample_weight, bins, strategy, now):
    """Check the arguments and prepare the subsamples of :func:`intervals`; returns
    ``finish(stacklevel)``, which gives [Interval] of each metric (with their warnings). With
    ``now`` the helper thread of fastcdl._parallel starts on the subsamples at once, and the
    calling thread is free for other work until ``finish`` (fastcdl.summary computes its
    measures meanwhile); the same intervals, bit for bit, either way. A caller that will not
    call ``finish`` (its own work failed) calls ``finish.cancel()``, which stops the helper."""
    funcs = [_metric(m) for m in metrics]
    level = _check_level(level)
    n_sub = check_count(n_sub, "n_sub", 100)
    n_sub = 4 * ((n_sub + 3) // 4)
    rates_of = [_rate_of(rate, func, name) for func, name in funcs]
    rng = _rng(seed)
    cells = _cells(y_true, y_prob, bins, sample_weight, by_outcome=True, strategy=strategy)
    st = cells.stats
    _check_resamplable(st, "interval")
    K = int(cells.count.sum())
    C = cells.count.shape[0]
    m = st.n_buckets
    rounds = np.repeat(np.arange(C, dtype=np.int64), cells.count)  # the cell of every round
    if not st.weighted:  # each round as 2 * bucket + outcome: the permutation shuffles the
        # same positions whatever it shuffles, so these are the same subsamples
        rounds = 2 * cells.bucket[rounds] + cells.y[rounds]
    b = K // 4
    subs = np.empty((len(funcs), n_sub))
    scratch = threading.local()  # subsample_table's work array, one per thread

    def work(j, perm):
        if not hasattr(scratch, "ns"):
            scratch.ns = np.zeros((m, 2), np.int64)
        with sample_size_check_off():  # (per thread)
            for part in range(4):
                if st.weighted:
                    c = np.bincount(perm[part * b : (part + 1) * b], minlength=C)[None, :]
                    n, s = _k.scatter_cells(c, cells.bucket, cells.y, cells.weight, m)
                    table = _replicate(st, n[0], s[0])
                else:  # the same table in one pass (counts are integers: the same numbers)
                    q, n, s, kept = _k.subsample_table(perm, part * b, (part + 1) * b, st.values, scratch.ns)
                    bins = None if st.bins is None else st.bins[kept]
                    table = BucketStats._owned(q, n, s, q * n, st.edges, bins)
                for i, (func, _) in enumerate(funcs):
                    subs[i, 4 * j + part] = func(table)

    # the permutations are drawn in order (under share's lock): the same subsamples, and the same
    # intervals bit for bit, whichever thread computes them. fastcdl's own measures run on two
    # threads (their kernels release the GIL); a measure from elsewhere (a plug-in, a callable)
    # on this thread only, as it may not be safe to call from two threads.
    ours = all(getattr(func, "__module__", "").startswith("fastcdl.") for func, _ in funcs)
    join = share_started(n_sub // 4, lambda j: rng.permutation(rounds), work) if ours and now else None

    def finish(stacklevel):
        values = [float(func(st)) for func, _ in funcs]  # (this thread's work while the helper's runs)
        if join is not None:
            join()
        elif ours:
            share(n_sub // 4, lambda j: rng.permutation(rounds), work)
        else:
            for j in range(n_sub // 4):
                work(j, rng.permutation(rounds))
        return [
            _interval_of(func, name, value, sub.copy(), rate, level, n_sub, K, b, st, stacklevel + 1)
            for (func, name), value, sub, rate in zip(funcs, values, subs, rates_of)
        ]

    finish.cancel = (lambda: None) if join is None else join.cancel  # for a caller that will not finish
    return finish


def _interval_of(func, name, value, subs, rate, level, n_sub, K, b, st, stacklevel):
    """The Interval of one metric from its value on the table and on the subsamples."""
    from scipy.special import ndtri  # imported on use: scipy.special is slow to import

    z = float(ndtri(0.5 + level / 2.0))
    rates = () if rate is None else (rate if isinstance(rate, tuple) else (rate,))
    centres = [value - (subs.mean() - value) / (4.0**r - 1.0) for r in rates] or [value]
    estimate = centres[-1]  # the largest rate: the smallest correction
    sd = math.sqrt(b / (K - b)) * float(subs.std(ddof=1))
    lo, hi = min(centres) - z * sd, max(centres) + z * sd
    if _studied(func, name) or name in MEASURES:
        # the interval met with the range of a non-negative metric; an empty meet becomes {0}
        lo, hi = max(lo, 0.0), max(hi, 0.0)
    studied = _studied(func, name)
    entry = None
    if studied:
        entry = (
            MEASURES[name]
            if name in MEASURES and func is MEASURES[name].func
            else next(m for m in MEASURES.values() if m.studied and func is _sample_fn(m.key))
        )
    start = _VALIDATED_FROM if entry is None else entry.validated_from
    validated = (K >= start) if studied else None
    if validated is False:
        seen = (
            "0.75 to 1.00 at 1,000 rounds, at least 0.92 at 10,000"
            if start == _VALIDATED_FROM
            else "see results/estimators-coverage"
        )
        warnings.warn(
            CoverageWarning(
                f"interval: at {K} rounds (fewer than {start}) the interval of {name} was not seen to cover at "
                f"0.90 or more on every model of the coverage study ({seen}): "
                "read it as a rough range (results/estimators-coverage)"
            ),
            stacklevel=stacklevel,
        )
    unstudied = MEASURES[name].interval_unstudied if name in MEASURES and func is MEASURES[name].func else ""
    if unstudied:
        validated = False
        warnings.warn(CoverageWarning(f"interval: {name} is not validated: {unstudied}"), stacklevel=stacklevel)
    fails = "" if entry is None else entry.interval_fails
    if fails:
        validated = False
        warnings.warn(CoverageWarning(f"interval: no valid interval for {name}: {fails}"), stacklevel=stacklevel)
    if name in ("ece", "mce", "rmsce") and st.edges is not None:
        warnings.warn(
            CoverageWarning(
                f"interval: a binned {name} estimates the {name} of the binned model, which differs from that of "
                "the scores by an amount no resampling sees; this interval is for the binned quantity at this "
                "sample size and need not cover the scores' value"
            ),
            stacklevel=stacklevel,
        )
    return Interval(
        value=value,
        estimate=float(estimate),
        lo=float(lo),
        hi=float(hi),
        level=level,
        rate=rate,
        n_sub=n_sub,
        subsamples=subs,
        validated=validated,
    )


def _sample_fn(name):
    import fastcdl.sample as _s

    return getattr(_s, name, None)


# --------------------------------------------------------------------------------------
# consistency resampling


@accepts_multiclass("report")
def calibration_test(
    y_true, y_prob=None, *, metric="cutoff_ce", n_sim=1000, seed=None, sample_weight=None, bins=None, strategy="uniform"
) -> CalibrationTest:
    """Test of perfect calibration by consistency resampling (Broecker and Smith 2007).

    Under the hypothesis y_t ~ Bernoulli(p_t) independently, a bucket's positives are
    s_i ~ Binomial(n_i, q_i). The test simulates n_sim such tables (same q_i and n_i), computes
    ``metric`` on each and returns p = (1 + #{stat* >= stat}) / (1 + n_sim): a valid p-value
    for any metric (exactly so for exact buckets, by exchangeability). O(m) per simulation.

    metric: a callable taking a BucketStats or a fastcdl metric name (default "cutoff_ce",
    which has power against any bias that is consistent over an interval of predictions).
    For cutoff CE (the name or fastcdl.cutoff_ce) on an unweighted table the whole
    simulation runs in one compiled kernel (fastcdl/_compiled/resample.py::cutoff_null): each
    simulated table draws its binomials from its own stream, seeded from ``seed``, and only
    the range of its path is kept, O(m) per simulation with no table built, on all of
    numba's threads (the values do not depend on their number). Any other metric is called
    on n_sim BucketStats.

    When no simulated statistic reaches the observed one the p-value, 1 / (1 + n_sim), says
    only that the true p-value is below about 1 / n_sim: ``at_floor`` is then True and
    ``p_value_text`` prints "< 0.001" (n_sim = 1000). Increase n_sim to resolve it.

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
    n_sim = check_count(n_sim, "n_sim", 1)
    rng = _rng(seed)
    cells = _cells(y_true, y_prob, bins, sample_weight, by_outcome=False, strategy=strategy)
    st = cells.stats
    stat = float(func(st))
    if func is _cutoff_ce() and not st.weighted:
        # the whole simulation in one kernel: each replicate draws from its own stream
        states = rng.integers(0, np.iinfo(np.uint64).max, size=(n_sim, 4), dtype=np.uint64, endpoint=True)
        states[~states.any(axis=1), 0] = 1  # the one state xoshiro256** cannot leave
        q, n, _ = st.table()
        null = _k.cutoff_null(q, np.asarray(n, dtype=np.float64), states)
        p = (1.0 + np.count_nonzero(null >= stat)) / (1.0 + n_sim)
        return CalibrationTest(statistic=stat, p_value=float(p), n_sim=n_sim, metric=name, null=null)
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
