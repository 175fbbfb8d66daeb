"""sign: Algorithm 1 with the expert weights replaced by their signs, c_i = sign(G_i) (an ablation).

The grid, delta and stated values are cdl's (docs/algorithm1.md): m buckets
I_b = (b/m, (b+1)/m] (I_0 closed, 0-based), stated value (b+1)/m, and per bucket the bias
G_b = sum of g = ptilde - y over the rounds whose raw point fell in I_b. Step 1 is cdl's
two-point rule on c_b = sign(G_b): say 0 if G_0 >= 0, 1 if G_{m-1} <= 0, the right end of
bucket lo+1 if G_{lo+1} = 0, and otherwise, with G_lo < 0 < G_{lo+1} (bisection),
ptilde = (lo+1)/m with probability r = c_hi / (c_hi - c_lo) = 1/2 and (lo+1)/m + delta
with probability 1/2. No expert algorithm: what is left of Algorithm 1 when the weights
carry only their signs, which shows what the MsMwC weights' magnitudes buy.
Cost O(log m) per round, memory O(m).

>>> FORECASTER.resolve_params({"m": 8}, 1000)
{'m': 8, 'delta': 0.001}
>>> from fastcdl.online import make_forecaster
>>> f = make_forecaster("sign", horizon=1000, m=4)
>>> f.forecast().points, f.draw()
((0.0,), 0.25)
"""

from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import add_to_bias, boundary_points, drawn_numerator, exact_bias, step1_point_mass
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters.cdl import resolve_grid
from fastcdl.online.plugins import ForecasterSpec

SignState = namedtuple("SignState", ["G", "delta", "eb"])


def init(horizon, params, adversary=None):
    """(state, q) of a fresh run: G = 0, the stated values (b+1)/m."""
    m = params["m"]
    return SignState(np.zeros(m), float(params["delta"]), exact_bias(m)), np.arange(1, m + 1) / m


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    """Step 1 on c = sign(G): the point masses of cdl's rule, or the boundary points half and half."""
    lo, done = step1_point_mass(st.eb.sign, out.points, out.probs, out.buckets)
    if not done:
        boundary_points(lo, st.G.shape[0], st.delta, 0.5, out.points, out.probs, out.buckets)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    """G_b += ptilde - y for the drawn bucket b (and exactly, for the signs)."""
    b = out.buckets[slot]
    a, e = drawn_numerator(out, slot)
    add_to_bias(st.eb, b, a, e, y, st.G.shape[0], st.delta)
    st.G[b] += out.points[slot] - y


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


def _grid_m(resolved):
    """m: the stated values are j/m."""
    return resolved["m"]


FORECASTER = ForecasterSpec(
    "sign",
    init,
    forecast,
    observe,
    params={"m": None, "m_scale": 1.0, "delta": None},
    version=2,
    resolve=lambda params, T: resolve_grid(params, T),
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
)
