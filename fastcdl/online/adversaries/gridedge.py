"""gridedge(position = 1/2): knows the forecaster's grid of stated values and its buckets.

The bucket of stated value q_b is taken to be the interval (q_{b-1}, q_b] between it and
the stated value below it (q_{-1} = 0): Algorithm 1's buckets ((b-1)/m, b/m] with stated
value b/m. y ~ Bernoulli(x), x = sum over the round's slots of prob_k (L_k + position
(U_k - L_k)), where (L_k, U_k] is the bucket of slot k: position = 0 answers at the lower
edges, so every stated value is too high by about one bucket width, the largest offset a
forecaster that states the upper end of its buckets can be made to carry (Algorithm 1
then never leaves its first raw point 0, whose bucket's lower edge is 0); position = 1
answers at the stated values (calibrated); the default, 1/2, at the buckets' midpoints.

Against a forecaster whose rounds put mass on more than two stated values (support K > 2,
engine.slots and engine.slot) the sum runs over its K slots (a slot of probability 0 adds
nothing). O(K) a round; the two-point code is unchanged.

>>> ADVERSARY.resolve_params({})
{'position': 0.5}
"""

from fastcdl._compiled._jit import kernel
from fastcdl._validate import check_real
from fastcdl.online.engine import k_point_only, slot, slots, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def edge_point(table, b, position):
    """L + position (U - L) for the bucket (L, U] of stated value q_b."""
    upper = table.q[b]
    lower = table.q[b - 1] if b > 0 else 0.0
    return lower + position * (upper - lower)


@kernel
def target(view, table, par):
    return view.prob0 * edge_point(table, view.bucket0, par[0]) + view.prob1 * edge_point(table, view.bucket1, par[0])


@kernel
def target_k(view, table, par):
    """x over the round's K slots."""
    x = 0.0
    for i in range(slots(view, table)):
        p, q, b, point = slot(view, table, i)
        x += p * edge_point(table, b, par[0])
    return x


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_target_k = k_point_only(target_k, 0.0)


@kernel
def respond(view, table, par, rng):
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        return 1 if uniform(rng) < _target_k(view, table, par) else 0
    return 1 if uniform(rng) < target(view, table, par) else 0


def resolve(params, horizon):
    return {"position": check_real(params.get("position", 0.5), "position", 0.0, 1.0)}


ADVERSARY = AdversarySpec(
    "gridedge", respond, {"position": 0.5}, version=1, resolve=resolve, doc=__doc__, k_points=True
)
