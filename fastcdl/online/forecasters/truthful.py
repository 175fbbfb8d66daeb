"""truthful: knows the adversary's P(y = 1) and states the nearest grid point (ties upward);
grid j/m, j = 0..m, m = max(2, ceil(sqrt T)) by default. For the stochastic built-in
adversaries (bernoulli, drift, markov, segments, budget), whose prob kernels it calls on the
adversary's parameter vector as the run's adversary has it (with the environment that
segments draws from the seed); simulate passes it the adversary. The minimax argument of the
paper's appendix: a forecaster that knows the probabilities is calibrated up to the grid's
rounding.

>>> FORECASTER.needs_adversary
True
"""

import math
from collections import namedtuple

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.step1 import point_mass
from fastcdl._validate import ValidationError
from fastcdl.online.adversaries import bernoulli, budget, drift, markov, segments
from fastcdl.online.engine import Round, not_outcome, play_round, settle, stopped
from fastcdl.online.forecasters._grid import default_sqrt, grid, resolve_m
from fastcdl.online.plugins import ForecasterSpec

# which: the adversary's index in KNOWN; apar: its parameter vector
KNOWN = ("bernoulli", "drift", "markov", "segments", "budget")
TruthfulState = namedtuple("TruthfulState", ["m", "which", "apar"])


def init(horizon, params, adversary):
    """adversary: (spec, resolved params, par as the run's adversary starts with it); the older
    (spec, resolved params) still serves an adversary that draws no environment."""
    spec, aparams, *rest = adversary
    if spec.name not in KNOWN or spec is not _SPECS[spec.name]:
        raise ValidationError(
            "adversary",
            "must be one of the stochastic built-ins",
            value=spec.name,
            message=f"adversary: the truthful forecaster needs a stochastic built-in adversary "
            f"({', '.join(KNOWN)}), got {spec.name!r}",
        )
    if rest:
        apar = rest[0]
    elif spec.prepare is None:
        apar = spec.parameter_vector(aparams)
    else:
        raise ValidationError(
            "adversary",
            "needs the run's parameter vector",
            message=f"adversary: {spec.name!r} draws its environment from the seed; pass "
            "(spec, params, par) with par = spec.run_vector(params, generator), or use "
            "make_forecaster / forecaster_setup",
        )
    st = TruthfulState(int(params["m"]), KNOWN.index(spec.name), apar)
    return st, grid(params["m"])


_SPECS = {
    "bernoulli": bernoulli.ADVERSARY,
    "drift": drift.ADVERSARY,
    "markov": markov.ADVERSARY,
    "segments": segments.ADVERSARY,
    "budget": budget.ADVERSARY,
}


@kernel
def prob(st, hist):
    view = Round(hist.t + 1, hist.prev_y, st.m + 1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0, 0)
    if st.which == 0:
        return bernoulli.prob(view, st.apar)
    if st.which == 1:
        return drift.prob(view, st.apar)
    if st.which == 2:
        return markov.prob(view, st.apar)
    if st.which == 3:
        return segments.prob(view, st.apar)
    return budget.prob(view, st.apar)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out):
    m = st.m
    j = int(math.floor(prob(st, hist) * m + 0.5))
    j = min(max(j, 0), m)
    point_mass(table.q[j], j, out.points, out.probs, out.buckets)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    pass  # states what the adversary's law says; nothing to learn


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
    "truthful",
    init,
    forecast,
    observe,
    params={"m": None},
    version=1,
    resolve=lambda params, T: resolve_m(params, T, default_sqrt(T)),
    loop=simulate,
    needs_adversary=True,
    grid=_grid_m,
    doc=__doc__,
    point_mass=True,
)
