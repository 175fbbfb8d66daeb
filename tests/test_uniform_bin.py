"""The branch-free bin of equal-width bins (fastcdl._compiled.buckets.uniform_bin) against the
definition of the edge rule, up to the largest number of bins (2^24), and the two-pass blocked
loop that calls it (UNIFORM_BLOCK) at the blocks' boundaries.

The definition (docs/metrics.md, "Edge rule"): the cuts are c_k = (k / m) * (1 + 2^-50),
k = 1..m-1, and p goes to the bin of the number of cuts strictly below it. Near edge j only the
cuts j-1..j+1 can lie on either side of p, so the count is (j - 2) plus those below p: no array
of all m cuts is needed.
"""

import numpy as np
import pytest
from numba import njit

import fastcdl as fc
from fastcdl._compiled import buckets as kb

SLACK = 1.0 + 2.0**-50
ULPS = 12


@njit(cache=False)
def _bins(p, m):
    out = np.empty(p.shape[0], dtype=np.int64)
    for i in range(p.shape[0]):
        out[i] = kb.uniform_bin(p[i], m, np.float64(m))
    return out


def _near_edges(m, j):
    """The edges j / m and the floats up to ULPS ulps on either side, with the edge of each."""
    e = j / m
    vals, owner = [e], [j]
    up, down = e.copy(), e.copy()
    for _ in range(ULPS):
        up, down = np.nextafter(up, 2.0), np.nextafter(down, -1.0)
        vals += [up.copy(), down.copy(), up * SLACK, down * SLACK]
        owner += [j, j, j, j]
    p, owner = np.concatenate(vals), np.concatenate(owner)
    keep = (p >= 0.0) & (p <= 1.0)
    return p[keep], owner[keep]


def _by_definition(p, owner, m):
    """Cuts below p: all of c_1..c_{j-2} (far below a p this close to e_j), and those of
    c_{j-1}, c_j, c_{j+1} (the ones that exist) that are below p."""
    below = np.clip(owner - 2, 0, m - 1)
    for d in (-1, 0, 1):
        k = owner + d
        exists = (k >= 1) & (k <= m - 1)
        below = below + (exists & ((k / m) * SLACK < p))
    return below


@pytest.mark.parametrize("m", [1, 2, 3, 10, 1000, 10**6 + 1, 12_345_679, 2**24 - 1, 2**24])
def test_uniform_bin_is_the_definition_near_sampled_edges(m):
    rng = np.random.default_rng(m)
    j = np.unique(np.concatenate([[0, 1, 2, m // 2, m - 2, m - 1, m], rng.integers(0, m + 1, 3000)]))
    j = j[(j >= 0) & (j <= m)]
    p, owner = _near_edges(m, j)
    assert np.array_equal(_bins(p, m), _by_definition(p, owner, m))


@pytest.mark.parametrize("where", [0, kb.UNIFORM_BLOCK - 1, kb.UNIFORM_BLOCK, 2 * kb.UNIFORM_BLOCK + 1, -1])
@pytest.mark.parametrize("bad", ["p_nan", "p_above", "p_negative", "y_two"])
def test_a_bad_round_is_refused_wherever_it_sits_in_a_block(where, bad):
    rng = np.random.default_rng(3)
    T = 3 * kb.UNIFORM_BLOCK + 17
    p = rng.random(T)
    y = (rng.random(T) < p).astype(np.float64)
    i = where % T
    if bad == "y_two":
        y[i] = 2.0
    else:
        p[i] = {"p_nan": np.nan, "p_above": np.nextafter(1.0, 2.0), "p_negative": -1e-300}[bad]
    with pytest.raises(ValueError) as err:
        fc.bucket_stats(y, p, bins=7)
    assert err.value.index == i and err.value.argument == ("y_true" if bad == "y_two" else "y_prob")


@pytest.mark.parametrize(
    "T", [1, kb.UNIFORM_BLOCK - 1, kb.UNIFORM_BLOCK, kb.UNIFORM_BLOCK + 1, 5 * kb.UNIFORM_BLOCK + 3]
)
def test_blocked_loop_counts_every_round_once(T):
    rng = np.random.default_rng(T)
    m = 13
    p = np.concatenate([np.arange(m + 1) / m, rng.random(T)])[:T]
    y = rng.random(T) < 0.5
    j = np.searchsorted((np.arange(1, m) / m) * SLACK, p, side="left")
    st = fc.bucket_stats(y, p, bins=m, n_jobs=1)
    n = np.bincount(j, minlength=m)
    s = np.bincount(j, weights=y, minlength=m).astype(np.int64)
    assert st.bins.tolist() == np.flatnonzero(n).tolist()
    assert st.counts.tolist() == n[n > 0].tolist() and st.positives.tolist() == s[n > 0].tolist()
    # sums in another order: equal to rounding, where a round in a wrong bin would move a sum by ~1/m
    assert np.allclose(st.prob_sums, np.bincount(j, weights=p, minlength=m)[n > 0], rtol=1e-12, atol=0)
