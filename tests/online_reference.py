"""Slow, obviously-correct references for the online engine (plain numpy, from the definitions).

Nothing here is derived from the kernels.
"""

import math

import numpy as np
from scipy.optimize import brentq


def copies(T):
    """K_eta = ceil(0.5 log2 T) + 1 and the rates eta_k = 2^-k / 32 (docs/algorithm1.md)."""
    K_eta = math.ceil(0.5 * math.log2(T) - 1e-12) + 1 if T > 1 else 1
    return 2.0 ** -np.arange(K_eta) / 32.0


def msmwc_mirror_descent(m, T, path):
    """MsMwC over all K * K_eta copies by explicit mirror-descent steps (hint 0, no clipping).

    Experts: (i, +) = row 2i, (i, -) = row 2i + 1, aux = row 2m; column k = rate copy k.
    path: sequence of (bucket b, g) realised in each round. Returns, for every round before
    its update, the aggregated c_i = sum_k w_(i,+,k) - w_(i,-,k) (array (rounds, m)) and
    the total weight (1 up to the normalisation).
    """
    K = 2 * m + 1
    eta = copies(T)
    rho = eta**2 / np.sum(eta**2)
    ETA = np.broadcast_to(eta, (K, eta.size))
    w = np.tile(rho / K, (K, 1))  # w'_1 = prior
    cs = []
    totals = []
    for b, g in path:
        # hint 0: the optimistic step leaves w'_t unchanged, w_t = w'_t
        cs.append(w[0 : 2 * m : 2].sum(axis=1) - w[1 : 2 * m : 2].sum(axis=1))
        totals.append(w.sum())
        loss = np.zeros(K)
        loss[2 * b] = -g  # gain of (b, +) is g; losses are negated gains
        loss[2 * b + 1] = g
        z = loss[:, None] + 32.0 * ETA * loss[:, None] ** 2  # l + a, a = 32 eta l^2
        v = w * np.exp(-ETA * z)

        def excess(lam):
            return np.sum(v * np.exp(-ETA * lam)) - 1.0

        lo, hi = -1.0, 1.0
        while excess(lo) < 0:
            lo *= 2
        while excess(hi) > 0:
            hi *= 2
        lam = brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        w = v * np.exp(-ETA * lam)
    return np.array(cs), np.array(totals)


def regret_bound(Q, K):
    """The pathwise MsMwC guarantee of docs/algorithm1.md for an expert with squared-gain sum Q."""
    return 64.0 + 32.0 * math.log(K) + 17.0 * math.sqrt(Q * (math.log(K) + math.log1p(Q)))


def xoshiro256ss(state, n):
    """n outputs of xoshiro256** from a 4-word state (pure Python; Blackman and Vigna)."""
    mask = (1 << 64) - 1
    s = [int(x) for x in state]

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & mask

    out = []
    for _ in range(n):
        out.append(rotl((s[1] * 5) & mask, 7) * 9 & mask)
        t = (s[1] << 17) & mask
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out


def step1_value(c, pts, probs, bkt):
    """max over y in {0, 1} of E[c_b (ptilde - y)] for a distribution (points, probs, buckets)."""
    return max(sum(p * c[b] * (x - y) for x, p, b in zip(pts, probs, bkt)) for y in (0, 1))


def minimax_lp(A):
    """Value of the 2 x K game (forecaster minimises the loss A[j, y]) by linear programming."""
    from scipy.optimize import linprog

    K = A.shape[0]
    # variables: x_1..x_K (mixture), v; minimise v s.t. sum_j x_j A[j, y] <= v, sum x = 1
    cost = np.r_[np.zeros(K), 1.0]
    A_ub = np.c_[A.T, -np.ones(2)]
    res = linprog(
        cost,
        A_ub=A_ub,
        b_ub=np.zeros(2),
        A_eq=np.r_[np.ones(K), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * K + [(None, None)],
        method="highs",
    )
    return res.fun
