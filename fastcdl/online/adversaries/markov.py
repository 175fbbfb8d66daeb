"""markov(p01 = 0.1, p10 = 0.1): a two-state chain with those switching probabilities,
its first outcome drawn from the chain's stationary law (1/2 if it never switches).

>>> ADVERSARY.resolve_params({"p01": 0.2})
{'p01': 0.2, 'p10': 0.1}
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_real
from fastcdl.online.engine import next_round, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def prob(view, par):
    if view.prev_y < 0:
        rate = par[0] + par[1]
        return 0.5 if rate == 0.0 else par[0] / rate
    if view.prev_y == 0:
        return par[0]
    return 1.0 - par[1]


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < prob(view, par) else 0


@kernel
def true_mean(hist, par):
    """P(y = 1) of round hist.t + 1: prob of that round (which reads only t and the last outcome)."""
    return prob(next_round(hist), par)


def resolve(params, horizon):
    return {
        "p01": check_real(params.get("p01", 0.1), "p01", 0.0, 1.0),
        "p10": check_real(params.get("p10", 0.1), "p10", 0.0, 1.0),
    }


ADVERSARY = AdversarySpec(
    "markov",
    respond,
    {"p01": 0.1, "p10": 0.1},
    version=1,
    prob=prob,
    resolve=resolve,
    doc=__doc__,
    k_points=True,
    true_mean=true_mean,
)  # respond never reads the distribution
