"""Sample estimators (fastcdl/sample.py, docs/estimators.md) against slow references and theory.

Tolerances: 1e-12 against exact (Fraction) references, 1e-8 against the HiGHS linear
programs (feasibility tolerances 1e-10); statistical checks state their own margins, each a
few standard errors of the simulation.
"""

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.optimize import linprog

import fastcdl as fc
from conftest import float_tables, grid_tables, payoffs, rounds, tables
from fastcdl.sample import (
    atb,
    atb_unbiased,
    brier,
    brier_decomposition,
    brownian_range_cdf,
    brownian_range_sf,
    cdl_monotone,
    cdl_monotone_report,
    cutoff_ce,
    cutoff_ce_test,
    decision_loss_curve_monotone,
    mce,
    rmsce,
    smce,
    vcdl_monotone,
)
from reference import canonical_table, k2_ref
from sample_reference import (
    atb_ref,
    brier_ref,
    cdl_monotone_envelope_ref,
    cdl_monotone_lp,
    cfdl_recalibrated_ref,
    cutoff_ce_ref,
    f_monotone_exact,
    murphy_ref,
    pav_ref,
    smce_lp_rounds,
    smce_lp_table,
    vcdl_monotone_ref,
)

EXACT_TOL = 1e-12
LP_TOL = 1e-8
RTOL = 1e-12  # rounding slack for inequalities that can hold with equality

all_tables = st.one_of(tables(), float_tables(weighted=True))


def _stats(table):
    return fc.BucketStats.from_table(*table)


EDGE_TABLES = {
    "single round y=1 at 0": ([0.0], [1], [1]),
    "single round y=0 at 1/2": ([0.5], [1], [0]),
    "single round y=1 at 1": ([1.0], [1], [1]),
    "one bucket": ([0.5], [4], [1]),
    "predictions 0, 1/2, 1": ([0.0, 0.5, 1.0], [3, 2, 3], [2, 2, 1]),
    "anti-ordered": ([0.25, 0.75], [2, 2], [2, 0]),
    "ordered but miscalibrated": ([0.25, 0.75], [2, 2], [0, 2]),
    "all wrong at 0 and 1": ([0.0, 1.0], [1, 1], [1, 0]),
    "calibrated": ([0.0, 0.5, 1.0], [2, 4, 3], [0, 2, 3]),
    "PAV pools three": ([0.2, 0.4, 0.6, 0.8], [2, 2, 2, 2], [1, 2, 0, 2]),
}


# ------------------------------------------------------------------- monotone CDL


@pytest.mark.parametrize("name", EDGE_TABLES)
def test_cdl_monotone_edges_against_lp_and_envelope(name):
    table = EDGE_TABLES[name]
    q, n, s = canonical_table(*table)
    value = cdl_monotone(_stats(table))
    assert abs(value - cdl_monotone_lp(q, n, s)) <= LP_TOL
    assert abs(value - cdl_monotone_envelope_ref(q, n, s)) <= EXACT_TOL
    assert abs(vcdl_monotone(_stats(table)) - vcdl_monotone_ref(q, n, s)) <= EXACT_TOL


def test_cdl_monotone_known_values():
    # frequencies increase with the predictions: PAV changes nothing, CDL_M = CDL
    assert cdl_monotone([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]) == fc.cdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    # anti-ordered: the best monotone fix predicts 1/2 for both buckets; the worst task has
    # kinks 1/4 and 3/4 with weights 1 and gains 3/4 per round (CDL, with the free fix, is 1)
    r = cdl_monotone_report([1, 1, 0, 0], [0.25, 0.25, 0.75, 0.75])
    assert r.value == 0.75 and r.recalibration.tolist() == [0.5, 0.5]
    assert r.kinks.tolist() == [0.25, 0.75] and r.weights.tolist() == [1.0, 1.0]
    assert fc.cdl([1, 1, 0, 0], [0.25, 0.25, 0.75, 0.75]) == 1.0
    # calibrated: 0
    assert cdl_monotone([0, 1, 1, 0], [0.5] * 4) == 0.0


