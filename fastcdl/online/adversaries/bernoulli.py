"""bernoulli(p = 1/2): i.i.d. outcomes; p = 1/2 is the instance behind the Omega(T^-1/2) bound.

>>> ADVERSARY.resolve_params({})
{'p': 0.5}
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_real
from fastcdl.online.engine import uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def prob(view, par):
    return par[0]


@kernel
def respond(view, table, par, rng):
    return 1 if uniform(rng) < prob(view, par) else 0


def resolve(params, horizon):
    return {"p": check_real(params.get("p", 0.5), "p", 0.0, 1.0)}


ADVERSARY = AdversarySpec("bernoulli", respond, {"p": 0.5}, version=1, prob=prob, resolve=resolve, doc=__doc__,
                          k_points=True)  # never reads the distribution
