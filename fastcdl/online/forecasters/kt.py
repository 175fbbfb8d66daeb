"""kt: Algorithm 1's step 1 with one Krichevsky-Trofimov coin-bettor per bucket in place of
the MsMwC weights (docs/algorithm1.md): c_b = beta_b W_b with beta_b = G_b / (n_b + 1) and
wealth W_b (starting at 1/m) updated W_b <- W_b (1 + beta_b g) when bucket b is drawn.
The same grid and delta as cdl; cheaper; a cross-check of the MsMwC forecaster.

>>> FORECASTER.resolve_params({"m": 8}, 1000)
{'m': 8, 'delta': 0.001}
"""

import math
from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import add_to_bias, boundary_points, drawn_numerator, exact_bias, step1_point_mass
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters.cdl import resolve_grid
from fastcdl.online.plugins import ForecasterSpec

# logW: ln W_b; logc: ln|c_lo|, ln c_hi of the last mixed step (NaN otherwise)
KTState = namedtuple("KTState", ["G", "logW", "logc", "delta", "eb"])


def init(horizon, params, adversary=None):
    m = params["m"]
    st = KTState(np.zeros(m), np.full(m, -math.log(m)), np.full(2, math.nan), float(params["delta"]), exact_bias(m))
    return st, np.arange(1, m + 1) / m


@kernel
def logc(b, st, n):
    """ln|c_b| = ln|G_b| - ln(n_b + 1) + ln W_b."""
    return math.log(abs(st.G[b])) - math.log(n[b] + 1.0) + st.logW[b]


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    m = st.G.shape[0]
    st.logc[0] = np.nan
    st.logc[1] = np.nan
    lo, done = step1_point_mass(st.eb.sign, out.points, out.probs, out.buckets)
    if not done:
        st.logc[0] = logc(lo, st, table.n)
        st.logc[1] = logc(lo + 1, st, table.n)
        boundary_points(
            lo, m, st.delta, 1.0 / (1.0 + math.exp(st.logc[0] - st.logc[1])), out.points, out.probs, out.buckets
        )


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    """W_b <- W_b (1 + beta_b g), beta_b = G_b / (n_b + 1) before the update; then G_b += g."""
    b = out.buckets[slot]
    a, e = drawn_numerator(out, slot)
    add_to_bias(st.eb, b, a, e, y, st.G.shape[0], st.delta)
    g = out.points[slot] - y
    st.logW[b] += math.log1p(st.G[b] / (table.n[b] + 1.0) * g)
    st.G[b] += g


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
    "kt",
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
