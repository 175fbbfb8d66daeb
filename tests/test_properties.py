"""Relations between the metrics (docs/metrics.md), invariances and exact merging (hypothesis).

Rounding tolerance for the inequalities: RTOL = 1e-12 absolute. Each metric is a sum of
at most a few dozen float64 terms of size <= 1, so each side is accurate to ~1e-15; the
relations hold with equality on some tables (e.g. CDL = 2 VCDL, K2 = CDL, UCal = CDL, and
CFDL_U = CDL for the worst task), where an ulp of rounding can tip either side. 1e-12
absorbs that and nothing else: every violation the tests look for is orders larger.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fastcdl as fc
from conftest import binned_rounds, calibrated_tables, float_tables, payoffs, rounds, tables

# These tests compare values with their references (or with each other) on arbitrary small
# tables, most of whose buckets hold one round; that the exact metrics warn on such tables
# (SampleSizeWarning) is tested in tests/test_sample_size_warning.py, not here.
pytestmark = pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")

RTOL = 1e-12

all_tables = st.one_of(tables(), float_tables(weighted=True))
METRICS = ("ece", "k2", "vcdl", "cdl", "ucal")


def _metrics(stats):
    return {name: getattr(fc, name)(stats) for name in METRICS}


@given(all_tables)
def test_relations_between_metrics(table):
    m = _metrics(fc.BucketStats.from_table(*table))
    assert m["vcdl"] <= m["cdl"] + RTOL
    assert m["cdl"] <= 2 * m["vcdl"] + RTOL
    assert m["ece"] ** 2 <= m["cdl"] + RTOL
    assert m["cdl"] <= 2 * m["ece"] + RTOL
    assert m["k2"] <= m["cdl"] + RTOL
    assert m["cdl"] <= 2 * np.sqrt(m["k2"]) + RTOL
    assert m["ucal"] <= m["cdl"] + RTOL


@given(all_tables)
def test_metrics_lie_in_unit_interval(table):
    for name, value in _metrics(fc.BucketStats.from_table(*table)).items():
        assert isinstance(value, float)
        assert 0.0 <= value <= 1.0, name


@given(all_tables, payoffs())
def test_task_losses_are_bounded_by_cdl(table, u):
    stats = fc.BucketStats.from_table(*table)
    cdl = fc.cdl(stats)
    cfdl = fc.cfdl(stats, payoff=u)
    swap = fc.swap_regret(stats, payoff=u)
    assert -RTOL <= swap <= cfdl + RTOL
    assert cfdl <= cdl + RTOL


@given(all_tables, st.floats(0.0, 1.0, allow_subnormal=False))
def test_v_task_losses_are_bounded_by_vcdl(table, mu):
    stats = fc.BucketStats.from_table(*table)
    assert 0.0 <= fc.cfdl(stats, kink=mu) <= fc.vcdl(stats) + RTOL


@given(rounds(), payoffs())
def test_task_losses_from_rounds(yp, u):
    y, p = yp
    assert fc.swap_regret(y, p, payoff=u) <= fc.cfdl(y, p, payoff=u) + RTOL
    assert fc.cfdl(y, p, payoff=u) <= fc.cdl(y, p) + RTOL


def test_calibrated_dyadic_table_is_exactly_zero():
    # frequencies are dyadic, so q_i = qhat_i holds exactly in float64 and in the rationals
    stats = fc.BucketStats.from_table([0.0, 0.25, 0.5, 0.875, 1.0], [3, 4, 6, 8, 1], [0, 1, 3, 7, 1])
    assert _metrics(stats) == {name: 0.0 for name in METRICS}


@given(calibrated_tables())
def test_calibrated_tables_have_zero_loss(table):
    # q_i = float(s_i / n_i) is within half an ulp of the exact frequency, so the exact
    # values are at most ~1e-16; the metrics must not see a real miscalibration.
    for name, value in _metrics(fc.BucketStats.from_table(*table)).items():
        assert 0.0 <= value <= 1e-15, name


@given(rounds(), st.randoms(use_true_random=False))
def test_permutation_invariance(yp, rnd):
    y, p = yp
    perm = np.array(rnd.sample(range(y.shape[0]), y.shape[0]), dtype=np.int64)
    a = fc.bucket_stats(y, p)
    b = fc.bucket_stats(y[perm], p[perm])
    assert a == b
    assert _metrics(a) == _metrics(b)
    for bins in (3, 10):
        ma = {name: getattr(fc, name)(y, p, bins=bins) for name in METRICS}
        mb = {name: getattr(fc, name)(y[perm], p[perm], bins=bins) for name in METRICS}
        for name in METRICS:
            assert ma[name] == pytest.approx(mb[name], abs=RTOL), name


@given(rounds(), rounds())
def test_merge_exact_buckets(a, b):
    (y1, p1), (y2, p2) = a, b
    merged = fc.bucket_stats(y1, p1) + fc.bucket_stats(y2, p2)
    whole = fc.bucket_stats(np.concatenate([y1, y2]), np.concatenate([p1, p2]))
    assert merged == whole
    assert _metrics(merged) == _metrics(whole)


@given(binned_rounds(), binned_rounds())
def test_merge_binned(a, b):
    (y1, p1, m), (y2, p2, _) = a, b
    merged = fc.bucket_stats(y1, p1, bins=m) + fc.bucket_stats(y2, p2, bins=m)
    whole = fc.bucket_stats(np.concatenate([y1, y2]), np.concatenate([p1, p2]), bins=m)
    assert np.array_equal(merged.bins, whole.bins)
    assert np.array_equal(merged.edges, whole.edges)
    assert np.array_equal(merged.counts, whole.counts) and merged.counts.dtype == whole.counts.dtype
    assert np.array_equal(merged.positives, whole.positives)
    np.testing.assert_allclose(merged.prob_sums, whole.prob_sums, rtol=1e-12, atol=0)
    np.testing.assert_allclose(merged.values, whole.values, rtol=1e-12, atol=0)


def test_merge_is_associative_and_commutative_on_exact_buckets():
    rng = np.random.default_rng(5)
    parts = []
    for _ in range(3):
        p = rng.choice([0.0, 0.125, 0.5, 1.0, rng.random()], size=20)
        parts.append(fc.bucket_stats(rng.integers(0, 2, 20), p))
    a, b, c = parts
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
