"""The classical tests (fastcdl.classical_tests) against references written from their
definitions over rounds, scikit-learn's logistic fit, and the Brownian law by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats

import fastcdl as fc
from fastcdl.classical_tests import (
    brownian_max_sf,
    calibration_slope,
    hosmer_lemeshow_test,
    ks_test,
    spiegelhalter_test,
)


def _data(seed, T, distort=1.0, ties=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(1.5, 1.5, T) * 0.98 + 0.01
    if ties:
        p = np.round(p * 40) / 40
        p = np.clip(p, 0.025, 0.975)
    truth = 1 / (1 + np.exp(-distort * np.log(p / (1 - p))))
    y = (rng.random(T) < truth).astype(int)
    return y, p


# --------------------------------------------------------------------------------------
# references, round by round


def hl_reference(y, p, g):
    """Untied predictions: sort, cut after the round nearest k T / g (lower on a tie), sum."""
    order = np.argsort(p, kind="stable")
    y, p = np.asarray(y, float)[order], np.asarray(p, float)[order]
    T = len(p)
    cuts = [0] + [math.ceil(k * T / g - 0.5) for k in range(1, g)] + [T]
    stat = 0.0
    for a, b in zip(cuts[:-1], cuts[1:]):
        o = sum(y[a:b])
        e = sum(p[a:b])
        n = b - a
        stat += (o - e) ** 2 / (e * (1 - e / n))
    return stat, stats.chi2.sf(stat, g)


def spiegelhalter_reference(y, p):
    num = sum((yt - pt) * (1 - 2 * pt) for yt, pt in zip(y, p))
    den = math.sqrt(sum((1 - 2 * pt) ** 2 * pt * (1 - pt) for pt in p))
    z = num / den
    return z, 2 * stats.norm.sf(abs(z))


def ks_reference(y, p):
    """Untied predictions: the cumulative sums over the sorted rounds."""
    order = np.argsort(p, kind="stable")
    y, p = np.asarray(y, float)[order], np.asarray(p, float)[order]
    T = len(p)
    c, best = 0.0, 0.0
    for yt, pt in zip(y, p):
        c += (yt - pt) / T
        best = max(best, abs(c))
    sigma = math.sqrt(sum(pt * (1 - pt) for pt in p)) / T
    return best / sigma


def slope_reference(y, p, w=None):
    """Newton's method on the rounds' log-likelihood, written out; SEs from the Fisher information."""
    x = np.log(np.asarray(p) / (1 - np.asarray(p)))
    y = np.asarray(y, float)
    w = np.ones_like(x) if w is None else np.asarray(w, float)
    from scipy.special import expit

    def loglik(a, b):
        eta = a + b * x
        return np.sum(w * (y * eta - np.logaddexp(0, eta)))

    a, b = 0.0, 1.0
    for _ in range(200):
        mu = expit(a + b * x)
        g = np.array([np.sum(w * (y - mu)), np.sum(w * (y - mu) * x)])
        v = w * mu * (1 - mu)
        H = np.array([[v.sum(), (v * x).sum()], [(v * x).sum(), (v * x * x).sum()]])
        d = np.linalg.solve(H, g)
        t = 1.0
        while loglik(a + t * d[0], b + t * d[1]) < loglik(a, b) - 1e-12 and t > 1e-9:
            t /= 2
        a, b = a + t * d[0], b + t * d[1]
    mu = expit(a + b * x)
    v = w * mu * (1 - mu)
    H = np.array([[v.sum(), (v * x).sum()], [(v * x).sum(), (v * x * x).sum()]])
    cov = np.linalg.inv(H)
    return a, b, math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])


# --------------------------------------------------------------------------------------
# Hosmer-Lemeshow


@pytest.mark.parametrize("seed, T, g", [(0, 100, 10), (1, 257, 10), (2, 1000, 8), (3, 30, 3), (4, 999, 7)])
@pytest.mark.parametrize("distort", [1.0, 1.6])
def test_hosmer_lemeshow_against_rounds(seed, T, g, distort):
    y, p = _data(seed, T, distort)
    r = hosmer_lemeshow_test(y, p, groups=g)
    stat, pv = hl_reference(y, p, g)
    assert r.groups == g and r.dof == g
    assert hosmer_lemeshow_test(y, p, groups=g, fitted=True).dof == g - 2
    assert r.statistic == pytest.approx(stat, rel=1e-10)
    assert r.p_value == pytest.approx(pv, rel=1e-8, abs=1e-300)
    assert sum(r.rounds) == T and sum(r.observed) == sum(y)


def test_hosmer_lemeshow_ties_stay_in_one_group_and_weights_count_as_rounds():
    y, p = _data(5, 2000, ties=True)
    r = hosmer_lemeshow_test(y, p, groups=10)
    st = fc.bucket_stats(y, p)
    # every group boundary is a bucket boundary: group sizes are sums of whole buckets
    cum = set(np.cumsum(st.counts).tolist())
    assert all(c in cum for c in np.cumsum(r.rounds).tolist())
    assert r.statistic == pytest.approx(hosmer_lemeshow_test(st, groups=10).statistic, rel=1e-12)
    rng = np.random.default_rng(0)
    yy, pp = _data(6, 300)
    w = rng.integers(1, 4, 300)
    a = hosmer_lemeshow_test(yy, pp, sample_weight=w.astype(float), groups=6)
    b = hosmer_lemeshow_test(np.repeat(yy, w), np.repeat(pp, w), groups=6)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-10)
    heavy = np.r_[np.full(500, 0.3), np.linspace(0.4, 0.9, 500)]
    yh = (np.random.default_rng(1).random(1000) < heavy).astype(int)
    rh = hosmer_lemeshow_test(yh, heavy, groups=10)
    assert 3 <= rh.groups < 10 and rh.dof == rh.groups  # half the rounds tie: fewer groups


def test_hosmer_lemeshow_calibrated_p_values_are_roughly_uniform():
    """On predictions it was not fitted on, C-hat follows chi-square(groups): uniform p-values
    (with groups - 2 degrees of freedom they are too small, which this test would catch)."""
    pv = []
    for seed in range(300):
        y, p = _data(1000 + seed, 400)
        pv.append(hosmer_lemeshow_test(y, p).p_value)
    assert stats.kstest(pv, "uniform").pvalue > 0.001
    y, p = _data(7, 4000, distort=2.0)
    assert hosmer_lemeshow_test(y, p).p_value < 1e-6


def test_hosmer_lemeshow_bad_groups():
    y, p = _data(8, 50)
    for g in (2, 0):
        with pytest.raises(ValueError, match="groups"):
            hosmer_lemeshow_test(y, p, groups=g)
    with pytest.raises(ValueError, match="groups"):
        hosmer_lemeshow_test([0, 1, 1, 0], [0.2, 0.4, 0.6, 0.8], groups=5)
    with pytest.raises(ValueError, match="groups"):
        hosmer_lemeshow_test(np.r_[np.zeros(50), np.ones(50)], np.r_[np.full(99, 0.5), 0.6])


def test_hosmer_lemeshow_certain_predictions_against_the_outcome():
    r = hosmer_lemeshow_test([0, 0, 1, 1, 1, 0], [0.0, 0.0, 0.5, 0.6, 1.0, 1.0], groups=3)
    assert math.isinf(r.statistic) and r.p_value == 0.0


# --------------------------------------------------------------------------------------
# Spiegelhalter


@settings(max_examples=50, deadline=None)
@given(hs.integers(2, 300), hs.integers(0, 10**6), hs.sampled_from([0.7, 1.0, 1.5]))
def test_spiegelhalter_against_rounds(T, seed, distort):
    y, p = _data(seed, T, distort, ties=seed % 2 == 0)
    if np.all(np.isin(p, [0.5])):
        return
    r = spiegelhalter_test(y, p)
    z, pv = spiegelhalter_reference(y, p)
    assert r.statistic == pytest.approx(z, rel=1e-9, abs=1e-12)
    assert r.p_value == pytest.approx(pv, rel=1e-9)


def test_spiegelhalter_edges_and_bad_input():
    with pytest.raises(ValueError, match="1/2"):
        spiegelhalter_test([0, 1, 1], [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="binned"):
        spiegelhalter_test(fc.bucket_stats([0, 1], [0.2, 0.7], bins=4))
    r = spiegelhalter_test([0, 1, 1, 1], [0.0, 0.2, 0.5, 1.0])  # 0, 1/2 and 1 add nothing
    assert r.statistic == pytest.approx(spiegelhalter_reference([1], [0.2])[0])


# --------------------------------------------------------------------------------------
# Kolmogorov-Smirnov


@pytest.mark.parametrize("seed, T", [(0, 10), (1, 500), (2, 5000)])
def test_ks_against_rounds(seed, T):
    y, p = _data(seed, T, 1.3)
    r = ks_test(y, p)
    assert r.statistic == pytest.approx(ks_reference(y, p), rel=1e-10)
    assert r.p_value == pytest.approx(brownian_max_sf(r.statistic))


def test_ks_ties_are_one_step_and_never_above_an_ordering_of_them():
    y, p = _data(3, 3000, ties=True)
    r = ks_test(y, p)
    rng = np.random.default_rng(0)
    for _ in range(5):  # any order of the tied rounds gives a statistic at least as large
        jitter = p + rng.random(p.shape[0]) * 1e-9
        assert ks_reference(y, jitter) >= r.statistic - 1e-9


def test_brownian_tail_series_agree_and_match_simulation():
    from scipy import special

    for x in np.linspace(0.3, 4.0, 25):
        theta = 1 - 4 / math.pi * sum(
            (-1) ** k / (2 * k + 1) * math.exp(-((2 * k + 1) ** 2) * math.pi**2 / (8 * x * x)) for k in range(400)
        )
        reflect = 4 * sum((-1) ** (k + 1) * special.ndtr(-(2 * k - 1) * x) for k in range(1, 400))
        assert brownian_max_sf(x) == pytest.approx(theta, abs=1e-12)
        assert brownian_max_sf(x) == pytest.approx(reflect, abs=1e-12)
    assert brownian_max_sf(0.0) == 1.0
    assert 0 < brownian_max_sf(12.0) < 1e-30
    rng = np.random.default_rng(0)
    n, R = 4000, 4000
    m = np.abs(np.cumsum(rng.normal(size=(R, n)), axis=1) / math.sqrt(n)).max(axis=1)
    for x in (0.8, 1.2, 2.0):
        # a random walk's maximum is slightly below the motion's: within 3 sd plus that
        assert (m >= x).mean() == pytest.approx(brownian_max_sf(x), abs=3 * math.sqrt(0.25 / R) + 0.015)


def test_ks_calibrated_p_values_are_roughly_uniform_and_bad_input():
    pv = [ks_test(*_data(2000 + s, 500)).p_value for s in range(300)]
    assert stats.kstest(pv, "uniform").pvalue > 0.001
    with pytest.raises(ValueError, match="0 or 1"):
        ks_test([0, 1], [0.0, 1.0])
    with pytest.raises(ValueError, match="binned"):
        ks_test(fc.bucket_stats([0, 1], [0.2, 0.7], bins=4))


# --------------------------------------------------------------------------------------
# calibration slope


@pytest.mark.parametrize("seed, T, distort", [(0, 500, 1.0), (1, 2000, 0.6), (2, 2000, 1.8), (3, 40, 1.0)])
def test_calibration_slope_against_newton_on_rounds_and_sklearn(seed, T, distort):
    from sklearn.linear_model import LogisticRegression

    y, p = _data(seed, T, distort)
    r = calibration_slope(y, p)
    a, b, sa, sb = slope_reference(y, p)
    assert r.slope == pytest.approx(b, rel=1e-8) and r.intercept == pytest.approx(a, abs=1e-8)
    assert r.slope_se == pytest.approx(sb, rel=1e-6) and r.intercept_se == pytest.approx(sa, rel=1e-6)
    x = np.log(p / (1 - p)).reshape(-1, 1)
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(x, y)
    assert r.slope == pytest.approx(lr.coef_[0, 0], rel=1e-4)  # a third-party fit: its tolerance
    assert r.intercept == pytest.approx(lr.intercept_[0], abs=1e-4)
    # calibration in the large: the intercept of the fit with the slope held at 1 solves
    # sum (y - sigmoid(a + logit p)) = 0
    mu = 1 / (1 + np.exp(-(r.citl + x[:, 0])))
    assert abs(np.sum(y - mu)) < 1e-8 * T
    assert r.citl_se == pytest.approx(1 / math.sqrt(np.sum(mu * (1 - mu))), rel=1e-8)


def test_calibration_slope_recovers_the_distortion_and_weights():
    y, p = _data(9, 200_000, distort=0.7)
    r = calibration_slope(y, p)
    assert abs(r.slope - 0.7) < 4 * r.slope_se and abs(r.intercept) < 4 * r.intercept_se
    y, p = _data(10, 300)
    w = np.random.default_rng(0).integers(1, 4, 300)
    a = calibration_slope(y, p, sample_weight=w.astype(float))
    b = calibration_slope(np.repeat(y, w), np.repeat(p, w))
    assert a.slope == pytest.approx(b.slope, rel=1e-9) and a.slope_se == pytest.approx(b.slope_se, rel=1e-9)


def test_calibration_slope_bad_input():
    with pytest.raises(ValueError, match="y_prob") as e:
        calibration_slope([0, 1, 1], [0.2, 0.5, 1.0])
    assert "1.0" in str(e.value)
    with pytest.raises(ValueError, match="y_prob"):
        calibration_slope([0, 1, 1], [0.0, 0.5, 0.6])
    with pytest.raises(ValueError, match="two distinct"):
        calibration_slope([0, 1, 1], [0.4, 0.4, 0.4])
    with pytest.raises(ValueError, match="both kinds"):
        calibration_slope([1, 1, 1], [0.2, 0.4, 0.6])
    with pytest.raises(ValueError, match="separated"):
        calibration_slope([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    with pytest.raises(ValueError, match="binned"):
        calibration_slope(fc.bucket_stats([0, 1], [0.2, 0.7], bins=4))


def test_classwise_and_table_input():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([2, 2, 2], 600)
    labels = np.array([rng.choice(3, p=row) for row in P])
    res = ks_test(labels, P, multiclass="classwise")
    for c in range(3):
        assert res.per_class[c].statistic == pytest.approx(ks_reference(labels == c, P[:, c]), rel=1e-10)
    y, p = _data(11, 300)
    st = fc.bucket_stats(y, p)
    assert spiegelhalter_test(st).statistic == spiegelhalter_test(y, p).statistic
    assert calibration_slope(st).slope == calibration_slope(y, p).slope


# --------------------------------------------------------------------------------------
# ties, weights and tables against round-by-round references


def hl_reference_ties(y, p, g):
    """Any predictions, integer rounds: the cut k is the boundary between two distinct
    predictions (counted in rounds, 0 and T included) nearest to k T / g, the lower on a tie;
    equal cuts are one, cuts at 0 or T make no group. Exact arithmetic for the cuts."""
    from fractions import Fraction

    order = np.argsort(p, kind="stable")
    y, p = np.asarray(y, float)[order], np.asarray(p, float)[order]
    T = len(p)
    bounds = [0] + [t for t in range(1, T) if p[t] != p[t - 1]] + [T]
    cuts = set()
    for k in range(1, g):
        target = Fraction(k * T, g)
        best = min(bounds, key=lambda b: (abs(b - target), b))
        if 0 < best < T:
            cuts.add(best)
    edges = [0] + sorted(cuts) + [T]
    stat, sizes = 0.0, []
    for a, b in zip(edges[:-1], edges[1:]):
        o, e, n = sum(y[a:b]), sum(p[a:b]), b - a
        stat += (o - e) ** 2 / (e * (1 - e / n))
        sizes.append(n)
    return stat, sizes


def ks_reference_ties(y, p, w=None):
    """The cumulative differences over the sorted rounds, looked at only where the prediction
    changes (after the last round of each run of equal predictions)."""
    order = np.argsort(p, kind="stable")
    y, p = np.asarray(y, float)[order], np.asarray(p, float)[order]
    w = np.ones_like(p) if w is None else np.asarray(w, float)[order]
    W = w.sum()
    c, best = 0.0, 0.0
    for t in range(len(p)):
        c += w[t] * (y[t] - p[t]) / W
        if t == len(p) - 1 or p[t + 1] != p[t]:
            best = max(best, abs(c))
    sigma = math.sqrt(sum(wt * pt * (1 - pt) for wt, pt in zip(w, p))) / W
    return best / sigma


@pytest.mark.parametrize("seed, T, g", [(20, 500, 10), (21, 1000, 7), (22, 97, 5), (23, 3000, 12)])
def test_hosmer_lemeshow_ties_against_rounds(seed, T, g):
    y, p = _data(seed, T, 1.3, ties=True)
    r = hosmer_lemeshow_test(y, p, groups=g)
    stat, sizes = hl_reference_ties(y, p, g)
    assert list(r.rounds) == sizes and r.groups == len(sizes) and r.dof == len(sizes)
    assert r.statistic == pytest.approx(stat, rel=1e-10)
    assert r.p_value == pytest.approx(stats.chi2.sf(stat, len(sizes)), rel=1e-8, abs=1e-300)


def test_hosmer_lemeshow_cut_on_an_exact_half_takes_the_lower_boundary():
    # T = 25, groups = 10: the first cut k T / g = 2.5 lies halfway between 2 and 3: the lower one
    p = np.linspace(0.05, 0.95, 25)
    y = (np.arange(25) % 3 == 0).astype(int)
    r = hosmer_lemeshow_test(y, p, groups=10)
    assert r.rounds[0] == 2.0 and list(r.rounds) == hl_reference_ties(y, p, 10)[1]


def test_hosmer_lemeshow_table_and_binned_input():
    y, p = _data(24, 800)
    for bins in (None, 15):
        st = fc.bucket_stats(y, p, bins=bins)
        a = hosmer_lemeshow_test(st, groups=6)
        b = hosmer_lemeshow_test(y, p, bins=bins, groups=6)
        assert a == b
    # binned: groups of whole bins, the expected counts still the sums of the predictions
    r = hosmer_lemeshow_test(y, p, bins=15, groups=6)
    assert sum(r.expected) == pytest.approx(p.sum(), rel=1e-12)


def test_hosmer_lemeshow_too_few_groups_formed_names_groups():
    p = np.r_[np.full(90, 0.3), [0.5, 0.6, 0.7]]  # one bucket holds nearly every round
    y = (np.random.default_rng(2).random(93) < p).astype(int)
    with pytest.raises(ValueError, match="groups") as e:
        hosmer_lemeshow_test(y, p, groups=3)
    assert e.value.argument == "groups"
    with pytest.raises(ValueError, match="groups"):
        hosmer_lemeshow_test(y, p, groups=3.0)


def test_spiegelhalter_weights_one_round_and_uniform_p_values():
    y, p = _data(25, 300, ties=True)
    w = np.random.default_rng(3).integers(1, 5, 300)
    a = spiegelhalter_test(y, p, sample_weight=w.astype(float))
    b = spiegelhalter_test(np.repeat(y, w), np.repeat(p, w))
    assert a.statistic == pytest.approx(b.statistic, rel=1e-10) and a.p_value == pytest.approx(b.p_value, rel=1e-9)
    z, pv = spiegelhalter_reference([1], [0.3])
    r = spiegelhalter_test([1], [0.3])
    assert r.statistic == pytest.approx(z) and r.p_value == pytest.approx(pv)
    with pytest.raises(ValueError, match="y_prob") as e:
        spiegelhalter_test([1, 0], [0.5, 0.5])
    assert e.value.argument == "y_prob"
    # certain predictions: nothing to the variance; 1 to the numerator when the outcome contradicts
    r = spiegelhalter_test([1, 0, 1, 0, 1], [0.0, 1.0, 0.3, 0.0, 1.0])
    assert r.statistic == pytest.approx(spiegelhalter_reference([1, 0, 1, 0, 1], [0.0, 1.0, 0.3, 0.0, 1.0])[0])
    assert r.statistic == pytest.approx(2.28 / math.sqrt(0.4**2 * 0.21))
    # calibrated samples: roughly uniform p-values (a fixed seed; it could fail)
    pv = [spiegelhalter_test(*_data(3000 + s, 400)).p_value for s in range(300)]
    assert stats.kstest(pv, "uniform").pvalue > 0.001
    y, p = _data(26, 4000, distort=1.5)  # predictions too timid: detected
    assert spiegelhalter_test(y, p).p_value < 1e-4


@pytest.mark.parametrize("seed", [30, 31, 32])
def test_ks_ties_weights_and_tables_against_rounds(seed):
    y, p = _data(seed, 1500, 1.2, ties=True)
    r = ks_test(y, p)
    assert r.statistic == pytest.approx(ks_reference_ties(y, p), rel=1e-10)
    assert ks_test(fc.bucket_stats(y, p)) == r
    w = np.random.default_rng(seed).integers(1, 4, 1500)
    a = ks_test(y, p, sample_weight=w.astype(float))
    assert a.statistic == pytest.approx(ks_reference_ties(y, p, w), rel=1e-10)
    b = ks_test(np.repeat(y, w), np.repeat(p, w))
    assert a.statistic == pytest.approx(b.statistic, rel=1e-10) and a.p_value == pytest.approx(b.p_value, rel=1e-9)


def test_ks_one_round_and_predictions_at_the_ends():
    r = ks_test([1], [0.25])  # |C| = 0.75, sigma = sqrt(3/16): statistic sqrt(3)
    assert r.statistic == pytest.approx(math.sqrt(3)) and r.p_value == pytest.approx(brownian_max_sf(math.sqrt(3)))
    # rounds at 0 and 1 that agree with their outcome add nothing to C nor to sigma
    a = ks_test([0, 1, 0, 1, 1], [0.0, 0.3, 0.6, 0.8, 1.0])
    assert a.statistic == pytest.approx(ks_reference_ties([1, 0, 1], [0.3, 0.6, 0.8]), rel=1e-12)


# --------------------------------------------------------------------------------------
# calibration slope: closed forms, separation, extreme logits


def test_calibration_slope_standard_errors_closed_form():
    y, p = _data(40, 700, 0.8, ties=True)
    r = calibration_slope(y, p)
    x = np.log(p / (1 - p))
    mu = 1 / (1 + np.exp(-(r.intercept + r.slope * x)))
    v = mu * (1 - mu)
    S0, S1, S2 = v.sum(), (v * x).sum(), (v * x * x).sum()
    det = S0 * S2 - S1 * S1  # the 2x2 Fisher information's inverse, written out
    assert r.slope_se == pytest.approx(math.sqrt(S0 / det), rel=1e-8)
    assert r.intercept_se == pytest.approx(math.sqrt(S2 / det), rel=1e-8)
    # the score equations hold at the fit
    assert abs(np.sum(y - mu)) < 1e-8 * len(y) and abs(np.sum((y - mu) * x)) < 1e-8 * len(y)


def test_calibration_slope_exact_two_bucket_fit():
    # two distinct predictions: the fit goes through both observed frequencies, so
    # b = (logit(1/2) - logit(1/4)) / (logit(0.7) - logit(0.2)), a = logit(1/4) - b logit(0.2)
    y = [1, 0, 0, 0, 1, 0]
    p = [0.2, 0.2, 0.2, 0.2, 0.7, 0.7]

    def lg(t):
        return math.log(t / (1 - t))

    b = (lg(0.5) - lg(0.25)) / (lg(0.7) - lg(0.2))
    r = calibration_slope(y, p)
    assert r.slope == pytest.approx(b, rel=1e-10) and r.intercept == pytest.approx(lg(0.25) - b * lg(0.2), abs=1e-10)


@pytest.mark.parametrize(
    "y, p, cut",
    [
        ([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9], 0.2),  # complete
        ([1, 1, 0, 0], [0.1, 0.2, 0.8, 0.9], 0.2),  # complete, reversed
        ([0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.5, 0.5, 0.8, 0.9], 0.5),  # quasi-complete: both at 0.5
        ([0, 0, 0, 1, 0], [0.1, 0.2, 0.3, 0.9, 0.9], 0.9),  # the ones only in the top bucket
    ],
)
def test_calibration_slope_separation_is_decided_exactly(y, p, cut):
    with pytest.raises(ValueError, match="separated") as e:
        calibration_slope(y, p)
    assert e.value.argument == "y_true" and e.value.value == cut
    assert "converge" not in str(e.value)


def test_calibration_slope_one_overlap_and_extreme_logits_fit():
    """Data a single round keeps from separation, and predictions of 1e-12 and 1 - 1e-12, have a
    finite fit, which Newton's method with step halving reaches."""
    for y, p in (
        ([0, 0, 0, 1, 0, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]),
        ([0, 1, 0, 1, 1, 0], [1e-12, 1e-9, 0.5, 0.5, 1 - 1e-9, 1 - 1e-12]),
        ([1, 0, 0, 1, 0, 1, 1], [1e-8, 0.01, 0.02, 0.5, 0.97, 0.99, 1 - 1e-8]),
    ):
        r = calibration_slope(y, p)
        a, b, sa, sb = slope_reference(y, p)
        assert r.slope == pytest.approx(b, rel=1e-7, abs=1e-9) and r.intercept == pytest.approx(a, abs=1e-7)
        assert r.slope_se == pytest.approx(sb, rel=1e-6)


