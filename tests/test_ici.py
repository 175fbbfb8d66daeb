"""fastcdl.ici against a round-by-round reference (scikit-learn's isotonic fit, an explicit
weighted quantile), numpy's weighted quantile, and its place between two ECEs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from corp_reference import ici_ref, isotonic_rounds, pav_fractions, sample, weighted_lower_quantile_ref
from hypothesis import given, settings
from hypothesis import strategies as hs

import fastcdl as fc
from fastcdl.corp import corp
from fastcdl.ici import ici, weighted_lower_quantile


def _fields(r):
    return (r.ici, r.e50, r.e90, r.emax)


@pytest.mark.parametrize("shape", ["over", "wave", "calibrated"])
@pytest.mark.parametrize("ties", [False, True])
def test_against_round_by_round_reference(shape, ties):
    for seed, T in [(0, 3), (1, 50), (2, 2000)]:
        y, p = sample(seed, T, ties, shape)
        r = ici(y, p)
        assert _fields(r) == pytest.approx(ici_ref(y, p), abs=1e-12)
        assert r.value == r.ici
        assert r.e50 <= r.e90 <= r.emax


def test_weighted_against_reference_and_numpy():
    y, p = sample(3, 500, ties=True, shape="wave")
    w = np.random.default_rng(1).random(500) + 0.1
    r = ici(y, p, sample_weight=w)
    assert _fields(r) == pytest.approx(ici_ref(y, p, w), abs=1e-12)
    d = np.abs(p - isotonic_rounds(y, p, w))
    for alpha, got in ((0.5, r.e50), (0.9, r.e90)):
        assert got == pytest.approx(np.quantile(d, alpha, weights=w, method="inverted_cdf"), abs=1e-12)


def test_exact_fractions_with_ties_in_the_distances():
    # 1/2 - 1/4 and 3/4 - 1/2 tie; 10 rounds, so 90% is exactly 9 of them
    p = [0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 0.75, 1.0, 1.0, 0.0]
    y = [1, 0, 0, 1, 1, 1, 0, 1, 1, 0]
    fit = pav_fractions(p, y)
    want = ici_ref(y, p, fit=[float(c) for c in fit])
    assert _fields(ici(y, p)) == pytest.approx(want, abs=1e-15)


@settings(max_examples=80, deadline=None)
@given(
    hs.lists(hs.tuples(hs.integers(0, 30), hs.integers(1, 6)), min_size=1, max_size=300),
    hs.sampled_from(["0.5", "0.9", "0.1", "1", "0.25"]),
)
def test_weighted_lower_quantile_exactly(pairs, alpha):
    # small integers make many ties; more than 64 values go through the selection
    x = np.array([a / 8 for a, _ in pairs])
    w = np.array([float(b) for _, b in pairs])
    got = weighted_lower_quantile(x, w, float(alpha))
    assert got == weighted_lower_quantile_ref(x, w, alpha)
    assert got == np.quantile(x, float(alpha), weights=w, method="inverted_cdf")


@settings(max_examples=60, deadline=None)
@given(hs.integers(1, 80), hs.integers(0, 10**6))
def test_between_the_pav_binned_ece_and_the_exact_ece(T, seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), int(rng.integers(1, 3)))
    y = rng.integers(0, 2, T)
    r = ici(y, p)
    # ICI is the ECE of the exact table with its frequencies replaced by the PAV values
    st = fc.bucket_stats(y, p)
    d = corp(st)
    assert r.ici == pytest.approx(np.sum(st.counts * np.abs(d.values - d.recalibrated)) / T, abs=1e-15)
    # at most the exact ECE: PAV moves frequencies no farther from non-decreasing predictions
    assert r.ici <= np.sum(np.abs(st.counts * st.values - st.positives)) / T + 1e-12
    # at least the ECE of the table binned by PAV's blocks (triangle inequality within a block)
    lo, hi, level, n = d.blocks()
    binned = sum(abs(np.sum(p[(p >= a) & (p <= b)]) - v * k) for a, b, v, k in zip(lo, hi, level, n)) / T
    assert binned <= r.ici + 1e-12
    # and ICI^2 <= mean (p - c(p))^2 <= the Brier MCB
    assert r.ici**2 <= d.mcb + 1e-12
    assert r.e50 <= r.e90 <= r.emax and r.ici <= r.emax + 1e-15


def test_equals_the_pav_binned_ece_when_blocks_are_one_sided():
    # blocks {0.6}: 0, {0.7, 0.8}: 1/2, {0.9}: 1; within each, the predictions sit on one side
    y, p = [0, 1, 0, 1], [0.6, 0.7, 0.8, 0.9]
    r = ici(y, p)
    assert r.ici == pytest.approx(0.3, abs=1e-15)
    assert fc.ece(fc.bucket_stats(y, p, bins=[0.0, 0.65, 0.85, 1.0])) == pytest.approx(r.ici, abs=1e-15)
    # the block {0.3, 0.8} at 1/2 has a prediction on each side: ICI 0.175, that ECE 0.075
    y, p = [0, 1, 0, 1], [0.1, 0.3, 0.8, 0.9]
    r = ici(y, p)
    assert r.ici == pytest.approx(0.175, abs=1e-15)
    assert fc.ece(fc.bucket_stats(y, p, bins=[0.0, 0.2, 0.85, 1.0])) == pytest.approx(0.075, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(hs.integers(1, 50), hs.integers(0, 10**6))
def test_integer_weights_are_repeated_rounds(T, seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T), 2)
    y = rng.integers(0, 2, T)
    w = rng.integers(1, 5, T)
    a = ici(y, p, sample_weight=w.astype(float))
    b = ici(np.repeat(y, w), np.repeat(p, w))
    assert _fields(a) == pytest.approx(_fields(b), abs=1e-15)
    assert (a.e50, a.e90, a.emax) == (b.e50, b.e90, b.emax)


def test_table_input_equals_arrays():
    y, p = sample(6, 300, ties=True)
    w = np.random.default_rng(6).random(300) + 0.5
    assert _fields(ici(y, p, sample_weight=w)) == _fields(ici(fc.bucket_stats(y, p, sample_weight=w)))


def test_edges():
    r = ici([1], [0.2])  # one round: the fit is its outcome
    assert _fields(r) == pytest.approx((0.8, 0.8, 0.8, 0.8), abs=1e-15)
    r = ici([0, 1, 1, 1], [0.6] * 4)  # one prediction: the fit is the frequency
    assert _fields(r) == pytest.approx((0.15, 0.15, 0.15, 0.15), abs=1e-15)
    r = ici([0, 1, 0, 1], [0.5] * 4)
    assert _fields(r) == (0.0, 0.0, 0.0, 0.0)
    r = ici([0, 0, 1, 1], [0.0, 0.0, 1.0, 1.0])  # certain and right
    assert _fields(r) == (0.0, 0.0, 0.0, 0.0)
    r = ici([1, 1, 0, 0], [0.0, 0.0, 1.0, 1.0])  # certain and wrong: one block at 1/2
    assert _fields(r) == (0.5, 0.5, 0.5, 0.5)
    # E90 of ten rounds: the ninth smallest distance (90% exactly, not the tenth)
    p = np.array([0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95])
    st = fc.BucketStats.from_table(p, np.full(10, 10), np.round(p * 10).astype(int))
    c = np.round(p * 10) / 10
    d = np.sort(np.abs(p - c))
    assert ici(st).e90 == pytest.approx(d[8], abs=1e-15) and ici(st).emax == pytest.approx(d[9], abs=1e-15)


def test_classwise():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1, 1, 1], 60)
    y = rng.integers(0, 3, 60)
    r = ici(y, P, multiclass="classwise")
    per = [ici((y == j).astype(int), P[:, j]).ici for j in range(3)]
    assert [c.ici for c in r.per_class] == per and r.mean == pytest.approx(np.mean(per), abs=1e-15)


def test_bad_input():
    with pytest.raises(ValueError, match="binned") as e:
        ici(fc.bucket_stats([0, 1, 1], [0.2, 0.7, 0.9], bins=3))
    assert e.value.argument == "y_true"
    with pytest.raises(ValueError) as e:
        ici([0, 1], [0.2, math.nan])
    assert e.value.argument == "y_prob"
