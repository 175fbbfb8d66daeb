"""acrs: the deterministic Almost-One-Step-Ahead forecaster of Arunachaleswaran, Collina, Roth
and Shi (2024/2025, "An Elementary Predictor Obtaining 2 sqrt(T) + 1 Distance to
Calibration", arXiv 2402.11410), whose distance to calibration is at most T/m + m + 1
against every adversary (2 sqrt(T) + 1 at m = sqrt(T)).

Grid p_j = j/m, j = 0..m (the stated values; m = ceil(sqrt T) by default). Beside the
stated predictions p_t the forecaster keeps a *shadow* sequence ptilde_t, the prediction
that the One-Step-Ahead forecaster (which sees y_t first) would have made, and its bias per
grid point, alpha_j = sum over past rounds with ptilde_s = p_j of (p_j - y_s) =
(j n~_j - m s~_j) / m (n~_j rounds, s~_j of them with y = 1; the sign is computed exactly,
in integers). Each round:

1. i = the smallest index in 0..m-1 with alpha_i <= 0 <= alpha_{i+1}. One exists: alpha_0 <= 0
   and alpha_m >= 0 always.
2. State p_t = p_i (pick="lower", the default) or p_{i+1} (pick="upper"), a point mass: no
   randomness. (The paper lets the choice between the two be arbitrary.)
3. After y_t: ptilde_t = the one of p_i, p_{i+1} nearer to y_t (p_{i + y_t}), added to its
   shadow bias.

The step keeps |alpha_j| <= 1 for every j (alpha_i in [-1, 0] gains p_i - 0 in [0, 1];
alpha_{i+1} in [0, 1] gains p_{i+1} - 1 in [-1, 0]), so the shadow sequence has ECE * T =
sum_j |alpha_j| <= m + 1; the stated sequence is within 1/m of it in every round, and the
distance to calibration (the l1 distance from (p_t) to the nearest perfectly calibrated
sequence on the same outcomes) is at most T/m + m + 1 by the triangle inequality and
dCE <= ECE. The guarantee is for the stated predictions' distance to calibration, not their
ECE. Cost O(log m) per round (the smallest bracket is found in a segment tree of the
bracket flags), memory O(m).

>>> FORECASTER.resolve_params({}, 10**6)
{'m': 1000, 'pick': 'lower'}
>>> from fastcdl.online import make_forecaster
>>> f = make_forecaster("acrs", horizon=100)  # m = 10
>>> f.draw()
0.0
>>> f.observe(1)  # the shadow said 1/10 and was 0.9 too low: alpha_1 = -0.9
>>> f.draw()
0.1
"""

from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import point_mass
from fastcdl._validate import ValidationError
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters._grid import grid, resolve_m
from fastcdl.online.plugins import ForecasterSpec, isqrt_up

# n, s: the shadow table (rounds whose shadow prediction was p_j, and how many had y = 1);
# tree: a segment tree (leaves at P + i, P a power of two >= m) counting the i with
# alpha_i <= 0 <= alpha_{i+1}; upper: 1 for pick="upper"
AcrsState = namedtuple("AcrsState", ["n", "s", "tree", "m", "upper"])


def init(horizon, params, adversary=None):
    """(state, q) of a fresh run: an empty shadow table (every i a bracket), q = j/m."""
    m = int(params["m"])
    P = 1
    while P < m:
        P *= 2
    tree = np.zeros(2 * P, dtype=np.int64)
    tree[P : P + m] = 1  # alpha = 0 everywhere: every i is a bracket
    for k in range(P - 1, 0, -1):
        tree[k] = tree[2 * k] + tree[2 * k + 1]
    st = AcrsState(
        np.zeros(m + 1, dtype=np.int64), np.zeros(m + 1, dtype=np.int64), tree, m, 1 if params["pick"] == "upper" else 0
    )
    return st, grid(m)


@kernel
def bias_sign(st, j):
    """m alpha_j = j n~_j - m s~_j, exactly (its sign is alpha_j's)."""
    return j * st.n[j] - st.m * st.s[j]


@kernel
def _set_flag(st, i):
    """Leaf i of the tree = [alpha_i <= 0 <= alpha_{i+1}], and the counts above it."""
    P = st.tree.shape[0] // 2
    flag = 1 if bias_sign(st, i) <= 0 and bias_sign(st, i + 1) >= 0 else 0
    k = P + i
    if st.tree[k] == flag:
        return
    d = flag - st.tree[k]
    while k >= 1:
        st.tree[k] += d
        k //= 2


@kernel
def bracket(st):
    """The smallest i with alpha_i <= 0 <= alpha_{i+1}, O(log m)."""
    P = st.tree.shape[0] // 2
    k = 1
    while k < P:
        k = 2 * k if st.tree[2 * k] > 0 else 2 * k + 1
    return k - P


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    """The point mass p_i (or p_{i+1} for pick="upper") of the smallest bracket i."""
    j = bracket(st) + st.upper
    point_mass(table.q[j], j, out.points, out.probs, out.buckets)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    """The shadow prediction p_{i + y} joins the shadow table; the brackets next to it are updated."""
    j = out.buckets[slot] - st.upper + y  # the bracket i of this round's forecast, plus y
    st.n[j] += 1
    st.s[j] += y
    if j >= 1:
        _set_flag(st, j - 1)
    if j < st.m:
        _set_flag(st, j)


# _nrt=False: the loop allocates nothing; without numba's reference counting it does not take and
# release a reference to every state array each round (as cdl's loop)
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
    """m (default ceil(sqrt T)), pick ("lower" | "upper")."""
    out = resolve_m(params, T, isqrt_up(T))
    pick = params.get("pick", "lower")
    if pick not in ("lower", "upper"):
        raise ValidationError("pick", "must be 'lower' or 'upper'", value=pick)
    out["pick"] = pick
    return out


def _grid_m(resolved):
    """m: the stated values are j/m."""
    return resolved["m"]


FORECASTER = ForecasterSpec(
    "acrs",
    init,
    forecast,
    observe,
    params={"m": None, "pick": "lower"},
    version=1,
    resolve=resolve,
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
    point_mass=True,
)
