"""BucketStats: construction, exact merging, and the exact best-response predicate."""

from fractions import Fraction

import numpy as np
import pytest

import fastcdl as fc
from fastcdl._compiled.decisions import best_response, prefer_sign
from fastcdl.bucket_table import BucketStats


def test_from_table_sorts_merges_and_drops_empty():
    st = BucketStats.from_table([0.5, 0.1, 0.5, 0.9], [4, 2, 1, 0], [2, 0, 1, 0])
    assert st.values.tolist() == [0.1, 0.5]
    assert st.counts.tolist() == [2, 5]
    assert st.positives.tolist() == [0, 3]
    assert st.counts.dtype == np.int64
    assert st == fc.bucket_stats([0, 0, 1, 1, 1, 0, 0], [0.1, 0.1, 0.5, 0.5, 0.5, 0.5, 0.5])


@pytest.mark.parametrize(
    "args, needle",
    [
        (([0.5], [1], [2]), "exceed"),
        (([1.5], [1], [1]), "[0, 1]"),
        (([0.5], [-1], [0]), "non-negative"),
        (([0.5, 0.2], [1], [0]), "lengths"),
        (([0.5], [0], [0]), "empty"),
    ],
)
def test_from_table_rejects(args, needle):
    with pytest.raises(ValueError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        BucketStats.from_table(*args)


def test_merge_binned_and_weighted():
    rng = np.random.default_rng(3)
    p = rng.random(500)
    y = rng.random(500) < p
    w = rng.random(500)
    a = fc.bucket_stats(y[:200], p[:200], bins=7)
    b = fc.bucket_stats(y[200:], p[200:], bins=7)
    whole = fc.bucket_stats(y, p, bins=7)
    merged = a + b
    assert np.array_equal(merged.counts, whole.counts)
    assert np.array_equal(merged.bins, whole.bins)
    np.testing.assert_allclose(merged.prob_sums, whole.prob_sums, rtol=1e-13)
    wa = fc.bucket_stats(y[:200], p[:200], sample_weight=w[:200])
    mixed = wa + fc.bucket_stats(y[200:], p[200:])
    assert mixed.counts.dtype == np.float64
    assert mixed.total == pytest.approx(w[:200].sum() + 300)
    with pytest.raises(ValueError, match="different bins"):
        a + fc.bucket_stats(y, p, bins=8)
    with pytest.raises(ValueError, match="different bins"):
        a + fc.bucket_stats(y, p)


def test_tables_are_read_only_and_repr():
    st = fc.bucket_stats([0, 1], [0.2, 0.2])
    with pytest.raises(ValueError):
        st.counts[0] = 5
    assert "n_buckets=1" in repr(st) and "T=2" in repr(st)


def test_negative_zero_is_zero():
    st = fc.bucket_stats([0, 1], [-0.0, 0.0])
    assert st.values.tolist() == [0.0] and st.counts.tolist() == [2]
    assert not np.signbit(st.values[0])


def _exact_pref(u, a, b, num, den):
    x = Fraction(num) / Fraction(den)
    d = (1 - x) * (Fraction(u[a, 0]) - Fraction(u[b, 0])) + x * (Fraction(u[a, 1]) - Fraction(u[b, 1]))
    return (d > 0) - (d < 0)


def test_prefer_sign_is_exact_at_near_ties():
    rng = np.random.default_rng(11)
    for _ in range(3000):
        x = float(rng.choice([rng.random(), 1 / 3, 0.1, 0.7, 2.0**-30]))
        c = float(rng.random())
        # rows whose kink sits at x up to rounding: [c x, 0] and [0, c (1 - x)], perturbed by ulps
        u = np.array([[c * x, 0.0], [0.0, c * (1.0 - x)]])
        u[rng.integers(2), rng.integers(2)] = np.nextafter(u[0, 0], rng.choice([0.0, 1.0]))
        for num, den in ((x, 1.0), (float(rng.integers(0, 7)), 7.0), (1.0, 3.0)):
            assert prefer_sign(u, 1, 0, num, den) == _exact_pref(u, 1, 0, num, den)
            assert prefer_sign(u, 0, 1, num, den) == _exact_pref(u, 0, 1, num, den)


def test_best_response_ties_go_to_lowest_index():
    u = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert best_response(u, 0.5, 1.0) == 0
    assert best_response(u[::-1].copy(), 0.5, 1.0) == 0
    assert best_response(u, 1.0, 2.0) == 0  # belief 1/2 as a ratio
    assert best_response(u, 0.75, 1.0) == 1


def test_merged_bin_value_stays_inside_its_bin():
    """9 rounds at p = 0.3 in bin (0.2, 0.3]: 5 + 4 merged gives prob sum 2.7 (rounded) and
    2.7 / 9 rounds to 0.30000000000000004, an ulp outside the bin; the merged table must
    hold the same values as the table of all rounds at once."""
    p = np.full(9, 0.3)
    y = np.array([0, 1, 0, 0, 1, 0, 0, 1, 0])
    whole = fc.bucket_stats(y, p, bins=10)
    merged = fc.bucket_stats(y[:5], p[:5], bins=10) + fc.bucket_stats(y[5:], p[5:], bins=10)
    edges = merged.edges
    assert np.all(merged.values > edges[merged.bins]) and np.all(merged.values <= edges[merged.bins + 1])
    assert merged.values.tolist() == whole.values.tolist() == [0.3]