@given(tables())
def test_cdl_monotone_against_lp(table):
    q, n, s = canonical_table(*table)
    assert abs(cdl_monotone(_stats(table)) - cdl_monotone_lp(q, n, s)) <= LP_TOL


@given(st.one_of(grid_tables(), float_tables(max_buckets=8)))
def test_cdl_monotone_against_exact_envelope(table):
    q, n, s = canonical_table(*table)
    assert abs(cdl_monotone(_stats(table)) - cdl_monotone_envelope_ref(q, n, s)) <= EXACT_TOL


@given(st.one_of(grid_tables(), float_tables(max_buckets=6), float_tables(max_buckets=6, weighted=True)))
def test_vcdl_monotone_against_reference(table):
    q, n, s = canonical_table(*table)
    assert abs(vcdl_monotone(_stats(table)) - vcdl_monotone_ref(q, n, s)) <= EXACT_TOL


@given(tables())
def test_certificate_attains_the_value_with_the_pav_fix(table):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", fc.CertificateWarning)
        r = cdl_monotone_report(_stats(table))
    assert r.exact == (not caught)
    q, n, s = canonical_table(*table)
    assert r.values.tolist() == q.tolist()
    assert r.recalibration.tolist() == pytest.approx([float(v) for v in pav_ref(n, s)], abs=1e-15)
    assert np.all(np.diff(r.recalibration) >= 0)
    assert r.payoff.min() >= 0.0 and r.payoff.max() <= 1.0 and r.payoff.shape[1] == 2
    assert r.payoff.shape[0] == len(r.kinks) + 1
    assert r.value == cdl_monotone(_stats(table)) and r.vcdl == vcdl_monotone(_stats(table))
    if not r.exact:  # a kink float64 payoffs cannot place; the report says so
        assert any(0.0 < min(k, 1.0 - k) < 2.0**-50 for k in r.kinks)
        return
    gain = cfdl_recalibrated_ref(q, n, s, pav_ref(n, s), r.payoff)
    assert abs(gain - r.value) <= EXACT_TOL


@pytest.mark.parametrize("name", sorted(EDGE_TABLES))
def test_monotone_kernel_walk_is_the_curves_walk_edges(name):
    _kernel_matches_curve(*EDGE_TABLES[name])


@given(all_tables)
def test_monotone_kernel_walk_is_the_curves_walk(table):
    _kernel_matches_curve(*table)


def _kernel_matches_curve(values, counts, positives):
    """monotone_cdl_kernel writes the pointer walk out (the acting sets start at i or i + 1);
    its h, right and VCDL_M are those of monotone_curve, which searches them (_walk), bit for bit."""
    from fastcdl._compiled.estimators import monotone_cdl_kernel, monotone_curve

    st_ = _stats((values, counts, positives))
    q, n, s = st_.values, st_.counts.astype(np.float64), st_.positives.astype(np.float64)
    T = float(n.sum())
    cdl_m, _, _, b, h, right, best, jv = monotone_cdl_kernel(q, n, s, T)
    assert b.tolist() == sorted(set((q + 0.0).tolist()) | {0.0, 0.5, 1.0})
    f_left, f_right = monotone_curve(q, n, s, b, T)
    assert h.tolist() == np.maximum(f_left, f_right).tolist()
    # the side is chosen on T f, before the division by T, which can round two values to one
    t_left, t_right = monotone_curve(q, n, s, b, 1.0)
    assert right.tolist() == (t_right > t_left).astype(np.uint8).tolist()
    ratios = h / np.maximum(b, 1.0 - b)
    assert best == ratios.max() and jv == int(np.argmax(ratios))


@given(tables(), payoffs())
def test_no_task_gains_more_than_cdl_monotone_from_pav(table, u):
    q, n, s = canonical_table(*table)
    assert cfdl_recalibrated_ref(q, n, s, pav_ref(n, s), u) <= cdl_monotone(_stats(table)) + RTOL


