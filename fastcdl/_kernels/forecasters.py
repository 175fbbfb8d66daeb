"""One round of each forecaster family: its distribution (forecast), draw and update (observe).

A forecast is written into three length-2 arrays: raw points ``pts``, probabilities
``probs`` and bucket indices ``bkt`` (a point mass uses slot 0 and gives slot 1
probability 0 and the same bucket). The bucket index travels with its raw point and is
never recovered from a float. Every family keeps the bucket table (n, s) of its stated
predictions (int64) and a round counter ``ctr = [rounds, sum of y, previous y, drawn slot]``.

Families (buckets are 0-based here; bucket i of docs/algorithm1.md is index i - 1):
- cdl  Algorithm 1 (docs/algorithm1.md): m buckets I_b = (b/m, (b+1)/m] (I_0 closed), stated value
       q_b = (b+1)/m, weights c from the MsMwC oracle (sparse or dense).
- kt   the same step 1 with one KT coin-bettor per bucket: c_b = beta_b W_b,
       beta_b = G_b / (n_b + 1), W_b starts at 1/m.
- grid foster, truthful, frequency: stated values j/m for j = 0..m; raw point = stated value.
"""

import math

import numpy as np
from fastcdl._kernels._jit import kernel

from fastcdl._kernels.adversaries import adversary_prob
from fastcdl._kernels.msmwc import dense_weights, resum_normaliser, sparse_lam, sparse_logc, update_bucket
from fastcdl._kernels.rng import uniform

FOSTER = 0
TRUTHFUL = 1
FREQUENCY = 2


# -- shared pieces ------------------------------------------------------------------------
@kernel
def sign_change(v):
    """Step 1's bracket by bisection on the sign of v, O(log m).

    Returns -1 if v_0 >= 0, m - 1 if v_{m-1} <= 0, else lo with v_lo < 0 <= v_{lo+1}.
    """
    m = v.shape[0]
    if v[0] >= 0.0:
        return -1
    if v[m - 1] <= 0.0:
        return m - 1
    lo = 0
    hi = m - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if v[mid] < 0.0:
            lo = mid
        else:
            hi = mid
    return lo


@kernel
def point_mass(x, b, pts, probs, bkt):
    pts[0] = x
    pts[1] = x
    probs[0] = 1.0
    probs[1] = 0.0
    bkt[0] = b
    bkt[1] = b


@kernel
def boundary_points(lo, m, delta, r, pts, probs, bkt):
    """Step 1's mixture: ptilde = (lo+1)/m (right end of bucket lo) with probability r and
    (lo+1)/m + delta (inside bucket lo+1, as 0 < delta <= 1/m) with probability 1 - r."""
    pts[0] = (lo + 1) / m
    pts[1] = pts[0] + delta
    probs[0] = r
    probs[1] = 1.0 - r
    bkt[0] = lo
    bkt[1] = lo + 1


@kernel
def step1_point_mass(v, pts, probs, bkt):
    """Step 1's cases that need no weights, from the signs of v (c, or G, which has c's signs).

    Plays 0 if v_0 >= 0, 1 if v_{m-1} <= 0, the right end of bucket lo+1 if v_{lo+1} = 0,
    and returns (lo, True); otherwise returns (lo, False) with v_lo < 0 < v_{lo+1}: the
    caller mixes the boundary points with the two buckets' weights. O(log m).
    """
    m = v.shape[0]
    lo = sign_change(v)
    if lo < 0:
        point_mass(0.0, 0, pts, probs, bkt)
    elif lo == m - 1:
        point_mass(1.0, m - 1, pts, probs, bkt)
    elif v[lo + 1] == 0.0:
        point_mass((lo + 2) / m, lo + 1, pts, probs, bkt)
    else:
        return lo, False
    return lo, True


@kernel
def step1_from_c(c, delta, pts, probs, bkt):
    """Step 1 on explicit weights c (docs/algorithm1.md): after it, max_y E[c_b (ptilde - y)] <= delta min(|c_lo|, c_hi)."""
    lo, done = step1_point_mass(c, pts, probs, bkt)
    if not done:
        boundary_points(lo, c.shape[0], delta, c[lo + 1] / (c[lo + 1] - c[lo]), pts, probs, bkt)
    return lo


@kernel
def draw(q, probs, bkt, rng, ctr):
    """Draw the round's slot with the forecaster's generator; return the stated prediction."""
    j = 0
    if probs[1] > 0.0 and uniform(rng) >= probs[0]:
        j = 1
    ctr[3] = j
    return q[bkt[j]]


@kernel
def record(y, b, n, s, ctr):
    n[b] += 1
    s[b] += y
    ctr[0] += 1
    ctr[1] += y
    ctr[2] = y


# -- cdl: Algorithm 1 with the MsMwC oracle -----------------------------------------------
@kernel
def _lam_result(par, lam, converged, step):
    """Store Lam in par[1]; count a Lam solve that hit its cap in par[4], its last step in par[5]."""
    par[1] = lam
    if not converged:
        par[4] += 1.0
        par[5] = step


