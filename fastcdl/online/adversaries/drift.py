"""drift(amplitude = 0.4, period = horizon / 8): y ~ Bernoulli(1/2 + amplitude sin(2 pi t / period)).

>>> ADVERSARY.resolve_params({}, horizon=800)
{'amplitude': 0.4, 'period': 100.0}
"""

import math

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_horizon, check_real
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def prob(view, par):
    return 0.5 + par[0] * math.sin(2.0 * math.pi * view.t / par[1])


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < prob(view, par) else 0


@kernel
def true_mean(hist, par):
    """P(y = 1) of round hist.t + 1: prob of that round (which reads only t and the last outcome)."""
    return prob(next_round(hist), par)


def resolve(params, horizon):
    amplitude = check_real(params.get("amplitude", 0.4), "amplitude", 0.0, 0.5)
    if "period" in params:
        period = check_real(params["period"], "period", 0.0, low_open=True)
    elif horizon is None:
        raise ValidationError(
            "period",
            "is needed",
            message="period: the drift adversary needs period=... or horizon=... (period = horizon / 8)",
        )
    else:
        period = check_horizon(horizon) / 8.0
    return {"amplitude": amplitude, "period": period}


ADVERSARY = AdversarySpec(
    "drift",
    respond,
    {"amplitude": 0.4, "period": None},
    version=1,
    prob=prob,
    resolve=resolve,
    doc=__doc__,
    k_points=True,
    true_mean=true_mean,
)  # respond never reads the distribution
