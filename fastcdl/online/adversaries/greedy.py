"""greedy: the outcome with the larger expected increase of sum over stated values v of
|bias_v| (bias_v = v n_v - s_v, the stated value times its rounds minus its outcomes),
given the round's distribution; ties by a fair coin.

Decided exactly: with the stated values num_b / den of the table, den times the increase
of |bias_b| for outcome y is the integer J_b(y) = |B_b + num_b - den y| - |B_b|, with
B_b = num_b n_b - den s_b; so up - down has the sign of p0 (J_0(1) - J_0(0)) + p1 (J_1(1) -
J_1(0)), found without rounding by fastcdl._compiled.exact.sign_dot2 (p0, p1 the published
probabilities, as floats). A tie (an exact 0) tosses the coin. A grid with no exact
fractions (den = 0) is compared in floating point.

Against a forecaster whose rounds put mass on more than two stated values (support K > 2,
engine.slots and engine.slot) the expectation runs over its K slots: up - down has the sign
of sum_i p_i (J_{b_i}(1) - J_{b_i}(0)), i = 0..K-1 (a slot of probability 0 adds nothing),
for two slots the rule above. The sign is exact as well: the float sum decides when it is
farther from 0 than its error bound, else :func:`fastcdl._compiled.exact.sign_sum` of the
split products (allocating 2K floats). O(K) a round. The two-point code is unchanged.

>>> ADVERSARY.resolve_params({})
{}
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.exact import EPS, sign_dot2, sign_sum, split_times
from fastcdl.online.engine import k_point_only, slot, slots, uniform
from fastcdl.online.plugins import AdversarySpec


@kernel
def gain(y, v, p, n, s):
    """Expected change of |bias| of stated value v (drawn with probability p) if the outcome is y
    (in floats: for a grid without exact fractions)."""
    bias = v * n - s
    return p * (abs(bias + v - y) - abs(bias))


@kernel
def expected_gain(y, view, table):
    return gain(y, view.stated0, view.prob0, table.n[view.bucket0], table.s[view.bucket0]) + gain(
        y, view.stated1, view.prob1, table.n[view.bucket1], table.s[view.bucket1]
    )


@kernel
def up_minus_down(table, b):
    """J_b(1) - J_b(0): den times the increase of |bias_b| for y = 1 minus that for y = 0 (exact)."""
    num = table.num[b]
    den = table.den
    bias = num * table.n[b] - den * table.s[b]
    return abs(bias + num - den) - abs(bias + num)


@kernel
def sign_k(view, table):
    """The sign of up - down over the round's K slots: exact when the grid has exact fractions
    (den > 0), in floats otherwise. O(K); allocates 2K floats only when the float sum is within
    its error bound of 0."""
    K = slots(view, table)
    if table.den <= 0:
        up = 0.0
        down = 0.0
        for i in range(K):
            p, v, b, x = slot(view, table, i)
            up += gain(1, v, p, table.n[b], table.s[b])
            down += gain(0, v, p, table.n[b], table.s[b])
        return 1 if up > down else (-1 if down > up else 0)
    total = 0.0
    size = 0.0
    for i in range(K):
        p, v, b, x = slot(view, table, i)
        a = p * float(up_minus_down(table, b))
        total += a
        size += abs(a)
    if abs(total) > 2.0 * (K + 1) * EPS * size:  # each product and every addition round once
        return 1 if total > 0.0 else -1
    terms = np.empty(2 * K)
    for i in range(K):
        p, v, b, x = slot(view, table, i)
        terms[2 * i], terms[2 * i + 1] = split_times(p, up_minus_down(table, b))
    return sign_sum(terms)


@kernel
def respond_k(view, table, rng):
    """respond against a K-point forecaster's table."""
    sign = sign_k(view, table)
    if sign > 0:
        return 1
    if sign < 0:
        return 0
    return 1 if uniform(rng) < 0.5 else 0


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_respond_k = k_point_only(respond_k, 0)


@kernel
def respond(view, table, par, rng):
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        return _respond_k(view, table, rng)
    if table.den > 0:
        sign = sign_dot2(
            view.prob0, up_minus_down(table, view.bucket0), view.prob1, up_minus_down(table, view.bucket1), 0
        )
    else:
        up = expected_gain(1, view, table)
        down = expected_gain(0, view, table)
        sign = 1 if up > down else (-1 if down > up else 0)
    if sign > 0:
        return 1
    if sign < 0:
        return 0
    return 1 if uniform(rng) < 0.5 else 0


# version 2: the expected increases are compared exactly (version 1 compared float sums, which
# at an exact tie can differ in the last bit and skip the coin)
ADVERSARY = AdversarySpec("greedy", respond, {}, version=2, doc=__doc__, k_points=True)
