"""foster: the classic calibration forecaster (Foster 1999) on the grid j/m, j = 0..m,
m = ceil(T^(1/3)) by default. With B_j = j n_j / m - s_j the bias of grid point j: say 0 if
B_0 >= 0, 1 if B_m <= 0, else mix adjacent points lo, hi with B_lo < 0 <= B_hi (found by
bisection, O(log m)), probability B_hi / (B_hi - B_lo) on lo, so that the weighted sum of
the two biases is zero.

>>> FORECASTER.resolve_params({}, 1000)
{'m': 10}
"""

from collections import namedtuple

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import point_mass
from fastcdl.online.engine import not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters._grid import grid, resolve_m
from fastcdl.online.plugins import ForecasterSpec, icbrt_up

FosterState = namedtuple("FosterState", ["m"])


def init(horizon, params, adversary=None):
    return FosterState(int(params["m"])), grid(params["m"])


@kernel
def bias_sign(j, n, s, m):
    """m times the bias of grid point j, exactly: j n_j - m s_j (its sign is the bias's)."""
    return j * n[j] - m * s[j]


@kernel(inline="always")
def foster_rule(q, n, s, m, out):
    """Foster's rule on the counts n_j and outcomes s_j of the grid points q_j = j/m, into out:
    0 if B_0 >= 0, 1 if B_m <= 0, else the adjacent pair lo, hi with B_lo < 0 <= B_hi mixed so
    that the expected bias is zero. O(log m)."""
    if bias_sign(0, n, s, m) >= 0:
        point_mass(q[0], 0, out.points, out.probs, out.buckets)
        return
    if bias_sign(m, n, s, m) <= 0:
        point_mass(q[m], m, out.points, out.probs, out.buckets)
        return
    lo = 0
    hi = m
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bias_sign(mid, n, s, m) < 0:
            lo = mid
        else:
            hi = mid
    b_hi = bias_sign(hi, n, s, m)
    if b_hi == 0:
        point_mass(q[hi], hi, out.points, out.probs, out.buckets)
        return
    b_lo = bias_sign(lo, n, s, m)
    out.points[0] = q[lo]
    out.points[1] = q[hi]
    out.probs[0] = b_hi / (b_hi - b_lo)
    out.probs[1] = 1.0 - out.probs[0]
    out.buckets[0] = lo
    out.buckets[1] = hi


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    foster_rule(table.q, table.n, table.s, st.m, out)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    pass  # the public table, which the engine keeps, is the whole state


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
    "foster",
    init,
    forecast,
    observe,
    params={"m": None},
    version=1,
    resolve=lambda params, T: resolve_m(params, T, icbrt_up(T)),
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
)