def test_calibration_slope_certain_predictions_name_the_round():
    with pytest.raises(ValueError, match="index 3") as e:
        calibration_slope([0, 1, 1, 0, 1], [0.2, 0.5, 0.6, 0.0, 0.7])
    assert e.value.argument == "y_prob" and e.value.index == 3 and e.value.value == 0.0
    # a round of weight 0 is not a round: the first certain round of positive weight is named
    with pytest.raises(ValueError, match="y_prob") as e:
        calibration_slope([0, 1, 1, 1], [0.0, 0.5, 1.0, 0.6], sample_weight=[0.0, 1.0, 2.0, 1.0])
    assert e.value.index == 2 and e.value.value == 1.0
    with pytest.raises(ValueError, match="y_prob") as e:
        calibration_slope(fc.bucket_stats([0, 1, 1], [0.2, 0.5, 1.0]))
    assert e.value.index is None and e.value.value == 1.0


def test_classwise_results_carry_their_values():
    rng = np.random.default_rng(1)
    P = rng.dirichlet([3, 3, 3], 900)
    labels = np.array([rng.choice(3, p=row) for row in P])
    for fn in (hosmer_lemeshow_test, spiegelhalter_test, calibration_slope):
        res = fn(labels, P, multiclass="classwise")
        for c in range(3):
            assert res.per_class[c] == fn((labels == c).astype(int), P[:, c])
            assert res.per_class[c].value == (
                res.per_class[c].slope if fn is calibration_slope else res.per_class[c].statistic
            )


