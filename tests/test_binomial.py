"""Binomial intervals (fastcdl.binomial) from their definitions, and the reliability diagram's bands."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats

from fastcdl.binomial import binomial_interval


def wilson_reference(s, n, level):
    """The probabilities pi the score test accepts, |s/n - pi| <= z sqrt(pi (1 - pi) / n),
    found by bisection on each side of s/n (the accepted set is an interval around it)."""
    z = stats.norm.ppf(0.5 + level / 2)
    phat = s / n

    def accepts(pi):
        return abs(phat - pi) <= z * math.sqrt(pi * (1 - pi) / n) + 1e-15

    def edge(inside, outside):
        for _ in range(200):
            mid = (inside + outside) / 2
            inside, outside = (mid, outside) if accepts(mid) else (inside, mid)
        return inside

    lo = 0.0 if s == 0 else edge(phat, 0.0)
    hi = 1.0 if s == n else edge(phat, 1.0)
    return lo, hi


def clopper_pearson_reference(s, n, level):
    """The ends where the one-sided binomial tail probabilities equal (1 - level) / 2."""
    from scipy.optimize import brentq

    a = (1 - level) / 2
    lo = 0.0 if s == 0 else brentq(lambda pi: stats.binom.sf(s - 1, n, pi) - a, 1e-15, 1 - 1e-15, xtol=1e-14)
    hi = 1.0 if s == n else brentq(lambda pi: stats.binom.cdf(s, n, pi) - a, 1e-15, 1 - 1e-15, xtol=1e-14)
    return lo, hi


@settings(max_examples=60, deadline=None)
@given(hs.integers(1, 400), hs.data(), hs.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_wilson_is_the_score_test_inverted(n, data, level):
    s = data.draw(hs.integers(0, n))
    lo, hi = binomial_interval([s], [n], level=level)
    want = wilson_reference(s, n, level)
    assert lo[0] == pytest.approx(want[0], abs=1e-9)
    assert hi[0] == pytest.approx(want[1], abs=1e-9)
    assert 0.0 <= lo[0] <= s / n <= hi[0] <= 1.0
    assert hi[0] - lo[0] > 0  # never of width zero, at s = 0 and s = n too


@settings(max_examples=60, deadline=None)
@given(hs.integers(1, 300), hs.data(), hs.sampled_from([0.8, 0.9, 0.95]))
def test_clopper_pearson_inverts_the_binomial_tails(n, data, level):
    s = data.draw(hs.integers(0, n))
    lo, hi = binomial_interval([s], [n], level=level, method="clopper-pearson")
    want = clopper_pearson_reference(s, n, level)
    assert lo[0] == pytest.approx(want[0], abs=1e-9)
    assert hi[0] == pytest.approx(want[1], abs=1e-9)
    ci = stats.binomtest(s, n).proportion_ci(confidence_level=level, method="exact")
    assert (lo[0], hi[0]) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_clopper_pearson_contains_wilson_at_the_ends():
    n = np.arange(1, 60)
    for s in (np.zeros_like(n), n):
        lw, hw = binomial_interval(s, n, level=0.9)
        lc, hc = binomial_interval(s, n, level=0.9, method="clopper-pearson")
        assert (lc <= lw + 1e-12).all() and (hc >= hw - 1e-12).all()


def test_coverage_of_the_exact_interval_is_at_least_the_level():
    level = 0.9
    for n in (5, 20, 80):
        for pi in (0.02, 0.3, 0.5, 0.97):
            s = np.arange(n + 1)
            lo, hi = binomial_interval(s, np.full(n + 1, n), level=level, method="clopper-pearson")
            coverage = stats.binom.pmf(s, n, pi)[(lo <= pi) & (pi <= hi)].sum()
            assert coverage >= level - 1e-12


@pytest.mark.parametrize(
    "args, kw, arg",
    [
        (([1], [0]), {}, "trials"),
        (([3], [2]), {}, "successes"),
        (([-1], [2]), {}, "successes"),
        (([np.nan], [2]), {}, "successes"),
        (([1], [2]), {"level": 1.0}, "level"),
        (([1], [2]), {"level": 0.0}, "level"),
        (([1], [2]), {"method": "agresti"}, "method"),
        (([0.5], [2.5]), {"method": "clopper-pearson"}, "successes"),
        (([1, 2], [3]), {}, "successes"),
    ],
)
def test_bad_input(args, kw, arg):
    with pytest.raises(ValueError, match=arg):
        binomial_interval(*args, **kw)


def test_reliability_bands():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import fastcdl as fc
    from fastcdl.plot import ReliabilityDisplay

    y = [0] * 6 + [1] * 3 + [0] * 1 + [1] * 4
    p = [0.1] * 6 + [0.5] * 4 + [0.9] * 4
    st = fc.bucket_stats(y, p)
    for band in ("wilson", "clopper-pearson"):
        disp = ReliabilityDisplay.from_stats(st, band=band, level=0.8)
        lo, hi = binomial_interval(st.positives, st.counts, level=0.8, method=band)
        np.testing.assert_array_equal(disp.band_lo_, lo)
        np.testing.assert_array_equal(disp.band_hi_, hi)
        assert disp.band_lo_[0] == 0.0 and disp.band_hi_[0] > 0.1  # the all-0 bucket
        assert disp.band_hi_[-1] == 1.0 and disp.band_lo_[-1] < 0.9  # the all-1 bucket
        labels = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
        assert any(t.startswith("80% ") and "band" in t for t in labels)
        plt.close(disp.figure_)
    boot = ReliabilityDisplay.from_stats(st, band="bootstrap", seed=1)
    assert boot.n_boot == 200 and boot.band_lo_[0] == boot.band_hi_[0] == 0.0  # what the bootstrap cannot do
    plt.close(boot.figure_)
    old = ReliabilityDisplay.from_stats(st, n_boot=50)  # n_boot alone still asks for the bootstrap
    assert old.band == "bootstrap"
    plt.close(old.figure_)
    with pytest.raises(ValueError, match="band"):
        ReliabilityDisplay.from_stats(st, band="jeffreys")
    with pytest.raises(ValueError, match="band"):
        ReliabilityDisplay.from_predictions([0, 1], [0.2, 0.4], sample_weight=[1.0, 2.0], band="wilson")
    with pytest.raises(ValueError, match="level"):
        ReliabilityDisplay.from_stats(st, band="wilson", level=1.5)
    plt.close("all")
