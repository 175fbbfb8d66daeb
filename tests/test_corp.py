"""fastcdl.corp against round-by-round references (scikit-learn's isotonic regression, a PAV in
exact fractions), the identity score = MCB - DSC + UNC, and the relations to Murphy's
decomposition and to CDL_M."""

from __future__ import annotations

import math

import numpy as np
import pytest
from corp_reference import corp_ref, isotonic_rounds, pav_fractions, sample
from hypothesis import given, settings
from hypothesis import strategies as hs

import fastcdl as fc
from fastcdl.corp import corp, isotonic_table

FIELDS = ("score", "mcb", "dsc", "unc")


def _fields(d):
    return tuple(getattr(d, f) for f in FIELDS)


@pytest.mark.parametrize("kind", ["brier", "log"])
@pytest.mark.parametrize("shape", ["over", "wave", "calibrated"])
@pytest.mark.parametrize("ties", [False, True])
def test_against_round_by_round_reference(kind, shape, ties):
    for seed, T in [(0, 7), (1, 50), (2, 1000)]:
        y, p = sample(seed, T, ties, shape)
        d = corp(y, p, score=kind)
        want = corp_ref(y, p, kind)
        assert _fields(d) == pytest.approx(want, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(np.interp(p, d.values, d.recalibrated), isotonic_rounds(y, p), atol=1e-12)


@pytest.mark.parametrize("kind", ["brier", "log"])
def test_weighted_against_reference(kind):
    y, p = sample(5, 400, ties=True, shape="wave")
    w = np.random.default_rng(5).random(400) * 3 + 0.01
    d = corp(y, p, sample_weight=w, score=kind)
    assert _fields(d) == pytest.approx(corp_ref(y, p, kind, w), rel=1e-9, abs=1e-12)


def test_brier_against_exact_fractions():
    # ties, a violator run across several buckets, predictions at 0, 1/2 and 1
    p = [0.0, 0.0, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 1.0, 1.0]
    y = [0, 1, 1, 1, 0, 0, 0, 1, 1, 1]
    fit = pav_fractions(p, y)
    d = corp(y, p)
    want = corp_ref(y, p, "brier", fit=[float(c) for c in fit])
    assert _fields(d) == pytest.approx(want, abs=1e-15)
    assert [float(c) for c in fit] == list(np.interp(p, d.values, d.recalibrated))


@settings(max_examples=60, deadline=None)
@given(hs.integers(1, 80), hs.integers(0, 10**6), hs.sampled_from(["brier", "log"]))
def test_identity_and_signs(T, seed, kind):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), int(rng.integers(1, 4)))
    y = rng.integers(0, 2, T)
    d = corp(y, p, score=kind)
    assert d.dsc >= -1e-12 and math.isfinite(d.dsc) and math.isfinite(d.unc)
    if math.isinf(d.score):  # a prediction of 0 or 1 met the other outcome
        assert kind == "log" and d.mcb == math.inf
        assert np.any(((p == 0) & (y == 1)) | ((p == 1) & (y == 0)))
        assert d.mcb - d.dsc + d.unc == math.inf
    else:
        assert d.mcb >= -1e-12
        assert d.mcb - d.dsc + d.unc == pytest.approx(d.score, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 50), hs.integers(0, 10**6), hs.sampled_from(["brier", "log"]))
def test_integer_weights_are_repeated_rounds(T, seed, kind):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T) * 0.98 + 0.01, 2)
    y = rng.integers(0, 2, T)
    w = rng.integers(1, 5, T)
    a = corp(y, p, sample_weight=w.astype(float), score=kind)
    b = corp(np.repeat(y, w), np.repeat(p, w), score=kind)
    assert np.all(np.diff(a.recalibrated) >= 0)
    assert _fields(a) == pytest.approx(_fields(b), abs=1e-12)
    np.testing.assert_array_equal(a.recalibrated, b.recalibrated)


def test_table_input_equals_arrays():
    y, p = sample(3, 300, ties=True)
    w = np.random.default_rng(3).random(300) + 0.5
    for kind in ("brier", "log"):
        a = corp(y, p, sample_weight=w, score=kind)
        b = corp(fc.bucket_stats(y, p, sample_weight=w), score=kind)
        assert _fields(a) == _fields(b)
        np.testing.assert_array_equal(a.recalibrated, b.recalibrated)


