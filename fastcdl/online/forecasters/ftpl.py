"""ftpl: follow the perturbed leader for U-calibration (Kleinberg, Paes Leme, Schneider and
Teng 2023; Luo, Senapati and Sharan 2024; docs/ftpl.md), on the grid j/m, j = 0..m.

The leader of every proper loss over the rounds so far is the frequency f = ones / t of
y = 1 (1/2 before any round). The forecast perturbs it by a uniform of width one grid cell,
f + U with U ~ Uniform[-1/(2m), 1/(2m)), and states the nearest grid point: with
k = floor(f m) that is k/m with probability k + 1 - f m and (k + 1)/m with probability
f m - k (a point mass when f m is whole). The probabilities are ratios of integers
(n m - k t over t), each rounded once; exact while t m < 2^63. m = max(2, ceil(sqrt(T /
ln T))) by default (m = 2 for T < 3). Cost per round: O(1), no state beyond the history.

>>> FORECASTER.resolve_params({}, 2**16)
{'m': 77}
"""

import math
from collections import namedtuple

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import point_mass
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters._grid import grid, resolve_m
from fastcdl.online.plugins import ForecasterSpec

FTPLState = namedtuple("FTPLState", ["m"])


def default_m(T):
    """max(2, ceil(sqrt(T / ln T))): balances the perturbation's cost (T/m) against the
    leader's moves across a threshold (m ln T); 2 for T < 3."""
    if T < 3:
        return 2
    return max(2, math.ceil(math.sqrt(T / math.log(T))))


def init(horizon, params, adversary=None):
    return FTPLState(int(params["m"])), grid(params["m"])


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    m = st.m
    if hist.t == 0:  # f = 1/2: f m = m / 2
        num = m
        den = 2
    else:  # f m = ones m / t
        num = hist.ones * m
        den = hist.t
    k = num // den
    r = num - k * den  # f m = k + r / den
    if r == 0:
        point_mass(table.q[k], k, out.points, out.probs, out.buckets)
        return
    out.points[0] = table.q[k]
    out.points[1] = table.q[k + 1]
    out.probs[0] = (den - r) / den
    out.probs[1] = r / den
    out.buckets[0] = k
    out.buckets[1] = k + 1


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    pass  # the leader is the history's frequency, which the engine keeps


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
    "ftpl",
    init,
    forecast,
    observe,
    params={"m": None},
    version=1,
    resolve=lambda params, T: resolve_m(params, T, default_m(T)),
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
)
