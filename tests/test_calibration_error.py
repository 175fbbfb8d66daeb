"""fc.calibration_error and fastcdl.scorers against a binned computation written from
scikit-learn's definition (np.searchsorted on the interior edges, as calibration_curve bins)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import fastcdl as fc
from fastcdl.binned_calibration_error import calibration_error, quantile_edges


def reference(y, p, w=None, *, norm="l2", squared=False, n_bins=10, strategy="uniform"):
    """Binned calibration error from the definition: calibration_curve's bins, plain loops."""
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.ones_like(p) if w is None else np.asarray(w, dtype=float)
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    elif w.min() == w.max():
        edges = np.percentile(p, np.linspace(0, 100, n_bins + 1))
    else:
        keep = w > 0
        edges = np.percentile(p[keep], np.linspace(0, 100, n_bins + 1), weights=w[keep], method="inverted_cdf")
    ids = np.searchsorted(edges[1:-1], p)  # a value equal to an edge goes to the lower bin
    total = 0.0
    gaps, weights = [], []
    for k in range(n_bins):
        wk = sum(w[t] for t in range(len(p)) if ids[t] == k)
        if wk == 0:
            continue
        ybar = sum(w[t] * y[t] for t in range(len(p)) if ids[t] == k) / wk
        pbar = sum(w[t] * p[t] for t in range(len(p)) if ids[t] == k) / wk
        gaps.append(abs(ybar - pbar))
        weights.append(wk)
        total += wk
    gaps, weights = np.array(gaps), np.array(weights) / total
    if norm == "l1":
        return float(weights @ gaps)
    if norm == "max":
        return float(gaps.max())
    sq = float(weights @ gaps**2)
    return sq if squared else float(np.sqrt(sq))


def _data(seed, T, ties=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 1.3, T)
    if ties:
        p = np.round(p * 20) / 20  # on the edges of 10 and 20 uniform bins, and at 0 and 1
    y = (rng.random(T) < np.clip(1.2 * p - 0.05, 0, 1)).astype(int)
    return y, p


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("ties", [False, True])
def test_against_binned_reference(norm, strategy, ties):
    for seed, T, n_bins in [(0, 50, 5), (1, 500, 10), (2, 2000, 15), (3, 7, 10)]:
        y, p = _data(seed, T, ties)
        got = calibration_error(y, p, norm=norm, n_bins=n_bins, strategy=strategy)
        assert got == pytest.approx(reference(y, p, norm=norm, n_bins=n_bins, strategy=strategy), abs=1e-12)


def test_squared_is_the_square_and_the_binned_k2():
    y, p = _data(4, 800)
    sq = calibration_error(y, p, squared=True, n_bins=12)
    assert sq == pytest.approx(reference(y, p, squared=True, n_bins=12), abs=1e-14)
    assert np.sqrt(sq) == pytest.approx(calibration_error(y, p, n_bins=12), rel=1e-12)
    assert sq == pytest.approx(fc.k2(y, p, bins=12), abs=1e-15)


def test_l1_is_the_binned_ece_and_max_the_largest_gap():
    y, p = _data(5, 600)
    assert calibration_error(y, p, norm="l1", n_bins=15) == fc.ece(y, p, bins=15)
    assert calibration_error(y, p, norm="max", n_bins=15) == fc.mce(y, p, bins=15)


def test_against_sklearn_calibration_curve():
    from sklearn.calibration import calibration_curve

    y, p = _data(6, 3000)
    for strategy in ("uniform", "quantile"):
        prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy=strategy)
        st = fc.bucket_stats(y, p, bins=10 if strategy == "uniform" else quantile_edges(p, 10))
        np.testing.assert_allclose(st.frequencies, prob_true, atol=1e-12)
        np.testing.assert_allclose(st.values, prob_pred, atol=1e-12)
        gaps = np.abs(prob_true - prob_pred)
        assert calibration_error(y, p, norm="max", strategy=strategy) == pytest.approx(gaps.max(), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 40), hs.integers(0, 10**6), hs.integers(1, 30), hs.sampled_from(["uniform", "quantile"]))