@given(all_tables, st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=1, max_size=6))
def test_curve_against_definition(table, kinks):
    q, n, s = canonical_table(*table)
    kinks = kinks + [0.0, 0.5, 1.0] + q.tolist()
    mu, v = decision_loss_curve_monotone(_stats(table), kinks=kinks)
    assert mu.tolist() == kinks  # the caller's order is kept
    for m_, v_ in zip(kinks, v):
        ref = float(f_monotone_exact(q, n, s, m_) / max(m_, 1 - m_))
        assert abs(v_ - ref) <= EXACT_TOL
    mu, v = decision_loss_curve_monotone(_stats(table))
    assert v.max() <= vcdl_monotone(_stats(table)) + RTOL


@pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")  # values compared on one-round buckets
@given(all_tables)
def test_relations(table):
    stats = _stats(table)
    cm, vm = cdl_monotone(stats), vcdl_monotone(stats)
    assert 0.0 <= vm <= cm + RTOL
    assert cm <= 2 * vm + RTOL
    assert cm <= fc.cdl(stats) + RTOL
    assert vm <= fc.vcdl(stats) + RTOL
    assert cm <= 1.0 + RTOL
    # f_M(mu) <= cutoff CE for every kink (Rossellini et al.), both one-sided values
    q, n, s = canonical_table(*table)
    cut = cutoff_ce(stats)
    for mu in sorted(set(q.tolist()) | {0.0, 0.5, 1.0, 0.3}):
        assert float(f_monotone_exact(q, n, s, mu)) <= cut + RTOL
        assert float(f_monotone_exact(q, n, s, mu, right=True)) <= cut + RTOL
    assert vm <= 2 * cut + RTOL


@st.composite
def ordered_tables(draw):
    """Tables whose frequencies are non-decreasing in the predictions (PAV is the identity)."""
    q, n, s = draw(st.one_of(grid_tables(), float_tables()))
    order = np.argsort(q, kind="stable")
    qhat = np.sort(s / n)
    n = n[order]
    s = qhat * n
    return q[order], n.astype(np.float64), s


@given(ordered_tables())
def test_equals_cdl_when_frequencies_increase(table):
    stats = _stats(table)
    assert abs(cdl_monotone(stats) - fc.cdl(stats)) <= RTOL
    assert abs(vcdl_monotone(stats) - fc.vcdl(stats)) <= RTOL


@pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")  # values compared on one-round buckets
@given(rounds())
def test_raw_rounds_equal_their_table(yp):
    y, p = yp
    stats = fc.bucket_stats(y, p)
    for f in (cdl_monotone, vcdl_monotone, cutoff_ce, atb, smce, mce, rmsce):
        assert f(y, p) == f(stats)


# ------------------------------------------------------------------- cutoff CE


@given(rounds(max_size=30))
def test_cutoff_ce_against_all_intervals(yp):
    y, p = yp
    assert abs(cutoff_ce(y, p) - cutoff_ce_ref(y, p)) <= EXACT_TOL


@given(rounds(max_size=20), st.lists(st.floats(0.1, 5.0), min_size=20, max_size=20))
def test_cutoff_ce_weighted(yp, w):
    y, p = yp
    w = np.array(w[: len(p)])
    assert abs(cutoff_ce(y, p, sample_weight=w) - cutoff_ce_ref(y, p, w)) <= EXACT_TOL


def test_cutoff_ce_test_reports_the_interval():
    p = [0.1, 0.1, 0.3, 0.3, 0.6, 0.6, 0.9]
    y = [0, 0, 1, 1, 1, 1, 1]  # too low from 0.3 upwards
    r = cutoff_ce_test(y, p)
    assert r.value == pytest.approx(cutoff_ce_ref(y, p), abs=1e-15)
    assert r.interval == (0.3, 0.9) and r.bias == pytest.approx(r.value)
    V = sum(pi * (1 - pi) for pi in p)
    assert r.statistic == pytest.approx(7 * r.value / math.sqrt(V))
    assert r.p_value == pytest.approx(brownian_range_sf(r.statistic))
    down = cutoff_ce_test([1 - v for v in y], [1 - v for v in p])
    assert down.bias == pytest.approx(-down.value) and down.interval == (pytest.approx(0.1), pytest.approx(0.7))
    # predictions 0 and 1 only: no randomness under the hypothesis
    assert cutoff_ce_test([0, 1], [0.0, 1.0]).p_value == 1.0
    assert cutoff_ce_test([1, 1], [0.0, 1.0]).p_value == 0.0


