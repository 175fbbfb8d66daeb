"""contrarian: y = 1 when the expected stated prediction is below 1/2, else 0 (deterministic).

Decided exactly: with the stated values num_b / den of the table, the expected stated
prediction is below 1/2 when p0 (2 num_0) + p1 (2 num_1) - den < 0, whose sign
fastcdl._kernels.exact.sign_dot2 finds without rounding (p0, p1 the published
probabilities, as floats). An expectation of exactly 1/2 says 0. A grid with no exact
fractions (den = 0: a plug-in's stated values that are no k/D with D <= 2^20) is compared
in floating point.

>>> ADVERSARY.resolve_params({})
{}
"""

from fastcdl._kernels._jit import kernel
from fastcdl._kernels.exact import sign_dot2
from fastcdl.online.plugins import AdversarySpec


@kernel
def respond(view, table, par, rng):
    if table.den > 0:
        below = sign_dot2(view.prob0, 2 * table.num[view.bucket0], view.prob1, 2 * table.num[view.bucket1],
                          -table.den) < 0
    else:
        below = view.prob0 * view.stated0 + view.prob1 * view.stated1 < 0.5
    return 1 if below else 0


# version 2: the comparison with 1/2 is exact (version 1 compared the float mean, which at an
# exact 1/2 such as 1/4 x 1/5 + 3/4 x 3/5 rounds to 0.49999999999999994 and said 1)
ADVERSARY = AdversarySpec("contrarian", respond, {}, version=2, doc=__doc__)
