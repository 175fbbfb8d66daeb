"""smCE's programme in detail: the two programmes joined at any bucket, the bucket queue on
tables of thousands of buckets, and the threaded run (fastcdl/_compiled/estimators.py).

The reference is the LP itself, solved by HiGHS with the full box [-1, 1] (tests/
sample_reference.py), independent of the one-sided reduction and of the programmes.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcdl as fc
from fastcdl import sample as fs
from fastcdl._compiled import estimators as K
from conftest import float_tables, tables
from reference import canonical_table
from sample_reference import smce_lp_chain, smce_lp_table

LP_TOL = 1e-8


def _qr(q, n, s, threads):
    r = np.empty(q.shape[0])
    checkpoints = K.smce_checkpoints(q.shape[0])
    T = K.table_residuals(q, n, s, r, checkpoints)
    assert np.array_equal(checkpoints, K.smce_split(r)[3])  # the same checkpoints as a pass over r
    return fs._smce_qr(q, r, T, checkpoints, threads)


def _floats(q, n, s):
    return np.asarray(q, float), np.asarray(n, float), np.asarray(s, float)


# derandomized: the reference is HiGHS's LP, accurate to its tolerances (about 1e-8 here), so a
# random example may land just outside LP_TOL by the solver's error, not the kernel's
@settings(max_examples=60, derandomize=True)
@given(st.one_of(tables(), float_tables(weighted=True)))
def test_every_junction_gives_the_lp_value(table):
    q, n, s = _floats(*canonical_table(*table))
    want = smce_lp_table(q, n, s)
    r = np.empty(q.shape[0])
    T = K.table_residuals(q, n, s, r, K.smce_checkpoints(q.shape[0]))
    for J in range(q.shape[0]):
        assert abs(K.smce_at(q, r, T, J) - want) <= LP_TOL, J


def _table(kind, m, rng):
    q = np.sort(rng.random(m))
    q = np.unique(q)
    m = q.shape[0]
    if kind == "calibrated":
        n = np.ones(m)
        s = (rng.random(m) < q).astype(float)
    elif kind == "over":  # predictions too high: every residual leans one way
        n = np.ones(m)
        s = (rng.random(m) < 0.6 * q).astype(float)
    elif kind == "under":
        n = np.ones(m)
        s = (rng.random(m) < 0.4 + 0.6 * q).astype(float)
    elif kind == "counts":  # repeated predictions, ties within buckets
        n = rng.integers(1, 40, m).astype(float)
        s = rng.binomial(n.astype(int), q).astype(float)
    elif kind == "weighted":
        n = rng.exponential(1.0, m)
        s = n * (rng.random(m) < q)
    elif kind == "grid":  # a coarse grid, with 0, 1/2 and 1
        q = np.linspace(0.0, 1.0, m)
        n = rng.integers(1, 5, m).astype(float)
        s = rng.binomial(n.astype(int), 0.5).astype(float)
    return q, n, s


KINDS = ["calibrated", "over", "under", "counts", "weighted", "grid"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("m", [2, 3, 65, 1500, 6000])
def test_large_tables_against_the_lp(kind, m):
    # thousands of buckets: several blocks of the split, many buckets of the queue
    rng = np.random.default_rng(m + len(kind))
    q, n, s = _table(kind, m, rng)
    want = smce_lp_chain(q, n, s)
    serial = K.smce_kernel(q, n, s)
    assert abs(serial - want) <= LP_TOL
    assert _qr(q, n, s, True) == serial  # the same value on two threads, bit for bit


@pytest.mark.parametrize("kind", KINDS)
def test_threads_give_the_same_bits(kind, monkeypatch):
    rng = np.random.default_rng(7)
    q, n, s = _table(kind, 40_000, rng)
    serial = K.smce_kernel(q, n, s)
    assert _qr(q, n, s, True) == serial
    r = np.empty(q.shape[0])
    T = K.table_residuals(q, n, s, r, K.smce_checkpoints(q.shape[0]))
    for J in (0, 1, 17_000, q.shape[0] - 1):  # any junction: the same value up to rounding
        assert K.smce_at(q, r, T, J) == pytest.approx(serial, rel=1e-12, abs=1e-15)
    st_ = fc.BucketStats.from_table(q, n, s)
    monkeypatch.setattr(fs, "SMCE_THREADS_FROM", 1)
    assert fs.smce(st_) == serial
    monkeypatch.setattr(fs, "SMCE_THREADS_FROM", 10**9)
    assert fs.smce(st_) == serial


def test_one_bucket_and_signs():
    for s in (0.0, 3.0, 1.5):
        q, n, s_ = np.array([0.5]), np.array([3.0]), np.array([s])
        assert K.smce_kernel(q, n, s_) == pytest.approx(abs(s - 1.5) / 3.0)
    # R = 0 exactly, and a table and its mirror image (q -> 1 - q, y -> 1 - y) agree
    q = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    n = np.array([2.0, 4.0, 2.0, 4.0, 2.0])
    s = np.array([1.0, 0.0, 1.0, 4.0, 1.0])
    assert abs(K.smce_kernel(q, n, s) - smce_lp_chain(q, n, s)) <= LP_TOL
    assert K.smce_kernel(1 - q[::-1], n[::-1], (n - s)[::-1]) == pytest.approx(K.smce_kernel(q, n, s), abs=1e-15)


def test_weighted_select_against_a_sort():
    rng = np.random.default_rng(5)
    for size in (1, 2, 15, 17, 300, 5000):
        y = rng.choice(rng.random(max(1, size // 3)), size)  # ties
        w = rng.exponential(1.0, size)
        order = np.argsort(y, kind="stable")
        cum = np.cumsum(w[order])
        for need in (w.min() / 2, cum[-1] / 3, cum[-1] * 0.999999, cum[-1] * 2):
            h = np.empty(2 * size)
            h[0::2], h[1::2] = y, w
            got = K.weighted_select(h, 0, size, need)
            hits = np.nonzero(cum >= need)[0]
            want = np.inf if hits.size == 0 else y[order][hits[0]]
            if np.isfinite(want) and abs(cum[hits[0]] - need) < 1e-9 * cum[-1]:
                continue  # a sum that reaches need only up to rounding
            assert got == want
            assert sorted(zip(h[0::2], h[1::2])) == sorted(zip(y, w))  # a permutation of the pairs


@pytest.mark.parametrize("pool", [None, 7, 300])
@pytest.mark.parametrize("T", [1, 2, 5000, 40_000])
def test_from_sorted_rounds(pool, T, monkeypatch):
    # raw rounds go through their sorted keys (no table is built): the LP of their table,
    # and the table's value bit for bit, on one thread or two
    rng = np.random.default_rng(T)
    p = rng.random(T) if pool is None else rng.choice(np.r_[0.0, 0.5, 1.0, rng.random(pool)], T)
    y = (rng.random(T) < np.clip(p + 0.05, 0, 1)).astype(int)
    table = fs.smce(fc.bucket_stats(y, p))
    values = []
    for threads_from in (1, 10**9):
        monkeypatch.setattr(fs, "SMCE_THREADS_FROM", threads_from)
        values.append(fs.smce(y, p))
    assert values[0] == values[1]
    assert values[0] == table
    if T <= 5000:
        st_ = fc.bucket_stats(y, p)
        assert abs(values[0] - smce_lp_chain(st_.values, st_.counts, st_.positives)) <= LP_TOL


@pytest.mark.parametrize("mirror", [False, True])
def test_a_walk_crowded_into_one_value(mirror):
    # residuals +c, -c, +c, ... (weighted buckets): every breakpoint enters at the same walk
    # value, so one bucket of the queue holds thousands (more than SMCE_SORTED_MAX: kept as a
    # heap, not sorted); mirrored, the right-hand programme gets them
    rng = np.random.default_rng(0)
    q = np.unique(rng.random(4001))
    c = 0.25
    up = np.arange(q.size) % 2 == 0
    n = np.where(up, c / (1 - q), c / q)
    s = np.where(up, n, 0.0)
    if mirror:
        q, n, s = 1 - q[::-1], n[::-1], (n - s)[::-1]
    want = smce_lp_chain(q, n, s)
    assert abs(K.smce_kernel(q, n, s) - want) <= LP_TOL
    assert _qr(q, n, s, True) == K.smce_kernel(q, n, s)


def test_smce_of_one_table_runs_its_programme_once(monkeypatch):
    """A report's smCE measure and its interval's value read one table: the programme runs once
    for it (the same value), and again for another table."""
    calls = []
    original = fs._smce_qr
    monkeypatch.setattr(fs, "_smce_qr", lambda *a: calls.append(1) or original(*a))
    rng = np.random.default_rng(8)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    st = fc.bucket_stats(y, p)
    first, again = fs.smce(st), fs.smce(st)
    assert first == again == fs.smce(y, p) and len(calls) == 2  # the table once, the rounds once
    fs.smce(fc.bucket_stats(y[:300], p[:300]))
    assert len(calls) == 3
