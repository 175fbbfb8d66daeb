"""fc.smece and fc.smece_curve against relplot (the authors' package, pinned in the dev extra) and
against the definition computed by brute force (the reflected kernel summed over the rounds)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import fastcdl as fc
from fastcdl.smooth_ece import smece, smece_curve

relplot = pytest.importorskip("relplot")


def _data(seed, n, kind="beta"):
    """Rounds of four kinds: uniform calibrated scores, Beta scores with a miscalibrated curve,
    uniform scores with a strongly miscalibrated curve, and Beta scores rounded to tenths (ties,
    with predictions at 0 and 1)."""
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        p = rng.random(n)
        return (rng.random(n) < p).astype(int), p
    if kind == "miscalibrated":
        p = rng.random(n)
        return (rng.random(n) < p + 0.2 * np.sin(2 * np.pi * p)).astype(int), p
    p = rng.beta(0.5 + seed % 3, 1 + seed % 2, n)
    if kind == "ties":
        p = np.round(p * 10) / 10
    y = (rng.random(n) < np.clip(p**1.3 + 0.05, 0, 1)).astype(int)
    return y, p


KINDS = ["uniform", "beta", "miscalibrated", "ties"]
CASES = [(seed, n, kind) for seed, n in enumerate([5, 10, 50, 300, 2000, 20000, 100_000]) for kind in KINDS]


@pytest.mark.parametrize("seed, n, kind", CASES)
def test_equals_relplot_automatic_bandwidth(seed, n, kind):
    y, p = _data(seed, n, kind)
    want = relplot.smECE(p, y.astype(float))
    assert smece(y, p) == pytest.approx(want, abs=1e-6)
    _, width = relplot.smECE(p, y.astype(float), return_width=True)
    assert smece_curve(y, p).sigma == width


def test_equals_relplot_on_its_own_examples():
    """The inputs of relplot's README and notebooks (it ships no tests): the demo's sine
    miscalibration, the figure's logistic regression, the paper's skewed and temperature-scaled
    synthetic sets."""
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(0)
    examples = []
    f = rng.random(10_000)
    examples.append(((rng.random(10_000) > 1 - (f + 0.2 * np.sin(2 * np.pi * f))) * 1, f))
    x_train, x_test, y_train, y_test = train_test_split(
        *make_classification(n_samples=700, random_state=0), test_size=400, random_state=0
    )
    examples.append((y_test, LogisticRegression().fit(x_train, y_train).predict_proba(x_test)[:, 1]))

    def skew(x):
        z = 2 * x - 1
        return (z + 0.2 * np.sin(4 * np.pi * z) + 1) / 2

    f = rng.random(1000)
    examples.append(((rng.random(1000) > 1 - skew(f)) * 1, f))
    for beta in (0.5, 2.0):
        f = rng.random(3000)
        y = (rng.random(3000) > 1 - f) * 1
        examples.append((y, f**beta / (f**beta + (1 - f) ** beta)))
    for y, f in examples:
        assert smece(y, f) == pytest.approx(relplot.smECE(f, y.astype(float)), abs=1e-6)
        assert smece(y, f, sigma=0.05) == pytest.approx(relplot.smECE_sigma(f, y.astype(float), 0.05), abs=1e-6)


@pytest.mark.parametrize("sigma", [0.004, 0.02, 0.05, 0.3, 1.0, 3.0])
def test_equals_relplot_fixed_bandwidth(sigma):
    for seed, n, kind in [(0, 40, "beta"), (1, 3000, "ties"), (2, 10_000, "miscalibrated")]:
        y, p = _data(seed, n, kind)
        assert smece(y, p, sigma=sigma) == pytest.approx(relplot.smECE_sigma(p, y.astype(float), sigma), abs=1e-6)


def test_equals_relplot_on_its_multiclass_confidences():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(5000, 4)) * 2
    labels = np.array([rng.choice(4, p=np.exp(r) / np.exp(r).sum()) for r in logits * 0.7])
    conf, acc = relplot.multiclass_logits_to_confidences(logits, labels)
    assert smece(acc.astype(int), conf) == pytest.approx(relplot.smECE(conf, acc), abs=1e-6)


def test_curve_and_density_equal_relplots_diagram():
    y, p = _data(3, 4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = relplot.prepare_rel_diagram(p, y.astype(float), plot_confidence_band=False, report_CE_std=False)
    c = smece_curve(y, p)
    np.testing.assert_allclose(c.grid, d["mesh"])
    np.testing.assert_allclose(c.curve, d["mu"], atol=1e-9)
    np.testing.assert_allclose(c.density, d["density"], atol=1e-9)
    assert c.value == pytest.approx(d["ce"], abs=1e-9)


def _K(u, sigma):
    return np.exp(-(u**2) / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)


def _reflected(t, p, sigma, images_at_ends=True):
    """The Gaussian reflected at 0 and 1: K(t - p) + K(t + p) + K(t - (2 - p)), as a matrix
    (points t by predictions p). images_at_ends=False drops the image of a prediction at exactly
    0 (at -0) and at exactly 1 (at 2 - 1): what relplot's grid does to its end points."""
    t = t[:, None]
    left, right = _K(t + p, sigma), _K(t - (2 - p), sigma)
    if not images_at_ends:
        left, right = np.where(p > 0, left, 0.0), np.where(p < 1, right, 0.0)
    return _K(t - p, sigma) + left + right