def test_isotonic_calibrated_table_has_no_miscalibration():
    # the frequencies equal the predictions and increase with them: PAV changes nothing
    st = fc.BucketStats.from_table(np.array([0.2, 0.5, 0.8]), np.array([5, 4, 5]), np.array([1, 2, 4]))
    for kind in ("brier", "log"):
        d = corp(st, score=kind)
        assert d.mcb == 0.0
        assert d.score == pytest.approx(-d.dsc + d.unc, abs=1e-15)
        np.testing.assert_array_equal(d.recalibrated, [0.2, 0.5, 0.8])


@settings(max_examples=40, deadline=None)
@given(hs.integers(2, 60), hs.integers(0, 10**6))
def test_recalibrated_predictions_have_no_miscalibration(T, seed):
    # the PAV values as predictions: their own PAV fit is themselves, the discrimination stays
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.integers(0, 2, T)
    d = corp(y, p)
    c = np.interp(p, d.values, d.recalibrated)
    e = corp(y, c)
    assert e.mcb == pytest.approx(0.0, abs=1e-12)
    assert e.dsc == pytest.approx(d.dsc, abs=1e-12)
    assert e.unc == d.unc


def test_monotone_frequencies_give_murphys_decomposition():
    # with frequencies already non-decreasing in q, PAV is the identity on the frequencies and
    # CORP is Murphy's decomposition of the exact table
    q = np.array([0.1, 0.3, 0.6, 0.9])
    st = fc.BucketStats.from_table(q, np.array([10, 8, 6, 12]), np.array([2, 3, 3, 11]))
    d, m = corp(st), fc.brier_decomposition(st)
    assert (d.score, d.mcb, d.dsc, d.unc) == pytest.approx(
        (m.brier, m.reliability, m.resolution, m.uncertainty), abs=1e-15
    )


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 60), hs.integers(0, 10**6))
def test_brier_mcb_is_the_threshold_regret_integrated_and_at_most_cdl_m(T, seed):
    # Schervish: (p - y)^2 = 2 int_0^1 S_mu(p, y) dmu, S_mu the elementary score at threshold mu,
    # so MCB = 2 int_0^1 f_M(mu) dmu with f_M the gain of the PAV fix at mu; f_M is linear between
    # the predictions and the PAV values, so the midpoint rule on those pieces is exact
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.integers(0, 2, T)
    d = corp(y, p)
    cuts = np.unique(np.r_[0.0, 1.0, d.values, d.recalibrated])
    mids = (cuts[:-1] + cuts[1:]) / 2
    _, curve = fc.decision_loss_curve_monotone(y, p, kinks=mids)
    f_M = curve * np.maximum(mids, 1 - mids)
    assert d.mcb == pytest.approx(2 * np.sum(f_M * np.diff(cuts)), abs=1e-12)
    assert d.mcb <= fc.cdl_monotone(y, p) + 1e-12


def test_blocks_are_the_pav_step_function():
    y, p = sample(4, 200, ties=True, shape="wave")
    d = corp(y, p)
    lo, hi, level, weight = d.blocks()
    assert np.all(np.diff(level) > 0) and np.all(lo <= hi) and np.all(hi[:-1] < lo[1:])
    assert weight.sum() == 200 and lo[0] == p.min() and hi[-1] == p.max()
    # each block's level is its own frequency of y = 1
    for a, b, v, n in zip(lo, hi, level, weight):
        inside = (p >= a) & (p <= b)
        assert inside.sum() == n and v == pytest.approx(y[inside].mean(), abs=1e-15)


def test_one_round_and_one_prediction():
    d = corp([1], [0.3])
    assert (d.score, d.mcb, d.dsc, d.unc) == pytest.approx((0.49, 0.49, 0.0, 0.0))
    # every round at one prediction: the fit is the frequency, nothing to discriminate
    for kind in ("brier", "log"):
        d = corp([0, 1, 1, 1], [0.6] * 4, score=kind)
        assert d.dsc == 0.0 and d.recalibrated.tolist() == [0.75]
        assert d.mcb == pytest.approx(d.score - d.unc, abs=1e-15)
    assert corp([0, 1, 1, 1], [0.6] * 4).mcb == pytest.approx(0.15**2)