@kernel
def cdl_forecast(dense, G, Q, eta, logpi, off, S, b, w, c, par, pts, probs, bkt):
    """Step 1 of Algorithm 1. par = [delta, lam, ln|c_lo|, ln c_hi, capped, last step]
    (ln|c_lo|, ln c_hi NaN unless mixed; capped counts the Lam solves that stopped at
    their iteration cap, last step is the final step of the latest such solve).

    Sparse: bisection on sign(G) and c at the two buckets only, O(K_eta * Newton + log m).
    Dense: all c_i explicitly (dense_weights), bisection on sign(c), O(m K_eta).
    """
    m = G.shape[0]
    delta = par[0]
    par[2] = np.nan
    par[3] = np.nan
    if dense:
        lam, converged, step = dense_weights(G, Q, eta, logpi, b, w, par[1], c)
        _lam_result(par, lam, converged, step)
        lo, done = step1_point_mass(c, pts, probs, bkt)
    else:
        lo, done = step1_point_mass(G, pts, probs, bkt)
    if not done:
        if dense:
            lc_lo = math.log(-c[lo])
            lc_hi = math.log(c[lo + 1])
        else:
            lam, converged, step = sparse_lam(eta, logpi, off, S, b, par[1])
            _lam_result(par, lam, converged, step)
            lc_lo = sparse_logc(lo, G, Q, eta, logpi, par[1])
            lc_hi = sparse_logc(lo + 1, G, Q, eta, logpi, par[1])
        par[2] = lc_lo
        par[3] = lc_hi
        # r = c_hi / (c_hi - c_lo) = 1 / (1 + |c_lo| / c_hi)
        boundary_points(lo, m, delta, 1.0 / (1.0 + math.exp(lc_lo - lc_hi)), pts, probs, bkt)


@kernel
def cdl_observe(y, dense, G, Q, eta, off, S, terms, n, s, pts, bkt, ctr):
    """Update G, Q (and, sparse, F_k) of the drawn bucket with g = ptilde - y; record (p, y).
    Sparse: every m rounds F_k is summed afresh (resum_normaliser)."""
    j = ctr[3]
    b = bkt[j]
    g = pts[j] - y
    if dense:
        G[b] += g
        Q[b] += g * g
    else:
        update_bucket(b, g, G, Q, eta, off, S, terms)
    record(y, b, n, s, ctr)
    if not dense and ctr[0] % G.shape[0] == 0:
        resum_normaliser(off, S, terms)


# -- kt: one Krichevsky-Trofimov coin-bettor per bucket ------------------------------------
@kernel
def kt_logc(b, G, logW, n):
    """ln|c_b| = ln|G_b| - ln(n_b + 1) + ln W_b."""
    return math.log(abs(G[b])) - math.log(n[b] + 1.0) + logW[b]


@kernel
def kt_forecast(G, logW, n, par, pts, probs, bkt):
    """Step 1 with c_b = beta_b W_b (sign of G_b); par = [delta, ln|c_lo|, ln c_hi]."""
    m = G.shape[0]
    par[1] = np.nan
    par[2] = np.nan
    lo, done = step1_point_mass(G, pts, probs, bkt)
    if not done:
        par[1] = kt_logc(lo, G, logW, n)
        par[2] = kt_logc(lo + 1, G, logW, n)
        boundary_points(lo, m, par[0], 1.0 / (1.0 + math.exp(par[1] - par[2])), pts, probs, bkt)


@kernel
def kt_observe(y, G, logW, n, s, pts, bkt, ctr):
    """W_b <- W_b (1 + beta_b g) with beta_b = G_b / (n_b + 1) before the update; G_b += g."""
    j = ctr[3]
    b = bkt[j]
    g = pts[j] - y
    logW[b] += math.log1p(G[b] / (n[b] + 1.0) * g)
    G[b] += g
    record(y, b, n, s, ctr)


# -- grid forecasters: foster, truthful, frequency -----------------------------------------
@kernel
def _bias_sign(j, n, s, m):
    """sign of the bias q_j n_j - s_j of grid point j, exactly: m times it is j n_j - m s_j."""
    return j * n[j] - m * s[j]


@kernel
def grid_forecast(kind, acode, apar, q, n, s, ctr, pts, probs, bkt):
    """Stated values q_j = j/m, j = 0..m; the raw point is the stated value.

    foster: say 0 if the bias of 0 is >= 0, 1 if that of 1 is <= 0, else mix adjacent
        points lo, hi with B_lo < 0 <= B_hi so that the expected bias step is zero
        (probability B_hi / (B_hi - B_lo) on lo), found by bisection, O(log m).
    truthful: the grid point nearest to the adversary's P(y = 1) (ties upward).
    frequency: the grid point nearest to the running mean of y (1/2 before any round).
    """
    m = q.shape[0] - 1
    if kind == FOSTER:
        if _bias_sign(0, n, s, m) >= 0:
            point_mass(q[0], 0, pts, probs, bkt)
            return
        if _bias_sign(m, n, s, m) <= 0:
            point_mass(q[m], m, pts, probs, bkt)
            return
        lo = 0
        hi = m
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _bias_sign(mid, n, s, m) < 0:
                lo = mid
            else:
                hi = mid
        b_hi = _bias_sign(hi, n, s, m)
        if b_hi == 0:
            point_mass(q[hi], hi, pts, probs, bkt)
            return
        b_lo = _bias_sign(lo, n, s, m)
        pts[0] = q[lo]
        pts[1] = q[hi]
        probs[0] = b_hi / (b_hi - b_lo)
        probs[1] = 1.0 - probs[0]
        bkt[0] = lo
        bkt[1] = hi
        return
    if kind == TRUTHFUL:
        p = adversary_prob(acode, apar, ctr[0] + 1, ctr[2])
        j = int(math.floor(p * m + 0.5))
    else:
        t = ctr[0]
        j = (m + 1) // 2 if t == 0 else (2 * ctr[1] * m + t) // (2 * t)
    j = min(max(j, 0), m)
    point_mass(q[j], j, pts, probs, bkt)


@kernel
def grid_observe(y, n, s, bkt, ctr):
    record(y, bkt[ctr[3]], n, s, ctr)
