"""klcal: the pseudo KL-calibration forecaster of Luo, Senapati and Sharan 2025 (docs/klcal.md).

A grid of K + 1 values inside (0, 1), z_0 = sin^2(pi / 4K), z_i = sin^2(pi i / 2K) for
i = 1..K-1, z_K = cos^2(pi / 4K); one expert per grid point i, keeping the P-weighted
outcomes at its point, a_i = sum_s P_s(i) y_s and b_i = sum_s P_s(i) (1 - y_s). Each round:

1. expert i's forecast w_i = (a_i + 1) / (a_i + b_i + 2) (the Laplace estimate of the
   frequency at its point);
2. w_i rounded at random onto its two neighbours z_k <= w_i < z_{k+1}, with weights
   u = (z_{k+1} - w_i) / (z_{k+1} (1 - z_{k+1})) on z_k and v = (w_i - z_k) / (z_k (1 - z_k))
   on z_{k+1}, normalised (w_i below z_0 or from z_K on: that end point): row i of a
   stochastic matrix R;
3. P = a stationary distribution of R (Blum and Mansour's reduction of swap regret to
   external regret): P R = P;
4. state z_j with probability P(j); observe y; a_i += P(i) y, b_i += P(i) (1 - y).

Every grid point is a slot (support K + 1, docs/engine.md); P usually puts mass on two to
four of them. The stationary distribution is computed by GTH elimination (Grassmann, Taksar
and Heyman 1985: subtraction-free, so P >= 0 to rounding), skipping the zero entries of R
(two per row before fill-in). R need not be irreducible: when the elimination reaches a
state that cannot move to any lower one, P is the stationary distribution of the closed
class with the largest least element (docs/klcal.md). K is the paper's grid size
max(2, ceil((T / ln T)^(1/3))) (T >= 3; 2 below) rounded up to an even number, which puts
1/2 on the grid (z_{K/2} = sin^2(pi/4)) at every horizon; ``even=0`` keeps the paper's K as it
is (odd at some horizons: results/klcal-rates shows the floor pi^2 / (8 K^2) a round that
leaves); or give ``k``. Both are of the order the paper's bound needs (version 2; version 1
kept the paper's K by default). Cost per round: O(K^2) to build R and O(K^2) to O(K^3) for
the elimination (its fill-in); memory O(K^2).

>>> FORECASTER.resolve_params({}, 2**16), FORECASTER.resolve_params({"even": 0}, 2**16)
({'k': 20}, {'k': 19})
"""

import math
from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.plugins import ForecasterSpec

KLState = namedtuple("KLState", ["z", "a", "b", "R", "P"])


def default_k(T):
    """max(2, ceil((T / ln T)^(1/3))), the paper's grid size; 2 for T < 3."""
    if T < 3:
        return 2
    return max(2, math.ceil((T / math.log(T)) ** (1.0 / 3.0) - 1e-9))


def grid(K):
    """z_0 = sin^2(pi / 4K), z_i = sin^2(pi i / 2K) (i = 1..K-1), z_K = cos^2(pi / 4K): increasing, in (0, 1)."""
    z = np.sin(np.pi * np.arange(K + 1) / (2 * K)) ** 2
    z[0] = math.sin(math.pi / (4 * K)) ** 2
    z[K] = math.cos(math.pi / (4 * K)) ** 2
    return z


def init(horizon, params, adversary=None):
    K = int(params["k"])
    z = grid(K)
    n = K + 1
    return KLState(z, np.zeros(n), np.zeros(n), np.zeros((n, n)), np.zeros(n)), z


@kernel(inline="always")
def rounding_row(z, w, R, i):
    """Row i of R: w rounded onto its neighbours on the grid z (weights u, v above)."""
    n = z.shape[0]
    if w < z[0]:
        R[i, 0] = 1.0
        return
    if w >= z[n - 1]:
        R[i, n - 1] = 1.0
        return
    lo = 0
    hi = n - 1  # z[lo] <= w < z[hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if z[mid] <= w:
            lo = mid
        else:
            hi = mid
    zl = z[lo]
    zh = z[hi]
    u = (zh - w) / (zh * (1.0 - zh))
    v = (w - zl) / (zl * (1.0 - zl))
    R[i, lo] = u / (u + v)
    R[i, hi] = v / (u + v)


@kernel(inline="always")
def stationary(R, P):
    """A stationary distribution of the stochastic matrix R (P R = P) into P, by GTH
    elimination from the last state down (R is overwritten). At a state m that cannot move to
    a lower one in the censored chain (sum_{j<m} R[m, j] = 0) the elimination stops and P is
    the point mass at m extended upwards: the closed class with the largest least element."""
    n = R.shape[0]
    start = 0
    for m in range(n - 1, 0, -1):
        s = 0.0
        for j in range(m):
            s += R[m, j]
        if s <= 0.0:
            start = m
            break
        for i in range(m):
            f = R[i, m]
            if f != 0.0:
                f = f / s
                R[i, m] = f
                for j in range(m):
                    R[i, j] += f * R[m, j]
    for j in range(n):
        P[j] = 0.0
    P[start] = 1.0
    total = 1.0
    for j in range(start + 1, n):
        acc = 0.0
        for i in range(start, j):
            acc += P[i] * R[i, j]
        P[j] = acc
        total += acc
    for j in range(n):
        P[j] = P[j] / total


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    z, a, b, R = st.z, st.a, st.b, st.R
    n = z.shape[0]
    for i in range(n):
        for j in range(n):
            R[i, j] = 0.0
    for i in range(n):
        rounding_row(z, (a[i] + 1.0) / (a[i] + b[i] + 2.0), R, i)
    stationary(R, st.P)
    for i in range(n):
        out.points[i] = z[i]
        out.probs[i] = st.P[i]
        out.buckets[i] = i


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    for i in range(st.z.shape[0]):
        p = out.probs[i]
        if y == 1:
            st.a[i] += p
        else:
            st.b[i] += p


# _nrt=False: the loop allocates nothing (as cdl's and ftpl's loops)
@kernel(_nrt=False)
def simulate(T, st, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y):
    for t in range(T):
        forecast(st, table, hist, out)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(st, table, hist, out, slot, y)
        hist = settle(table, out, slot, y, hist)
    return hist


def resolve(params, T):
    even = params.get("even", 1)
    if even not in (0, 1) or isinstance(even, bool):
        raise ValidationError("even", "must be 0 or 1", value=even)
    if "k" in params:
        if "even" in params:
            raise ValidationError("even", "applies to the default k only; give k or even, not both")
        return {"k": check_int(params["k"], "k", low=2)}
    k = default_k(T)
    return {"k": k + (k % 2) if even else k}


FORECASTER = ForecasterSpec(
    "klcal",
    init,
    forecast,
    observe,
    params={"k": None, "even": 1},
    version=2,
    resolve=resolve,
    loop=simulate,
    doc=__doc__,
    support=lambda resolved: int(resolved["k"]) + 1,
)
