"""dyadic: instance-adaptive online calibration on dynamic dyadic bins (Roth, Zhang, Morgenstern
and Huang 2026, arXiv 2605.09273), its marginal case: a forecaster of P(y = 1) (docs/dyadic.md).

Only the paper's abstract, the opening of its introduction and its contents (section and lemma
titles) could be read; the rules below are this module's reading of them, with AdaNormalHedge as
published (docs/dyadic.md says which parts are chosen and why).

The bins are the leaves of a tree of dyadic intervals of [0, 1], grown as rounds come: the root
[0, 1] at first; an interval I at depth d (width 2^-d) is split into its two halves once it has
been played theta_d = ceil(split 4^d) times while a leaf (split = 1 by default): the count at
which n |I|, the most its width can add to its bias, reaches sqrt(n), the scale of its
experts' regret. Each leaf I
states its midpoint and carries two sleeping experts, "up" (the outcomes run above I's value)
and "down", awake in the rounds in which I is played; they learn by AdaNormalHedge (Luo and
Schapire 2015) with the confidence-rated (sleeping) update: R and C, the sums of the expert's
instantaneous regrets and of their absolute values, weight w(R, C) = (Phi(R + 1, C + 1) -
Phi(R - 1, C + 1)) / 2 with Phi(R, C) = exp([R]_+^2 / 3C), and lean_I = pi_up - pi_down, the
difference of the awake pair's probabilities (0 when both weights are 0). Each round:

1. weighted feasibility: scan the leaves left to right for the first I_k with lean <= 0.
   None: state the last leaf's midpoint. I_k the first leaf: state its midpoint. Otherwise
   I_{k-1} leans up (lean > 0) and I_k down: state the midpoint m_{k-1} with probability
   lambda = -lean_k / (lean_{k-1} - lean_k) and m_k with 1 - lambda: whatever y is, the
   expected lean-weighted bias E[lean_I (y - p)] is then lambda lean_{k-1} (m_k - m_{k-1}), at
   most the distance of the two midpoints (the step the paper's Lemma 1, "weighted
   feasibility", is named after);
2. the drawn leaf I's experts observe g = y - p: losses (1 - g) / 2 (up) and (1 + g) / 2
   (down), regrets against their pair's expected loss, R and C updated, lean_I recomputed;
3. n_I += 1; at n_I = theta_d (and d below the deepest level D) I splits: it sleeps from then
   on and its halves start as fresh leaves (R = C = 0, lean 0).

The stated values are j / 2^(D+1) (j = 0..2^(D+1); the ends are never stated), D the smallest
depth whose threshold exceeds T (at most 19; ``depth`` gives another). The leaves are found in
the tree itself (each node knows whether a leaf below it leans down), so a round costs O(D) =
O(log T): a descent, a climb, a few logarithms and exponentials; memory O(2^D) = O(sqrt(T /
split)) for the tree and the table of stated values. Where the paper could not be read and what
was chosen: docs/dyadic.md.

>>> FORECASTER.resolve_params({}, 10**6), FORECASTER.grid_m({}, 10**6)
({'split': 1.0, 'depth': 10}, 2048)
>>> from fastcdl.online import make_forecaster
>>> f = make_forecaster("dyadic", horizon=1000)
>>> f.forecast().predictions, f.draw()  # the root [0, 1] states 1/2
((0.5,), 0.5)
>>> f.observe(1); f.forecast().predictions  # [0, 1] has split; its fresh left half is tried first
(0.25,)
"""

import math
from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int, check_real
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.plugins import ForecasterSpec

MAX_DEPTH = 19  # 2^20 stated values at most: the table keeps its exact fractions (den <= 2^20)
UNBORN, LEAF, SPLIT = 0, 1, 2  # a node's kind: not yet created, an active interval, split

