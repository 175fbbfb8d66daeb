"""bernoulli(p = 1/2): i.i.d. outcomes; p = 1/2 is the instance behind the Omega(T^-1/2) bound.

>>> ADVERSARY.resolve_params({})
{'p': 0.5}
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_real
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def prob(view, par):
    return par[0]


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < prob(view, par) else 0


@kernel
def true_mean(hist, par):
    """P(y = 1) of round hist.t + 1: prob of that round (which reads only t and the last outcome)."""
    return prob(next_round(hist), par)


def resolve(params, horizon):
    return {"p": check_real(params.get("p", 0.5), "p", 0.0, 1.0)}


ADVERSARY = AdversarySpec(
    "bernoulli",
    respond,
    {"p": 0.5},
    version=1,
    prob=prob,
    resolve=resolve,
    doc=__doc__,
    k_points=True,
    true_mean=true_mean,
)  # respond never reads the distribution
