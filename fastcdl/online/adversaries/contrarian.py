"""contrarian: y = 1 when the expected stated prediction is below 1/2, else 0 (deterministic).

Decided exactly: with the stated values num_b / den of the table, the expected stated
prediction is below 1/2 when p0 (2 num_0) + p1 (2 num_1) - den < 0, whose sign
fastcdl._compiled.exact.sign_dot2 finds without rounding (p0, p1 the published
probabilities, as floats). An expectation of exactly 1/2 says 0. A grid with no exact
fractions (den = 0: a plug-in's stated values that are no k/D with D <= 2^20) is compared
in floating point. Against a forecaster with more than two stated values a round
(support K > 2) the same sum runs over its K slots (engine.slots, engine.slot), its sign
exact as well (:func:`fastcdl._compiled.exact.sign_sum` on the split products when the
float sum is too close to 0 for its error bound).

>>> ADVERSARY.resolve_params({})
{}
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.exact import EPS, sign_dot2, sign_sum, split_times
from fastcdl.online.engine import k_point_only, slot, slots
from fastcdl.online.plugins import AdversarySpec


@kernel
def below_half_k(view, table):
    """Whether sum_i p_i q_{b_i} < 1/2 over the round's K slots, exactly when the grid has exact
    fractions (den > 0). O(K); allocates 2K + 1 floats only when the float sum is within its
    error bound of 0."""
    K = slots(view, table)
    if table.den <= 0:
        mean = 0.0
        for i in range(K):
            p, q, b, x = slot(view, table, i)
            mean += p * q
        return mean < 0.5
    s = -float(table.den)
    size = float(table.den)
    for i in range(K):
        p, q, b, x = slot(view, table, i)
        a = p * float(2 * table.num[b])
        s += a
        size += abs(a)
    if abs(s) > 2.0 * (K + 2) * EPS * size:  # each term's product and every addition round once
        return s < 0.0
    terms = np.empty(2 * K + 1)
    for i in range(K):
        p, q, b, x = slot(view, table, i)
        terms[2 * i], terms[2 * i + 1] = split_times(p, 2 * table.num[b])
    terms[2 * K] = -float(table.den)
    return sign_sum(terms) < 0


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_below_half_k = k_point_only(below_half_k, False)


@kernel
def respond(view, table, par, rng):
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        return 1 if _below_half_k(view, table) else 0
    if table.den > 0:
        below = (
            sign_dot2(view.prob0, 2 * table.num[view.bucket0], view.prob1, 2 * table.num[view.bucket1], -table.den) < 0
        )
    else:
        below = view.prob0 * view.stated0 + view.prob1 * view.stated1 < 0.5
    return 1 if below else 0


# version 2: the comparison with 1/2 is exact (version 1 compared the float mean, which at an
# exact 1/2 such as 1/4 x 1/5 + 3/4 x 3/5 rounds to 0.49999999999999994 and said 1)
ADVERSARY = AdversarySpec("contrarian", respond, {}, version=2, doc=__doc__, k_points=True)