def test_brownian_range_series():
    r = np.linspace(0.05, 6.0, 400)
    cdf, sf = brownian_range_cdf(r), brownian_range_sf(r)
    assert np.all(np.abs(cdf + sf - 1.0) <= 1e-14)
    assert np.all(np.diff(cdf) >= -1e-15)
    assert brownian_range_cdf(0.0) == 0.0 and brownian_range_sf(-1.0) == 1.0
    # the small-r and large-r series agree where both converge
    from fastcdl.sample import _range_cdf_small, _range_sf_large

    mid = np.linspace(0.7, 2.5, 50)
    assert np.max(np.abs(_range_cdf_small(mid) + _range_sf_large(mid) - 1.0)) <= 1e-14
    # known moments of the range: E R = 2 sqrt(2 / pi), E R^2 = 4 ln 2
    m1 = quad(brownian_range_sf, 0.0, 40.0, limit=200)[0]
    m2 = quad(lambda x: 2 * x * brownian_range_sf(x), 0.0, 40.0, limit=200)[0]
    assert m1 == pytest.approx(2 * math.sqrt(2 / math.pi), abs=1e-10)
    assert m2 == pytest.approx(4 * math.log(2), abs=1e-10)


def test_brownian_range_against_simulation():
    """Ranges of Gaussian random walks of n steps; the continuous path's extremes lie beyond
    the walk's by 0.5826 / sqrt(n) each on average (Asmussen, Glynn, Pitman 1995), which is
    added back. The survival function is then within 4 binomial standard errors."""
    rng = np.random.default_rng(20240611)
    n, paths = 1000, 20000
    R = np.empty(paths)
    for b in range(0, paths, 2000):
        W = np.cumsum(rng.standard_normal((2000, n)), axis=1) / math.sqrt(n)
        R[b : b + 2000] = np.maximum(W.max(1), 0.0) - np.minimum(W.min(1), 0.0)
    R += 2 * 0.5826 / math.sqrt(n)
    for x in (0.9, 1.2, 1.6, 2.0, 2.5, 3.0):
        sf = brownian_range_sf(x)
        emp = np.mean(R > x)
        assert abs(emp - sf) <= 4 * math.sqrt(sf * (1 - sf) / paths) + 1e-3, x


def test_cutoff_p_value_holds_its_level():
    """Perfectly calibrated scores: the asymptotic p-value rejects about 5% at the 5% level."""
    rng = np.random.default_rng(7)
    reps, T = 600, 2000
    p_values = np.empty(reps)
    for k in range(reps):
        p = rng.random(T)
        y = rng.random(T) < p
        p_values[k] = cutoff_ce_test(y, p).p_value
    rate = np.mean(p_values <= 0.05)
    assert 0.02 <= rate <= 0.08, rate
    assert 0.4 <= np.mean(p_values) <= 0.6


# ------------------------------------------------------------------- ATB


@given(rounds(max_size=30))
def test_atb_against_the_integral(yp):
    y, p = yp
    assert abs(atb(y, p) - atb_ref(y, p)) <= EXACT_TOL
    if len(p) >= 2:
        expected = (len(p) * atb_ref(y, p) - brier_ref(y, p)) / (len(p) - 1)
        assert abs(atb_unbiased(y, p) - expected) <= EXACT_TOL


