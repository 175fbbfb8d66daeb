"""Rates, slopes, paired differences and CDL/ECE ratios from stored trials (docs/experiments.md).

Per (forecaster, adversary, metric):

- at each T, the mean over seeds with a studentized-bootstrap (bootstrap-t) 95% interval
  (:func:`mean_interval`);
- the least-squares slope of log(mean over seeds) against log T over the upper half of
  the grid, with a jackknife-over-seeds Student-t 95% interval (:func:`slope_interval`;
  a seed index is shared by every T of a run, so deleting a seed deletes it at every T),
  and the same slope over each half of that window.

Between two forecasters on the same adversary, T and seed (the adversary draws from the
same random stream whichever forecaster it plays): paired differences of the metric with
bootstrap-t intervals, and the difference of their slopes with a jackknife interval
(:func:`paired`). Each bootstrap stream derives from the master seed and its cell's labels
only, so an interval does not depend on which other cells were run; the jackknife uses no
random numbers at all.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from functools import lru_cache
from itertools import combinations

import numpy as np
from scipy import stats as _stats


RATES_COLUMNS = ("forecaster", "adversary", "T", "metric", "mean", "lo", "hi", "n_seeds")
SUMMARY_COLUMNS = (
    "forecaster",
    "adversary",
    "metric",
    "slope",
    "slope_lo",
    "slope_hi",
    "t_min_fit",
    "t_max_fit",
    "n_seeds",
    "slope_se",
    "first_half_slope",
    "first_half_lo",
    "first_half_hi",
    "first_half_t_max",
    "second_half_slope",
    "second_half_lo",
    "second_half_hi",
    "second_half_t_min",
)
PAIRED_COLUMNS = (
    "forecaster",
    "baseline",
    "adversary",
    "T",
    "metric",
    "mean_diff",
    "lo",
    "hi",
    "ratio",
    "corr",
    "n_seeds",
)
PAIRED_SLOPE_COLUMNS = (
    "forecaster",
    "baseline",
    "adversary",
    "metric",
    "slope_diff",
    "lo",
    "hi",
    "t_min_fit",
    "t_max_fit",
    "n_seeds",
)
N_BOOT = 2000
LEVEL = 0.95
MIN_BOOT_T_SEEDS = 5  # below this, the bootstrap-t has too few distinct resamples: Student t instead


def fit_slope(T, y) -> float:
    """Least-squares slope b of log y = a + b log T.

    Parameters
    ----------
    T : array-like of float
        The horizons.
    y : array-like of float
        The values at each horizon.

    Returns
    -------
    float
        b; NaN if some y <= 0 or is infinite (a log-log slope is undefined there: a
        KL-calibration of +inf, fastcdl.kl_calibration) or fewer than two points.

    Examples
    --------
    >>> round(fit_slope([10, 100, 1000], [1.0, 0.1, 0.01]), 12)
    -1.0
    """
    T = np.asarray(T, dtype=float)
    y = np.asarray(y, dtype=float)
    if T.shape[0] < 2 or np.any(~(y > 0)) or np.any(np.isinf(y)):
        return float("nan")
    return float(slope_weights(T) @ np.log(y))


def slope_weights(T) -> np.ndarray:
    """w with slope = w @ log(y): w_j = (x_j - mean x) / sum (x - mean x)^2, x = log T."""
    x = np.log(np.asarray(T, dtype=float))
    xc = x - x.mean()
    return xc / (xc * xc).sum()


@lru_cache(maxsize=256)
def t_quantile(q: float, df: int) -> float:
    """Student's t quantile ``scipy.stats.t.ppf(q, df)``, as a float, computed once per (q, df).

    A page of slopes asks for the same few quantiles tens of thousands of times (one per cell
    and interval), and scipy's ``ppf`` costs about 0.15 ms a call on its checks alone.

    >>> round(t_quantile(0.975, 4), 6)
    2.776445
    """
    return float(_stats.t.ppf(q, df))


def jackknife_log_linear(V, a, level=LEVEL):
    """theta = a @ log(mean over seeds of V) with a jackknife-over-seeds Student-t interval.

    V is (n_rows, n_seeds): the seeds are columns, shared by every row. Deleting seed i
    gives theta_(i); the jackknife standard error is sqrt((n-1)/n sum (theta_(i) -
    mean theta_(.))^2) (Efron & Stein 1981) and the interval theta +- t_{n-1} se. Slopes
    (a = slope weights), fitted constants and slope differences are all of this form.
    Returns (theta, lo, hi, se); NaN where a mean (or a leave-one-out mean) is not positive,
    or a value is infinite (a KL-calibration of +inf, fastcdl.kl_calibration).
    Cost O(n_rows n_seeds).

    >>> V = np.array([[1.0, 1.2, 0.8, 1.0], [0.1, 0.12, 0.08, 0.1]])
    >>> [round(v, 6) for v in jackknife_log_linear(V, np.array([-1.0, 1.0]))]
    [-2.302585, -2.302585, -2.302585, 0.0]
    """
    V = np.asarray(V, dtype=float)
    a = np.asarray(a, dtype=float)
    n = V.shape[1]
    nan = float("nan")
    if not np.all(np.isfinite(V)):
        return nan, nan, nan, nan
    means = V.mean(axis=1)
    if np.any(~(means > 0)):
        return nan, nan, nan, nan
    theta = float(a @ np.log(means))
    if n < 2:
        return theta, nan, nan, nan
    loo = (V.sum(axis=1, keepdims=True) - V) / (n - 1)  # (n_rows, n): means without seed i
    if np.any(~(loo > 0)):
        return theta, nan, nan, nan
    th = a @ np.log(loo)
    se = float(np.sqrt((n - 1) / n * ((th - th.mean()) ** 2).sum()))
    t = t_quantile(0.5 + level / 2, n - 1)
    return theta, theta - t * se, theta + t * se, se


def slope_interval(T, V, level=LEVEL):
    """The slope of log(mean over seeds) against log T and its jackknife-t interval.

    Measured coverage of the nominal 95% interval on synthetic power laws with seed effects:
    docs/experiments.md. Cost O(len(T) n_seeds).

    Parameters
    ----------
    T : array-like of float
        The horizons.
    V : ndarray of shape (len(T), n_seeds)
        The values, the same seeds at every T.
    level : float, default 0.95
        The interval's nominal coverage.

    Returns
    -------
    slope, lo, hi, se : float
        The slope, its interval and its jackknife standard error (NaN where a mean, or a
        leave-one-out mean, is not positive).

    Examples
    --------
    >>> V = np.array([[2.0, 2.2, 1.8], [1.0, 1.1, 0.9], [0.5, 0.55, 0.45]])
    >>> [round(v, 6) for v in slope_interval([1, 2, 4], V)][:1]
    [-1.0]
    """
    return jackknife_log_linear(V, slope_weights(T), level)


def mean_interval(values, *, rng=None, n_boot=N_BOOT, level=LEVEL):
    """(mean, lo, hi): the mean of values (one per seed) and its 95% studentized-bootstrap interval.

    Bootstrap-t (Efron & Tibshirani 1993, ch. 12; Hall 1992): resample the values n_boot
    times, studentize each resample's mean by its own standard error, and invert the 2.5%
    and 97.5% quantiles of that t. A resample of identical values has t = +-inf and stays
    in the tails. With fewer than 5 values (too few distinct resamples) the Student t
    interval is used. Cost O(n_boot n).

    Parameters
    ----------
    values : array-like of float
        One value per seed.
    rng : numpy.random.Generator or int, optional
        The resampling's generator (or a seed).
    n_boot : int, default 2000
        Resamples.
    level : float, default 0.95
        The interval's nominal coverage.

    Returns
    -------
    mean, lo, hi : float
        NaN ends for fewer than two values; the mean itself when all values are equal; +inf
        for all three when a value is +inf (a KL-calibration of +inf, fastcdl.kl_calibration).

    Examples
    --------
    >>> m, lo, hi = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], rng=0)
    >>> m, bool(lo < 3.5 < hi)
    (3.5, True)
    """
    v = np.asarray(values, dtype=float)
    n = v.shape[0]
    mean = float(v.mean()) if n else float("nan")
    if n and np.any(np.isposinf(v)):
        return math.inf, math.inf, math.inf
    if n < 2:
        return mean, float("nan"), float("nan")
    se = float(v.std(ddof=1)) / np.sqrt(n)
    if se == 0.0:
        return mean, mean, mean
    alpha = (1 - level) / 2
    if n < MIN_BOOT_T_SEEDS:
        t = t_quantile(1 - alpha, n - 1)
        return mean, mean - t * se, mean + t * se
    rng = np.random.default_rng(rng)
    b = v[rng.integers(0, n, (n_boot, n))]
    mb = b.mean(axis=1)
    sb = b.std(axis=1, ddof=1) / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        tb = (mb - mean) / sb  # a constant resample: +-inf, or 0/0 when it equals the mean (counted as 0)
    tb = np.sort(np.nan_to_num(tb, nan=0.0, posinf=np.inf, neginf=-np.inf))
    q_lo = tb[int(np.floor(alpha * (n_boot - 1)))]
    q_hi = tb[int(np.ceil((1 - alpha) * (n_boot - 1)))]
    return mean, float(mean - q_hi * se), float(mean - q_lo * se)


def group_rows(rows, metrics):
    """{(forecaster, adversary, metric): {T: {seed_index: value}}}."""
    g = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        for m in metrics:
            if r.get(m) is not None:
                g[(r["forecaster_label"], r["adversary_label"], m)][r["T"]][r["seed_index"]] = r[m]
    return g


def _infinite(by_T) -> bool:
    """Whether a cell holds an infinite value (a KL-calibration of +inf)."""
    return any(math.isinf(v) for by_seed in by_T.values() for v in by_seed.values())


def cell_rng(seed, *cell):
    """The bootstrap stream of one cell, e.g. ("rate", forecaster, adversary, metric, T):
    SeedSequence entropy from the master seed and a stable hash of the cell's labels."""
    digest = hashlib.sha256(json.dumps(cell).encode()).digest()
    return np.random.default_rng(np.random.SeedSequence([seed, int.from_bytes(digest[:16], "little")]))