# Node k of the heap-ordered tree (k >= 1; children 2k and 2k + 1) is the dyadic interval
# [pos 2^-d, (pos + 1) 2^-d), d = depth[k], pos = k - 2^d; mid[k] its midpoint, bucket[k] the
# midpoint's index among the stated values j / 2^(D+1). R_up, C_up, R_down, C_down: AdaNormalHedge's
# sums for the node's two experts; lean = pi_up - pi_down; n: rounds played while a leaf;
# low[k]: some leaf in k's subtree has lean <= 0; theta[d]: the split threshold at depth d;
# played: the nodes of this round's two slots.
DyadicState = namedtuple(
    "DyadicState",
    ["kind", "depth", "mid", "bucket", "R_up", "C_up", "R_down", "C_down", "lean", "n", "low", "theta", "played"],
)


def threshold(d, split):
    """theta_d = max(1, ceil(split 4^d)), the rounds a depth-d leaf is played before it splits
    (at most 2^62, more rounds than any run has)."""
    x = split * 4.0**d
    return 2**62 if x >= 2.0**62 else max(1, math.ceil(x))


def default_depth(T, split):
    """D, the smallest depth d with theta_d > T: no leaf at depth D can split (at most MAX_DEPTH)."""
    d = 0
    while d < MAX_DEPTH and threshold(d, split) <= T:
        d += 1
    return d


def init(horizon, params, adversary=None):
    """The state with the root [0, 1] as the only leaf, and the stated values j / 2^(D+1),
    j = 0..2^(D+1). O(2^D) time and memory."""
    D = int(params["depth"])
    nodes = 2 ** (D + 1)  # 1..2^(D+1) - 1; index 0 unused
    depth = np.zeros(nodes, dtype=np.int64)
    for d in range(D + 1):
        depth[2**d : 2 ** (d + 1)] = d
    pos = np.arange(nodes) - 2**depth
    bucket = (2 * pos + 1) * 2 ** (D - depth)
    bucket[0] = 0
    m = 2 ** (D + 1)
    q = np.arange(m + 1) / m
    kind = np.full(nodes, UNBORN, dtype=np.int8)
    kind[1] = LEAF
    low = np.zeros(nodes, dtype=np.bool_)
    low[1] = True  # the root's lean is 0
    theta = np.array([threshold(d, params["split"]) for d in range(D + 1)], dtype=np.int64)
    zeros = np.zeros(nodes)
    st = DyadicState(
        kind,
        depth,
        q[bucket],
        bucket,
        zeros.copy(),
        zeros.copy(),
        zeros.copy(),
        zeros.copy(),
        zeros.copy(),
        np.zeros(nodes, dtype=np.int64),
        low,
        theta,
        np.ones(2, dtype=np.int64),
    )
    return st, q


@kernel(inline="always")
def log_weight(R, C):
    """ln w(R, C), AdaNormalHedge's weight w = (Phi(R + 1, C + 1) - Phi(R - 1, C + 1)) / 2 with
    Phi(R, C) = exp([R]_+^2 / 3C); -inf where w = 0 (R <= -1). In logarithms, so that an expert
    far ahead does not overflow."""
    if R <= -1.0:
        return -np.inf
    a = (R + 1.0) ** 2 / (3.0 * (C + 1.0))
    b = max(R - 1.0, 0.0) ** 2 / (3.0 * (C + 1.0))
    return a + math.log(-math.expm1(b - a)) - math.log(2.0)


@kernel(inline="always")
def lean_of(R_up, C_up, R_down, C_down):
    """pi_up - pi_down = (w_up - w_down) / (w_up + w_down) of an awake pair; 0 when both
    weights are 0 (AdaNormalHedge then plays any distribution; here the uniform one)."""
    lu = log_weight(R_up, C_up)
    ld = log_weight(R_down, C_down)
    if lu == -np.inf and ld == -np.inf:
        return 0.0
    return math.tanh(0.5 * (lu - ld))


@kernel(inline="always")
def first_low_leaf(st):
    """The leftmost leaf with lean <= 0, or 0 when every leaf leans up. O(D)."""
    if not st.low[1]:
        return 0
    k = 1
    while st.kind[k] == SPLIT:
        k = 2 * k if st.low[2 * k] else 2 * k + 1
    return k


