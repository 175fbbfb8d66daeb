"""Every public binary metric equals its slow reference (tests/reference.py).

Tolerances: 1e-12 where the reference is exact (Fractions) and the library does a few
dozen float64 operations of O(1) numbers; 1e-8 against the HiGHS linear programs, whose
feasibility tolerances are 1e-10.
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fastcdl as fc
from conftest import (
    GRID8,
    binned_rounds,
    calibrated_tables,
    edges_arrays,
    float_tables,
    grid_tables,
    payoffs,
    rounds,
    tables,
)
from reference import (
    REGISTRY,
    canonical_table,
    cdl_envelope_ref,
    cdl_lp,
    cfdl_mu_ref,
    cfdl_ref,
    f_plus_ref,
    f_ref,
    quadratic_task,
    swap_regret_ref,
    table_ref,
    ucal_envelope_ref,
    ucal_lp,
    vcdl_breakpoint_ref,
    vcdl_grid_ref,
    v_task,
)

# These tests compare values with their references (or with each other) on arbitrary small
# tables, most of whose buckets hold one round; that the exact metrics warn on such tables
# (SampleSizeWarning) is tested in tests/test_sample_size_warning.py, not here.
pytestmark = pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")

EXACT_TOL = 1e-12
LP_TOL = 1e-8

# Hand-picked tables (q, n, s) for the edges that matter (the tie rule of docs/metrics.md, 0, 1/2, 1).
EDGE_TABLES = {
    "single round y=1 at 0": ([0.0], [1], [1]),
    "single round y=0 at 1/2": ([0.5], [1], [0]),
    "single round y=1 at 1": ([1.0], [1], [1]),
    "one bucket": ([0.5], [4], [1]),
    "predictions 0, 1/2, 1": ([0.0, 0.5, 1.0], [3, 2, 3], [2, 2, 1]),
    "3/4 when y=1, 1/4 when y=0": ([0.25, 0.75], [1, 1], [0, 1]),
    "q_1 < qhat_1 = q_2": ([0.25, 0.5, 0.75], [4, 2, 4], [2, 0, 3]),
    "q and qhat swapped": ([0.25, 0.5], [2, 4], [1, 1]),
    "q_i above qhat_i = q_j": ([0.25, 0.75], [4, 2], [1, 1]),
    "all wrong": ([0.0, 1.0], [1, 1], [1, 0]),
    "calibrated": ([0.0, 0.5, 1.0], [2, 4, 3], [0, 2, 3]),
    "kink at 1/2 from both sides": ([0.5, 0.375, 0.625], [2, 8, 8], [2, 4, 4]),
    "thirds": ([1 / 3, 2 / 3], [3, 3], [2, 1]),
}


def _stats(table):
    return fc.BucketStats.from_table(*table)


def _ref_table(table):
    return canonical_table(*table)


weighted_tables = float_tables(weighted=True)
all_tables = st.one_of(tables(), weighted_tables)


# ----------------------------------------------------------------------------- ECE, K2


@pytest.mark.parametrize("name", ["ece", "k2"])
@pytest.mark.parametrize("case", list(EDGE_TABLES))
def test_errors_on_edge_tables(name, case):
    table = EDGE_TABLES[case]
    got = getattr(fc, name)(_stats(table))
    assert abs(got - REGISTRY[name]["reference"](*_ref_table(table))) <= EXACT_TOL


@given(all_tables)
def test_ece_and_k2_match_reference(table):
    st_ = _stats(table)
    q, n, s = _ref_table(table)
    assert abs(fc.ece(st_) - REGISTRY["ece"]["reference"](q, n, s)) <= EXACT_TOL
    assert abs(fc.k2(st_) - REGISTRY["k2"]["reference"](q, n, s)) <= EXACT_TOL


# ----------------------------------------------------------------------------- CDL, UCal


@pytest.mark.parametrize("case", list(EDGE_TABLES))
def test_cdl_and_ucal_on_edge_tables(case):
    table = EDGE_TABLES[case]
    q, n, s = _ref_table(table)
    st_ = _stats(table)
    assert abs(fc.cdl(st_) - cdl_lp(q, n, s)) <= LP_TOL
    assert abs(fc.cdl(st_) - cdl_envelope_ref(q, n, s)) <= EXACT_TOL
    assert abs(fc.ucal(st_) - ucal_lp(q, n, s)) <= LP_TOL
    assert abs(fc.ucal(st_) - ucal_envelope_ref(q, n, s)) <= EXACT_TOL


def test_three_quarters_one_quarter_example():
    # docs/exact-cdl.md: says 3/4 when y = 1 and 1/4 when y = 0, half the rounds each.
    y = [1, 0] * 5
    p = [0.75, 0.25] * 5
    assert fc.cdl(y, p) == pytest.approx(0.25, abs=EXACT_TOL)
    assert fc.ucal(y, p) == pytest.approx(0.0, abs=EXACT_TOL)
    q, n, s = _ref_table(([0.25, 0.75], [5, 5], [0, 5]))
    assert cdl_lp(q, n, s) == pytest.approx(0.25, abs=LP_TOL)
    assert ucal_lp(q, n, s) == pytest.approx(0.0, abs=LP_TOL)


@given(tables())
def test_cdl_matches_lp(table):
    q, n, s = _ref_table(table)
    assert abs(fc.cdl(_stats(table)) - cdl_lp(q, n, s)) <= LP_TOL


@given(all_tables)
def test_cdl_matches_exact_envelope(table):
    # cdl_envelope_ref evaluates 2 fbar(1/2) (docs/exact-cdl.md) in Fractions by brute force over
    # chords; it agrees with the LP (test above) and gives an exact target.
    q, n, s = _ref_table(table)
    assert abs(fc.cdl(_stats(table)) - cdl_envelope_ref(q, n, s)) <= EXACT_TOL


@given(tables())
def test_ucal_matches_lp(table):
    q, n, s = _ref_table(table)
    assert abs(fc.ucal(_stats(table)) - ucal_lp(q, n, s)) <= LP_TOL


@given(all_tables)
def test_ucal_matches_exact_envelope(table):
    q, n, s = _ref_table(table)
    assert abs(fc.ucal(_stats(table)) - ucal_envelope_ref(q, n, s)) <= EXACT_TOL


# ----------------------------------------------------------------------------- VCDL


@given(all_tables)
def test_vcdl_matches_reference(table):
    q, n, s = _ref_table(table)
    got = fc.vcdl(_stats(table))
    assert got >= vcdl_grid_ref(q, n, s) - EXACT_TOL
    assert abs(got - vcdl_breakpoint_ref(q, n, s)) <= EXACT_TOL


@pytest.mark.parametrize("case", list(EDGE_TABLES))
def test_vcdl_on_edge_tables(case):
    q, n, s = _ref_table(EDGE_TABLES[case])
    assert abs(fc.vcdl(_stats(EDGE_TABLES[case])) - REGISTRY["vcdl"]["reference"](q, n, s)) <= EXACT_TOL


# ----------------------------------------------------------------------------- CFDL


@given(all_tables, payoffs())
def test_cfdl_payoff_matches_exact_best_responses(table, u):
    q, n, s = _ref_table(table)
    assert abs(fc.cfdl(_stats(table), payoff=u) - cfdl_ref(q, n, s, u)) <= EXACT_TOL


@given(grid_tables(), payoffs(grid=True))
def test_cfdl_payoff_with_kinks_on_data_points(table, u):
    # Grid entries put the indifference points of the actions at small rationals, which
    # the grid tables hit exactly with q_i and qhat_i: the tie-breaking decides the value.
    q, n, s = _ref_table(table)
    assert abs(fc.cfdl(_stats(table), payoff=u) - cfdl_ref(q, n, s, u)) <= EXACT_TOL


@given(grid_tables(), st.sampled_from(GRID8))
def test_cfdl_of_v_task_matrix_at_grid_kinks(table, mu):
    # The V task at kink mu as a matrix with exact entries ([0, 1-mu], [mu, 0] scaled by
    # 1/max(mu, 1-mu) is exact on the grid for mu in {0, 1/2, 1} only, so use c = 1 and
    # rescale): row 0 is the right action, so ties at p = mu follow f's rule.
    q, n, s = _ref_table(table)
    u = np.array([[0.0, 1.0 - mu], [mu, 0.0]])
    got = fc.cfdl(_stats(table), payoff=u) / max(mu, 1.0 - mu)
    assert abs(got - cfdl_mu_ref(q, n, s, mu)) <= EXACT_TOL
    assert abs(got - cfdl_ref(q, n, s, v_task(Fraction(mu)))) <= EXACT_TOL


def _kinks_for(table, extra):
    q, n, s = _ref_table(table)
    return np.unique(np.concatenate([q, s / n, [0.0, 0.5, 1.0], extra]))


@given(all_tables, st.lists(st.floats(0.0, 1.0, allow_subnormal=False), max_size=3))
def test_cfdl_kink_matches_f(table, extra):
    q, n, s = _ref_table(table)
    st_ = _stats(table)
    for mu in _kinks_for(table, extra):
        assert abs(fc.cfdl(st_, kink=float(mu)) - cfdl_mu_ref(q, n, s, mu)) <= EXACT_TOL


@given(all_tables, st.lists(st.floats(0.0, 1.0, allow_subnormal=False), max_size=3))
def test_decision_loss_curve_at_given_kinks(table, extra):
    q, n, s = _ref_table(table)
    mus = _kinks_for(table, extra)
    got_mu, got = fc.decision_loss_curve(_stats(table), kinks=mus)
    assert np.array_equal(got_mu, mus)
    want = [f_ref(q, n, s, mu) / max(mu, 1.0 - mu) for mu in mus]
    np.testing.assert_allclose(got, want, rtol=0, atol=EXACT_TOL)


def test_decision_loss_curve_tie_rule_on_an_explicit_table():
    # bucket 0: q = 1/2 above qhat = 1/4 -> mu = 1/2 counts (f(1/2) = (1/2)(1/4) = 1/8);
    # bucket 1: q = 1/4 below qhat = 1 -> mu = 1/4 does not count, but f(1/4+) does.
    stats = fc.BucketStats.from_table([0.5, 0.25], [4, 4], [1, 4])
    q, n, s = stats.table()
    assert f_ref(q, n, s, 0.5) == pytest.approx(1 / 8 + 1 / 4)
    assert f_ref(q, n, s, 0.25) == 0.0
    assert f_plus_ref(q, n, s, 0.25) == pytest.approx(3 / 8)
    _, v = fc.decision_loss_curve(stats, kinks=[0.25, 0.5])
    assert v.tolist() == pytest.approx([0.0, (1 / 8 + 1 / 4) / 0.5], abs=EXACT_TOL)


@given(grid_tables())
def test_k2_is_cfdl_of_the_quadratic_rule(table):
    # Actions j/840 of S(a, y) = 1 - (a - y)^2 contain every q_i = k/8 and qhat_i = s/n (n <= 8).
    q, n, s = _ref_table(table)
    task = quadratic_task(840)
    assert cfdl_ref(q, n, s, task) == pytest.approx(fc.k2(_stats(table)), abs=EXACT_TOL)
    u = np.array([[float(a), float(b)] for a, b in task])
    assert abs(fc.cfdl(_stats(table), payoff=u) - fc.k2(_stats(table))) <= EXACT_TOL


# ----------------------------------------------------------------------------- swap regret


@given(rounds(), payoffs())
def test_swap_regret_matches_reference(yp, u):
    y, p = yp
    assert abs(fc.swap_regret(y, p, payoff=u) - swap_regret_ref(y, p, u)) <= EXACT_TOL


@given(rounds(pool=GRID8), payoffs(grid=True))
def test_swap_regret_with_ties_on_predictions(yp, u):
    y, p = yp
    assert abs(fc.swap_regret(y, p, payoff=u) - swap_regret_ref(y, p, u)) <= EXACT_TOL


# ----------------------------------------------------------------------------- raw rounds


@given(rounds())
def test_metrics_from_rounds_match_references_on_the_reference_table(yp):
    y, p = yp
    q, n, s, _, _ = table_ref(y, p)
    assert abs(fc.ece(y, p) - REGISTRY["ece"]["reference"](q, n, s)) <= EXACT_TOL
    assert abs(fc.k2(y, p) - REGISTRY["k2"]["reference"](q, n, s)) <= EXACT_TOL
    assert abs(fc.cdl(y, p) - cdl_envelope_ref(q, n, s)) <= EXACT_TOL
    assert abs(fc.ucal(y, p) - ucal_envelope_ref(q, n, s)) <= EXACT_TOL
    assert abs(fc.vcdl(y, p) - vcdl_breakpoint_ref(q, n, s)) <= EXACT_TOL


# ----------------------------------------------------------------------------- bucket tables


def _assert_table_equal(stats, ref, binned):
    q, n, s, ps, idx = ref
    assert np.array_equal(stats.counts, n) and stats.counts.dtype == n.dtype
    assert np.array_equal(stats.positives, s) and stats.positives.dtype == s.dtype
    np.testing.assert_allclose(stats.prob_sums, ps, rtol=1e-12, atol=0)
    if binned:
        assert np.array_equal(stats.bins, idx)
        np.testing.assert_allclose(stats.values, q, rtol=1e-12, atol=0)
    else:
        assert stats.edges is None and stats.bins is None
        assert np.array_equal(stats.values, q)
    assert np.all(np.diff(stats.values) > 0)


@given(rounds())
def test_exact_buckets_match_reference(yp):
    y, p = yp
    _assert_table_equal(fc.bucket_stats(y, p), table_ref(y, p), binned=False)


@given(binned_rounds())
def test_uniform_bins_match_reference(ypm):
    y, p, m = ypm
    stats = fc.bucket_stats(y, p, bins=m)
    _assert_table_equal(stats, table_ref(y, p, bins=m), binned=True)
    assert np.array_equal(stats.edges, np.arange(m + 1) / m)
    # bins=m is the same as passing its edges i/m
    assert stats == fc.bucket_stats(y, p, bins=np.arange(m + 1) / m)


@given(rounds(max_size=60), edges_arrays())
def test_edge_bins_match_reference(yp, edges):
    y, p = yp
    # also put predictions exactly on the edges
    p = np.where(np.arange(p.shape[0]) % 3 == 0, edges[np.arange(p.shape[0]) % edges.shape[0]], p)
    stats = fc.bucket_stats(y, p, bins=edges)
    _assert_table_equal(stats, table_ref(y, p, bins=edges), binned=True)
    assert np.array_equal(stats.edges, edges)


def test_prediction_on_interior_edge_goes_to_the_lower_bin():
    stats = fc.bucket_stats([1, 0, 1], [0.5, 0.25, 0.75], bins=2)
    assert stats.bins.tolist() == [0, 1]
    assert stats.counts.tolist() == [2, 1]
    assert stats.values.tolist() == [0.375, 0.75]


@pytest.mark.parametrize("bins", [10, "edges"])
def test_grid_values_land_in_one_bin_whatever_their_last_bits(bins):
    # docs/metrics.md: a prediction up to 4 ulps above an interior edge goes to the lower bin
    # (up to 8 for edges near the top of a binade); 16 ulps above it goes to the upper bin
    edges = np.arange(11) / 10 if bins == 10 else np.array([0.0, 0.3, 0.6, 0.7, 1.0])
    binning = 10 if bins == 10 else edges
    for e in edges[1:-1]:
        near = [e, np.nextafter(e, 1.0)] + [e + k * np.spacing(e) for k in (2, 3, 4)]
        stats = fc.bucket_stats([1] * 5 + [0], near + [e - np.spacing(e)], bins=binning)
        assert stats.n_buckets == 1 and stats.counts.tolist() == [6]
        above = e + 16 * np.spacing(e)
        assert fc.bucket_stats([1, 0], [e, above], bins=binning).n_buckets == 2
    # the grid of np.arange and the grid of k / 10 give the same table
    grid = np.arange(0, 1.0001, 0.1)
    assert not np.array_equal(grid, np.arange(11) / 10)  # 0.30000000000000004, 0.6000000000000001, ...
    y = np.arange(11) % 2
    a = fc.bucket_stats(y, grid, bins=binning)
    b = fc.bucket_stats(y, np.arange(11) / 10, bins=binning)
    assert a.bins.tolist() == b.bins.tolist() and a.counts.tolist() == b.counts.tolist()
    assert fc.ece(y, grid, bins=binning) == pytest.approx(fc.ece(y, np.arange(11) / 10, bins=binning), abs=1e-15)
    # merged tables clip bucket values to the same cuts
    assert (a + a).bins.tolist() == a.bins.tolist()


@given(
    rounds(),
    st.lists(st.integers(0, 4), min_size=40, max_size=40),
    st.one_of(st.none(), st.integers(1, 10)),
)
def test_integer_weights_equal_repeated_rows(yp, reps, bins):
    y, p = yp
    w = np.array(reps[: y.shape[0]], dtype=np.float64)
    if w.sum() == 0:
        w[0] = 1.0
    r = w.astype(np.int64)
    weighted = fc.bucket_stats(y, p, bins=bins, sample_weight=w)
    repeated = fc.bucket_stats(np.repeat(y, r), np.repeat(p, r), bins=bins)
    assert weighted.counts.dtype == np.float64
    assert np.array_equal(weighted.counts, repeated.counts.astype(np.float64))
    assert np.array_equal(weighted.positives, repeated.positives.astype(np.float64))
    np.testing.assert_allclose(weighted.prob_sums, repeated.prob_sums, rtol=1e-12, atol=0)
    np.testing.assert_allclose(weighted.values, repeated.values, rtol=1e-12, atol=0)
    for name in ("ece", "k2", "vcdl", "cdl", "ucal"):
        f = getattr(fc, name)
        got = f(y, p, bins=bins, sample_weight=w)
        assert abs(got - f(np.repeat(y, r), np.repeat(p, r), bins=bins)) <= EXACT_TOL
    # and against the reference table built with the weights
    q, n, s, ps, _ = table_ref(y, p, bins=bins, sample_weight=w)
    assert abs(fc.cdl(y, p, bins=bins, sample_weight=w) - cdl_envelope_ref(q, n, s)) <= EXACT_TOL


@given(rounds(), st.lists(st.floats(0.0, 5.0, allow_subnormal=False), min_size=40, max_size=40))
def test_weighted_tables_match_reference(yp, ws):
    y, p = yp
    w = np.array(ws[: y.shape[0]])
    if not w.sum() > 0:
        w[0] = 1.0
    stats = fc.bucket_stats(y, p, sample_weight=w)
    q, n, s, ps, _ = table_ref(y, p, sample_weight=w)
    assert np.array_equal(stats.values, q)  # zero-weight predictions make no bucket
    np.testing.assert_allclose(stats.counts, n, rtol=1e-12, atol=0)
    np.testing.assert_allclose(stats.positives, s, rtol=1e-12, atol=0)


# ----------------------------------------------------------------------------- certificate


def _check_certificate(stats):
    q, n, s = _ref_table(stats.table())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", fc.CertificateWarning)
        r = fc.cdl_report(stats)
    assert r.value == fc.cdl(stats)
    assert r.vcdl == fc.vcdl(stats)
    u = np.asarray(r.payoff)
    assert u.ndim == 2 and u.shape[1] == 2 and 1 <= u.shape[0] <= 3
    assert np.all((u >= 0.0) & (u <= 1.0))
    if not r.exact:
        # only where float64 payoffs cannot resolve the kink: within ~1e-15 of 0 or 1, with
        # table points between it and the end, or within ~1e-15 of another prediction (two
        # predictions an ulp apart: no payoff puts the indifference point between them); and
        # the report says so
        assert caught and issubclass(caught[0].category, fc.CertificateWarning)
        values = np.asarray(stats.values)
        near = [
            k for k in r.kinks if 0.0 < min(k, 1.0 - k) < 1e-15 or np.any((values != k) & (np.abs(values - k) < 1e-15))
        ]
        assert near
        return
    assert not caught
    # the worst task attains the value, with the library's and with exact best responses
    assert abs(fc.cfdl(stats, payoff=u) - r.value) <= EXACT_TOL
    assert abs(cfdl_ref(q, n, s, u) - r.value) <= EXACT_TOL
    kinks, weights = np.asarray(r.kinks), np.asarray(r.weights)
    assert kinks.ndim == 1 and kinks.shape[0] in (1, 2) and weights.shape == kinks.shape
    assert np.all((kinks >= 0.0) & (kinks <= 1.0)) and np.all(np.diff(kinks) >= 0)
    assert np.all(weights >= 0.0)
    if kinks.shape[0] == 2:
        assert kinks[0] <= 0.5 <= kinks[1]
    # payoffs of the kink mixture stay in [0, 1]: int mu dnu <= 1 and int (1 - mu) dnu <= 1
    assert np.dot(weights, kinks) <= 1 + EXACT_TOL
    assert np.dot(weights, 1.0 - kinks) <= 1 + EXACT_TOL
    # and its value is the weighted sum of the hull values at the kinks
    hull = [max(f_ref(q, n, s, mu), f_plus_ref(q, n, s, mu)) for mu in kinks]
    assert abs(np.dot(weights, hull) - r.value) <= EXACT_TOL
    # VCDL is attained at its reported kink (by one of the one-sided values)
    mu = r.vcdl_kink
    at_kink = max(f_ref(q, n, s, mu), f_plus_ref(q, n, s, mu)) / max(mu, 1.0 - mu)
    assert abs(at_kink - r.vcdl) <= EXACT_TOL


@given(all_tables)
def test_certificate_on_tables(table):
    _check_certificate(_stats(table))


def test_certificate_with_two_predictions_an_ulp_apart():
    """Predictions 0.75 and the next float above it, the worst task's kink at 0.75 (found by the
    property test above): no float64 payoff puts the indifference point between the two, so the
    task attains less than the (exact) value, and the report says why."""
    q = np.array([0.0, 0.03125, 0.0625, 0.09375, 0.5, 0.625, 0.75, 0.7500000000000001, 0.8125, 0.875, 0.9375, 1.0])
    n = np.array([1.0] * 11 + [1.377378930998328])
    s = np.array([0.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.8125, 0.625, 0.09375, 0.0, 0.0, 1.033034198248746])
    stats = fc.BucketStats.from_table(q, n, s)
    with pytest.warns(fc.CertificateWarning, match="or to a neighbouring prediction"):
        r = fc.cdl_report(stats)
    assert r.value == fc.cdl(stats) and not r.exact
    assert 0.75 in r.kinks.tolist()
    _check_certificate(stats)


@pytest.mark.parametrize("case", list(EDGE_TABLES))
def test_certificate_on_edge_tables(case):
    _check_certificate(_stats(EDGE_TABLES[case]))


@given(binned_rounds())
def test_certificate_on_binned_tables(ypm):
    y, p, m = ypm
    _check_certificate(fc.bucket_stats(y, p, bins=m))


@given(calibrated_tables())
def test_certificate_of_a_calibrated_table_has_value_zero(table):
    r = fc.cdl_report(_stats(table))
    assert r.value <= 1e-15  # q = float(s/n) is within an ulp of the exact frequency
    assert abs(cfdl_ref(*_ref_table(table), r.payoff) - r.value) <= EXACT_TOL
