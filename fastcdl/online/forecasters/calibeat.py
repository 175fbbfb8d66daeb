"""calibeat: Foster and Hart's calibeating (2023) with Foster's calibrated forecaster in each bin
of the external forecast (docs/calibeating.md). The calibeating game: before each round the
environment states another forecaster's prediction b_t, and this forecaster sees it.

The rounds are split by the bin of b_t, k = min(floor(bins b_t), bins - 1); in each bin an
independent copy of Foster's (1999) forecaster on the grid j/m runs on that bin's own counts
n_kj and outcomes s_kj (the ``foster`` forecaster's rule: say 0 if bin k's bias B_k0 >= 0, 1 if
B_km <= 0, else mix the adjacent pair whose biases change sign so that the expected bias is 0,
B_kj = j n_kj / m - s_kj). Each bin's forecasts are calibrated, so the whole sequence is (its ECE
is at most the sum of the bins'); and a calibrated forecast in a bin scores, in Brier, at most
the variance of y there plus o(1): the forecaster's Brier score approaches the refinement of b,
REF(b) = Brier(b) - CAL(b), gaining b's miscalibration (Foster and Hart's calibeating). With
``bins`` at least the number of values b takes (10 in the ``informed`` environment), the
bins are b's own values.

Stated values j/m, j = 0..m, m = ceil(T^(1/3)) by default; O(log m) per round, memory
O(bins m).

>>> FORECASTER.resolve_params({}, 1000)
{'m': 10, 'bins': 10}
"""

from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_int
from fastcdl.online.engine import bad_mean, mean_stopped, not_outcome, play_round, settle, stopped
from fastcdl.online.external import note_external
from fastcdl.online.forecasters._grid import grid, resolve_m
from fastcdl.online.forecasters.foster import foster_rule
from fastcdl.online.plugins import ForecasterSpec, icbrt_up

CalibeatState = namedtuple("CalibeatState", ["m", "n", "s", "k"])  # k[0]: this round's bin


def init(horizon, params, adversary=None):
    m, bins = int(params["m"]), int(params["bins"])
    z = np.zeros((bins, m + 1), dtype=np.int64)
    return CalibeatState(m, z, z.copy(), np.zeros(1, dtype=np.int64)), grid(m)


@kernel(inline="always")
def bin_of(b, bins):
    """The bin of the external forecast b: min(floor(bins b), bins - 1)."""
    return min(int(b * bins), bins - 1)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out, b):
    k = bin_of(b, st.n.shape[0])
    st.k[0] = k
    foster_rule(table.q, st.n[k], st.s[k], st.m, out)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    k = st.k[0]
    j = out.buckets[slot]
    st.n[k, j] += 1
    st.s[k, j] += y


@kernel(_nrt=False)
def simulate(T, st, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y, external, rec):
    for t in range(T):
        b = external(hist, apar)
        if bad_mean(b):
            return mean_stopped(hist)
        forecast(st, table, hist, out, b)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(st, table, hist, out, slot, y)
        note_external(rec, b, y)
        hist = settle(table, out, slot, y, hist)
    return hist


def resolve(params, T):
    out = resolve_m(params, T, icbrt_up(T))
    out["bins"] = check_int(params.get("bins", 10), "bins", low=1)
    return out


FORECASTER = ForecasterSpec(
    "calibeat",
    init,
    forecast,
    observe,
    params={"m": None, "bins": 10},
    version=1,
    resolve=resolve,
    loop=simulate,
    grid=lambda resolved: resolved["m"],
    doc=__doc__,
    needs_external=True,
)
