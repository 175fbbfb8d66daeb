"""The binning kernels above one chunk (T >= 2^20): the parallel path over chunks.

Smaller inputs run serially in one chunk; these tests make sure the multi-chunk path
gives the same table as a plain numpy binning, for any number of threads, and still
refuses a bad value that sits in a late chunk.
"""

import numba
import numpy as np
import pytest

import fastcdl as fc
from fastcdl._compiled.buckets import CHUNK

T = 3 * CHUNK + 17  # four chunks, the last one short


@pytest.fixture(scope="module")
def rounds():
    rng = np.random.default_rng(11)
    p = rng.random(T)
    p[::97] = np.round(p[::97] * 15) / 15  # many points exactly on the edges k/15
    # and points a few ulps above an edge (k * (1/15) and the like): they belong to the lower bin
    k = rng.integers(1, 15, p[5::89].shape[0])
    p[5::89] = np.nextafter(k / 15, 1.0) + (k % 3) * np.spacing(k / 15)
    y = (rng.random(T) < p).astype(np.int8)
    w = rng.random(T) * 2.0
    return y, p, w


def _numpy_binned(y, p, w, edges):
    """Bins [e0, e1], (e1, e2], ...: searchsorted on the interior edges widened by the
    factor 1 + 2^-50 (4 to 8 ulps; docs/metrics.md), side='left'."""
    j = np.searchsorted(edges[1:-1] * (1.0 + 2.0**-50), p, side="left")
    m = edges.shape[0] - 1
    ww = np.ones_like(p) if w is None else w
    n = np.bincount(j, weights=ww, minlength=m)
    s = np.bincount(j, weights=ww * (y == 1), minlength=m)
    ps = np.bincount(j, weights=ww * p, minlength=m)
    keep = n > 0
    return n[keep], s[keep], ps[keep], np.flatnonzero(keep)


@pytest.mark.parametrize("bins", [15, "edges"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_chunk_table_equals_numpy(rounds, bins, weighted):
    y, p, w = rounds
    edges = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]) if bins == "edges" else np.arange(16) / 15
    st = fc.bucket_stats(y, p, bins=edges if bins == "edges" else bins, sample_weight=w if weighted else None)
    n, s, ps, idx = _numpy_binned(y, p, w if weighted else None, edges)
    assert st.bins.tolist() == idx.tolist()
    if weighted:
        np.testing.assert_allclose(st.counts, n, rtol=1e-12)
        np.testing.assert_allclose(st.positives, s, rtol=1e-12)
    else:
        assert st.counts.tolist() == n.astype(np.int64).tolist()
        assert st.positives.tolist() == s.astype(np.int64).tolist()
    np.testing.assert_allclose(st.prob_sums, ps, rtol=1e-12)


def test_multi_chunk_table_does_not_depend_on_thread_count(rounds):
    y, p, w = rounds
    before = numba.get_num_threads()
    try:
        tables = []
        for k in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(k)
            tables.append((fc.bucket_stats(y, p, bins=1000), fc.bucket_stats(y, p, bins=15, sample_weight=w)))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(tables[0], tables[-1]):
        assert a == b  # bit for bit: chunking is fixed by T, partials are added in chunk order


@pytest.mark.parametrize("where", [CHUNK + 5, 3 * CHUNK + 16])
def test_bad_value_in_a_late_chunk_is_refused(rounds, where):
    y, p, w = rounds
    bad = p.copy()
    bad[where] = np.nan
    with pytest.raises(ValueError, match=f"y_prob contains NaN, first at index {where} \\(0-based\\)"):
        fc.bucket_stats(y, bad, bins=15)
    neg = w.copy()
    neg[where] = -1.0
    with pytest.raises(
        ValueError, match=f"sample_weight must be non-negative; found -1.0 at index {where} \\(0-based\\)"
    ):
        fc.bucket_stats(y, p, bins=15, sample_weight=neg)


@pytest.mark.parametrize("bins", [15, "edges"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_serial_and_parallel_kernels_give_the_same_table(rounds, bins, weighted):
    # the two kernels share bin_of, including its edge rule: points a few ulps above an edge
    from fastcdl._compiled import buckets as kb

    y, p, w = rounds
    y = (y == 1).view(np.uint8)
    edges = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]) if bins == "edges" else np.arange(16) / 15
    uniform = bins != "edges"
    out = []
    for kern in (
        (kb.bin_rounds_weighted, kb.bin_rounds_weighted_parallel)
        if weighted
        else (kb.bin_rounds, kb.bin_rounds_parallel)
    ):
        m = edges.shape[0] - 1
        n = np.zeros(m, np.float64 if weighted else np.int64)
        s = np.zeros(m, n.dtype)
        ps = np.zeros(m)
        args = (y, p, w) if weighted else (y, p)
        assert kern(*args, edges, uniform, n, s, ps)
        out.append((n, s, ps))
    for a, b in zip(*out):
        assert np.array_equal(a, b)
    n_ref = _numpy_binned(y, p, w if weighted else None, edges)[0]
    assert np.allclose(out[0][0][out[0][0] > 0], n_ref, rtol=1e-12)