def _mesh(sigma):
    return np.linspace(0, 1, max(200, round(10 / sigma)))


def brute_force_on_mesh(y, p, sigma, images_at_ends=True):
    """smECE_sigma from the definition with relplot's quadrature (the mean over its mesh of
    max(200, round(10 / sigma)) points of |R| over the mean of D), the kernel summed over every
    prediction: no grid under the predictions, no interpolation, no window on the kernel."""
    k = _reflected(_mesh(sigma), p, sigma, images_at_ends)
    return np.abs(k @ (p - y)).sum() / k.sum()


def grid_error_bound(y, p, sigma, images_at_ends=True):
    """How far relplot's grid may move smECE_sigma from :func:`brute_force_on_mesh`.

    The grid has M = max(2000, round(20 / sigma)) // 2 + 1 points, spacing h = 1 / (M - 1).
    (i) Rounding a prediction linearly onto its two grid points, and interpolating the smoothed
    grid linearly at t, each replace a kernel value by a chord: error at most h^2 / 8 max|K''|
    = h^2 / (8 sqrt(2 pi) sigma^3) per image and unit weight, three images. (ii) The kernel is
    sampled on offsets in [-1/2, 1/2]: each image cut off is at most K(1/2). (iii) The grid's end
    points are not reflected (relplot's ext_vals drops them): the share a prediction within h of
    0 or 1 puts on an end point loses one image, whose mean over the mesh is at most
    int_0^1 K + K(0) / N <= 1/2 + K(0) / N (not counted when the reference drops those
    images too: images_at_ends=False). (iv) The density floor 1e-4 adds to D. With the
    errors eR of mean |R| and eD of mean D: |A/B - a/b| <= (eR + (a/b) eD) / (b - eD)."""
    M = max(2000, round(20 / sigma)) // 2 + 1
    h = 1 / (M - 1)
    N = _mesh(sigma).shape[0]
    per_weight = 2 * 3 * h * h / (8 * math.sqrt(2 * math.pi) * sigma**3) + 3 * _K(0.5, sigma)
    end_share = np.where(p < h, 1 - p / h, 0.0) + np.where(p > 1 - h, (p - (1 - h)) / h, 0.0)
    per_end_weight = 0.5 + _K(0.0, sigma) / N if images_at_ends else 0.0
    r = np.abs(p - y)
    eR = r.sum() * per_weight + (end_share * r).sum() * per_end_weight
    eD = p.shape[0] * per_weight + end_share.sum() * per_end_weight + 1e-4
    k = _reflected(_mesh(sigma), p, sigma, images_at_ends)
    b = k.sum() / N
    ratio = np.abs(k @ (p - y)).sum() / k.sum()
    assert eD < b
    return (eR + ratio * eD) / (b - eD)


@pytest.mark.parametrize("sigma", [0.03, 0.05, 0.1])
@pytest.mark.parametrize("kind", KINDS)
def test_fixed_bandwidth_against_the_definition(sigma, kind):
    y, p = _data(5, 1500, kind)
    tol = grid_error_bound(y, p, sigma)
    assert abs(smece(y, p, sigma=sigma) - brute_force_on_mesh(y, p, sigma)) <= tol


def test_the_grid_end_points_are_not_reflected():
    """relplot counts a prediction at exactly 0 (or 1) with one image where the definition's
    reflected kernel has two: with those images dropped, the brute force agrees within the
    bound without its term (iii) (predictions elsewhere kept away from the ends); with them, it
    misses by more than five times that bound."""
    rng = np.random.default_rng(7)
    p = np.concatenate([np.zeros(100), np.ones(100), 0.02 + 0.96 * rng.random(600)])
    y = (rng.random(p.shape[0]) < np.clip(p, 0.4, 0.6)).astype(int)  # miscalibrated at the ends only
    for sigma in (0.05, 0.1):
        got = smece(y, p, sigma=sigma)
        tol = grid_error_bound(y, p, sigma, images_at_ends=False)
        assert abs(got - brute_force_on_mesh(y, p, sigma, images_at_ends=False)) <= tol
        assert abs(got - brute_force_on_mesh(y, p, sigma)) > 5 * tol


