"""fc.ldtc and fc.intce against references written from the definitions: a dense linear program
over couplings on a uniform grid, and the expected binned error under a random shift by brute
force; relations with smCE and ECE."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy.optimize import linprog

import fastcdl as fc
from fastcdl.distance_to_calibration import INTCE_WIDTHS, LDTC_MAX_VARIABLES, intce, ldtc


def ldtc_dense(q, n, s, K):
    """The lower distance on the uniform grid {0, 1/K, ..., 1}: variables x[i, j] (y = 1) and
    z[i, j] (y = 0), dense matrices, written from the definition."""
    q, n, s = (np.asarray(a, float) for a in (q, n, s))
    m, T = len(q), n.sum()
    v = np.arange(K + 1) / K
    G = len(v)
    cost = np.concatenate([np.abs(q[:, None] - v[None, :]).ravel()] * 2)
    A, b = [], []
    for i in range(m):  # bucket i's ones, then its zeros, spread over the levels
        row = np.zeros(2 * m * G)
        row[i * G : (i + 1) * G] = 1
        A.append(row)
        b.append(s[i] / T)
        row = np.zeros(2 * m * G)
        row[m * G + i * G : m * G + (i + 1) * G] = 1
        A.append(row)
        b.append((n[i] - s[i]) / T)
    for j in range(G):  # level j: its ones are v_j of its mass
        row = np.zeros(2 * m * G)
        for i in range(m):
            row[i * G + j] = 1 - v[j]
            row[m * G + i * G + j] = -v[j]
        A.append(row)
        b.append(0.0)
    res = linprog(cost, A_eq=np.array(A), b_eq=np.array(b), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def _table(seed, m, T=400):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(T) * m) / m
    y = (rng.random(T) < np.clip(0.5 + 1.3 * (p - 0.5), 0, 1)).astype(int)
    return fc.bucket_stats(y, p)


@pytest.mark.parametrize("seed, m", [(0, 3), (1, 5), (2, 8), (3, 12)])
def test_ldtc_against_a_dense_program_on_a_fine_grid(seed, m):
    st = _table(seed, m)
    r = ldtc(st, grid=20)
    fine = ldtc_dense(st.values, st.counts, st.positives, 160)
    # each grid's value is at least the true distance and at most h / 2 above it
    assert r.value - r.grid_spacing / 2 <= fine + 1e-9
    assert fine - 1 / 320 <= r.value + 1e-9
    assert r.lower <= fine + 1e-9 and fine - 1 / 320 <= r.upper + 1e-9


def test_the_grid_bound_is_met_on_a_coarse_grid():
    """Between grids of spacing 1/4 and 1/64 the values differ by at most 1/8 (the coarse h / 2)."""
    for seed in range(4):
        st = _table(10 + seed, 7)
        coarse = ldtc_dense(st.values, st.counts, st.positives, 4)
        fine = ldtc_dense(st.values, st.counts, st.positives, 64)
        assert fine <= coarse + 1e-9 <= fine + 1 / 8 + 1 / 128 + 1e-9


@settings(max_examples=25, deadline=None)
@given(hs.integers(0, 10**6), hs.integers(1, 9))
def test_ldtc_relations(seed, m):
    st = _table(seed, m, T=60)
    r = ldtc(st, grid=40)
    ece, smce = fc.ece(st), fc.smce(st)
    assert r.value <= ece + 1e-9  # moving each bucket to its frequency is a coupling
    assert smce <= 2 * r.upper + 1e-9  # E[w(u)(y - u)] <= 2 E|u - v| for every coupling
    assert r.lower <= r.value <= r.upper
    # mirror: p -> 1 - p, y -> 1 - y
    mirror = fc.BucketStats.from_table(1 - st.values[::-1], st.counts[::-1], (st.counts - st.positives)[::-1])
    assert ldtc(mirror, grid=40).value == pytest.approx(r.value, abs=1e-7)


def test_ldtc_of_a_calibrated_table_is_zero_and_edges():
    st = fc.BucketStats.from_table(np.array([0.0, 0.25, 0.5, 1.0]), np.array([3, 4, 2, 5]), np.array([0, 1, 1, 5]))
    assert ldtc(st, grid=8).value == pytest.approx(0.0, abs=1e-10)
    r = ldtc([1], [0.0], grid=4)  # one round predicted 0 that happened: it must move to 1
    assert r.value == pytest.approx(1.0, abs=1e-9)
    r = ldtc([0, 1, 1, 1], [0.25, 0.25, 0.75, 0.75], grid=100)
    assert r.value == pytest.approx(0.25, abs=1e-9)


def test_ldtc_rebins_large_tables_and_says_so():
    rng = np.random.default_rng(0)
    p = rng.random(3000)
    y = (rng.random(3000) < p**1.5).astype(int)
    r = ldtc(y, p)
    assert r.method == "lp on 100 bins" and r.moved == pytest.approx(0.01)
    assert r.lower <= fc.ece(y, p, bins=100) + 0.01
    assert r.upper - r.lower == pytest.approx(2 * r.moved + r.grid_spacing / 2)


def test_ldtc_bad_grid():
    with pytest.raises(ValueError, match="grid"):
        ldtc([0, 1], [0.2, 0.6], grid=0)
    with pytest.raises(ValueError, match="grid"):
        ldtc([0, 1], [0.2, 0.6], grid=2.5)
    rng = np.random.default_rng(0)
    p = np.round(rng.random(2000) * 150) / 150
    y = (rng.random(2000) < p).astype(int)
    with pytest.raises(ValueError, match="LDTC_MAX_VARIABLES"):
        ldtc(y, p, grid=LDTC_MAX_VARIABLES)


def intce_reference(p, y, widths=INTCE_WIDTHS):
    """Brute force over the shift: the binned error is constant between the shifts at which a
    prediction crosses a bin edge; evaluate it at the middle of every such piece."""
    p = np.asarray(p, float)
    r = p - np.asarray(y, float)
    best = math.inf
    for eps in widths:
        cuts = sorted({0.0, eps} | {eps - (pt % eps) for pt in p if pt % eps > 0})
        total = 0.0
        for a, b in zip(cuts[:-1], cuts[1:]):
            s = (a + b) / 2
            bins = {}
            for pt, rt in zip(p, r):
                k = math.floor((pt + s) / eps)
                bins[k] = bins.get(k, 0.0) + rt
            total += (b - a) * sum(abs(v) for v in bins.values())
        best = min(best, total / eps / len(p) + eps)
    return best


@pytest.mark.parametrize("seed, T", [(0, 5), (1, 30), (2, 80)])
@pytest.mark.parametrize("ties", [False, True])
def test_intce_against_brute_force(seed, T, ties):
    rng = np.random.default_rng(seed)
    p = rng.random(T)
    if ties:
        p = np.round(p * 8) / 8
    y = (rng.random(T) < p**2).astype(int)
    assert intce(y, p) == pytest.approx(intce_reference(p, y), abs=1e-12)


def test_intce_against_relplots_random_shifts():
    import relplot

    rng = np.random.default_rng(3)
    p = rng.random(3000)
    y = (rng.random(3000) < p**1.5).astype(float)
    np.random.seed(0)
    draws = [relplot.metrics.intCE_rand(p, y) for _ in range(5)]
    # relplot averages 100 random shifts per width and keeps the least: close to the exact value
    assert intce(y.astype(int), p) == pytest.approx(np.mean(draws), abs=0.01)


def test_intce_relations_and_weights():
    rng = np.random.default_rng(5)
    p = rng.random(500)
    y = (rng.random(500) < p**1.5).astype(int)
    v = intce(y, p)
    assert v >= min(INTCE_WIDTHS) and v >= fc.smce(y, p) / 2 - 1e-12
    w = rng.integers(1, 4, 500)
    assert intce(y, p, sample_weight=w.astype(float)) == pytest.approx(intce(np.repeat(y, w), np.repeat(p, w)))
