"""frequency: states the grid point nearest to the running mean of y (1/2 before any round);
grid j/m, j = 0..m, m = max(2, ceil(sqrt T)) by default. Natural, and not calibrated
under attack: a baseline.

>>> FORECASTER.resolve_params({}, 100)
{'m': 10}
"""

from collections import namedtuple

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import point_mass
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters._grid import default_sqrt, grid, resolve_m
from fastcdl.online.plugins import ForecasterSpec

FrequencyState = namedtuple("FrequencyState", ["m"])


def init(horizon, params, adversary=None):
    return FrequencyState(int(params["m"])), grid(params["m"])


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    m = st.m
    t = hist.t
    # nearest grid point to ones / t, ties upward, in integers: floor((2 ones m + t) / 2t)
    j = (m + 1) // 2 if t == 0 else (2 * hist.ones * m + t) // (2 * t)
    j = min(max(j, 0), m)
    point_mass(table.q[j], j, out.points, out.probs, out.buckets)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    pass  # the history, which the engine keeps, is the whole state


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
    "frequency",
    init,
    forecast,
    observe,
    params={"m": None},
    version=1,
    resolve=lambda params, T: resolve_m(params, T, default_sqrt(T)),
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
    point_mass=True,
)
