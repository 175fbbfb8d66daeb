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


def _data(seed, n, ties=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5 + seed % 3, 1 + seed % 2, n)
    if ties:
        p = np.round(p * 10) / 10
    y = (rng.random(n) < np.clip(p**1.3 + 0.05, 0, 1)).astype(int)
    return y, p


CASES = [(seed, n, ties) for seed, n in enumerate([5, 10, 50, 300, 2000, 20000, 100_000]) for ties in (False, True)]


@pytest.mark.parametrize("seed, n, ties", CASES)
def test_equals_relplot_automatic_bandwidth(seed, n, ties):
    y, p = _data(seed, n, ties)
    want = relplot.smECE(p, y.astype(float))
    assert smece(y, p) == pytest.approx(want, abs=1e-6)
    _, width = relplot.smECE(p, y.astype(float), return_width=True)
    assert smece_curve(y, p).sigma == width


@pytest.mark.parametrize("sigma", [0.004, 0.02, 0.05, 0.3, 1.0, 3.0])
def test_equals_relplot_fixed_bandwidth(sigma):
    for seed, n in [(0, 40), (1, 3000)]:
        y, p = _data(seed, n)
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


def brute_force(y, p, sigma, points=20001):
    """The definition: residuals smoothed by a Gaussian reflected at 0 and 1 (images at -p and 2 - p),
    integrated by the trapezoid rule; no grid under the predictions."""
    t = np.linspace(0, 1, points)[:, None]

    def K(u):
        return np.exp(-(u**2) / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)

    k = K(t - p) + K(t + p) + K(t - (2 - p))
    R = np.abs(k @ (p - y))
    D = k.sum(axis=1)
    return np.trapezoid(R, t[:, 0]) / np.trapezoid(D, t[:, 0])


@pytest.mark.parametrize("sigma", [0.05, 0.1, 0.25])
def test_fixed_bandwidth_against_the_definition(sigma):
    """relplot's grid (spacing about 1/1000) rounds each prediction by less than a grid step: the
    value moves by a small fraction of itself, within 1% here."""
    y, p = _data(5, 1500)
    assert smece(y, p, sigma=sigma) == pytest.approx(brute_force(y, p, sigma), rel=0.01)


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


def test_edges():
    assert smece([1, 1, 1], [1.0, 1.0, 1.0]) == pytest.approx(relplot.smECE(np.ones(3), np.ones(3)), abs=1e-12)
    assert smece([0, 0], [0.0, 0.0]) == pytest.approx(0.0, abs=1e-12)
    assert smece([1], [0.5]) == pytest.approx(relplot.smECE(np.array([0.5]), np.array([1.0])), abs=1e-6)
    assert smece([0, 1], [0.5, 0.5]) == pytest.approx(0.0, abs=1e-12)  # calibrated at 1/2
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
