"""Uniform bins at and within ulps of every edge, from the definition (docs/metrics.md, "Edge
rule"): the cuts are c_j = e_j * (1 + 2^-50) with e_j = j / m (numpy's quotient), and a prediction
p goes to the bin of the number of cuts strictly below it, np.searchsorted(c, p, side="left").
Also the blocked checks of y_prob and y_true: the first bad value is found wherever it sits
relative to the blocks (fastcdl._compiled.buckets.CHECK_BLOCK).
"""

import numpy as np
import pytest

import fastcdl as fc
from fastcdl._compiled import buckets as kb

SLACK = 1.0 + 2.0**-50
ULPS = 12  # beyond the widening (4 to 8 ulps above an edge) on both sides


def _adversarial(m):
    """Every edge j/m, and the floats up to ULPS ulps above and below it; 0, -0.0, 1/2, 1; the
    same grid written as linspace and arange produce it."""
    e = np.arange(m + 1) / m
    vals = [
        e,
        np.linspace(0.0, 1.0, m + 1),
        np.arange(0.0, 1.0 + 0.5 / m, 1.0 / m)[: m + 1],
        e * SLACK,
        np.array([0.0, -0.0, 0.5, 1.0, np.nextafter(0.5, 0.0), np.nextafter(0.5, 1.0), 5e-324]),
    ]
    up, down = e.copy(), e.copy()
    for _ in range(ULPS):
        up, down = np.nextafter(up, 2.0), np.nextafter(down, -1.0)
        vals += [up.copy(), down.copy()]
    p = np.concatenate(vals)
    return p[(p >= 0.0) & (p <= 1.0)]


def _by_definition(y, p, m):
    cuts = (np.arange(1, m) / m) * SLACK
    j = np.searchsorted(cuts, p, side="left")
    n = np.bincount(j, minlength=m)
    s = np.bincount(j, weights=y.astype(np.float64), minlength=m).astype(np.int64)
    keep = n > 0
    return np.flatnonzero(keep), n[keep], s[keep]


@pytest.mark.parametrize("m", [1, 2, 3, 7, 10, 15, 49, 100, 1000, 4096, 10**5])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_uniform_bins_at_and_near_every_edge(m, n_jobs):
    rng = np.random.default_rng(m)
    p = _adversarial(m)
    y = rng.random(p.shape[0]) < 0.5
    st = fc.bucket_stats(y, p, bins=m, n_jobs=n_jobs)
    bins, n, s = _by_definition(y, p, m)
    assert st.bins.tolist() == bins.tolist()
    assert st.counts.tolist() == n.tolist() and st.positives.tolist() == s.tolist()


@pytest.mark.parametrize("y_dtype", [np.bool_, np.float64, np.int64])
def test_uniform_bins_near_edges_over_many_chunks(y_dtype):
    """Adversarial predictions scattered among random ones over several chunks (the chunked and
    parallel kernels), outcomes of several dtypes (converted to 0/1 bytes first)."""
    m = 1000
    rng = np.random.default_rng(5)
    adv = _adversarial(m)
    p = rng.random(2 * kb.CHUNK + 333)
    at = rng.choice(p.shape[0], adv.shape[0], replace=False)
    p[at] = adv
    y = (rng.random(p.shape[0]) < p).astype(y_dtype)
    bins, n, s = _by_definition(y, p, m)
    for n_jobs in (1, 2):
        st = fc.bucket_stats(y, p, bins=m, n_jobs=n_jobs)
        assert st.bins.tolist() == bins.tolist()
        assert st.counts.tolist() == n.tolist() and st.positives.tolist() == s.tolist()


@pytest.mark.parametrize("where", [0, 1, kb.CHECK_BLOCK - 1, kb.CHECK_BLOCK, 3 * kb.CHECK_BLOCK + 7, -1])
@pytest.mark.parametrize("bad", [np.nan, -0.5, np.nextafter(1.0, 2.0), np.inf, -np.inf])
def test_first_bad_prediction_is_found_in_any_block(where, bad):
    p = np.random.default_rng(0).random(5 * kb.CHECK_BLOCK + 11)
    i = where % p.shape[0]
    p[i] = bad
    p[min(i + 2, p.shape[0] - 1)] = bad  # a later bad value in the same block is not the first
    assert kb.first_bad_prob(p) == i
    assert kb.first_bad_prob(np.delete(p, np.flatnonzero(~((p >= 0) & (p <= 1))))) == -1


@pytest.mark.parametrize("where", [0, kb.CHECK_BLOCK - 1, kb.CHECK_BLOCK, 2 * kb.CHECK_BLOCK + 1, -1])
@pytest.mark.parametrize(
    "dtype,bad",
    [
        (np.float64, np.nan),
        (np.float64, 0.5),
        (np.float64, -1.0),
        (np.float32, 2.0),
        (np.int64, 2),
        (np.int8, -1),
        (np.uint8, 7),
        (np.uint16, 256),
    ],
)
def test_first_bad_outcome_is_found_in_any_block(where, dtype, bad):
    rng = np.random.default_rng(1)
    y = (rng.random(4 * kb.CHECK_BLOCK + 5) < 0.5).astype(dtype)
    out = np.empty(y.shape[0], dtype=np.uint8)
    assert kb.outcomes_to_u8(y, out) == -1 and np.array_equal(out, (y == 1).astype(np.uint8))
    assert kb.first_bad_outcome(y) == -1
    i = where % y.shape[0]
    y[i] = bad
    y[-1] = bad
    assert kb.outcomes_to_u8(y, out) == i
    assert kb.first_bad_outcome(y) == i
