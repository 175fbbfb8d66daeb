"""A user's own compiled code calling fastcdl.kernels, and nothing else of fastcdl.

This is what the three kinds of users of fastcdl.kernels write: a simulation that keeps a
bucket table (per agent) and reads metrics inside its loop, an online learner built from
the MsMwC oracle and step 1's two-point distribution, a researcher's loop that drives a
built-in forecaster. tests/test_kernels_api.py compares every result with fastcdl's Python
API, in this process and in a fresh one with an empty numba cache.

Functions are compiled with ``K.njit``: numba's njit with the cache on, whose cache is dropped
when fastcdl's kernels change (a plain ``njit(cache=True)`` would keep machine code built
against the old kernels: numba checks this file only).
"""

import math

import numpy as np

from fastcdl import kernels as K


# -- a table kept inside the loop, read every `every` rounds ---------------------------------
@K.njit
def stream_cdl(p, y, every):
    """Add the rounds one by one to an exact table; CDL and ECE after every `every` rounds."""
    tab = K.table_new(4)  # small on purpose: the table grows
    reads = np.zeros(p.shape[0] // every)
    eces = np.zeros(p.shape[0] // every)
    r = 0
    for t in range(p.shape[0]):
        tab = K.table_add(tab, p[t], y[t])
        if (t + 1) % every == 0:
            q, n, s = K.table_view(tab)
            reads[r] = K.cdl_of_table(q, n, s)
            eces[r] = K.ece_of_table(q, n, s)
            r += 1
    q, n, s = K.table_view(tab)
    return q.copy(), n.copy(), s.copy(), reads, eces


@K.njit
def stream_weighted(p, y, w):
    tab = K.table_new_weighted(2)
    for t in range(p.shape[0]):
        tab = K.table_add(tab, p[t], y[t], w[t])
    q, n, s = K.table_view(tab)
    return q.copy(), n.copy(), s.copy()


@K.njit
def stream_merged(p, y, cut):
    """Two tables (rounds before and after `cut`), merged."""
    a = K.table_new(8)
    b = K.table_new(8)
    for t in range(p.shape[0]):
        if t < cut:
            a = K.table_add(a, p[t], y[t])
        else:
            b = K.table_add(b, p[t], y[t])
    c = K.table_merge(a, b)
    q, n, s = K.table_view(c)
    return q.copy(), n.copy(), s.copy()


@K.njit
def binned_stream(p, y, m, cut):
    """A binned table over m equal bins, as two halves merged."""
    e = K.uniform_edges(m)
    a = K.binned_new(e, True)
    b = K.binned_new(e, True)
    for t in range(p.shape[0]):
        if t < cut:
            K.binned_add(a, p[t], y[t])
        else:
            K.binned_add(b, p[t], y[t])
    return K.binned_view(K.binned_merge(a, b))


@K.njit
def binned_weighted(p, y, w, edges):
    tab = K.binned_new_weighted(edges, False)
    for t in range(p.shape[0]):
        K.binned_add(tab, p[t], y[t], w[t])
    return K.binned_view(tab)


@K.njit
def every_metric(q, n, s, mus):
    """All metrics of one table, from compiled code."""
    value, mu1, mu2 = K.cdl_kinks(q, n, s)
    scalars = np.array(
        [
            K.cdl_of_table(q, n, s),
            K.vcdl_of_table(q, n, s),
            K.ece_of_table(q, n, s),
            K.k2_of_table(q, n, s),
            K.ucal_of_table(q, n, s),
            K.cdl_monotone_of_table(q, n, s),
            K.vcdl_monotone_of_table(q, n, s),
            K.cutoff_ce_of_table(q, n, s),
            K.atb_of_table(q, n, s),
            K.smce_of_table(q, n, s),
            value,
            mu1,
            mu2,
        ]
    )
    return scalars, K.v_curve(q, n, s, mus), K.decision_loss_curve_of_table(q, n, s, mus)


# -- Algorithm 1 assembled from the oracle and step 1, against a coin -----------------------
@K.njit
def algorithm1(T, m, delta, rng, arng, p_coin):
    """Algorithm 1 (sparse MsMwC) written with the public blocks; the same run as
    simulate("cdl", "bernoulli") for the same generators."""
    st = K.msmwc_init(m, T)
    q = np.arange(1, m + 1) / m
    table, out, hist = K.game_new(q)
    eb = K.exact_bias_new(m)
    for t in range(T):
        lo, done = K.step1_bracket(eb.sign, out)  # c has the signs of G: decided exactly
        if not done:
            K.msmwc_lam(st)
            lc_lo = K.msmwc_logc(st, lo)
            lc_hi = K.msmwc_logc(st, lo + 1)
            K.step1_mix(lo, m, delta, 1.0 / (1.0 + math.exp(lc_lo - lc_hi)), out)
        y = 1 if K.uniform(arng) < p_coin else 0  # the adversary sees out, not the draw
        slot = K.draw_slot(out, rng)
        K.exact_bias_add(eb, out, slot, y, m, delta)
        K.msmwc_update(st, out.buckets[slot], out.points[slot] - y)
        hist = K.settle(table, out, slot, y, hist)
    return table.n, table.s, st.capped[0]


@K.njit
def oracle_weights(m, T, gains_b, gains_g):
    """c from the sparse oracle (msmwc_c) and from the dense reference (msmwc_weights)."""
    st = K.msmwc_init(m, T)
    for k in range(gains_b.shape[0]):
        K.msmwc_update(st, gains_b[k], gains_g[k])
    K.msmwc_lam(st)
    sparse = np.empty(m)
    for i in range(m):
        sparse[i] = K.msmwc_c(st, i)
    dense = np.empty(m)
    K.msmwc_weights(st, dense)
    return sparse, dense


@K.njit
def step1_explicit(c, delta):
    out = K.draw_new()
    lo = K.step1(c, delta, out)
    return lo, out.points.copy(), out.probs.copy(), out.buckets.copy()


@K.njit
def solve_game(A):
    idx = np.full(2, -1, dtype=np.int64)
    prob = np.zeros(2)
    value, lam = K.minimax_2xk(A, idx, prob)
    return value, lam, idx, prob


# -- a built-in forecaster driven by the user's own loop ------------------------------------
@K.njit
def run_kt(T, st, table, out, hist, rng, arng, p_coin):
    for t in range(T):
        K.forecaster_kt.forecast(st, table, hist, out)
        y = 1 if K.uniform(arng) < p_coin else 0
        slot = K.draw_slot(out, rng)
        K.forecaster_kt.observe(st, table, hist, out, slot, y)
        hist = K.settle(table, out, slot, y, hist)
    return hist


@K.njit
def run_foster(T, st, table, out, hist, rng, arng, p_coin):
    for t in range(T):
        K.forecaster_foster.forecast(st, table, hist, out)
        y = 1 if K.uniform(arng) < p_coin else 0
        slot = K.draw_slot(out, rng)
        K.forecaster_foster.observe(st, table, hist, out, slot, y)
        hist = K.settle(table, out, slot, y, hist)
    return hist