def test_integer_weights_are_repeated_rounds(T, seed, n_bins, strategy):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.integers(0, 2, T)
    w = rng.integers(1, 4, T)
    for norm in ("l1", "l2", "max"):
        a = calibration_error(y, p, sample_weight=w, norm=norm, n_bins=n_bins, strategy=strategy)
        if strategy == "uniform":
            b = calibration_error(np.repeat(y, w), np.repeat(p, w), norm=norm, n_bins=n_bins)
            assert a == pytest.approx(b, abs=1e-12)
        assert a == pytest.approx(reference(y, p, w, norm=norm, n_bins=n_bins, strategy=strategy), abs=1e-12)


def test_edges_at_zero_and_one_and_more_bins_than_rounds():
    y = [0, 0, 0, 1, 1, 1]
    p = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    for strategy in ("uniform", "quantile"):
        for n_bins in (1, 2, 4, 50):  # 50 bins for 6 rounds: the empty bins count for nothing
            assert calibration_error(y, p, n_bins=n_bins, strategy=strategy, norm="max") == 0.0
    e = quantile_edges(np.array([0.0, 0.0, 0.0, 0.5]), 2)
    assert e.tolist() == [0.0, 5e-324, 1.0]  # the zeros keep a bin of their own
    y, p = [1, 0, 1], [0.5, 0.5, 0.5]
    assert calibration_error(y, p, n_bins=3, norm="l1") == pytest.approx(abs(2 / 3 - 0.5))


def test_binned_table_and_classwise():
    y, p = _data(7, 400)
    st = fc.bucket_stats(y, p, bins=8)
    assert calibration_error(st) == calibration_error(y, p, n_bins=8)
    with pytest.raises(ValueError, match="exact BucketStats"):
        calibration_error(fc.bucket_stats(y, p))
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1, 1, 1], 300)
    labels = np.array([rng.choice(3, p=row) for row in P])
    res = calibration_error(labels, P, multiclass="classwise", n_bins=5, norm="l1")
    for c in range(3):
        assert res.per_class[c] == pytest.approx(reference(labels == c, P[:, c], norm="l1", n_bins=5), abs=1e-12)


@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(norm="l3"), "norm"),
        (dict(norm="l1", squared=True), "squared"),
        (dict(squared="yes"), "squared"),
        (dict(n_bins=0), "n_bins"),
        (dict(n_bins=2.5), "n_bins"),
        (dict(strategy="kmeans"), "strategy"),
    ],
)
def test_bad_options_name_the_argument(kw, arg):
    with pytest.raises(ValueError, match=arg):
        calibration_error([0, 1], [0.2, 0.8], **kw)


def test_bad_rounds_are_refused():
    with pytest.raises(ValueError, match="y_prob"):
        calibration_error([0, 1], [0.2, 1.5], strategy="quantile")
    with pytest.raises(ValueError, match="y_prob"):
        calibration_error([0, 1], [0.2, np.nan])
    with pytest.raises(ValueError, match="sample_weight"):
        calibration_error([0, 1], [0.2, 0.4], sample_weight=[1, -1], strategy="quantile")


def test_scorers_in_cross_validation():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_val_score

    from fastcdl import scorers

    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 3))
    y = (rng.random(600) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    cv = KFold(3, shuffle=True, random_state=0)
    for name, norm in scorers.SCORER_NAMES.items():
        got = cross_val_score(LogisticRegression(), X, y, cv=cv, scoring=getattr(scorers, name))
        want = []
        for train, test in cv.split(X):
            model = LogisticRegression().fit(X[train], y[train])
            want.append(-reference(y[test], model.predict_proba(X[test])[:, 1], norm=norm))
        np.testing.assert_allclose(got, want, atol=1e-12)
    # labels other than 0/1: the scorer scores the probability of pos_label
    labels = np.where(y == 1, "rain", "dry")
    sc = scorers.make_calibration_scorer("l1", pos_label="rain", n_bins=5)
    model = LogisticRegression().fit(X, labels)
    want = -reference(y, model.predict_proba(X)[:, list(model.classes_).index("rain")], norm="l1", n_bins=5)
    assert sc(model, X, labels) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="norm"):
        scorers.make_calibration_scorer("l0")
    with pytest.raises(AttributeError):
        scorers.neg_brier_calibration_error  # noqa: B018