def separated_reference(y, p):
    """Round by round: some prediction c has every y = 1 at or above it and every y = 0 at or
    below it, or the reverse."""
    ones = [pt for yt, pt in zip(y, p) if yt == 1]
    zeros = [pt for yt, pt in zip(y, p) if yt == 0]
    for c in set(p):
        if all(v >= c for v in ones) and all(v <= c for v in zeros):
            return True
        if all(v <= c for v in ones) and all(v >= c for v in zeros):
            return True
    return False


@settings(max_examples=150, deadline=None)
@given(hs.integers(3, 60), hs.integers(0, 10**6), hs.sampled_from([1.0, 5.0, 30.0]), hs.sampled_from([0.3, 1.0, 3.0]))
def test_calibration_slope_fits_or_names_separation(T, seed, scale, distort):
    """Random problems with logits up to several hundred: either the outcomes are separated
    (decided round by round here) and the error says so, or the fit solves the score equations."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, scale, T)
    p = 1 / (1 + np.exp(-x))
    p = p[(p > 0) & (p < 1)]
    y = (rng.random(p.shape[0]) < 1 / (1 + np.exp(-distort * np.log(p / (1 - p))))).astype(int)
    if np.unique(p).shape[0] < 2 or y.min() == y.max():
        return
    if separated_reference(y.tolist(), p.tolist()):
        with pytest.raises(ValueError, match="separated"):
            calibration_slope(y, p)
        return
    r = calibration_slope(y, p)
    from scipy.special import expit

    lx = np.log(p) - np.log1p(-p)
    mu = expit(r.intercept + r.slope * lx)
    assert abs(np.sum(y - mu)) < 1e-7 and abs(np.sum((y - mu) * lx)) < 1e-7 * max(1.0, np.abs(lx).max())
    assert r.iterations <= 30