def test_log_score_at_zero_and_one():
    # certain and right: 0 log 0 = 0, finite; the fit reaches 0 and 1 and costs nothing there
    d = corp([0, 1, 1], [0.0, 0.5, 1.0], score="log")
    assert d.score == pytest.approx(math.log(2) / 3, abs=1e-15)
    assert d.recalibrated.tolist() == [0.0, 1.0, 1.0]
    assert d.mcb == pytest.approx(d.score, abs=1e-15)  # S(c) = 0
    assert d.unc == pytest.approx(-(math.log(1 / 3) + 2 * math.log(2 / 3)) / 3, abs=1e-15)
    # certain and wrong: infinite score and miscalibration, finite discrimination
    d = corp([1, 1, 0], [0.0, 0.5, 1.0], score="log")
    assert d.score == math.inf and d.mcb == math.inf
    assert d.dsc == pytest.approx(corp_ref([1, 1, 0], [0.0, 0.5, 1.0], "log")[2], abs=1e-15)
    # Brier is finite there
    assert corp([1, 1, 0], [0.0, 0.5, 1.0]).score == pytest.approx((1 + 0.25 + 1) / 3)
    # all outcomes alike: UNC = 0 with 0 log 0 = 0
    d = corp([1, 1, 1], [0.2, 0.5, 0.9], score="log")
    assert d.unc == 0.0 and d.dsc == 0.0 and d.recalibrated.tolist() == [1.0, 1.0, 1.0]


def test_block_values_are_exact_at_zero_and_one_with_real_weights():
    y = np.array([0, 0, 1, 0, 1, 1, 1])
    p = np.array([0.05, 0.1, 0.3, 0.4, 0.7, 0.8, 0.95])
    w = np.array([0.1, 0.7, 1e-3, 0.3, 0.1, 0.2, 0.3])
    q, n, s, c = isotonic_table(fc.bucket_stats(y, p, sample_weight=w))
    assert c[0] == c[1] == 0.0 and c[-1] == c[-2] == c[-3] == 1.0
    assert math.isfinite(corp(y, p, sample_weight=w, score="log").mcb)


def test_log_score_of_a_fit_that_rounds_to_one():
    # the zeros weigh 5e-20 of the one block: its value rounds to 1, yet its log score is the
    # finite -log(1 - c) of its own sums, not -log(0)
    y, p = np.array([0, 1, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    w = np.array([1.0, 1.0, 3.0, 1.0, 1e20])
    d = corp(y, p, sample_weight=w, score="log")
    assert all(math.isfinite(v) for v in _fields(d))
    assert d.score == pytest.approx(math.log(2), rel=1e-12)  # the heavy round: y = 1 at p = 1/2
    assert d.mcb == pytest.approx(d.score, rel=1e-12) and d.dsc >= 0.0


def test_classwise():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1, 1, 1], 60)
    y = rng.integers(0, 3, 60)
    r = corp(y, P, multiclass="classwise")
    per = [corp((y == j).astype(int), P[:, j]).mcb for j in range(3)]
    assert [c.mcb for c in r.per_class] == per
    assert r.mean == pytest.approx(np.mean(per), abs=1e-15)


def test_bad_input():
    for bad in ("crps", "Brier", None, 1):
        with pytest.raises(ValueError, match="score") as e:
            corp([0, 1], [0.2, 0.7], score=bad)
        assert e.value.argument == "score"
    binned = fc.bucket_stats([0, 1, 1], [0.2, 0.7, 0.9], bins=3)
    for kind in ("brier", "log"):
        with pytest.raises(ValueError, match="binned") as e:
            corp(binned, score=kind)
        assert e.value.argument == "y_true"
    with pytest.raises(ValueError) as e:
        corp([0, 1], [0.2, 1.5])
    assert e.value.argument == "y_prob"