@kernel(inline="always")
def leaf_before(st, k):
    """The leaf just left of leaf k, or 0 when k is the leftmost. O(D)."""
    j = k
    while j > 1 and j % 2 == 0:
        j //= 2
    if j == 1:
        return 0
    j -= 1
    while st.kind[j] == SPLIT:
        j = 2 * j + 1
    return j


@kernel(inline="always")
def last_leaf(st):
    """The rightmost leaf. O(D)."""
    k = 1
    while st.kind[k] == SPLIT:
        k = 2 * k + 1
    return k


@kernel(inline="always")
def mark_low(st, k):
    """low[] on the path from node k up to the root, after k's lean or children changed. O(D)."""
    if st.kind[k] == LEAF:
        st.low[k] = st.lean[k] <= 0.0
    else:
        st.low[k] = st.low[2 * k] or st.low[2 * k + 1]
    j = k // 2
    while j >= 1:
        st.low[j] = st.low[2 * j] or st.low[2 * j + 1]
        j //= 2


@kernel(inline="always")
def state_leaf(st, out, s, k, p):
    out.points[s] = st.mid[k]
    out.probs[s] = p
    out.buckets[s] = st.bucket[k]
    st.played[s] = k


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    """Weighted feasibility: a point mass, or two adjacent leaves mixed so that the lean-weighted
    bias is at least 0 in expectation for either outcome. O(D)."""
    k = first_low_leaf(st)
    h = 0
    if k == 0:
        k = last_leaf(st)
    elif st.lean[k] < 0.0:
        h = leaf_before(st, k)
    if h == 0:
        state_leaf(st, out, 0, k, 1.0)
        state_leaf(st, out, 1, k, 0.0)
        return
    lam = -st.lean[k] / (st.lean[h] - st.lean[k])
    state_leaf(st, out, 0, h, lam)
    state_leaf(st, out, 1, k, 1.0 - lam)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    """AdaNormalHedge's sleeping-experts step for the drawn leaf's pair, then its count and
    split. O(D)."""
    k = st.played[slot]
    g = y - out.points[slot]
    loss_up = 0.5 * (1.0 - g)
    loss_down = 0.5 * (1.0 + g)
    lean = st.lean[k]
    expected = 0.5 * (1.0 + lean) * loss_up + 0.5 * (1.0 - lean) * loss_down
    r_up = expected - loss_up
    r_down = expected - loss_down
    st.R_up[k] += r_up
    st.C_up[k] += abs(r_up)
    st.R_down[k] += r_down
    st.C_down[k] += abs(r_down)
    st.lean[k] = lean_of(st.R_up[k], st.C_up[k], st.R_down[k], st.C_down[k])
    st.n[k] += 1
    d = st.depth[k]
    if d < st.theta.shape[0] - 1 and st.n[k] >= st.theta[d]:
        st.kind[k] = SPLIT
        for c in (2 * k, 2 * k + 1):
            st.kind[c] = LEAF
            st.low[c] = True
    mark_low(st, k)


# _nrt=False: the loop allocates nothing (as cdl's and klcal's loops)
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
    split = check_real(params.get("split", 1.0), "split", 0.0, low_open=True)
    depth = params.get("depth")
    if depth is None:
        return {"split": split, "depth": default_depth(T, split)}
    depth = check_int(depth, "depth", low=0)
    if depth > MAX_DEPTH:
        raise ValidationError("depth", f"must be <= {MAX_DEPTH} (2^{MAX_DEPTH + 1} stated values)", value=depth)
    return {"split": split, "depth": depth}


def _grid_m(resolved):
    """m: the stated values are j/m, m = 2^(depth + 1)."""
    return 2 ** (int(resolved["depth"]) + 1)


FORECASTER = ForecasterSpec(
    "dyadic",
    init,
    forecast,
    observe,
    params={"split": 1.0, "depth": None},
    version=1,
    resolve=resolve,
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
)
