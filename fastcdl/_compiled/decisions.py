"""Best responses of a decision task and the losses built on them: CFDL_U, swap regret.

A task is a payoff matrix U (n_actions, 2) in [0, 1]; at belief p the decision maker
picks argmax_a (1-p) U[a,0] + p U[a,1], ties to the lowest index (docs/metrics.md).

Ties decide the answer exactly where it matters: the worst task's kinks sit on the
data's predictions and frequencies. So beliefs are rationals num/den (den = 1 for a
stated prediction, num/den = s_i/n_i for an empirical frequency) and the comparison of
two actions is the exact sign of (den - num) (U[a,0] - U[b,0]) + num (U[a,1] - U[b,1]),
decided in floating point when the rounding error bound allows and otherwise by
error-free transformations (two-sum, Dekker's two-product) into a nonoverlapping
expansion whose largest component carries the sign. Exact unless a partial product
underflows below 2^-969, which payoffs in [0, 1] and beliefs >= 2^-400 never do.
"""

import numpy as np
from fastcdl._compiled._jit import kernel

EPS = 2.0**-53
_SPLITTER = 134217729.0  # 2^27 + 1


@kernel(inline="always")
def two_sum(a, b):
    x = a + b
    bv = x - a
    av = x - bv
    return x, (a - av) + (b - bv)


@kernel(inline="always")
def _split(a):
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


@kernel(inline="always")
def two_prod(a, b):
    x = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return x, al * bl - (((x - ah * bh) - al * bh) - ah * bl)


@kernel
def grow(e, k, x):
    """Add x to the nonoverlapping expansion e[:k] (increasing magnitude); return the new length."""
    out = 0
    for i in range(k):
        x, err = two_sum(x, e[i])
        if err != 0.0:
            e[out] = err
            out += 1
    if x != 0.0:
        e[out] = x
        out += 1
    return out


@kernel
def prefer_sign(u, a, b, num, den):
    """Exact sign of the expected-payoff difference of actions a and b at belief num/den."""
    d0 = u[a, 0] - u[b, 0]
    d1 = u[a, 1] - u[b, 1]
    r = den - num
    approx = r * d0 + num * d1
    bound = 8.0 * EPS * (abs(den) + abs(num)) * (abs(u[a, 0]) + abs(u[b, 0]) + abs(u[a, 1]) + abs(u[b, 1]))
    if approx > bound:
        return 1
    if approx < -bound:
        return -1
    r_hi, r_lo = two_sum(den, -num)
    d0_hi, d0_lo = two_sum(u[a, 0], -u[b, 0])
    d1_hi, d1_lo = two_sum(u[a, 1], -u[b, 1])
    e = np.zeros(16)
    # the six partial products, in this order; arrays rather than a tuple of pairs, which
    # costs numba half a second to type
    xs = np.empty(6)
    ys = np.empty(6)
    xs[0], ys[0] = r_hi, d0_hi
    xs[1], ys[1] = r_hi, d0_lo
    xs[2], ys[2] = r_lo, d0_hi
    xs[3], ys[3] = r_lo, d0_lo
    xs[4], ys[4] = num, d1_hi
    xs[5], ys[5] = num, d1_lo
    k = np.int64(0)  # not the literal 0: numba would compile grow once more for it
    for j in range(6):
        p_hi, p_lo = two_prod(xs[j], ys[j])
        k = grow(e, k, p_lo)
        k = grow(e, k, p_hi)
    if k == 0:
        return 0
    return 1 if e[k - 1] > 0.0 else -1


@kernel
def best_response(u, num, den):
    """argmax_a of the expected payoff at belief num/den, ties to the lowest index. O(n_actions)."""
    best = np.int64(0)  # not the literal 0: numba would compile prefer_sign once more for it
    for a in range(1, u.shape[0]):
        if prefer_sign(u, a, best, num, den) > 0:
            best = a
    return best


@kernel
def cfdl_kernel(q, n, s, u):
    """CFDL_U = (1/T) sum_i [(n_i - s_i)(U[h,0] - U[a,0]) + s_i (U[h,1] - U[a,1])].

    a = a*(q_i), h = a*(qhat_i) with qhat_i = s_i/n_i taken as the exact ratio.
    O(m * n_actions).
    """
    T = 0.0
    total = 0.0
    for i in range(q.shape[0]):
        T += n[i]
        a = best_response(u, q[i], 1.0)
        h = best_response(u, s[i], n[i])
        if a != h:
            total += (n[i] - s[i]) * (u[h, 0] - u[a, 0]) + s[i] * (u[h, 1] - u[a, 1])
    return total / T


@kernel
def swap_regret_kernel(q, n, s, u):
    """(1/T) sum_a max_a' sum_{rounds with a*(p_t) = a} [U(a', y_t) - U(a, y_t)]. O(m A + A^2)."""
    A = u.shape[0]
    zeros = np.zeros(A)
    ones = np.zeros(A)
    T = 0.0
    for i in range(q.shape[0]):
        T += n[i]
        a = best_response(u, q[i], 1.0)
        zeros[a] += n[i] - s[i]
        ones[a] += s[i]
    total = 0.0
    for a in range(A):
        best = 0.0
        for b in range(A):
            gain = zeros[a] * (u[b, 0] - u[a, 0]) + ones[a] * (u[b, 1] - u[a, 1])
            if gain > best:
                best = gain
        total += best
    return total / T
