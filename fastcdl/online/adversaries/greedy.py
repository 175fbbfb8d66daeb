"""greedy: the outcome with the larger expected increase of sum over stated values v of
|bias_v| (bias_v = v n_v - s_v, the stated value times its rounds minus its outcomes),
given the round's distribution; ties by a fair coin.

>>> ADVERSARY.resolve_params({})
{}
"""

from fastcdl._kernels._jit import kernel
from fastcdl.online.engine import uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def gain(y, v, p, n, s):
    """Expected change of |bias| of stated value v (drawn with probability p) if the outcome is y."""
    bias = v * n - s
    return p * (abs(bias + v - y) - abs(bias))


@kernel
def expected_gain(y, view, table):
    return (gain(y, view.stated0, view.prob0, table.n[view.bucket0], table.s[view.bucket0])
            + gain(y, view.stated1, view.prob1, table.n[view.bucket1], table.s[view.bucket1]))


@kernel
def respond(view, table, par, rng):
    up = expected_gain(1, view, table)
    down = expected_gain(0, view, table)
    if up > down:
        return 1
    if down > up:
        return 0
    return 1 if uniform(rng) < 0.5 else 0


ADVERSARY = AdversarySpec("greedy", respond, {}, version=1, doc=__doc__)