def _atb_population(a):
    """int_0^1 [G(u)^2 + (G(1) - G(u))^2] du, G(u) = int_0^u (p - c(p)) dp, c(p) = p + a (p - 1/2)."""
    G = lambda u: quad(lambda x: -a * (x - 0.5), 0.0, u)[0]  # noqa: E731
    G1 = G(1.0)
    return quad(lambda u: G(u) ** 2 + (G1 - G(u)) ** 2, 0.0, 1.0)[0]


@pytest.mark.parametrize("a", [0.0, -0.2])
def test_atb_unbiased_is_unbiased(a):
    """E[(T ATB - Brier) / (T - 1)] equals the population ATB for i.i.d. rounds, while ATB
    itself is off by about Brier / T. p ~ U[0, 1], y ~ Bernoulli(p + a (p - 1/2))."""
    rng = np.random.default_rng(11)
    reps, T = 4000, 200
    pop = _atb_population(a)
    unb = np.empty(reps)
    raw = np.empty(reps)
    for k in range(reps):
        p = rng.random(T)
        y = rng.random(T) < p + a * (p - 0.5)
        st_ = fc.bucket_stats(y, p)
        unb[k] = atb_unbiased(st_)
        raw[k] = atb(st_)
    se = unb.std() / math.sqrt(reps)
    assert abs(unb.mean() - pop) <= 4 * se, (unb.mean(), pop, se)
    brier_pop = quad(lambda x: x * x - 2 * x * (x + a * (x - 0.5)) + x + a * (x - 0.5), 0.0, 1.0)[0]
    assert raw.mean() - pop > 10 * se  # the uncorrected score is visibly biased ...
    assert abs(raw.mean() - (brier_pop / T + (1 - 1 / T) * pop)) <= 4 * raw.std() / math.sqrt(reps)  # ... by Brier/T