def brute_force_integral(y, p, sigma, points=20001):
    """The definition as written: int_0^1 |sum_i K(t, p_i) (y_i - p_i)| dt / n, the reflected
    kernel summed over every prediction, by the trapezoid rule on 20001 points; with the total
    variations over [0, 1] of |R| / n and D / n on the same points, and int D / n."""
    t = np.linspace(0, 1, points)
    k = _reflected(t, p, sigma)
    R = np.abs(k @ (y - p)) / p.shape[0]
    D = k.sum(axis=1) / p.shape[0]
    return np.trapezoid(R, t), np.abs(np.diff(R)).sum(), np.trapezoid(D, t), np.abs(np.diff(D)).sum()


@pytest.mark.parametrize("sigma", [0.05, 0.1])
@pytest.mark.parametrize("kind", ["uniform", "beta", "miscalibrated"])
def test_fixed_bandwidth_against_the_integral(sigma, kind):
    """relplot's quadrature is the mean over N = max(200, round(10 / sigma)) equally spaced points;
    the point k / (N - 1) lies in the k-th of N equal cells of [0, 1], so the mean of f differs
    from its integral by at most TV(f) / N: for f = |R| / n (giving A) and f = D / n (giving B),
    then |A / B - a / b| <= (|A - a| + (a / b) |B - b|) / B, added to the grid's bound."""
    y, p = _data(6, 2000, kind)
    p = 0.01 + 0.98 * p  # away from the ends, where relplot's grid loses images
    N = _mesh(sigma).shape[0]
    a, tv_R, b, tv_D = brute_force_integral(y, p, sigma)
    tol = grid_error_bound(y, p, sigma) + (tv_R / N + a / b * tv_D / N) / (b - tv_D / N)
    assert abs(smece(y, p, sigma=sigma) - a / b) <= tol
    assert abs(b - 1) < 1e-6  # the images hold all but the far tails: a / b is the integral over n
    assert tol < 0.5 * a / b  # a bound that can fail


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 40), hs.integers(0, 10**6))
def test_integer_weights_are_repeated_rounds_and_tables_are_rounds(T, seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.integers(0, 2, T)
    w = rng.integers(1, 4, T)
    a = smece(y, p, sample_weight=w.astype(float))
    assert a == pytest.approx(smece(np.repeat(y, w), np.repeat(p, w)), abs=1e-12)
    assert smece(fc.bucket_stats(y, p)) == pytest.approx(smece(y, p), abs=1e-12)


@pytest.mark.parametrize("c", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("labels", [[1, 1, 1], [0, 0], [0, 1], [1, 0, 1, 1], [1], [0]])
def test_all_predictions_equal(c, labels):
    """Every prediction at one point c (0, 1/2, 1; one round included): R = (c - ybar) n g and
    D = n g + 1e-4 for one smoothed bump g, so smECE = |c - ybar| / (1 + 1e-4 / (n mean g)), at
    any bandwidth; the mean of g over the mesh is at least about 1/2 (at an end point), so the
    floor moves the value by less than a relative 1e-3 / n."""
    y = np.array(labels)
    p = np.full(y.shape[0], c)
    want = abs(c - y.mean())
    got = smece(y, p)
    assert got == pytest.approx(relplot.smECE(p, y.astype(float)), abs=1e-12)
    assert got == pytest.approx(want, rel=1e-3 / y.shape[0], abs=1e-15)
    assert got <= want
    assert smece(y, p, sigma=0.05) == pytest.approx(want, rel=1e-3 / y.shape[0], abs=1e-15)


def test_binned_tables():
    y, p = _data(1, 500)
    assert smece(y, p, bins=10) == pytest.approx(smece(fc.bucket_stats(y, p, bins=10)), abs=1e-15)


@pytest.mark.parametrize("sigma", [0, -0.1, float("nan"), float("inf"), "wide", True])
def test_bad_sigma_names_it(sigma):
    with pytest.raises(ValueError, match="sigma"):
        smece([0, 1], [0.2, 0.7], sigma=sigma)


def test_bad_rounds_and_band_options():
    with pytest.raises(ValueError, match="y_prob"):
        smece([0, 1], [0.2, 1.7])
    with pytest.raises(ValueError, match="y_prob"):
        smece([0, 1], [0.2, np.nan])
    with pytest.raises(ValueError, match="n_boot"):
        smece_curve([0, 1], [0.2, 0.7], sample_weight=[1.0, 2.0], n_boot=10)
    with pytest.raises(ValueError, match="level"):
        smece_curve([0, 1], [0.2, 0.7], n_boot=10, level=1.0)


def test_band_holds_the_curve_where_the_predictions_are():
    y, p = _data(2, 5000)
    c = smece_curve(y, p, n_boot=100, level=0.95, seed=1)
    assert c.lower.shape == c.upper.shape == c.curve.shape == c.grid.shape == (200,)
    assert c.level == 0.95 and (c.lower <= c.upper).all()
    dense = c.density > 0.5
    inside = (c.lower[dense] <= c.curve[dense]) & (c.curve[dense] <= c.upper[dense])
    assert inside.mean() > 0.9
    assert (c.upper - c.lower)[dense].max() < 0.2
    again = smece_curve(y, p, n_boot=100, level=0.95, seed=1)
    np.testing.assert_array_equal(c.lower, again.lower)


def test_classwise():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([2, 2, 2], 800)
    labels = np.array([rng.choice(3, p=row) for row in P])
    res = smece(labels, P, multiclass="classwise")
    for c in range(3):
        assert res.per_class[c] == pytest.approx(relplot.smECE(P[:, c], (labels == c).astype(float)), abs=1e-6)


def test_curve_takes_pos_label_and_classes():
    rng = np.random.default_rng(1)
    P = rng.dirichlet([2, 2, 2], 600)
    labels = np.array([rng.choice(3, p=row) for row in P])
    res = smece_curve(labels, P, multiclass="classwise")
    for c in range(3):
        one = smece_curve((labels == c).astype(int), P[:, c])
        np.testing.assert_array_equal(res.per_class[c].curve, one.curve)
    assert res.mean == pytest.approx(np.mean([r.value for r in res.per_class]))
    names = np.where(labels == 1, "yes", "no")
    c = smece_curve(names, P[:, 1], pos_label="yes")
    assert c.value == smece((labels == 1).astype(int), P[:, 1])


def test_smooth_reliability_display_draws_the_curve():
    import matplotlib

    matplotlib.use("Agg")
    from fastcdl.plot import SmoothReliabilityDisplay

    y, p = _data(4, 3000)
    d = SmoothReliabilityDisplay.from_predictions(y, p, n_boot=30, seed=0, name="model")
    c = d.curve
    drawn = np.array([seg[0] for seg in d.line_.get_segments()])
    np.testing.assert_allclose(drawn[:, 1], c.curve[:-1])
    widths = np.asarray(d.line_.get_linewidths())
    assert widths.max() == pytest.approx(d.max_width) and widths.min() >= 0.6
    assert d.band_ is not None and "smECE = " in d.ax_.texts[0].get_text()
    assert f"{c.value:.4f}" in d.ax_.texts[0].get_text()


def _round_to_grid_ref(q, w, M):
    """The linear rounding from its definition, point by point."""
    out = np.zeros(M)
    for qk, wk in zip(q, w):
        x = qk * (M - 1)
        i = min(int(np.floor(x)), M - 2)
        out[i] += wk * (1 - (x - i))
        out[i + 1] += wk * (x - i)
    return out


@pytest.mark.parametrize("M", [2, 3, 1001, 1281])
def test_round_to_grid_against_its_definition(M):
    from fastcdl._compiled.grid_rounding import round_to_grid

    rng = np.random.default_rng(M)
    q = np.concatenate([[0.0, 1.0, 0.5, 1 / 3], rng.random(200), np.linspace(0, 1, M)])
    n = rng.integers(1, 4, q.shape[0]).astype(float)
    r = rng.normal(size=q.shape[0])
    s = rng.random(q.shape[0])
    got = round_to_grid(q, n, r, s, M)
    for row, w in zip(got, (n, r, s)):
        np.testing.assert_allclose(row, _round_to_grid_ref(q, w, M), rtol=0, atol=1e-12)
    unit = round_to_grid(q, np.empty(0), r, s, M)
    np.testing.assert_allclose(unit[0], _round_to_grid_ref(q, np.ones_like(q), M), rtol=0, atol=1e-12)
    assert unit[0].sum() == pytest.approx(q.shape[0])


@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_and_numpy_rounding_agree(monkeypatch, weighted):
    import fastcdl.smooth_ece as se

    rng = np.random.default_rng(7)
    p = np.concatenate([[0.0, 1.0, 0.5], rng.random(3000)])
    y = (rng.random(p.shape[0]) < p).astype(int)  # calibrated: the search visits several grids
    w = rng.integers(1, 3, p.shape[0]).astype(float) if weighted else None
    values = {}
    for start in (0, 10**9):
        monkeypatch.setattr(se, "COMPILED_FROM", start)
        c = smece_curve(y, p, sample_weight=w)
        values[start] = (smece(y, p, sample_weight=w), c.curve, c.density)
    assert values[0][0] == pytest.approx(values[10**9][0], abs=1e-12)
    for a, b in zip(values[0][1:], values[10**9][1:]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
