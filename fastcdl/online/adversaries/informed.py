"""informed(a = 2, c = 0.5, levels = 10, low = 0, high = 1): the calibeating environment. Each
round has its own chance mu_t, drawn i.i.d. uniform on [low, high], and an informed but
miscalibrated model states the external forecast b_t before the round (docs/calibeating.md):

    s_t = 1 / (1 + exp(-(a logit(mu_t) + c)))     (a > 1: overconfident; c: biased up)
    b_t = (floor(levels s_t) + 1/2) / levels      (the middle of its bin of width 1/levels;
                                                   s_t = 1 in the last)

y_t ~ Bernoulli(mu_t). b_t orders the rounds as mu_t does (it is informative: its refinement
is small) but its values are wrong (its calibration part is not), which a calibeating
forecaster that sees b_t can gain. ``external`` states b_t, and ``prob`` and ``true_mean``
state mu_t (so a forecaster that reads the true mean, ``spr``, plays it too; the floor of the
Brier score is E[mu (1 - mu)], 1/6 with the default chances).

mu_t is a function of the round and of a key drawn from the adversary's generator before round
1: mu_t = low + (high - low) u(key, t), u a counter-based uniform (splitmix64 of key + t times
the golden ratio constant, its top 53 bits), so that the external forecast, the true mean and the
outcome of a round read the same mu_t without carrying it between calls. The outcome draws one
uniform of the adversary's generator per round. O(1) per round; memory O(1).

>>> ADVERSARY.resolve_params({})
{'a': 2.0, 'c': 0.5, 'levels': 10, 'low': 0.0, 'high': 1.0}
"""

import math

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int, check_real
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec

PARAMS = {"a": 2.0, "c": 0.5, "levels": 10, "low": 0.0, "high": 1.0}
KEY = len(PARAMS)  # par[KEY]: the key of the round chances, drawn by prepare

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@kernel(inline="always")
def counter_uniform(key, t):
    """A uniform of [0, 1) from (key, t): splitmix64's output function of key + t * golden, top 53 bits."""
    z = np.uint64(key) + np.uint64(t) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel(inline="always")
def chance(t, par):
    """mu_t of round t (1-based)."""
    return par[3] + (par[4] - par[3]) * counter_uniform(par[KEY], t)


@kernel(inline="always")
def model(mu, par):
    """The model's forecast b of a round with chance mu: the sigmoid of a logit(mu) + c, at the
    middle of its bin of width 1/levels."""
    if mu <= 0.0:
        s = 0.0
    elif mu >= 1.0:
        s = 1.0
    else:
        s = 1.0 / (1.0 + math.exp(-(par[0] * math.log(mu / (1.0 - mu)) + par[1])))
    levels = par[2]
    return (min(math.floor(levels * s), levels - 1.0) + 0.5) / levels


@kernel
def prob(view, par):
    return chance(view.t, par)


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < chance(view.t, par) else 0


@kernel
def true_mean(hist, par):
    """mu of round hist.t + 1."""
    return prob(next_round(hist), par)


@kernel
def external(hist, par):
    """b of round hist.t + 1: the model's forecast of that round's chance."""
    return model(chance(hist.t + 1, par), par)


def resolve(params, horizon):
    a = check_real(params.get("a", 2.0), "a", 0.0, None)
    c = check_real(params.get("c", 0.5), "c")
    levels = check_int(params.get("levels", 10), "levels", low=1)
    if levels > 1000:
        raise ValidationError("levels", "must be at most 1000 (the record of b has bins of width 1/1000)", value=levels)
    low = check_real(params.get("low", 0.0), "low", 0.0, 1.0)
    high = check_real(params.get("high", 1.0), "high", 0.0, 1.0)
    if high < low:
        raise ValidationError("high", f"must be >= low ({low})", value=high)
    return {"a": a, "c": c, "levels": levels, "low": low, "high": high}


def prepare(resolved, par, rng):
    """The key of the round chances: 52 random bits from the adversary's generator (exact in a float64)."""
    from fastcdl._compiled.rng import uniform as draw

    par[KEY] = math.floor(draw(rng) * 2.0**52)


ADVERSARY = AdversarySpec(
    "informed",
    respond,
    dict(PARAMS),
    version=1,
    prob=prob,
    resolve=resolve,
    doc=__doc__,
    scratch=lambda resolved: 1,
    prepare=prepare,
    k_points=True,
    true_mean=true_mean,
    external=external,
)  # respond never reads the distribution
