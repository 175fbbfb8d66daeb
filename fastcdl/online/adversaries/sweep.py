"""sweep(low = 0.1, high = 0.9, amp = 0.05, period = horizon / 8): biases of alternating sign.

A target x(t) sweeps up and down between low and high (a triangle wave of the given
period, x(1) near low); the outcome is y ~ Bernoulli(x(t) + amp sign), where sign is +1
when the bucket of the round's likelier slot (slot 0 on a tie) has an even index and -1
when it is odd. The forecaster follows the target across its grid, and each bucket it
passes is left with a small bias whose sign alternates from one bucket to the next: many
buckets hold small biases at once, the situation where an expert algorithm's weights
(rather than the signs of the biases alone) decide what is stated. x + amp sign <= 0 gives
y = 0 and >= 1 gives y = 1.

Against a forecaster whose rounds put mass on more than two stated values (support K > 2,
engine.slots and engine.slot) the likelier slot is the slot of the largest probability,
the first of them on a tie (for two slots: slot 0 on a tie, as above). O(K) a round; the
two-point code is unchanged.

>>> ADVERSARY.resolve_params({}, horizon=800)
{'low': 0.1, 'high': 0.9, 'amp': 0.05, 'period': 100.0}
"""

import math

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_horizon, check_real
from fastcdl.online.engine import k_point_only, slot, slots, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def wave(view, par):
    """x(t) = low + (high - low) (1 - |2 frac(t / period) - 1|)."""
    u = view.t / par[3]
    u -= math.floor(u)
    return par[0] + (par[1] - par[0]) * (1.0 - abs(2.0 * u - 1.0))


@kernel
def target(view, par):
    b = view.bucket0 if view.prob0 >= view.prob1 else view.bucket1
    sign = 1.0 if b % 2 == 0 else -1.0
    return wave(view, par) + par[2] * sign


@kernel
def target_k(view, table, par):
    """The target over the round's K slots: the bucket of the first slot of the largest probability."""
    best_p, best_b = -1.0, 0
    for i in range(slots(view, table)):
        p, q, b, x = slot(view, table, i)
        if p > best_p:
            best_p, best_b = p, b
    sign = 1.0 if best_b % 2 == 0 else -1.0
    return wave(view, par) + par[2] * sign


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_target_k = k_point_only(target_k, 0.0)


@kernel
def respond(view, table, par, rng):
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        return 1 if uniform(rng) < _target_k(view, table, par) else 0
    return 1 if uniform(rng) < target(view, par) else 0


def resolve(params, horizon):
    low = check_real(params.get("low", 0.1), "low", 0.0, 1.0)
    high = check_real(params.get("high", 0.9), "high", 0.0, 1.0)
    if high < low:
        raise ValidationError(
            "high",
            "must be >= low",
            value=high,
            message=f"high must be >= low for the sweep adversary; got low={low}, high={high}",
        )
    amp = check_real(params.get("amp", 0.05), "amp", 0.0, 0.5)
    if params.get("period") is not None:
        period = check_real(params["period"], "period", 0.0, low_open=True)
    elif horizon is None:
        raise ValidationError(
            "period",
            "is needed",
            message="period: the sweep adversary needs period=... or horizon=... (period = horizon / 8)",
        )
    else:
        period = check_horizon(horizon) / 8.0
    return {"low": low, "high": high, "amp": amp, "period": period}


ADVERSARY = AdversarySpec(
    "sweep",
    respond,
    {"low": 0.1, "high": 0.9, "amp": 0.05, "period": None},
    version=1,
    resolve=resolve,
    doc=__doc__,
    k_points=True,
)