def test_atb_unbiased_refuses_what_it_cannot_correct():
    with pytest.raises(ValueError, match="bins=None"):
        atb_unbiased([0, 1, 1], [0.2, 0.4, 0.9], bins=5)
    with pytest.raises(ValueError, match="unweighted"):
        atb_unbiased([0, 1, 1], [0.2, 0.4, 0.9], sample_weight=[1.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="at least 2 rounds"):
        atb_unbiased([1], [0.3])


# ------------------------------------------------------------------- smCE


@given(rounds(max_size=25))
def test_smce_against_lp_on_rounds(yp):
    y, p = yp
    assert abs(smce(y, p) - smce_lp_rounds(y, p)) <= LP_TOL


@given(st.one_of(tables(), float_tables(weighted=True)))
def test_smce_against_lp_on_tables(table):
    q, n, s = canonical_table(*table)
    assert abs(smce(_stats(table)) - smce_lp_table(q, n, s)) <= LP_TOL


def test_smce_special_shapes():
    rng = np.random.default_rng(3)
    for p in (np.full(12, 0.3), rng.beta(0.3, 0.3, 15), np.r_[np.zeros(5), np.ones(5)], np.sort(rng.random(18))):
        y = (rng.random(p.shape[0]) < 0.5).astype(int)
        assert abs(smce(y, p) - smce_lp_rounds(y, p)) <= LP_TOL
    # a monotone walk (every residual of one sign) and its mirror image
    p = np.linspace(0.05, 0.95, 20)
    assert smce(np.ones(20, int), p) == pytest.approx(smce_lp_rounds(np.ones(20), p), abs=LP_TOL)
    assert smce(np.zeros(20, int), p) == pytest.approx(smce_lp_rounds(np.zeros(20), p), abs=LP_TOL)


@pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")  # values compared on one-round buckets
@given(all_tables)
def test_smce_bounds(table):
    # smCE <= ECE (w = sign per bucket is feasible only without the Lipschitz constraint) and
    # smCE >= |sum (y - p)| / T (w constant)
    stats = _stats(table)
    q, n, s = canonical_table(*table)
    val = smce(stats)
    assert val <= fc.ece(stats) + RTOL
    assert val >= abs(np.sum(s - q * n)) / np.sum(n) - RTOL


# ------------------------------------------------------------------- classic numbers


@pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")  # values compared on one-round buckets
@given(all_tables)
def test_mce_rmsce_brier_decomposition(table):
    stats = _stats(table)
    q, n, s = canonical_table(*table)
    assert mce(stats) == pytest.approx(float(np.max(np.abs(q - s / n))), abs=1e-15)
    assert rmsce(stats) == pytest.approx(math.sqrt(k2_ref(q, n, s)), abs=1e-12)
    d = brier_decomposition(stats)
    rel, res, unc = murphy_ref(q, n, s)
    assert (d.reliability, d.resolution, d.uncertainty) == pytest.approx((rel, res, unc), abs=1e-12)
    assert d.within_bin == 0.0
    assert d.brier == pytest.approx(brier(stats), abs=1e-15)
    assert abs(d.reliability - d.resolution + d.uncertainty + d.within_bin - d.brier) <= 1e-12


@given(rounds(max_size=40), st.integers(1, 10))
def test_brier_on_rounds_and_binned_decomposition(yp, m):
    y, p = yp
    assert abs(brier(y, p) - brier_ref(y, p)) <= EXACT_TOL
    assert brier(y, p, bins=m) == brier(y, p)  # the Brier score of raw rounds ignores binning
    w = np.linspace(0.5, 2.0, len(p))
    assert abs(brier(y, p, sample_weight=w) - brier_ref(y, p, w)) <= EXACT_TOL
    d = brier_decomposition(y, p, bins=m)
    assert d.brier == brier(y, p)
    assert abs(d.reliability - d.resolution + d.uncertainty + d.within_bin - d.brier) <= 1e-12
    binned = fc.bucket_stats(y, p, bins=m)
    assert d.reliability == pytest.approx(fc.k2(binned), abs=1e-15)
    e = brier_decomposition(binned)  # a binned table does not determine the Brier score
    assert math.isnan(e.brier) and math.isnan(e.within_bin)
    assert (e.reliability, e.resolution, e.uncertainty) == (d.reliability, d.resolution, d.uncertainty)
    with pytest.raises(ValueError, match="binned BucketStats"):
        brier(binned)


def test_validation_names_the_problem():
    with pytest.raises(ValueError, match="y_prob must lie in"):
        cdl_monotone([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="NaN"):
        smce([0, 1], [0.5, np.nan])
    with pytest.raises(ValueError, match="different lengths"):
        cutoff_ce([0, 1, 1], [0.5, 0.2])
    with pytest.raises(ValueError, match="y_true"):
        atb([0, 2], [0.5, 0.2])
    with pytest.raises(ValueError, match="BucketStats"):
        smce(fc.bucket_stats([0, 1], [0.5, 0.2]), [0.5, 0.2])
    with pytest.raises(ValueError, match="y_prob is required"):
        brier([0, 1])
    with pytest.raises(ValueError, match="kinks"):
        decision_loss_curve_monotone([0, 1], [0.5, 0.2], kinks=[1.5])
    with pytest.raises(ValueError, match="bins"):
        brier([0, 1], [0.5, 0.2], bins=0)


# ------------------------------------------------------------------- on samples

ESTIMATORS = {
    "cdl_monotone": cdl_monotone,
    "vcdl_monotone": vcdl_monotone,
    "cutoff_ce": cutoff_ce,
    "smce": smce,
    "atb_unbiased": atb_unbiased,
}


def _sample(T, a, seed):
    rng = np.random.default_rng(seed)
    p = rng.random(T)
    y = rng.random(T) < np.clip(p + a * (p - 0.5), 0.0, 1.0)
    return fc.bucket_stats(y, p)


def test_calibrated_estimates_shrink_while_plug_in_cdl_does_not():
    """p ~ U[0, 1], y ~ Bernoulli(p): the sample estimators fall roughly like T^-1/2 (ATB like
    1/T, so its square root is compared); the exact plug-in CDL stays near 1/4."""
    funcs = {
        "cdl_monotone": cdl_monotone,
        "vcdl_monotone": vcdl_monotone,
        "cutoff_ce": cutoff_ce,
        "smce": smce,
        "atb": atb,
        "cdl": fc.cdl,
    }
    means = {}
    for T in (1000, 100_000):
        with pytest.warns(fc.SampleSizeWarning):  # the plug-in CDL says that it measures noise here
            vals = {name: [f(_sample(T, 0.0, seed)) for seed in range(6)] for name, f in funcs.items()}
        means[T] = {k: np.mean(v) for k, v in vals.items()}
    for name in ("cdl_monotone", "vcdl_monotone", "cutoff_ce", "smce"):
        ratio = means[1000][name] / means[100_000][name]
        assert 4.0 <= ratio <= 30.0, (name, ratio)  # T^-1/2 would give 10
    assert 4.0 <= math.sqrt(means[1000]["atb"] / means[100_000]["atb"]) <= 30.0
    assert means[1000]["cdl"] > 0.2 and means[100_000]["cdl"] > 0.2


def _population(a, grid=2001):
    """Population values for p ~ U[0, 1] and E[y | p] = c(p) = p + a (p - 1/2) (|a| <= 1, no
    clipping), by numerical integration. c increases, so the best monotone recalibration is
    c itself and the monotone CDL is the CDL of the population."""
    c = lambda x: x + a * (x - 0.5)  # noqa: E731
    mus = np.linspace(0.0, 1.0, grid)
    f = np.empty(grid)
    for k, mu in enumerate(mus):  # the V-kink curve: decisions at p and c(p) differ
        f[k] = quad(lambda x: abs(c(x) - mu) if (x >= mu) != (c(x) >= mu) else 0.0, 0.0, 1.0, points=[mu])[0]
    left, right = mus <= 0.5, mus >= 0.5
    ml, fl = mus[left][:, None], f[left][:, None]
    mr, fr = mus[right][None, :], f[right][None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        chords = np.where(mr > ml, fl + (fr - fl) * (0.5 - ml) / (mr - ml), np.maximum(fl, fr))
    G = lambda u: quad(lambda x: c(x) - x, 0.0, u)[0]  # noqa: E731
    Gs = np.array([G(u) for u in np.linspace(0.0, 1.0, 2001)])
    # smCE: the LP over 1-Lipschitz w on a grid of 400 cells (midpoint rule)
    K = 400
    x = (np.arange(K) + 0.5) / K
    A = np.zeros((2 * (K - 1), K))
    for i in range(K - 1):
        A[2 * i, [i, i + 1]] = 1.0, -1.0
        A[2 * i + 1, [i, i + 1]] = -1.0, 1.0
    lp = linprog(-(c(x) - x) / K, A_ub=A, b_ub=np.full(2 * (K - 1), 1.0 / K), bounds=(-1, 1), method="highs")
    return {
        "cdl_monotone": float(2 * np.max(chords)),
        "vcdl_monotone": float(np.max(f / np.maximum(mus, 1 - mus))),
        "cutoff_ce": float(Gs.max() - min(Gs.min(), 0.0)),
        "smce": -lp.fun,
        "atb_unbiased": _atb_population(a),
    }


def test_estimates_converge_to_population_values():
    """E[y | p] = p - 0.2 (p - 1/2) = 0.1 + 0.8 p: at T = 10^6 every estimator is within a few
    standard errors (measured: 1e-4 or less) of the population value; closed forms check the
    integration (cutoff CE = 0.2 / 8, smCE = 0.2 / 12, ATB = 0.04 / 60)."""
    pop = _population(-0.2)
    assert pop["cutoff_ce"] == pytest.approx(0.025, abs=1e-6)
    assert pop["smce"] == pytest.approx(0.2 / 12, abs=1e-5)
    assert pop["atb_unbiased"] == pytest.approx(0.04 / 60, abs=1e-9)
    for seed in range(2):
        stats = _sample(10**6, -0.2, seed)
        for name, f in ESTIMATORS.items():
            tol = 3e-5 if name == "atb_unbiased" else 6e-4
            assert abs(f(stats) - pop[name]) <= tol, (name, f(stats), pop[name])
    with pytest.warns(fc.SampleSizeWarning):
        assert fc.cdl(stats) > 0.2  # the plug-in stays far off, and says so


DOC = Path(__file__).resolve().parents[1] / "docs" / "estimators.md"


def _worked_example():
    """docs/estimators.md's worked example: (fastcdl part, models part, the table shown)."""
    section = DOC.read_text().split("## Worked example", 1)[1]
    fastcdl_part, models_part = re.findall(r"```python\n(.*?)```", section, flags=re.S)[:2]
    shown = re.search(r"```text\n(.*?)```", section, flags=re.S).group(1)
    return fastcdl_part, models_part, shown


def test_worked_example_table_from_the_saved_scores_is_exact():
    """fastcdl's part of the worked example, given the scores the documented fits gave (saved in
    tests/data by scripts/worked_example_scores.py), prints exactly the table the docs show: on
    every machine, since nothing in it depends on a third-party fit."""
    fastcdl_part, _, shown = _worked_example()
    namespace = {}
    exec(compile(fastcdl_part, str(DOC), "exec"), namespace)
    saved = np.load(Path(__file__).parent / "data" / "worked_example_scores.npz")
    lines = [namespace["HEADER"]]
    lines += [namespace["row"](str(name), saved["y"], saved[f"p{i}"]) for i, name in enumerate(saved["names"])]
    assert "\n".join(lines) + "\n" == shown


def _numbers(line):
    return [float(x) for x in re.findall(r"-?\d+\.\d+|\d+", line.split("  ", 1)[1])]


def test_worked_example_runs_and_agrees_within_the_precision_of_the_fits(capsys):
    """The whole documented example (scikit-learn's fits included) runs as written and prints the
    table's rows and columns. Its numbers depend on the fits, whose last bits can differ by machine
    (the docs say so), so each agrees with the shown table within one unit of its last printed
    digit, and the simulated p-value (999 simulations: a crossing moves it by 1/1000) within 0.005."""
    pytest.importorskip("sklearn")
    fastcdl_part, models_part, shown = _worked_example()
    namespace = {}
    exec(compile(fastcdl_part, str(DOC), "exec"), namespace)
    exec(compile(models_part, str(DOC), "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    expected = shown.splitlines()
    assert printed[0] == expected[0]
    assert [line.split("  ")[0] for line in printed] == [line.split("  ")[0] for line in expected]
    header = expected[0].split()
    columns = ["scores", "CDL", "CDL_M", "debiased", "lo", "hi", "cutoff", "p_asym", "p_sim", "smCE", "ATB_unb"]
    assert header[1:] == [
        "scores",
        "CDL",
        "CDL_M",
        "debiased",
        "95%",
        "interval",
        "cutoff",
        "p_asym",
        "p_sim",
        "smCE",
        "ATB_unb",
    ]
    for got_line, want_line in zip(printed[1:], expected[1:]):
        got, want = _numbers(got_line), _numbers(want_line)
        assert len(got) == len(want) == len(columns)
        digits = [
            len(w.split(".")[1]) if "." in w else 0 for w in re.findall(r"-?\d+\.\d+|\d+", want_line.split("  ", 1)[1])
        ]
        for column, g, w, d in zip(columns, got, want, digits):
            tol = 0.005 if column == "p_sim" else 10.0**-d * 1.000001
            assert abs(g - w) <= tol, (want_line.split("  ")[0], column, g, w)


def test_monotone_kernel_chooses_the_side_before_dividing_by_T():
    """A table (found by hypothesis) where T f_M(mu) and T f_M(mu+) differ in the last bit and
    their quotients by T are one value: the side is the larger of the undivided ones."""
    _kernel_matches_curve(
        np.array([0.0, 1.0, 0.25, 0.2, 0.75, 0.875, 0.375, 0.125, 0.0625, 0.5, 1 / 15]),
        np.array([4, 1, 1, 1, 5, 1, 1, 1, 12, 3, 15]),
        np.array([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1]),
    )
