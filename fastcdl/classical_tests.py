"""The classical calibration tests of statistics and medicine, from the bucket table.

- :func:`hosmer_lemeshow_test`: Hosmer and Lemeshow's C-hat over groups of predicted risk,
  against a chi-square law (Hosmer and Lemeshow 1980, "Goodness of fit tests for the multiple
  logistic regression model", Communications in Statistics A 9(10)).
- :func:`spiegelhalter_test`: Spiegelhalter's Z, the standardised Brier score (Spiegelhalter 1986,
  "Probabilistic prediction in patient management and clinical trials", Statistics in Medicine
  5(5)).
- :func:`fastcdl.ks_test`: the Kolmogorov-Smirnov statistic of the cumulative differences, against the
  law of the largest absolute value of a standard Brownian motion on [0, 1] (Tygert 2021,
  "Cumulative deviation of a subpopulation from the full population", and Arrieta-Ibarra,
  Gujral, Tannen, Tygert and Xu 2022, "Metrics of calibration for probabilistic predictions",
  JMLR 23). Its range (Kuiper's statistic) is :func:`fastcdl.cutoff_ce_test`.
- :func:`calibration_slope`: Cox's calibration slope and intercept, a logistic regression of the
  outcomes on the logits of the predictions (Cox 1958, "Two further applications of a model for
  binary regression", Biometrika 45), and the calibration-in-the-large intercept.

Conventions are in docs/classical-tests.md. Each returns a frozen result whose ``value`` is its
statistic (the slope for :func:`calibration_slope`), so ``multiclass="classwise"`` gives one per
class. Every test needs the predictions of the rounds: on a binned table only the
Hosmer-Lemeshow test applies (its expected counts are sums of predictions, which a binned table
keeps); the others refuse one, as the Brier score does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_count

__all__ = [
    "HosmerLemeshowTest",
    "SpiegelhalterTest",
    "KSTest",
    "CalibrationSlope",
    "hosmer_lemeshow_test",
    "spiegelhalter_test",
    "ks_test",
    "calibration_slope",
    "brownian_max_sf",
]


def _exact_table(y_true, y_prob, sample_weight, what):
    st = stats_of(y_true, y_prob, None, sample_weight)
    if st.edges is not None:
        raise ValidationError(
            "y_true",
            "is a binned BucketStats",
            message=f"{what} needs each round's prediction, which a binned BucketStats does not keep: pass y_true "
            "and y_prob, or an exact table (bins=None)",
        )
    q, n, s = st.table()
    return st, q, np.asarray(n, dtype=np.float64), np.asarray(s, dtype=np.float64)


# --------------------------------------------------------------------------------------
# Hosmer-Lemeshow


@dataclass(frozen=True)
class HosmerLemeshowTest:
    """Hosmer and Lemeshow's test: C-hat over groups of predicted risk.

    Attributes
    ----------
    statistic : float
        C-hat = sum_g (O_g - E_g)^2 / (E_g (1 - E_g / n_g)); inf when a group whose predictions
        are all 0 or all 1 has an outcome against them.
    p_value : float
        Its chi-square tail with ``dof`` degrees of freedom.
    dof : int
        groups (predictions judged on new rounds), or groups - 2 (``fitted=True``).
    groups : int
        The groups formed (fewer than asked when tied predictions fill more than a group).
    observed, expected, rounds : tuple of float
        O_g, E_g and n_g of each group, in increasing order of risk.

    Examples
    --------
    >>> r = hosmer_lemeshow_test([0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.4, 0.6, 0.8, 0.9], groups=3)
    >>> r.rounds, round(r.value, 4)
    ((2.0, 2.0, 2.0), 0.7059)
    """

    statistic: float
    p_value: float
    dof: int
    groups: int
    observed: tuple
    expected: tuple
    rounds: tuple

    @property
    def value(self) -> float:
        """The statistic."""
        return self.statistic


def _group_ends(n, groups):
    """The bucket index where each group ends (exclusive): the bucket boundary nearest to each
    equal-count cut k T / g (the lower one on a tie), equal cuts merged. A cut nearest to 0 or T
    is moved to the first or last bucket's inner boundary, where it merges with its neighbour:
    the same groups as dropping it."""
    cum = np.cumsum(n)
    T = cum[-1]
    ends = []
    for k in range(1, groups):
        target = k * T / groups
        j = int(np.searchsorted(cum, target))  # first boundary with cum >= target
        below = cum[j - 1] if j > 0 else 0.0
        end = j if (j > 0 and target - below <= cum[j] - target) else j + 1
        end = min(max(end, 1), len(n))
        if not ends or end > ends[-1]:
            ends.append(end)
    if not ends or ends[-1] < len(n):
        ends.append(len(n))
    return ends


@accepts_multiclass(kind="report")
@fill_docstring
def hosmer_lemeshow_test(
    y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", groups=10, fitted=False
):
    """Hosmer-Lemeshow test of calibration over groups of predicted risk. O(m) after the table.

    The rounds, sorted by prediction, are cut into ``groups`` groups of (nearly) equal size
    ("deciles of risk"); a bucket of equal predictions is never split: each cut is the bucket
    boundary nearest to k T / groups (the lower one on a tie), cuts that fall together are one and
    a cut at 0 or T makes no group, so heavily tied predictions give fewer groups (``groups`` of
    the result says how many). With
    O_g the rounds with y = 1, E_g the sum of the predictions and n_g the rounds of group g,
    C-hat = sum_g (O_g - E_g)^2 / (E_g (1 - E_g / n_g)). For predictions judged on rounds they
    were not fitted on (fastcdl's case: a model scored on held-out data, a forecaster's record)
    C-hat tends to a chi-square law with ``groups`` degrees of freedom under perfect calibration;
    Hosmer and Lemeshow's groups - 2 (1980) is for a logistic model fitted on the same rounds
    (``fitted=True``), and on new rounds it gives p-values that are too small (tests/ checks the
    default's p-values are uniform on calibrated samples). Sample weights count as rounds: T, the
    cuts and n_g are sums of weights, O_g and E_g weighted sums, so integer weights give the test
    of the repeated rounds. On a binned table the bins are the buckets (E_g stays the sum of the
    predictions, which the table keeps).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    groups : int, default 10
        The groups asked for, at least 3.
    fitted : bool, default False
        The predictions come from a model fitted on these same rounds: groups - 2 degrees of
        freedom (Hosmer and Lemeshow's), instead of groups.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    HosmerLemeshowTest

    Raises
    ------
    {{raises}}
        Also for groups < 3, fewer buckets than groups, or fewer than 3 groups formed.

    Examples
    --------
    >>> r = hosmer_lemeshow_test([0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.4, 0.6, 0.8, 0.9], groups=3)
    >>> r.groups, r.dof, round(r.statistic, 4)
    (3, 3, 0.7059)
    """
    check_count(groups, "groups", 3)
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    q, n, s = st.table()
    n = np.asarray(n, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    psum = np.asarray(st.prob_sums, dtype=np.float64)
    if n.shape[0] < groups:
        raise ValidationError(
            "groups",
            "is larger than the distinct predictions",
            message=f"groups={groups} needs at least {groups} distinct predictions (buckets); the rounds have "
            f"{n.shape[0]}: ask for fewer groups",
        )
    ends = _group_ends(n, groups)
    if len(ends) < 3:
        raise ValidationError(
            "groups",
            "formed fewer than 3 groups",
            message=f"the tied predictions leave {len(ends)} groups of the {groups} asked (a bucket is never split); "
            "the test needs at least 3",
        )
    starts = [0] + ends[:-1]
    obs = np.array([s[a:b].sum() for a, b in zip(starts, ends)])
    exp = np.array([psum[a:b].sum() for a, b in zip(starts, ends)])
    rounds = np.array([n[a:b].sum() for a, b in zip(starts, ends)])
    stat = 0.0
    for o, e, k in zip(obs, exp, rounds):
        var = e * (1.0 - e / k)
        if var > 0:
            stat += (o - e) ** 2 / var
        elif abs(o - e) > 1e-9 * max(k, 1.0):
            stat = math.inf  # predictions all 0 (or all 1) and an outcome against them
    from scipy import special  # scipy.stats costs a second to import; chdtrc is chi2.sf

    dof = len(ends) - 2 if fitted else len(ends)
    p = 0.0 if math.isinf(stat) else float(special.chdtrc(dof, stat))
    return HosmerLemeshowTest(
        float(stat), p, dof, len(ends), tuple(obs.tolist()), tuple(exp.tolist()), tuple(rounds.tolist())
    )


# --------------------------------------------------------------------------------------
# Spiegelhalter


@dataclass(frozen=True)
class SpiegelhalterTest:
    """Spiegelhalter's test: Z and its two-sided normal p-value.

    Attributes
    ----------
    statistic : float
        Z = sum (y - p)(1 - 2p) / sqrt(sum (1 - 2p)^2 p (1 - p)).
    p_value : float
        2 Phi(-abs(Z)).

    Examples
    --------
    >>> round(spiegelhalter_test([0, 1, 1], [0.2, 0.6, 0.9]).value, 4)
    -0.7926
    """

    statistic: float
    p_value: float

    @property
    def value(self) -> float:
        """The statistic Z."""
        return self.statistic


@accepts_multiclass(kind="report")
@fill_docstring
def spiegelhalter_test(y_true, y_prob=None, *, sample_weight=None):
    """Spiegelhalter's Z test of calibration. O(m) after the table.

    Z = sum_t (y_t - p_t)(1 - 2 p_t) / sqrt(sum_t (1 - 2 p_t)^2 p_t (1 - p_t)) is the Brier
    score's deviation from its expectation under perfect calibration, standardised; the p-value is
    two-sided, 2 Phi(-abs(Z)) (Spiegelhalter 1986). From the table: sums over buckets with n_i rounds
    and s_i ones at q_i. Sample weights weigh the sums.

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused (the test needs each round's prediction).
    {{y_prob}}
    {{sample_weight}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    SpiegelhalterTest

    Raises
    ------
    {{raises}}
        Also when every prediction is 0, 1/2 or 1: the variance of the statistic is then 0 and Z
        is not defined.

    Examples
    --------
    >>> r = spiegelhalter_test([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9])
    >>> round(r.statistic, 4), round(r.p_value, 4)
    (-0.9045, 0.3657)
    """
    st, q, n, s = _exact_table(y_true, y_prob, sample_weight, "Spiegelhalter's test")
    a = 1.0 - 2.0 * q
    num = float(np.sum((s - n * q) * a))
    var = float(np.sum(n * a * a * q * (1.0 - q)))
    if not var > 0:
        raise ValidationError(
            "y_prob",
            "gives the statistic no variance",
            message="Spiegelhalter's Z is not defined: every prediction in y_prob is 0, 1/2 or 1, so its variance "
            "sum (1 - 2p)^2 p (1 - p) is 0",
        )
    from scipy import special

    z = num / math.sqrt(var)
    return SpiegelhalterTest(z, float(2.0 * special.ndtr(-abs(z))))


# --------------------------------------------------------------------------------------
# Kolmogorov-Smirnov on cumulative differences


def brownian_max_sf(x):
    """P(max_{0<=t<=1} abs(B_t) >= x) for a standard Brownian motion B: the p-value of :func:`fastcdl.ks_test`.

    Two series of the same law, each used where it converges fast: for x < 1.5,
    1 - (4/pi) sum_k (-1)^k / (2k + 1) exp(-(2k + 1)^2 pi^2 / (8 x^2)); from 1.5 on,
    4 sum_{k>=1} (-1)^(k+1) Phi(-(2k - 1) x), which keeps its relative precision in the far tail.

    Parameters
    ----------
    x : float
        At least 0.

    Returns
    -------
    float

    Examples
    --------
    >>> round(brownian_max_sf(1.0), 6), round(brownian_max_sf(3.0), 8)
    (0.629223, 0.00539959)
    """
    from scipy import special

    x = float(x)
    if x <= 0:
        return 1.0
    if x < 1.5:
        total = 0.0
        for k in range(60):
            term = (-1) ** k / (2 * k + 1) * math.exp(-((2 * k + 1) ** 2) * math.pi**2 / (8.0 * x * x))
            total += term
            if abs(term) < 1e-18:
                break
        return min(max(1.0 - 4.0 / math.pi * total, 0.0), 1.0)
    total = 0.0
    for k in range(1, 60):
        term = (-1) ** (k + 1) * float(special.ndtr(-(2 * k - 1) * x))
        total += term
        if abs(term) < 1e-300 or abs(term) < 1e-17 * abs(total):
            break
    return min(4.0 * total, 1.0)


@dataclass(frozen=True)
class KSTest:
    """The Kolmogorov-Smirnov test of calibration on cumulative differences.

    Attributes
    ----------
    statistic : float
        max_k abs(C_k) / sigma.
    p_value : float
        P(max abs(B) >= statistic) for a standard Brownian motion on [0, 1].
    max_deviation : float
        max_k abs(C_k), with C_k = (1/T) sum of (y - p) over the rounds up to the k-th bucket.
    sigma : float
        sqrt(sum_t p_t (1 - p_t)) / T, the scale of C under perfect calibration.
    at : float
        The prediction of the bucket where abs(C_k) is largest.

    Examples
    --------
    >>> ks_test([0, 1, 1], [0.2, 0.6, 0.9]).at
    0.9
    """

    statistic: float
    p_value: float
    max_deviation: float
    sigma: float
    at: float

    @property
    def value(self) -> float:
        """The statistic."""
        return self.statistic


@accepts_multiclass(kind="report")
@fill_docstring
def ks_test(y_true, y_prob=None, *, sample_weight=None):
    """Kolmogorov-Smirnov test of calibration on the cumulative differences. O(m) after the table.

    With the rounds in increasing order of prediction, C_k = (1/T) sum_{j <= k} (y_j - p_j); under
    perfect calibration C is a martingale whose variance at the end is sigma^2 =
    sum_t p_t (1 - p_t) / T^2, and max_k abs(C_k) / sigma tends in law to the largest absolute value
    of a standard Brownian motion on [0, 1] (Tygert 2021; Arrieta-Ibarra et al. 2022), whose tail
    gives the p-value (``fastcdl.classical_tests.brownian_max_sf``). Ties: the rounds of a bucket (equal predictions)
    enter as one step, so the statistic does not depend on how ties would be ordered (a jitter
    that orders them, as some implementations do, can only raise it). The range of C instead of
    its largest absolute value is Kuiper's statistic, :func:`fastcdl.cutoff_ce_test`. Sample
    weights weigh the sums.

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused (the test needs each round's prediction).
    {{y_prob}}
    {{sample_weight}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    KSTest

    Raises
    ------
    {{raises}}
        Also when every prediction is 0 or 1 (sigma = 0).

    Examples
    --------
    >>> r = ks_test([0, 1, 0, 1, 1], [0.2, 0.3, 0.5, 0.7, 0.9])
    >>> round(r.statistic, 4), round(r.p_value, 4), r.at
    (0.5213, 0.9864, 0.3)
    """
    st, q, n, s = _exact_table(y_true, y_prob, sample_weight, "the Kolmogorov-Smirnov test")
    T = float(n.sum())
    C = np.cumsum(s - n * q) / T
    var = float(np.sum(n * q * (1.0 - q)))
    if not var > 0:
        raise ValidationError(
            "y_prob",
            "is 0 or 1 everywhere",
            message="the Kolmogorov-Smirnov test needs a prediction strictly between 0 and 1 (every prediction in "
            "y_prob is 0 or 1: the cumulative differences have no variance)",
        )
    sigma = math.sqrt(var) / T
    k = int(np.argmax(np.abs(C)))
    dev = float(abs(C[k]))
    stat = dev / sigma
    return KSTest(stat, brownian_max_sf(stat), dev, sigma, float(q[k]))


# --------------------------------------------------------------------------------------
# Cox's calibration slope and intercept


@dataclass(frozen=True)
class CalibrationSlope:
    """Cox's logistic recalibration logit P(y = 1) = intercept + slope * logit(p).

    Attributes
    ----------
    slope, slope_se : float
        The slope (1 for calibrated predictions; below 1 for predictions too extreme) and its
        standard error.
    intercept, intercept_se : float
        The intercept of the same fit (0 for calibrated predictions) and its standard error.
    citl, citl_se : float
        Calibration in the large: the intercept of the fit with the slope held at 1 (logit(p) as
        an offset), below 0 when the predictions are too high on average, and its standard error.
    iterations : int
        Newton steps of the two-parameter fit.

    Examples
    --------
    >>> r = calibration_slope([0, 1, 0, 1, 1], [0.2, 0.3, 0.5, 0.6, 0.9])
    >>> r.value == r.slope
    True
    """

    slope: float
    slope_se: float
    intercept: float
    intercept_se: float
    citl: float
    citl_se: float
    iterations: int

    @property
    def value(self) -> float:
        """The slope."""
        return self.slope


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


# Newton's steps stop when a full step moves the parameters by less than _TOL (relative to
# 1 + their largest magnitude); with step halving the fit cannot fail on data that are not
# separated, and _MAX_STEPS is a guard that no test reaches.
_TOL = 1e-10
_MAX_STEPS = 100


def _separation(q, n, s):
    """The prediction at which the outcomes are separated, or None.

    With x = logit(q) increasing along the buckets, the maximum-likelihood fit of
    logit P(y = 1) = a + b x exists if and only if neither outcome lies wholly on one side of
    some bucket and the other wholly on its other side, the bucket itself allowed to hold both
    (complete or quasi-complete separation; Albert and Anderson 1984). O(m).
    """
    ones = np.flatnonzero(s > 0)
    zeros = np.flatnonzero(n - s > 0)
    if zeros[-1] <= ones[0]:
        return float(q[zeros[-1]])
    if ones[-1] <= zeros[0]:
        return float(q[ones[-1]])
    return None


def _loglik(eta, n, s):
    return float(np.sum(s * eta - n * np.logaddexp(0.0, eta)))


def _newton(X, offset, n, s, beta, what):
    """(beta, inverse Fisher information, steps) of the logistic fit logit mu = offset + X beta
    with binomial weights (n, s), by Newton's method with step halving: O(m) a step."""
    eta = offset + X @ beta
    ll = _loglik(eta, n, s)
    for step in range(1, _MAX_STEPS + 1):
        mu = _sigmoid(eta)
        H = (X * (n * mu * (1.0 - mu))[:, None]).T @ X
        try:
            delta = np.linalg.solve(H, X.T @ (s - n * mu))
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(delta)):
            break
        converged = np.abs(delta).max() <= _TOL * (1.0 + np.abs(beta).max())
        t = 1.0
        while True:  # the log-likelihood is concave: a short enough step along delta raises it
            trial = beta + t * delta
            eta_t = offset + X @ trial
            ll_t = _loglik(eta_t, n, s)
            if ll_t >= ll - 1e-13 * (1.0 + abs(ll)) or t < 1e-12:
                break
            t *= 0.5
        beta, eta, ll = trial, eta_t, ll_t
        if converged:
            mu = _sigmoid(eta)
            H = (X * (n * mu * (1.0 - mu))[:, None]).T @ X
            return beta, np.linalg.inv(H), step
    raise ValidationError(
        "y_true",
        "does not let the fit converge",
        message=f"the logistic fit of {what} did not converge in {_MAX_STEPS} Newton steps (the outcomes are not "
        "separated by the predictions, so this is a numerical failure: please report the data)",
    )


def _round_of(y_prob, sample_weight, v):
    """(index, words) of the first round of positive weight predicted v, for an error message;
    (None, "") when the input was a table. Runs over the rounds only on that error's path."""
    if y_prob is None or np.ndim(y_prob) != 1:
        return None, ""
    hit = np.asarray(y_prob, dtype=np.float64) == v
    if sample_weight is not None:
        hit &= np.asarray(sample_weight, dtype=np.float64) > 0
    index = int(np.argmax(hit))
    return index, f" at index {index} (0-based)"


@accepts_multiclass(kind="report")
@fill_docstring
def calibration_slope(y_true, y_prob=None, *, sample_weight=None):
    """Cox's calibration slope and intercept, by a logistic fit on the logits of the predictions.

    Fits logit P(y = 1) = a + b logit(p) by maximum likelihood: b is the calibration slope (1
    when calibrated, below 1 when the predictions are too extreme, above 1 when too timid), a the
    intercept; standard errors from the inverse Fisher information at the fit. Also the
    calibration-in-the-large intercept, the fit of a with b held at 1 (logit(p) as an offset;
    Cox 1958; Van Calster et al. 2019, "Calibration: the Achilles heel of predictive analytics",
    BMC Medicine 17). Sample weights weigh the likelihood (a round of weight 3 counts as three).

    The fit is Newton's method on the bucket table (binomial weights n_i, s_i; O(m) a step),
    from a = 0, b = 1, halving a step until the log-likelihood does not fall, and stopping when
    a full step moves (a, b) by less than 1e-10 (1 + max(abs(a), abs(b))). Whether a finite fit exists
    is decided exactly before it starts, O(m): it does unless the outcomes are separated, every
    y = 1 on one side of some prediction and every y = 0 on the other (Albert and Anderson 1984).

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused (the fit needs each round's prediction).
    {{y_prob}}
    {{sample_weight}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    CalibrationSlope

    Raises
    ------
    {{raises}}
        Also for a prediction of exactly 0 or 1 (its logit is infinite; the error's ``index``
        is the first such round of y_prob, None for a table), a single distinct prediction (the
        slope is not identifiable), outcomes all 0 or all 1, or outcomes the predictions
        separate (no finite fit; the error's ``value`` is the prediction where they part).

    Examples
    --------
    >>> r = calibration_slope([0, 0, 1, 0, 1, 1, 0, 1], [0.2, 0.3, 0.3, 0.5, 0.5, 0.6, 0.7, 0.8])
    >>> round(r.slope, 4), round(r.intercept, 4), round(r.citl, 4)
    (0.8195, 0.0476, 0.0591)
    """
    st, q, n, s = _exact_table(y_true, y_prob, sample_weight, "the calibration slope")
    edge = np.flatnonzero((q <= 0.0) | (q >= 1.0))
    if edge.shape[0]:
        v = float(q[edge[0]])
        index, where = _round_of(y_prob, sample_weight, v)
        raise ValidationError(
            "y_prob",
            "holds a prediction of 0 or 1",
            index=index,
            value=v,
            message=f"the calibration slope fits on logit(p), and y_prob holds {v!r}{where}, whose logit is "
            "infinite; leave out (or report separately) the rounds predicted with certainty",
        )
    if q.shape[0] < 2:
        raise ValidationError(
            "y_prob",
            "has one distinct value",
            message="the calibration slope needs at least two distinct predictions in y_prob (with one, the slope "
            "is not identifiable)",
        )
    if float(s.sum()) <= 0 or float(s.sum()) >= float(n.sum()):
        raise ValidationError(
            "y_true",
            "is constant",
            message="the calibration slope needs outcomes of both kinds in y_true (all are 0, or all are 1: no finite "
            "fit)",
        )
    cut = _separation(q, n, s)
    if cut is not None:
        raise ValidationError(
            "y_true",
            "is separated by the predictions",
            value=cut,
            message="the logistic fit of the calibration slope has no finite solution: the outcomes are separated "
            f"by the predictions (every y = 1 on one side of the prediction {cut!r} and every y = 0 on the other, "
            "rounds at it allowed either way), so the slope is infinite",
        )
    x = np.log(q) - np.log1p(-q)
    ones = np.ones_like(x)
    beta, cov, steps = _newton(np.column_stack([ones, x]), 0.0, n, s, np.array([0.0, 1.0]), "the calibration slope")
    citl, citl_cov, _ = _newton(ones[:, None], x, n, s, np.zeros(1), "the calibration in the large")
    return CalibrationSlope(
        float(beta[1]),
        math.sqrt(cov[1, 1]),
        float(beta[0]),
        math.sqrt(cov[0, 0]),
        float(citl[0]),
        math.sqrt(citl_cov[0, 0]),
        steps,
    )