def fit_window(by_T) -> list:
    """The horizons a slope is fitted on: the upper half of those with at least two seeds
    (all of them if fewer than four; with an odd count the middle one is included)."""
    fit_T = sorted(T for T in by_T if len(by_T[T]) >= 2)
    return fit_T[len(fit_T) // 2 :] if len(fit_T) >= 4 else fit_T


def _halves(fit_T):
    """The two halves of a window (sharing the middle horizon when the count is odd)."""
    k = len(fit_T)
    return fit_T[: (k + 1) // 2], fit_T[k // 2 :]


def seed_matrix(by_T, Ts, seeds):
    return np.array([[by_T[T][s] for s in seeds] for T in Ts], dtype=float)


def common_seeds(by_T, Ts):
    return sorted(set.intersection(*(set(by_T[T]) for T in Ts))) if Ts else []


def analyze(rows, metrics, *, seed=0, n_boot=N_BOOT):
    """Rates, slopes and CDL/ECE ratios of stored trials, deterministic for a given seed.

    Parameters
    ----------
    rows : list of dict
        Trials: forecaster_label, adversary_label, T, seed_index and a value per metric.
    metrics : list of str
        The metrics to analyse.
    seed : int, default 0
        Seeds the bootstrap of every cell.
    n_boot : int, default 2000
        Bootstrap resamples.

    Returns
    -------
    rates : list of dict
        The mean over seeds at each T with its bootstrap-t interval (:func:`mean_interval`).
    slopes : list of dict
        The slope over the fitted window (the upper half of the horizons with at least two
        seeds) with its jackknife-t interval (:func:`slope_interval`), and the slopes over
        the window's two halves.
    ratios : list of dict
        CDL/ECE of the means at each T.

    Examples
    --------
    >>> rows = [dict(forecaster_label=f, adversary_label="greedy", T=T, seed_index=i,
    ...              cdl=(1 + 0.1 * i) / T ** 0.5, ece=(2 + 0.1 * i) / T ** 0.25)
    ...         for f in ("cdl", "kt") for T in (64, 256, 1024, 4096) for i in range(3)]
    >>> rates, slopes, ratios = analyze(rows, ["cdl", "ece"])
    >>> len(rates), round(slopes[0]["slope"], 6), ratios[0]["T"]
    (16, -0.5, 64)
    """
    rates, slopes = [], []
    nan = float("nan")
    groups = group_rows(rows, metrics)
    for (f, a, m), by_T in sorted(groups.items()):
        for T in sorted(by_T):
            v = [by_T[T][s] for s in sorted(by_T[T])]
            mean, lo, hi = mean_interval(v, rng=cell_rng(seed, "rate", f, a, m, int(T)), n_boot=n_boot)
            rates.append(dict(forecaster=f, adversary=a, T=T, metric=m, mean=mean, lo=lo, hi=hi, n_seeds=len(v)))
        fit_T = fit_window(by_T)
        if len(fit_T) < 2:
            continue
        seeds = common_seeds(by_T, fit_T)
        means = [np.mean(list(by_T[T].values())) for T in fit_T]
        slope = fit_slope(fit_T, means)
        lo = hi = se = nan
        if seeds:
            _, lo, hi, se = slope_interval(fit_T, seed_matrix(by_T, fit_T, seeds))
        row = dict(
            forecaster=f,
            adversary=a,
            metric=m,
            slope=slope,
            slope_lo=lo,
            slope_hi=hi,
            t_min_fit=fit_T[0],
            t_max_fit=fit_T[-1],
            n_seeds=len(seeds),
            slope_se=se,
        )
        for name, half in zip(("first_half", "second_half"), _halves(fit_T)):
            s = lo = hi = nan
            if len(half) >= 2 and seeds:
                s, lo, hi, _ = slope_interval(half, seed_matrix(by_T, half, seeds))
            row.update({f"{name}_slope": s, f"{name}_lo": lo, f"{name}_hi": hi})
            row["first_half_t_max" if name == "first_half" else "second_half_t_min"] = (
                half[-1] if name == "first_half" else half[0]
            )
        slopes.append(row)
    ratios = []
    mean_of = {(r["forecaster"], r["adversary"], r["T"], r["metric"]): r["mean"] for r in rates}
    for (f, a, T, m), v in sorted(mean_of.items()):
        if m == "cdl" and (f, a, T, "ece") in mean_of:
            e = mean_of[(f, a, T, "ece")]
            ratios.append(dict(forecaster=f, adversary=a, T=T, cdl=v, ece=e, cdl_over_ece=v / e if e > 0 else nan))
    return rates, slopes, ratios


def paired(rows, metrics, *, seed=0, n_boot=N_BOOT):
    """Paired comparisons of every two forecasters on the same adversary (common random numbers).

    A seed index gives the adversary the same random stream whichever forecaster it plays
    (child 1 of the trial's SeedSequence), so per seed the two trials form a pair.
    forecaster and baseline are ordered by label. Cost O(F^2 x cells x n_boot n_seeds).

    Parameters
    ----------
    rows, metrics, seed, n_boot
        As in :func:`analyze`.

    Returns
    -------
    differences : list of dict
        At each T, mean over seeds of (metric of forecaster - metric of baseline) with its
        bootstrap-t interval, the ratio of the two means, and the correlation across seeds
        of the two forecasters' values (how much pairing helps).
    slope_differences : list of dict
        Slope of forecaster minus slope of baseline over the fitted window of the pair's
        common horizons, jackknife-t interval over the common seeds.

    Examples
    --------
    >>> rows = [dict(forecaster_label=f, adversary_label="greedy", T=T, seed_index=i,
    ...              cdl=(1 + 0.1 * i) / T ** 0.5, ece=(2 + 0.1 * i) / T ** 0.25)
    ...         for f in ("cdl", "kt") for T in (64, 256, 1024, 4096) for i in range(3)]
    >>> diffs, slope_diffs = paired(rows, ["cdl"])
    >>> diffs[0]["forecaster"], diffs[0]["baseline"], diffs[0]["mean_diff"]
    ('cdl', 'kt', 0.0)
    """
    groups = group_rows(rows, metrics)
    forecasters = sorted({f for f, _, _ in groups})
    cells = sorted({(a, m) for _, a, m in groups})
    nan = float("nan")
    diffs, slope_diffs = [], []
    for f1, f2 in combinations(forecasters, 2):
        for a, m in cells:
            g1, g2 = groups.get((f1, a, m)), groups.get((f2, a, m))
            if not g1 or not g2 or _infinite(g1) or _infinite(g2):
                continue  # (a difference of infinite values, a KL-calibration of +inf, is undefined: no row)
            both = {}
            for T in sorted(set(g1) & set(g2)):
                seeds = sorted(set(g1[T]) & set(g2[T]))
                if not seeds:
                    continue
                both[T] = seeds
                v1 = np.array([g1[T][s] for s in seeds], dtype=float)
                v2 = np.array([g2[T][s] for s in seeds], dtype=float)
                mean, lo, hi = mean_interval(v1 - v2, rng=cell_rng(seed, "paired", f1, f2, a, m, int(T)), n_boot=n_boot)
                m2 = v2.mean()
                corr = nan
                if len(seeds) >= 2 and v1.std() > 0 and v2.std() > 0:
                    corr = float(np.corrcoef(v1, v2)[0, 1])
                diffs.append(
                    dict(
                        forecaster=f1,
                        baseline=f2,
                        adversary=a,
                        T=T,
                        metric=m,
                        mean_diff=mean,
                        lo=lo,
                        hi=hi,
                        ratio=float(v1.mean() / m2) if m2 > 0 else nan,
                        corr=corr,
                        n_seeds=len(seeds),
                    )
                )
            fit_T = fit_window(both)
            if len(fit_T) < 2:
                continue
            seeds = sorted(set.intersection(*(set(both[T]) for T in fit_T)))
            if not seeds:
                continue
            w = slope_weights(fit_T)
            V = np.vstack([seed_matrix(g1, fit_T, seeds), seed_matrix(g2, fit_T, seeds)])
            d, lo, hi, _ = jackknife_log_linear(V, np.concatenate([w, -w]))
            slope_diffs.append(
                dict(
                    forecaster=f1,
                    baseline=f2,
                    adversary=a,
                    metric=m,
                    slope_diff=d,
                    lo=lo,
                    hi=hi,
                    t_min_fit=fit_T[0],
                    t_max_fit=fit_T[-1],
                    n_seeds=len(seeds),
                )
            )
    return diffs, slope_diffs
