"""Calibration estimators that mean something on a sample of continuous scores (docs/estimators.md).

The exact metrics of fastcdl.exact judge every distinct prediction on its own rounds. On a
model's continuous scores every bucket holds one round, qhat_i is 0 or 1, and those numbers
measure sampling noise. The estimators here converge on samples (at rate about T^-1/2):

- :func:`cdl_monotone`, :func:`vcdl_monotone`, :func:`cdl_monotone_report` and
  :func:`decision_loss_curve_monotone`: CDL and VCDL relative to non-decreasing
  recalibrations (the fix is isotonic regression, PAV);
- :func:`cutoff_ce` and :func:`cutoff_ce_test`: the largest bias over intervals of
  predictions, with the asymptotic p-value of perfect calibration;
- :func:`atb` and :func:`atb_unbiased`: averaged two-bin calibration error, a truthful
  score for comparing models;
- :func:`smce`: smooth calibration error, exactly, in O(m log m);
- :func:`cdl_monotone_crossfit` and :func:`vcdl_monotone_crossfit`: CDL_M and VCDL_M with
  the recalibration fitted on one half of the rounds and judged on the other;
- :func:`k2_debiased` (Kumar, Liang and Ma 2019) and :func:`ece_sweep` (Roelofs et al. 2022):
  the binned estimators of the squared and the absolute calibration error from the literature;
- :func:`mce`, :func:`rmsce`, :func:`brier` and :func:`brier_decomposition`: the classic numbers.

Every function takes ``(y_true, y_prob)`` (outcomes first) or a :class:`~fastcdl.BucketStats`,
with ``sample_weight`` and ``bins`` as in fastcdl.exact, and runs a compiled kernel on the
bucket table (fastcdl/_compiled/estimators.py).
Like the metrics, every one also takes ``pos_label=``, (T, 1) or (T, 2) predict_proba outputs,
and k-class forecasts with ``multiclass="top-label" | "classwise"`` (fastcdl._tables.binary_views).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numba
import numpy as np

from fastcdl._docstrings import fill as fill_docstring

from fastcdl._parallel import pair

from fastcdl._validate import ValidationError, check_binning, check_kinks, check_rounds, check_seed, prepare_rounds
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.last_table import LastTable
from fastcdl._compiled import estimators as _k
from fastcdl._compiled._jit import readonly
from fastcdl._compiled.envelope import envelope_at_half
from fastcdl._compiled.errors import k2_kernel
from fastcdl._tables.outcome_keys import sorted_outcome_keys_and_spare
from fastcdl._tables.sample_size import check_sample_size
from fastcdl._tables.tabulate import stats_of
from fastcdl._decisions.certificate import CertificateWarning, worst_task
from fastcdl.bucket_table import BucketStats

__all__ = [
    "cdl_monotone",
    "vcdl_monotone",
    "cdl_monotone_report",
    "decision_loss_curve_monotone",
    "MonotoneCDLReport",
    "cutoff_ce",
    "cutoff_ce_test",
    "CutoffCETest",
    "brownian_range_cdf",
    "brownian_range_sf",
    "atb",
    "atb_unbiased",
    "k2_debiased",
    "ece_sweep",
    "cdl_monotone_crossfit",
    "vcdl_monotone_crossfit",
    "smce",
    "mce",
    "rmsce",
    "brier",
    "brier_decomposition",
    "BrierDecomposition",
]


def _table(y_true, y_prob, bins, sample_weight, strategy="uniform"):
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    q, n, s = st.table()
    return st, q, n, s


# --------------------------------------------------------------------------------------
# CDL and VCDL relative to non-decreasing recalibrations


_last_monotone = LastTable()  # monotone_cdl_kernel's output, by table


def _monotone_of(st, q, n, s):
    """monotone_cdl_kernel of the table (q, n, s) of ``st``, computed once per table: CDL_M and
    VCDL_M of one table (a summary's measures, each subsample of an interval) share it.
    O(m), or O(1) again."""
    out = _last_monotone.get(st, "monotone")
    if out is None:
        out = _k.monotone_cdl_kernel(q, n, s, n.sum())
        _last_monotone.put(st, "monotone", out)
    return out


@dataclass(frozen=True)
class MonotoneCDLReport:
    """CDL relative to non-decreasing recalibrations, with its certificate.

    Attributes
    ----------
    value : float
        CDL_M = 2 fbar_M(1/2).
    vcdl : float
        VCDL_M, attained at kink ``vcdl_kink`` by the one-sided value ``vcdl_side``.
    kinks : np.ndarray
        The worst task's kinks mu1 <= 1/2 <= mu2 (one kink, 1/2, for a V task).
    weights : np.ndarray
        The kinks' weights c_j.
    sides : tuple of str
        Per kink, "left" when the value there is f_M(mu), "right" when f_M(mu+).
    payoff : np.ndarray
        The worst task's payoff matrix (rows = actions, columns = y = 0, 1), in [0, 1]; its
        decision maker gains ``value`` per round by acting on ``recalibration`` instead of
        the predictions.
    values : np.ndarray
        The bucket values q_i.
    recalibration : np.ndarray
        The fix: the isotonic (PAV) regression of qhat_i on q_i weighted by n_i, one value
        per bucket; non-decreasing in q.
    exact : bool
        False when a kink lies within 2^-50 of 0 or 1 (but not on them): float64 payoffs in
        [0, 1] cannot place such a kink, so the task may gain less than ``value``; a
        CertificateWarning says so. The value is exact.

    Examples
    --------
    >>> r = cdl_monotone_report([1, 1, 0, 0], [0.25, 0.25, 0.75, 0.75])
    >>> r.value, r.recalibration.tolist()
    (0.75, [0.5, 0.5])
    """

    value: float
    vcdl: float
    vcdl_kink: float
    vcdl_side: str
    kinks: np.ndarray
    weights: np.ndarray
    sides: tuple
    payoff: np.ndarray
    values: np.ndarray
    recalibration: np.ndarray
    exact: bool = True

    def __repr__(self) -> str:
        ks = ", ".join(f"{k:.6g}" for k in self.kinks)
        return (
            f"MonotoneCDLReport(value={self.value:.6g}, vcdl={self.vcdl:.6g} at {self.vcdl_kink:.6g}, "
            f"worst task: {self.payoff.shape[0]} actions, kinks [{ks}])"
        )


@accepts_multiclass()
@fill_docstring
def cdl_monotone(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """CDL relative to non-decreasing recalibrations: the most a decision maker with payoffs
    in [0, 1] gains per round by acting on the isotonic (PAV) recalibration of the
    predictions instead of the predictions themselves (docs/estimators.md).

    Computed exactly as 2 fbar_M(1/2), fbar_M the concave envelope of the monotone V-kink
    curve; O(m) after the bucket table. Unlike :func:`fastcdl.cdl` it converges on samples
    of continuous predictions. At most :func:`fastcdl.cdl`, equal to it when the bucket
    frequencies already increase with the predictions.

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
        CDL_M, in [0, 1], at most :func:`fastcdl.cdl`; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> cdl_monotone([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.25
    >>> cdl_monotone([1, 1, 0, 0], [0.25, 0.25, 0.75, 0.75])  # the monotone fix: 1/2 for both
    0.75
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    return float(_monotone_of(st, q, n, s)[0])


@accepts_multiclass()
@fill_docstring
def vcdl_monotone(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """VCDL relative to non-decreasing recalibrations: sup over kinks mu of
    f_M(mu) / max(mu, 1 - mu), the gain of the best monotone recalibration on the
    two-action task with threshold mu (docs/estimators.md). Exact, O(m).

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
        VCDL_M, at most CDL_M; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> vcdl_monotone([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.16666666666666666
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    return float(_monotone_of(st, q, n, s)[6])


@accepts_multiclass("report")
@fill_docstring
def cdl_monotone_report(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> MonotoneCDLReport:
    """:func:`cdl_monotone` with its certificate: the worst task (at most three actions, in
    the same form as :func:`fastcdl.cdl_report`) and the fix, the PAV recalibration. O(m).

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
    MonotoneCDLReport
        The value, VCDL_M, the worst task and the recalibration; with ``multiclass="classwise"`` a
        :class:`fastcdl.ClasswiseResult` of reports.

    Raises
    ------
    {{raises}}

    Warns
    -----
    CertificateWarning
        When a kink of the worst task lies within 2^-50 of 0 or 1 (``exact`` is False).

    Examples
    --------
    >>> r = cdl_monotone_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> r.value, r.kinks.tolist(), r.recalibration.tolist()
    (0.25, [0.25, 0.75], [0.0, 1.0])
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    value, j1, j2, b, h, right, vmax, jv = _k.monotone_cdl_kernel(q, n, s, n.sum())

    def side(j):
        return "right" if right[j] else "left"

    kinks, weights, sides, payoff, _ = worst_task(b, j1, j2, side)
    exact = not any(0.0 < min(k, 1.0 - k) < 2.0**-50 for k in kinks)
    if not exact:
        warnings.warn(
            CertificateWarning(
                f"cdl_monotone_report: a kink of the worst task ({', '.join(f'{k:.3g}' for k in kinks)}) is closer "
                "to 0 or 1 than float64 payoffs in [0, 1] resolve; the task may gain less than the value "
                "(report.exact is False; the value is exact)"
            ),
            stacklevel=2,
        )
    return MonotoneCDLReport(
        value=float(value),
        vcdl=float(vmax),
        vcdl_kink=float(b[jv]),
        vcdl_side=side(jv),
        kinks=kinks,
        weights=weights,
        sides=sides,
        payoff=payoff,
        values=q.copy(),
        recalibration=_k.pav_kernel(readonly(n), readonly(s)),
        exact=exact,
    )


@accepts_multiclass("curve")
@fill_docstring
def decision_loss_curve_monotone(y_true, y_prob=None, *, kinks=None, sample_weight=None, bins=None, strategy="uniform"):
    """f_M(mu) / max(mu, 1 - mu): what the best non-decreasing recalibration gains the
    two-action task with threshold mu, per round, at each kink.

    kinks=None evaluates at every prediction, 0, 1/2, 1 and a grid of 1001 points (f_M is
    convex between consecutive predictions, so the grid shows its shape; its maximum,
    VCDL_M, sits on a prediction, 0, 1/2 or 1). Returns (kinks, values), kinks in the given
    order. O(m + k log k).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    kinks : array-like of float in [0, 1], optional
        Where to evaluate; None: at every bucket value and on a grid of 1001 points.
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    kinks : ndarray
        The kinks mu, as given or, by default, the bucket values and a grid of 1001 points.
    values : ndarray
        f_M(mu) / max(mu, 1 - mu) at each kink; a :class:`fastcdl.ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> mu, v = decision_loss_curve_monotone([1, 1, 0, 0], [0.25, 0.25, 0.75, 0.75], kinks=[0.5])
    >>> v.tolist()
    [0.5]
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    if kinks is None:
        mus = np.unique(np.concatenate([q, np.linspace(0.0, 1.0, 1001)]) + 0.0)
        order = None
    else:
        mus = check_kinks(kinks, "kinks")
        order = np.argsort(mus, kind="stable")
    sorted_mus = np.ascontiguousarray(mus if order is None else mus[order]) + 0.0
    f_left, _ = _k.monotone_curve(q, n, s, sorted_mus, n.sum())
    vals = f_left / np.maximum(sorted_mus, 1.0 - sorted_mus)
    if order is not None:
        out = np.empty_like(vals)
        out[order] = vals
        vals = out
    return mus, vals


# --------------------------------------------------------------------------------------
# Cutoff calibration error and the range of Brownian motion


@dataclass(frozen=True)
class CutoffCETest:
    """Cutoff calibration error with the asymptotic test of perfect calibration.

    Attributes
    ----------
    value : float
        Cutoff CE = sup over intervals I of ``|(1/T) sum_{t: p_t in I} (y_t - p_t)|``.
    statistic : float
        T value / sqrt(V), V = sum_i n_i q_i (1 - q_i) the variance of T times the bias path
        under perfect calibration.
    p_value : float
        P(R >= statistic), R the range of a standard Brownian motion on [0, 1] (asymptotic,
        as V grows).
    interval : tuple of float
        (lowest, highest) prediction of the interval attaining the value (NaN, NaN when the
        value is 0).
    bias : float
        The signed (1/T) sum of y - p over that interval: > 0 means the predictions there
        are too low, < 0 too high.

    Examples
    --------
    >>> t = cutoff_ce_test([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> t.value, t.p_value > 0.05
    (0.125, True)
    """

    value: float
    statistic: float
    p_value: float
    interval: tuple
    bias: float


@accepts_multiclass()
@fill_docstring
def cutoff_ce(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Cutoff calibration error (Rossellini et al. 2025): the largest ``|bias|`` over intervals,
    sup over intervals I of ``|(1/T) sum_{t: p_t in I} (y_t - p_t)|`` (docs/estimators.md).

    Equal predictions always fall in the same interval, so the value is the range
    max_k P_k - min_k P_k of the prefix sums P_k = (1/T) sum_{i<=k} (s_i - q_i n_i) over
    buckets in increasing order, P_0 = 0 included. O(m). On a binned table the intervals are
    unions of consecutive bins (a lower bound on the value of the raw predictions).

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
        The cutoff CE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> cutoff_ce([0, 1, 1, 1], [0.5, 0.5, 0.5, 0.5])
    0.25
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    return float(_k.cutoff_kernel(q, n, s)[0])


@accepts_multiclass("report")
@fill_docstring
def cutoff_ce_test(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> CutoffCETest:
    """Cutoff CE with the asymptotic p-value of the hypothesis of perfect calibration
    (y_t ~ Bernoulli(p_t) independently).

    Under that hypothesis T P_k is a martingale with variance V = sum_i n_i q_i (1 - q_i),
    and T cutoffCE / sqrt(V) tends to the range of a standard Brownian motion on [0, 1]
    (Feller 1951; the range-of-cumulative-differences statistic of Arrieta-Ibarra et al.
    2022), whose survival function is ``fastcdl.sample.brownian_range_sf``. O(m).

    Weights are read as frequency weights (a round of weight 3 counts as three rounds). On a
    binned table V is computed from the bin means, which overstates the null variance
    sum_t p_t (1 - p_t) (Jensen), and the path is observed at bin ends only: both make the
    p-value conservative. For a finite-sample test use
    :func:`fastcdl.calibration_test`.

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
    CutoffCETest
        The value, the statistic, its p-value and the interval that attains the value; with
        ``multiclass="classwise"`` a :class:`fastcdl.ClasswiseResult` of tests.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> r = cutoff_ce_test([0, 1] * 50, [0.5] * 100)
    >>> r.value, r.p_value
    (0.0, 1.0)
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    value, k_lo, k_hi, V = _k.cutoff_kernel(q, n, s)
    value = float(value)
    T = float(n.sum())
    if V > 0.0:
        stat = T * value / math.sqrt(V)
        p = float(brownian_range_sf(stat))
    else:  # every prediction is 0 or 1: under the hypothesis the outcomes are certain
        stat = 0.0 if value == 0.0 else math.inf
        p = 1.0 if value == 0.0 else 0.0
    a, b = min(k_lo, k_hi), max(k_lo, k_hi)
    if a == b:
        interval, bias = (math.nan, math.nan), 0.0
    else:
        interval = (float(q[a]), float(q[b - 1]))
        bias = value if k_hi > k_lo else -value
    return CutoffCETest(value=value, statistic=stat, p_value=p, interval=interval, bias=bias)


# The two series of the law of the range R of a standard Brownian motion on [0, 1]: for small r
# the theta-function form of the distribution function converges after a few terms, for
# large r the form of the survival function does. Both are exact; they meet at _R_SWITCH.
_R_SWITCH = 1.2
_N_TERMS = 60


def brownian_range_cdf(r):
    """P(R <= r) for R = max - min of a standard Brownian motion on [0, 1] (Feller 1951).

    P(R <= r) = sum_{j >= 0} (8 / r^2 + 8 / (pi^2 (2j+1)^2)) exp(-pi^2 (2j+1)^2 / (2 r^2))
    for small r, and 1 - :func:`brownian_range_sf` for large r. Accepts a number or an array.

    >>> round(brownian_range_cdf(1.5958), 4)  # at the mean, 2 sqrt(2 / pi)
    0.5692
    """
    r = np.asarray(r, dtype=np.float64)
    out = 1.0 - _range_sf_large(np.maximum(r, _R_SWITCH))
    small = r < _R_SWITCH
    if np.any(small):
        out = np.where(small, _range_cdf_small(np.where(small, r, 1.0)), out)
    out = np.where(r <= 0.0, 0.0, out)
    return float(out) if out.ndim == 0 else out


def brownian_range_sf(r):
    """P(R > r) for R = max - min of a standard Brownian motion on [0, 1] (Feller 1951):
    8 sum_{k >= 1} (-1)^(k-1) k (1 - Phi(k r)) for large r, 1 - :func:`brownian_range_cdf`
    for small r. Accepts a number or an array.

    >>> round(brownian_range_sf(3.0), 5)
    0.0108
    """
    r = np.asarray(r, dtype=np.float64)
    out = _range_sf_large(np.maximum(r, _R_SWITCH))
    small = r < _R_SWITCH
    if np.any(small):
        out = np.where(small, 1.0 - _range_cdf_small(np.where(small, r, 1.0)), out)
    out = np.where(r <= 0.0, 1.0, out)
    return float(out) if out.ndim == 0 else out


def _range_cdf_small(r):
    odd = (2.0 * np.arange(_N_TERMS) + 1.0)[:, None]
    r2 = np.square(r)[None, :] if np.ndim(r) else np.array([[r * r]])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        terms = (8.0 / r2 + 8.0 / (math.pi**2 * odd**2)) * np.exp(-(math.pi**2) * odd**2 / (2.0 * r2))
    val = np.nan_to_num(terms, nan=0.0).sum(axis=0)
    return val.reshape(np.shape(r))


def _range_sf_large(r):
    from scipy.special import ndtr  # imported on use: scipy.special is slow to import

    k = np.arange(1, _N_TERMS + 1, dtype=np.float64)[:, None]
    sign = np.where(k % 2 == 1, 1.0, -1.0)
    rr = np.atleast_1d(r)[None, :]
    val = 8.0 * (sign * k * ndtr(-k * rr)).sum(axis=0)
    return val.reshape(np.shape(r))


# --------------------------------------------------------------------------------------
# ATB


@accepts_multiclass()
@fill_docstring
def atb(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Averaged two-bin calibration error (Hartline, Hu, Wu 2026):

        ATB = integral over u in [0, 1] of (1/T^2) [ (sum_{t: p_t < u} (p_t - y_t))^2
                                                   + (sum_{t: p_t >= u} (p_t - y_t))^2 ] du,

    in closed form over the pieces between consecutive predictions, O(m). Reporting the true
    probabilities minimises its expectation, so it ranks models honestly. It is biased
    upwards by about Brier / T; :func:`atb_unbiased` removes that.

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
        ATB; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> atb([0, 1], [0.25, 0.75])
    0.015625
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    return float(_k.atb_kernel(q, n, s))


@accepts_multiclass()
@fill_docstring
def atb_unbiased(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """(T ATB - Brier) / (T - 1), an unbiased estimate of the population ATB for T >= 2
    independent, identically distributed rounds (docs/estimators.md). Can be negative. O(m).

    Needs exact buckets (bins=None) and unweighted rounds, else ValueError: the correction
    counts rounds and needs each round's own prediction.

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
        The unbiased estimate (it can be negative); a :class:`fastcdl.ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for binned tables, sample weights, or fewer than 2 rounds.

    Examples
    --------
    >>> atb_unbiased([0, 1], [0.25, 0.75])  # (2 * 0.015625 - 0.0625) / 1
    -0.03125
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    if st.edges is not None:
        raise ValidationError(
            "bins",
            "must be None for atb_unbiased",
            message="atb_unbiased needs exact buckets (bins=None): its correction uses each round's own prediction",
        )
    if st.weighted:
        raise ValidationError(
            "sample_weight",
            "is not supported by atb_unbiased",
            message="atb_unbiased is unbiased for unweighted rounds only; use atb with weights",
        )
    T = float(n.sum())
    if T < 2:
        raise ValidationError("y_true", "needs at least 2 rounds", message="atb_unbiased needs at least 2 rounds")
    return float((T * _k.atb_kernel(q, n, s) - _k.brier_table_kernel(q, n, s)) / (T - 1.0))


# --------------------------------------------------------------------------------------
# CDL_M and VCDL_M cross-fitted: the recalibration fitted on one half, judged on the other


def crossfit_split(st: BucketStats, seed=0):
    """The two halves of an unweighted table's rounds: (n_A, s_A, n_B, s_B) per bucket.

    The rounds, in the table's order, alternate between the halves (rank j goes to A when j is
    even), so a_i = n_A[i] is fixed by the counts alone; the positives of a bucket shared by
    both halves are split at random, s_A[i] ~ Hypergeometric(s_i, n_i - s_i, a_i), from
    ``seed``. Which half a round joins never depends on its outcome. O(m).
    """
    n = np.asarray(st.counts, dtype=np.int64)
    s = np.asarray(st.positives, dtype=np.int64)
    C = np.concatenate([[0], np.cumsum(n)])
    a = (C[1:] + 1) // 2 - (C[:-1] + 1) // 2  # even ranks in [C_i, C_i + n_i)
    sa = np.where(s == n, a, np.where(a == n, s, 0))  # all positive, or the whole bucket in A
    mixed = (a > 0) & (a < n) & (s > 0) & (s < n)
    if mixed.any():
        rng = np.random.default_rng(check_seed(seed))
        sa[mixed] = rng.hypergeometric(s[mixed], n[mixed] - s[mixed], a[mixed])
    return a, sa, n - a, s - sa


def _step_fit(q_fit, iso, q):
    """The non-decreasing step function through the fitted buckets (q_fit, iso), read at q:
    the value of the last fitted bucket at or below q (the first one's below them all)."""
    j = np.searchsorted(q_fit, q, side="right") - 1
    return iso[np.maximum(j, 0)]


def _crossfit_terms(q, n_fit, s_fit, n_judge, s_judge):
    """(lo, hi, sign, s, n) per bucket judged: the recalibration h of the fitted half changes a
    V task's action on the judged rounds of bucket i for kinks mu in (lo, hi], where it gains
    sign (s_i - mu n_i)."""
    fit = n_fit > 0
    if not fit.any():
        return (np.empty(0),) * 5
    iso = _k.pav_kernel(readonly(n_fit[fit].astype(np.float64)), readonly(s_fit[fit].astype(np.float64)))
    judge = n_judge > 0
    qj = q[judge]
    h = _step_fit(q[fit], iso, qj)
    sign = np.sign(h - qj)
    return (
        np.minimum(qj, h),
        np.maximum(qj, h),
        sign,
        s_judge[judge].astype(np.float64),
        n_judge[judge].astype(np.float64),
    )


def crossfit_curve(q, n_a, s_a, n_b, s_b):
    """The cross-fitted monotone V-kink curve at its breakpoints: (x, h) with x sorted from 0 to
    1 (1/2 among them) and h = max(f(x), f(x+)), where

        f(mu) = (1/T) sum over the rounds t of (y_t - mu) (1{h_o(p_t) >= mu} - 1{p_t >= mu}),

    h_o the isotonic (PAV) recalibration fitted on the other half than t's, extended to every
    prediction as a non-decreasing step. f is linear between breakpoints, 0 at 0. O(m log m).
    """
    T = float(np.sum(n_a) + np.sum(n_b))
    parts = [_crossfit_terms(q, n_a, s_a, n_b, s_b), _crossfit_terms(q, n_b, s_b, n_a, s_a)]
    lo, hi, sign, s, n = (np.concatenate([p[i] for p in parts]) for i in range(5))
    keep = sign != 0.0
    lo, hi, sign, s, n = lo[keep], hi[keep], sign[keep], s[keep], n[keep]
    # lo and hi are each sorted (min and max of the sorted qj and the non-decreasing h_o(qj), per
    # half): a stable sort (numpy's timsort) merges those runs, where np.unique's sort did not
    # use them; no -0.0 or NaN among them, so equal values are equal bits and x is np.unique's
    x = np.concatenate([lo, hi, [0.0, 0.5, 1.0]])
    x.sort(kind="stable")
    x = x[np.r_[True, x[1:] != x[:-1]]]
    # the kinks in (x_k, x_k+1] see the terms with lo <= x_k and hi >= x_k+1
    alpha = np.zeros(x.shape[0] + 1)
    beta = np.zeros(x.shape[0] + 1)
    i_lo = np.searchsorted(x, lo)
    i_hi = np.searchsorted(x, hi)
    np.add.at(alpha, i_lo, sign * s)
    np.add.at(alpha, i_hi, -sign * s)
    np.add.at(beta, i_lo, sign * n)
    np.add.at(beta, i_hi, -sign * n)
    alpha = np.cumsum(alpha)[:-1] / T  # alpha[k], beta[k]: the piece (x_k, x_k+1]
    beta = np.cumsum(beta)[:-1] / T
    right = alpha - x * beta  # f(x_k+), the piece after x_k
    at = np.empty_like(x)  # f(x_k), the end of the piece before x_k
    at[0] = 0.0
    at[1:] = alpha[:-1] - x[1:] * beta[:-1]
    right[-1] = at[-1]  # no piece after 1
    return x, np.maximum(at, right)


_last_crossfit = LastTable()  # the cross-fitted curve, by table and integer seed


def _crossfit(y_true, y_prob, sample_weight, bins, strategy, seed, what):
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    if st.weighted:
        raise ValidationError(
            "sample_weight",
            f"is not supported by {what}",
            message=f"{what} splits the rounds in two halves: it needs unweighted rounds",
        )
    if st.total < 2:
        raise ValidationError("y_true", "needs at least 2 rounds", message=f"{what} needs at least 2 rounds")
    # CDL_M and VCDL_M cross-fitted of one table and integer seed (a summary's two measures)
    # share the curve: a BucketStats is immutable, so the same object and seed give the same
    # one. Its arrays stay writable (their readers only read them): envelope_at_half's other
    # callers pass writable arrays, and a read-only pair would compile it again
    key = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else None
    curve = None if key is None else _last_crossfit.get(st, key)
    if curve is None:
        n_a, s_a, n_b, s_b = crossfit_split(st, seed)
        curve = crossfit_curve(np.asarray(st.values, dtype=np.float64), n_a, s_a, n_b, s_b)
        if key is not None:
            _last_crossfit.put(st, key, curve)
    return curve


@accepts_multiclass()
@fill_docstring
def cdl_monotone_crossfit(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", seed=0) -> float:
    """CDL_M cross-fitted: the rounds split in two halves (``fastcdl.sample.crossfit_split``),
    the isotonic recalibration fitted on each half and judged on the other, then the worst task's gain,
    2 fbar(1/2), fbar the concave envelope of the cross-fitted V-kink curve (docs/estimators.md).

    The plug-in :func:`cdl_monotone` fits the recalibration to the same outcomes it judges, an
    optimism that biases it upwards; here a half's outcomes never judge the recalibration fitted
    to them (sample splitting / cross-fitting, as in double machine learning, Chernozhukov et al.
    2018). The sup over tasks remains, and the fitted recalibration is worse than the best
    monotone one, so it errs the other way where the population value is large. Can be
    negative in principle; at least 0 here (the task that never acts gains 0). O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    seed : int, default 0
        Splits the positives of buckets shared by the halves (``fastcdl.sample.crossfit_split``).
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The cross-fitted CDL_M; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for sample weights or fewer than 2 rounds.

    Examples
    --------
    >>> cdl_monotone_crossfit([1, 1, 1, 1, 0, 0, 0, 0], [0.2, 0.2, 0.3, 0.3, 0.7, 0.7, 0.8, 0.8])
    0.7
    """
    x, h = _crossfit(y_true, y_prob, sample_weight, bins, strategy, seed, "cdl_monotone_crossfit")
    return float(2.0 * envelope_at_half(x, h)[0])


@accepts_multiclass()
@fill_docstring
def vcdl_monotone_crossfit(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", seed=0) -> float:
    """VCDL_M cross-fitted: sup over kinks mu of f(mu) / max(mu, 1 - mu), f the V-kink curve of
    the recalibrations fitted on one half of the rounds and judged on the other (see
    :func:`cdl_monotone_crossfit`, docs/estimators.md). At least 0. O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    seed : int, default 0
        Splits the positives of buckets shared by the halves (``fastcdl.sample.crossfit_split``).
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The cross-fitted VCDL_M; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for sample weights or fewer than 2 rounds.

    Examples
    --------
    >>> vcdl_monotone_crossfit([1, 1, 1, 1, 0, 0, 0, 0], [0.2, 0.2, 0.3, 0.3, 0.7, 0.7, 0.8, 0.8])
    0.5
    """
    x, h = _crossfit(y_true, y_prob, sample_weight, bins, strategy, seed, "vcdl_monotone_crossfit")
    return float(np.max(h / np.maximum(x, 1.0 - x)))


# --------------------------------------------------------------------------------------
# binned estimators from the literature: debiased squared error, monotone sweep


def _equal_mass_bins(st: BucketStats, what: str) -> BucketStats:
    """The table in round(T^(1/3)) equal-mass bins when it is exact, else as it is binned."""
    if st.edges is not None:
        return st
    return st.rebin("auto", strategy="quantile")


@accepts_multiclass()
@fill_docstring
def k2_debiased(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Debiased estimate of the squared calibration error E[(E[y | p] - p)^2] (Kumar, Liang and
    Ma 2019, the statistic of the T-Cal test of Lee, Huang, Hassani and Dobriban 2023), over
    equal-mass bins (docs/estimators.md):

        K2_d = sum_b (n_b / T) [ (ybar_b - pbar_b)^2 - ybar_b (1 - ybar_b) / (n_b - 1) ].

    The plug-in binned K2 is biased upwards by the variance of each bin's frequency ybar_b;
    ybar_b (1 - ybar_b) / (n_b - 1) estimates it without bias when the rounds of a bin share
    their chance of y = 1. On an exact table (bins=None, the default) the rounds are first put
    in round(T^(1/3)) equal-mass bins (``rebin("auto", strategy="quantile")``); with ``bins``
    those bins are used. Can be negative. O(m) after the bucket table.

    Needs unweighted rounds, else ValueError. A bin of one round has no estimate of its
    variance: the equal-mass bins merge it into the next bin (the last into the one before; a
    large tied bucket can leave one round between two edges); given ``bins`` must hold at
    least 2 rounds each, else ValueError.

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
        The debiased estimate (it can be negative); a :class:`fastcdl.ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for sample weights, or a bin of fewer than 2 rounds.

    Examples
    --------
    >>> k2_debiased([0, 1, 1, 1], [0.5, 0.5, 0.5, 0.5])  # (3/4 - 1/2)^2 - (3/4)(1/4)/3
    0.0
    """
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    if st.weighted:
        raise ValidationError(
            "sample_weight",
            "is not supported by k2_debiased",
            message="k2_debiased counts the rounds of each bin: it needs unweighted rounds",
        )
    b = _equal_mass_bins(st, "k2_debiased")
    n = b.counts.astype(np.float64)
    keep = n > 0
    n, s, ps = n[keep], b.positives[keep].astype(np.float64), b.prob_sums[keep]
    if st.edges is None and n.shape[0] > 1 and np.any(n < 2):
        n, s, ps = _merge_single_rounds(n, s, ps)
    y, p = s / n, ps / n
    if np.any(n < 2):
        raise ValidationError(
            "bins",
            "has a bin of one round",
            message=f"k2_debiased needs at least 2 rounds in every bin; {int(np.sum(n < 2))} bin(s) hold one",
        )
    T = n.sum()
    return float(np.sum(n * ((y - p) ** 2 - y * (1.0 - y) / (n - 1.0))) / T)


def _merge_single_rounds(n, s, ps):
    """Bins of one round merged into the next bin (the last into the one before): the equal-mass
    bins of a table with a large tied bucket can leave one round between two edges."""
    n, s, ps = list(n), list(s), list(ps)
    i = 0
    while i < len(n) and len(n) > 1:
        if n[i] >= 2:
            i += 1
            continue
        j = i + 1 if i + 1 < len(n) else i - 1
        n[j] += n[i]
        s[j] += s[i]
        ps[j] += ps[i]
        del n[i], s[i], ps[i]
        i = min(i, j)
    return np.array(n), np.array(s), np.array(ps)


def _sweep_bins(Cprev, T, b):
    """Start of each of b equal-mass bins among the buckets: bucket i goes to bin
    floor(b C_i / T), C_i the rounds before it (its first round's rank)."""
    return np.searchsorted(Cprev * b, np.arange(b + 1) * T, side="left")


@accepts_multiclass()
@fill_docstring
def ece_sweep(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Monotone-sweep equal-mass ECE (Roelofs, Cain, Shlens and Mozer 2022): the ECE over the
    largest number of equal-mass bins b, swept up from 1, at which the bins' frequencies of
    y = 1 still do not decrease from bin to bin (docs/estimators.md).

    The sweep stops at the first b whose frequencies decrease somewhere, or when b exceeds the
    number of buckets, and takes the b before it. The rounds sorted by prediction go to bin
    floor(b j / T) by their rank j (from 0); tied rounds stay together, in the bin of the first
    of them, so a bin can be empty (empty bins are skipped). With weights, T and the ranks
    count weight. The value is (1/T) sum_b abs(s_b - sum of p over bin b). Needs an exact table
    (bins=None). O(b_sweep^2 log m) after the bucket table; b_sweep grows about like T^(1/3).

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
        ECE_sweep, in [0, 1]; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for a binned table (the sweep makes its own bins).

    Examples
    --------
    >>> ece_sweep([0, 1, 0, 1], [0.1, 0.2, 0.6, 0.9])  # bins {0.1, 0.2}, {0.6, 0.9}; three would decrease
    0.3
    """
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    if st.edges is not None:
        raise ValidationError(
            "bins",
            "must be None for ece_sweep",
            message="ece_sweep makes its own equal-mass bins: it needs exact buckets (bins=None)",
        )
    n = np.asarray(st.counts, dtype=np.float64)
    C = np.concatenate([[0.0], np.cumsum(n)])
    S = np.concatenate([[0.0], np.cumsum(np.asarray(st.positives, dtype=np.float64))])
    P = np.concatenate([[0.0], np.cumsum(np.asarray(st.prob_sums, dtype=np.float64))])
    T = C[-1]
    Cprev = C[:-1]
    best = None
    for b in range(1, st.n_buckets + 1):
        cut = _sweep_bins(Cprev, T, b)
        nb, sb, pb = np.diff(C[cut]), np.diff(S[cut]), np.diff(P[cut])
        full = nb > 0
        freq = sb[full] / nb[full]
        if np.any(np.diff(freq) < 0.0):
            break
        best = float(np.sum(np.abs(sb[full] - pb[full])) / T)
    return best


# --------------------------------------------------------------------------------------
# smooth calibration error


@accepts_multiclass()
@fill_docstring
def smce(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Smooth calibration error (Blasiok, Gopalan, Hu, Nakkiran 2023), exactly:

        smCE = max (1/T) sum_t w(p_t) (y_t - p_t) over w: [0, 1] -> [-1, 1] 1-Lipschitz.

    Within constant factors of the lower distance to calibration. Since the predictions lie
    in [0, 1], w cannot touch both -1 and 1, so one side of the box suffices; that LP is
    solved as its dual, by two dynamic programmes over convex piecewise-linear functions,
    one from each end of the table, joined at a middle bucket: O(m log m), no LP solver
    (docs/estimators.md). From raw rounds add one sort of their outcome keys (the table's
    predictions and residuals are read off them, the table is not built; the value is the
    table's, bit for bit). On a binned table the bin means stand for the predictions. From
    SMCE_THREADS_FROM buckets on, the two programmes run side by side (the second on a
    helper thread if it starts in time); the value is the same, bit for bit.

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
        smCE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> smce([1, 1], [0.5, 0.5])
    0.5
    """
    if bins is None and sample_weight is None and y_prob is not None and not isinstance(y_true, BucketStats):
        # the exact table's predictions and residuals are read off the sorted outcome keys
        # in one pass: no table is built, and the value is the table's, bit for bit
        check_binning(None, strategy)
        y, p, w = prepare_rounds(y_true, y_prob)
        check_rounds(y, p, w)
        keys, spare = sorted_outcome_keys_and_spare(y, p)
        r = spare.view(np.float64)  # the sort's other buffer holds the residuals
        checkpoints = _k.smce_checkpoints(keys.shape[0])
        m = _k.keys_residuals(keys, r, checkpoints)
        q, r, T = keys[:m].view(np.float64), r[:m], float(keys.shape[0])
        checkpoints = checkpoints[: (m + _k.SMCE_BLOCK - 1) // _k.SMCE_BLOCK + 1]
    else:
        st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
        value = _last_smce.get(st, "smce")
        if value is not None:  # a summary's measure and its interval's value: one table, one smCE
            return value
        r = np.empty(q.shape[0])
        checkpoints = _k.smce_checkpoints(q.shape[0])
        T = _k.table_residuals(q, n, s, r, checkpoints)
        paired = q.shape[0] >= SMCE_THREADS_FROM and numba.config.NUMBA_NUM_THREADS >= 2
        value = _smce_qr(q, r, T, checkpoints, paired)
        _last_smce.put(st, "smce", value)
        return value
    paired = q.shape[0] >= SMCE_THREADS_FROM and numba.config.NUMBA_NUM_THREADS >= 2
    return _smce_qr(q, r, T, checkpoints, paired)


_last_smce = LastTable()  # smCE of the last table, computed once per table


def _smce_qr(q, r, T, checkpoints, paired):
    """smCE of predictions q and residuals r: the steps of
    fastcdl._compiled.estimators.smce_qr, called one by one (so that no kernel joins them:
    one compilation fewer, for microseconds a call); with ``paired`` its two programmes run
    side by side (fastcdl.pair). The same value either way, bit for bit. q is passed read-only
    (a table's is; the sorted keys' view is not), so that each step compiles once."""
    q = readonly(q)
    h = np.empty(2 * max(q.shape[0] - 1, 1))  # numpy's: huge pages when large (see outcome_keys)
    R, sign, J, S, out = _k.smce_setup(q, checkpoints)
    sides = [lambda side=side: _k.smce_side(q, r, sign, J, side, checkpoints, h, S, out) for side in range(2)]
    if paired:
        pair(*sides)
    else:
        for side in sides:
            side()
    return float(_k.smce_value(r, T, R, sign, J, h, S, out))


# From this many buckets on, smce runs its two programmes side by side (fastcdl.pair:
# the second on a helper thread if it starts in time, else after the first on the calling
# thread). Below, handing a programme over costs about what it saves.
SMCE_THREADS_FROM = 1 << 15


# --------------------------------------------------------------------------------------
# Classic numbers


@accepts_multiclass()
@fill_docstring
def mce(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Maximum calibration error: max over non-empty buckets of ``|q_i - qhat_i|``. O(m).

    Meaningful on binned tables; on exact buckets of continuous predictions it is close to
    1 whatever the model (SampleSizeWarning).

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
        MCE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> mce([0, 1, 1, 1], [0.5, 0.5, 0.9, 0.9])
    0.09999999999999998
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    check_sample_size(st, "mce", stacklevel=4)
    return float(_k.mce_kernel(q, n, s)[0])


@accepts_multiclass()
@fill_docstring
def rmsce(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Root-mean-square calibration error sqrt(K2) = sqrt((1/T) sum_i n_i (q_i - qhat_i)^2). O(m).

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
        RMSCE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> rmsce([0, 0], [0.5, 0.5])
    0.5
    """
    st, q, n, s = _table(y_true, y_prob, bins, sample_weight, strategy)
    check_sample_size(st, "rmsce", stacklevel=4)
    return math.sqrt(max(float(k2_kernel(q, n, s)), 0.0))


def _binned_brier_error():
    return ValidationError(
        "y_true",
        "is a binned BucketStats",
        message="the Brier score needs each round's prediction, which a binned BucketStats does not keep "
        "(it carries sums of p per bin, not of p^2): pass y_true and y_prob, or an exact table (bins=None)",
    )


@accepts_multiclass()
@fill_docstring
def brier(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """Brier score (1/T) sum_t (p_t - y_t)^2 (weighted: sum w (p - y)^2 / sum w).

    From raw arrays it is computed on the rounds, O(T), and does not depend on ``bins``; from
    an exact BucketStats it is computed on the table, O(m). A binned BucketStats does not
    determine it (ValueError).

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
        The Brier score; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for a binned BucketStats (it does not keep each round's prediction).

    Examples
    --------
    >>> brier([0, 1], [0.25, 0.5])
    0.15625
    """
    if isinstance(y_true, BucketStats):
        st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
        if st.edges is not None:
            raise _binned_brier_error()
        return float(_k.brier_table_kernel(*st.table()))
    if y_prob is None:
        raise ValidationError("y_prob", "is required unless the first argument is a BucketStats")
    return _brier_rounds(y_true, y_prob, sample_weight, bins, strategy)


def _brier_rounds(y_true, y_prob, sample_weight, bins, strategy="uniform"):
    check_binning(bins, strategy)
    y, p, w = prepare_rounds(y_true, y_prob, sample_weight)
    check_rounds(y, p, w)
    return float(_k.brier_rounds_kernel(y, p, w))


@dataclass(frozen=True)
class BrierDecomposition:
    """Murphy's decomposition of the Brier score on a bucket table::

        brier = reliability - resolution + uncertainty + within_bin

    Returned by :func:`brier_decomposition`; frozen.

    Attributes
    ----------
    brier : float
        The Brier score, (1/T) sum_t (p_t - y_t)^2.
    reliability : float
        (1/T) sum_i n_i (q_i - qhat_i)^2 (= fastcdl.k2).
    resolution : float
        (1/T) sum_i n_i (qhat_i - ybar)^2.
    uncertainty : float
        ybar (1 - ybar).
    within_bin : float
        0 for exact buckets; on binned tables the part of the Brier score that the bin means
        do not see (the spread of predictions inside bins and its covariance with the
        outcomes), computed as the remainder from the raw rounds' Brier score. NaN (and
        brier NaN) for a binned BucketStats, which does not determine the Brier score.

    Examples
    --------
    >>> d = brier_decomposition([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> d.brier, d.reliability - d.resolution + d.uncertainty
    (0.0625, 0.0625)
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin: float


@accepts_multiclass("report")
@fill_docstring
def brier_decomposition(
    y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform"
) -> BrierDecomposition:
    """Brier score = reliability - resolution + uncertainty (+ within_bin on binned tables).

    Exact buckets: the three parts add up to the Brier score (to rounding) and within_bin is
    0. Binned from raw arrays: reliability, resolution and uncertainty are those of the
    binned table, the Brier score is computed on the rounds, and within_bin is the
    remainder, so the parts add up. A binned BucketStats: the three parts of the table, and
    brier = within_bin = NaN. O(m) (O(T) more for the raw Brier score when binned).

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
    BrierDecomposition
        The score and its parts; with ``multiclass="classwise"`` a
        :class:`fastcdl.ClasswiseResult` of decompositions.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> d = brier_decomposition([0, 1, 1, 0], [0.25, 0.75, 0.75, 0.25])
    >>> d.brier, d.reliability, d.resolution, d.uncertainty, d.within_bin
    (0.0625, 0.0625, 0.25, 0.25, 0.0)
    """
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    q, n, s = st.table()
    rel, res, unc = (float(v) for v in _k.murphy_kernel(q, n, s))
    if st.edges is None:
        total = float(_k.brier_table_kernel(q, n, s))
        within = 0.0
    elif isinstance(y_true, BucketStats):
        total = within = math.nan
    else:
        total = _brier_rounds(y_true, y_prob, sample_weight, None)
        within = total - (rel - res + unc)
    return BrierDecomposition(brier=total, reliability=rel, resolution=res, uncertainty=unc, within_bin=within)
