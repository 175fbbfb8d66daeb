"""CORP (fastcdl.corp) and ICI (fastcdl.ici) against round-by-round references built on
scikit-learn's isotonic regression (an independent PAV)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import fastcdl as fc
from fastcdl.corp import corp
from fastcdl.ici import ici


def _iso(y, p, w=None):
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True).fit(p, y, sample_weight=w).predict(p)


def _score(kind, p, y, w):
    p, y = np.asarray(p, float), np.asarray(y, float)
    if kind == "brier":
        return float(np.sum(w * (p - y) ** 2) / w.sum())
    terms = []
    for pt, yt in zip(p, y):
        prob = pt if yt == 1 else 1 - pt
        terms.append(math.inf if prob == 0 else -math.log(prob))
    return float(np.sum(w * np.array(terms)) / w.sum())


def corp_reference(y, p, kind="brier", w=None):
    w = np.ones(len(p)) if w is None else np.asarray(w, float)
    c = _iso(y, p, w)
    ybar = np.sum(w * np.asarray(y)) / w.sum()
    S_p, S_c, S_0 = _score(kind, p, y, w), _score(kind, c, y, w), _score(kind, np.full(len(p), ybar), y, w)
    return S_p, S_p - S_c, S_0 - S_c, S_0


def _data(seed, T, ties=False, shape="over"):
    rng = np.random.default_rng(seed)
    p = rng.beta(1.2, 1.2, T) * 0.96 + 0.02
    if ties:
        p = np.round(p * 25) / 25
    truth = {"over": 0.5 + 0.6 * (p - 0.5), "wave": 0.5 + 0.35 * np.sin(6 * p), "calibrated": p}[shape]
    y = (rng.random(T) < np.clip(truth, 0, 1)).astype(int)
    return y, p


@pytest.mark.parametrize("kind", ["brier", "log"])
@pytest.mark.parametrize("shape", ["over", "wave", "calibrated"])
@pytest.mark.parametrize("ties", [False, True])
def test_corp_against_isotonic_reference(kind, shape, ties):
    for seed, T in [(0, 50), (1, 1000), (2, 7)]:
        y, p = _data(seed, T, ties, shape)
        d = corp(y, p, score=kind)
        S, mcb, dsc, unc = corp_reference(y, p, kind)
        assert d.score == pytest.approx(S, rel=1e-9)
        assert d.mcb == pytest.approx(mcb, abs=1e-9)
        assert d.dsc == pytest.approx(dsc, abs=1e-9)
        assert d.unc == pytest.approx(unc, rel=1e-12)
        assert d.mcb - d.dsc + d.unc == pytest.approx(d.score, abs=1e-12)
        assert d.mcb >= -1e-12 and d.dsc >= -1e-12


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 60), hs.integers(0, 10**6))
def test_corp_identity_and_weights(T, seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.integers(0, 2, T)
    w = rng.integers(1, 4, T)
    a = corp(y, p, sample_weight=w.astype(float))
    b = corp(np.repeat(y, w), np.repeat(p, w))
    for f in ("score", "mcb", "dsc", "unc"):
        assert getattr(a, f) == pytest.approx(getattr(b, f), abs=1e-12)
    assert a.mcb - a.dsc + a.unc == pytest.approx(a.score, abs=1e-12)


def test_corp_isotonic_calibrated_table_has_no_miscalibration():
    # frequencies already non-decreasing in q and equal to q: the recalibration changes nothing
    st = fc.BucketStats.from_table(np.array([0.2, 0.5, 0.8]), np.array([5, 4, 5]), np.array([1, 2, 4]))
    d = corp(st)
    assert d.mcb == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(d.recalibrated, [0.2, 0.5, 0.8])


def test_corp_log_score_edges_and_bad_input():
    d = corp([1, 1, 0], [0.0, 0.5, 1.0], score="log")
    assert math.isinf(d.score) and math.isinf(d.mcb) and math.isfinite(d.dsc)
    d = corp([0, 1, 1], [0.0, 0.5, 1.0], score="log")  # certain and right: 0 log 0 = 0
    assert d.score == pytest.approx(math.log(2) / 3)
    with pytest.raises(ValueError, match="score"):
        corp([0, 1], [0.2, 0.7], score="crps")
    with pytest.raises(ValueError, match="binned"):
        corp(fc.bucket_stats([0, 1], [0.2, 0.7], bins=3))
    one = corp([1], [0.3])
    assert one.unc == 0.0 and one.score == pytest.approx(0.49)


def ici_reference(y, p, w=None):
    w = np.ones(len(p)) if w is None else np.asarray(w, float)
    d = np.abs(np.asarray(p) - _iso(y, p, w))
    order = np.argsort(d, kind="stable")
    ds, cw = d[order], np.cumsum(w[order])

    def lower(alpha):  # the smallest d with at least alpha of the weight at or below it
        for v, c in zip(ds, cw):
            if c >= alpha * cw[-1] - 1e-9:
                return v

    return float(np.sum(w * d) / w.sum()), lower(0.5), lower(0.9), float(d.max())


@pytest.mark.parametrize("shape", ["over", "wave", "calibrated"])
@pytest.mark.parametrize("ties", [False, True])
def test_ici_against_reference(shape, ties):
    for seed, T in [(0, 50), (1, 2000), (2, 3)]:
        y, p = _data(seed, T, ties, shape)
        r = ici(y, p)
        want = ici_reference(y, p)
        assert (r.ici, r.e50, r.e90, r.emax) == pytest.approx(want, abs=1e-9)
        assert r.e50 <= r.e90 <= r.emax


def test_ici_against_numpy_weighted_quantile_and_the_pav_binned_ece():
    y, p = _data(3, 500, ties=True, shape="wave")
    w = np.random.default_rng(1).random(500) + 0.1
    r = ici(y, p, sample_weight=w)
    d = np.abs(p - _iso(y, p, w))
    assert r.e90 == pytest.approx(np.quantile(d, 0.9, weights=w, method="inverted_cdf"), abs=1e-12)
    assert r.e50 == pytest.approx(np.quantile(d, 0.5, weights=w, method="inverted_cdf"), abs=1e-12)
    # the ECE of the table binned by PAV's blocks is at most ICI
    st = fc.bucket_stats(y, p, sample_weight=w)
    c = corp(st).recalibrated
    blocks = np.r_[0, np.flatnonzero(np.diff(c)) + 1, len(c)]
    n, s, ps = st.counts, st.positives, st.values * st.counts
    ece_blocks = sum(abs(ps[a:b].sum() - s[a:b].sum()) for a, b in zip(blocks[:-1], blocks[1:])) / n.sum()
    assert ece_blocks <= r.ici + 1e-12


def test_ici_edges():
    r = ici([0, 1], [0.5, 0.5])
    assert r.ici == r.emax == 0.0
    r = ici([1], [0.2])
    assert r.ici == pytest.approx(0.8)
    with pytest.raises(ValueError, match="binned"):
        ici(fc.bucket_stats([0, 1], [0.2, 0.7], bins=3))
