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
    a, b = 0.0, 1.0
    for _ in range(200):
        mu = 1 / (1 + np.exp(-(a + b * x)))
        g = np.array([np.sum(w * (y - mu)), np.sum(w * (y - mu) * x)])
        v = w * mu * (1 - mu)
        H = np.array([[v.sum(), (v * x).sum()], [(v * x).sum(), (v * x * x).sum()]])
        d = np.linalg.solve(H, g)
        a, b = a + d[0], b + d[1]
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
