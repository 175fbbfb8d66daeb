"""Decision tasks over k outcomes: best responses to predicted distributions, per-action tallies.

A task is a payoff matrix U (n_actions, k) in [0, 1]; told a distribution P_t the decision
maker takes a*(P_t) = argmax_a sum_y P_ty U(a, y), ties to the lowest index. Ties are
decided exactly, as in decisions.py: the expected-payoff difference of two actions is
computed in floating point with an error bound, and where the bound does not settle its
sign, exactly, as a nonoverlapping expansion of the 4k partial products (two-sum of the
payoff difference, Dekker's two-product with P_ty). Exact unless a partial product
underflows below 2^-969.
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.decisions import grow, two_prod, two_sum, best_response

EPS = 2.0**-53


@kernel
def prefer_sign_k(u, a, b, P, t, e):
    """Exact sign of sum_y P[t, y] (u[a, y] - u[b, y]); e is scratch of length >= 4k + 1."""
    k = u.shape[1]
    approx = 0.0
    mag = 0.0
    for y in range(k):
        py = np.float64(P[t, y])
        approx += py * (u[a, y] - u[b, y])
        mag += abs(py) * (abs(u[a, y]) + abs(u[b, y]))
    bound = 4.0 * (k + 2) * EPS * mag
    if approx > bound:
        return 1
    if approx < -bound:
        return -1
    n = np.int64(0)
    for y in range(k):
        py = np.float64(P[t, y])
        d_hi, d_lo = two_sum(u[a, y], -u[b, y])
        x_hi, x_lo = two_prod(py, d_hi)
        n = grow(e, n, x_lo)
        n = grow(e, n, x_hi)
        x_hi, x_lo = two_prod(py, d_lo)
        n = grow(e, n, x_lo)
        n = grow(e, n, x_hi)
    if n == 0:
        return 0
    return 1 if e[n - 1] > 0.0 else -1


@kernel
def best_response_k(u, P, t, e):
    """a*(P[t]) of task u, ties to the lowest index. O(n_actions k)."""
    best = np.int64(0)
    for a in range(1, u.shape[0]):
        if prefer_sign_k(u, a, best, P, t, e) > 0:
            best = a
    return best


@kernel
def action_tallies(P, y, w, u, counts, outcomes, pred_sums):
    """Per round t: a = a*(P[t]); add w_t (1 when w is empty) to counts[a], to
    outcomes[a k + y_t], and w_t P[t, j] to pred_sums[a k + j]. O(T k n_actions)."""
    T = P.shape[0]
    k = P.shape[1]
    e = np.empty(4 * k + 2)
    weighted = w.shape[0] > 0
    for t in range(T):
        a = best_response_k(u, P, t, e)
        wt = w[t] if weighted else 1.0
        counts[a] += wt
        outcomes[a * k + y[t]] += wt
        for j in range(k):
            pred_sums[a * k + j] += wt * np.float64(P[t, j])


@kernel
def actions_of_values(q, u, out):
    """out[i] = a*(q[i]) of a two-outcome task u (beliefs q[i] = P(y = 1)). O(m n_actions)."""
    for i in range(q.shape[0]):
        out[i] = best_response(u, q[i], 1.0)
