"""l2cal: the pseudo l2-calibration forecaster of Fishelson, Kleinberg, Okoroafor, Paes Leme,
Schneider and Teng 2025 (docs/l2cal.md).

Their Algorithm 1 (Blum and Mansour's swap-regret reduction over a discretization K_eps of
K = [0, 1]) with the squared loss l_t(p) = (p - y_t)^2, as the proof of their Theorem 4 sets it
up. The grid K_eps = {s_0, ..., s_k}, s_i = i eps, eps = 1/k, k = max(2, ceil(T^(1/3))) (their
eps = T^(-1/3), with 1/eps rounded up to an integer). One expert per grid point s_i: an instance
of their Algorithm 3 (online gradient descent for alpha-strongly convex losses; alpha = 2 for the
squared loss) with recommendation q_i in [0, 1] (1/2 at first) and cumulative scale G_i. Each
round:

1. row i of a row-stochastic matrix Q is H(q_i), their Algorithm 4 in one dimension: with
   s_j <= q_i < s_{j+1}, weight (s_{j+1} - q_i) / eps on s_j and (q_i - s_j) / eps on
   s_{j+1} (the mean is q_i; q_i = 1 goes to s_k);
2. x = a stationary distribution of Q (x Q = x), by klcal's GTH elimination
   (:func:`fastcdl.online.forecasters.klcal.stationary`);
3. state s_j with probability x(j); observe y;
4. each expert i sees the loss l_t scaled by g_i = x(i): G_i += g_i,
   eta_i = 1 / (alpha max(G_i, 1)), q_i <- Pi_[0,1](q_i - eta_i g_i 2 (q_i - y)).

Pseudo l2-calibration, sum_j W_j (rho_j - s_j)^2 over the expected-count table
(``pseudo_k2`` times T), is the full swap regret of the squared loss (their Lemma 26), which the
reduction splits into the experts' scaled external regrets plus the rounding's cost, at most
eps^2 / 4 a round: O(T^(1/3) log T) in sum. Every grid point is a slot (support k + 1,
docs/engine.md). Cost per round: O(k) for the experts, O(k^2) to clear and fill Q, O(k^2) to
O(k^3) for the elimination (its fill-in); memory O(k^2).

>>> FORECASTER.resolve_params({}, 4096), FORECASTER.resolve_params({}, 2**16)
({'k': 16}, {'k': 41})
"""

from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_int
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters._grid import grid
from fastcdl.online.forecasters.klcal import stationary
from fastcdl.online.plugins import ForecasterSpec, icbrt_up

#: alpha, the strong convexity of the squared loss (p - y)^2 in p (Algorithm 3's step size)
ALPHA = 2.0

L2State = namedtuple("L2State", ["grid", "q", "G", "Q", "x"])


def default_k(T):
    """k = max(2, ceil(T^(1/3))): the paper's eps = T^(-1/3) with 1/eps an integer, at least 2.

    >>> default_k(1), default_k(9), default_k(1000), default_k(1001)
    (2, 3, 10, 11)
    """
    return max(2, icbrt_up(T))


def init(horizon, params, adversary=None):
    k = int(params["k"])
    n = k + 1
    s = grid(k)
    return L2State(s, np.full(n, 0.5), np.zeros(n), np.zeros((n, n)), np.zeros(n)), s


@kernel(inline="always")
def rounding_row(s, q, Q, i):
    """Row i of Q: H(q), q rounded onto its two neighbours s_j <= q < s_{j+1} of the grid s with
    mean q (from s_k on: s_k). Only the two entries are written. O(log k).

    >>> import numpy as np
    >>> Q = np.zeros((5, 5))
    >>> rounding_row(np.arange(5) / 4, 0.3, Q, 0)
    >>> Q[0].round(12).tolist()
    [0.0, 0.8, 0.2, 0.0, 0.0]
    """
    n = s.shape[0]
    if q >= s[n - 1]:
        Q[i, n - 1] = 1.0
        return
    lo = 0
    hi = n - 1  # s[lo] <= q < s[hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if s[mid] <= q:
            lo = mid
        else:
            hi = mid
    width = s[hi] - s[lo]
    Q[i, lo] = (s[hi] - q) / width
    Q[i, hi] = (q - s[lo]) / width


@kernel(inline="always")
def ogd_step(q, G, g, y):
    """Algorithm 3's step for the squared loss (q - y)^2 scaled by g: (q, G) after the round.
    G += g; eta = 1 / (alpha max(G, 1)); q <- Pi_[0,1](q - eta g 2 (q - y)). O(1).

    >>> ogd_step(0.5, 0.0, 1.0, 1), ogd_step(0.5, 1.0, 1.0, 0)
    ((1.0, 1.0), (0.25, 2.0))
    """
    G = G + g
    eta = 1.0 / (ALPHA * max(G, 1.0))
    q = q - eta * g * 2.0 * (q - y)
    return min(max(q, 0.0), 1.0), G


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    s, q, Q = st.grid, st.q, st.Q
    n = s.shape[0]
    for i in range(n):
        for j in range(n):
            Q[i, j] = 0.0
    for i in range(n):
        rounding_row(s, q[i], Q, i)
    stationary(Q, st.x)
    for i in range(n):
        out.points[i] = s[i]
        out.probs[i] = st.x[i]
        out.buckets[i] = i


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    for i in range(st.q.shape[0]):
        qi, Gi = ogd_step(st.q[i], st.G[i], out.probs[i], y)
        st.q[i] = qi
        st.G[i] = Gi


# _nrt=False: the loop allocates nothing (as klcal's and cdl's loops)
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
    if "k" in params:
        return {"k": check_int(params["k"], "k", low=2)}
    return {"k": default_k(T)}


FORECASTER = ForecasterSpec(
    "l2cal",
    init,
    forecast,
    observe,
    params={"k": None},
    version=1,
    resolve=resolve,
    loop=simulate,
    doc=__doc__,
    grid=lambda resolved: int(resolved["k"]),
    support=lambda resolved: int(resolved["k"]) + 1,
)
