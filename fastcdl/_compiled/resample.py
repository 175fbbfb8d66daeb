"""Replicate bucket tables from cell counts (fastcdl/uncertainty.py, docs/estimators.md).

A table is resampled through its cells: a cell is a bucket together with an outcome and a
round weight (for the bootstrap) or a bucket and a round weight (for consistency
resampling). numpy's Generator draws the counts of all cells of a batch of replicates
(multinomial or binomial); these kernels add them up into the replicates' bucket columns,
O(number of cells) per replicate.

cutoff_null runs the whole consistency resampling of cutoff CE in one kernel: each replicate
draws its binomials from its own xoshiro256** stream and keeps only the range of its path,
O(m) per replicate with no table built.
"""

import math

import numpy as np
from numba import prange

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.rng import uniform


@kernel
def scatter_cells(counts, cell_bucket, cell_y, cell_w, m):
    """Bucket counts and positives of each replicate: n[b, i] = sum over cells c of bucket i
    of counts[b, c] w_c, and s[b, i] the same over cells with y_c = 1. counts (B, C) int64."""
    B = counts.shape[0]
    C = counts.shape[1]
    n = np.zeros((B, m))
    s = np.zeros((B, m))
    for b in range(B):
        for c in range(C):
            k = counts[b, c]
            if k != 0:
                v = k * cell_w[c]
                i = cell_bucket[c]
                n[b, i] += v
                if cell_y[c] != 0:
                    s[b, i] += v
    return n, s


@kernel
def scatter_positives(draws, cell_bucket, cell_w, m):
    """Positives of each replicate: s[b, i] = sum over cells c of bucket i of draws[b, c] w_c."""
    B = draws.shape[0]
    C = draws.shape[1]
    s = np.zeros((B, m))
    for b in range(B):
        for c in range(C):
            k = draws[b, c]
            if k != 0:
                s[b, cell_bucket[c]] += k * cell_w[c]
    return s


# --------------------------------------------------------------------------------------
# consistency resampling of cutoff CE, replicates inside the kernel


@kernel
def binomial(state, n, p):
    """One draw of Binomial(n, p) from the xoshiro256** stream ``state`` (fastcdl/_compiled/rng.py).

    n <= 16: the sum of n Bernoulli draws. Larger n: inversion by a chop-down search from the
    mode (Kemp 1986), the probabilities formed by the ratio recursion
    P(k + 1) / P(k) = (n - k) p / ((k + 1) (1 - p)) from P(mode) computed with lgamma; the
    expected number of steps is O(sqrt(n p (1 - p))). Exact up to the rounding of the
    probabilities (relative 1e-12 or so, far below what a simulated p-value resolves)."""
    if p <= 0.0 or n <= 0:
        return 0
    if p >= 1.0:
        return n
    if n <= 16:
        k = 0
        for _ in range(n):
            if uniform(state) < p:
                k += 1
        return k
    q = 1.0 - p
    mode = int((n + 1) * p)
    if mode > n:
        mode = n
    logpm = (
        math.lgamma(n + 1.0)
        - math.lgamma(mode + 1.0)
        - math.lgamma(n - mode + 1.0)
        + mode * math.log(p)
        + (n - mode) * math.log(q)
    )
    pm = math.exp(logpm)
    u = uniform(state)
    u -= pm
    if u < 0.0:
        return mode
    lo = mode
    hi = mode
    plo = pm
    phi = pm
    r = p / q
    while lo > 0 or hi < n:
        if hi < n:
            phi *= (n - hi) * r / (hi + 1.0)
            hi += 1
            u -= phi
            if u < 0.0:
                return hi
        if lo > 0:
            plo *= lo / ((n - lo + 1.0) * r)
            lo -= 1
            u -= plo
            if u < 0.0:
                return lo
    return mode  # the probabilities summed to less than u by rounding: the most likely value


@kernel(parallel=True)
def cutoff_null(q, n, states):
    """Cutoff CE of n_sim tables simulated under perfect calibration, s_i ~ Binomial(n_i, q_i)
    independently: one replicate per row of ``states`` (its own xoshiro256** stream), so the
    values do not depend on the number of threads. The range of the prefix sums is formed as
    in fastcdl/_compiled/estimators.py::cutoff_kernel, bit for bit. n integer counts as float64.
    O(m) per replicate (plus the binomial draws of buckets of more than one round)."""
    m = q.shape[0]
    T = 0.0
    for i in range(m):
        T += n[i]
    B = states.shape[0]
    out = np.empty(B)
    for b in prange(B):
        state = states[b].copy()
        P = 0.0
        lo = 0.0
        hi = 0.0
        for i in range(m):
            ni = n[i]
            if ni == 1.0:
                s = 1.0 if uniform(state) < q[i] else 0.0
            else:
                s = float(binomial(state, int(ni), q[i]))
            P += s - q[i] * ni
            if P < lo:
                lo = P
            if P > hi:
                hi = P
        out[b] = (hi - lo) / T
    return out


@kernel(nogil=True)  # an interval's subsamples run it on two threads (fastcdl._parallel.share)
def subsample_table(rounds, start, stop, values, ns):
    """The table of the unweighted rounds rounds[start:stop], each given as 2 * bucket +
    outcome: (q, n, s, kept) of its non-empty buckets in bucket order, kept their indices.
    ``ns`` (int64, one row [n, s] per bucket) is scratch, zero on entry and on return.
    The same table as counting the cells (np.bincount), scattering them (:func:`scatter_cells`)
    and dropping empty buckets, in one pass that reads the rounds in order and touches one
    row per round: O(stop - start + m)."""
    m = ns.shape[0]
    for r in range(start, stop):
        c = rounds[r]
        i = c >> 1
        ns[i, 0] += 1
        ns[i, 1] += c & 1
    k = 0
    for i in range(m):
        if ns[i, 0] > 0:
            k += 1
    q_out = np.empty(k)
    n_out = np.empty(k, dtype=np.int64)
    s_out = np.empty(k, dtype=np.int64)
    kept = np.empty(k, dtype=np.int64)
    j = 0
    for i in range(m):
        if ns[i, 0] > 0:
            q_out[j] = values[i]
            n_out[j] = ns[i, 0]
            s_out[j] = ns[i, 1]
            kept[j] = i
            j += 1
            ns[i, 0] = 0
            ns[i, 1] = 0
    return q_out, n_out, s_out, kept
