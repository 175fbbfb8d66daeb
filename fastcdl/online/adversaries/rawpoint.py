"""rawpoint(shift = 0, mix = 0): sees the raw points of the round's distribution.

y ~ Bernoulli(x) with x = (1 - mix) E[raw point] + mix E[stated value] + shift, where the
expectations are over the round's distribution (never the draw); x <= 0 gives y = 0 and
x >= 1 gives y = 1. With mix = 0 and shift = 0 the outcomes are calibrated at the raw
points: a forecaster that states rounded values (Algorithm 1 states i/m for a raw point
just above (i-1)/m) then carries the whole rounding offset in what it states, while its
own bookkeeping, kept at the raw points, sees no bias to correct (Algorithm 1 starts at
the raw point 0, stated 1/m, and then never moves). mix = 1 is calibrated at the stated
values; shift moves the target by a fixed amount.

Against a forecaster whose rounds put mass on more than two stated values (support K > 2,
engine.slots and engine.slot) the expectations run over its K slots:
x = (1 - mix) sum_i p_i x_i + mix sum_i p_i q_{b_i} + shift (x_i the raw point, q_{b_i} the
stated value of slot i; a slot of probability 0 adds nothing). O(K) a round; the two-point
code is unchanged.

>>> ADVERSARY.resolve_params({"shift": -0.01})
{'shift': -0.01, 'mix': 0.0}
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_real
from fastcdl.online.engine import k_point_only, slot, slots, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def target(view, par):
    """x, the probability of y = 1 before it is held in [0, 1]."""
    raw = view.prob0 * view.point0 + view.prob1 * view.point1
    stated = view.prob0 * view.stated0 + view.prob1 * view.stated1
    return (1.0 - par[1]) * raw + par[1] * stated + par[0]


@kernel
def target_k(view, table, par):
    """x over the round's K slots."""
    raw = 0.0
    stated = 0.0
    for i in range(slots(view, table)):
        p, q, b, x = slot(view, table, i)
        raw += p * x
        stated += p * q
    return (1.0 - par[1]) * raw + par[1] * stated + par[0]


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_target_k = k_point_only(target_k, 0.0)


@kernel
def respond(view, table, par, rng):
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        return 1 if uniform(rng) < _target_k(view, table, par) else 0
    return 1 if uniform(rng) < target(view, par) else 0


def resolve(params, horizon):
    return {
        "shift": check_real(params.get("shift", 0.0), "shift", -1.0, 1.0),
        "mix": check_real(params.get("mix", 0.0), "mix", 0.0, 1.0),
    }


ADVERSARY = AdversarySpec(
    "rawpoint", respond, {"shift": 0.0, "mix": 0.0}, version=1, resolve=resolve, doc=__doc__, k_points=True
)
