"""signpreserve: outcomes y ~ Bernoulli(c), where the target c is the gap midpoint of the
stated values that keeps the sign of the most accumulated bias (docs/ece-lower-bound.md).

The one-level sign-preservation step of the ECE lower-bound constructions (Qiao and Valiant
2021; Dagan et al. 2024), not their hierarchical adversary. With bias_v = v n_v - s_v of each
stated value v (positive: v said too often for its outcomes), a target c preserves the sign
of v when bias_v > 0 and v > c, or bias_v < 0 and v < c: each further use of v then moves
bias_v away from 0 in expectation by |v - c|. The targets are the midpoints c_j of the gaps
(lo_j, hi_j) of 0 <= q_0 < ... < q_{m-1} <= 1 (lo_0 = 0, hi_m = 1; empty gaps skipped); the
flippable bias of gap j is

    F_j = sum over v = q_i below c_j of max(bias_v, 0) + sum over v above c_j of max(-bias_v, 0)
        = sum_i max(-bias_i, 0) + sum_{i < j} bias_i,

the bias the forecaster could cancel if the outcomes had mean c_j. The adversary takes the
gap with the least F_j; gaps within 1e-9 (1 + sum_i |bias_i|) of the least are tied, and of
the tied gaps it takes the lowest whose midpoint is within 1e-12 of the least distance of a
tied midpoint to the round's expected stated prediction. So it starts where the forecaster
predicts and then holds the established signs that weigh most. Its state is the public table: no memory.

Against a forecaster whose rounds put mass on more than two stated values (support K > 2,
engine.slots and engine.slot) the round's expected stated prediction is sum_i p_i q_{b_i}
over its K slots (a slot of probability 0 adds nothing); the table, and so the gaps and
their flippable bias, are what they are for two points. The two-point code is unchanged.

Cost: O(m) per round (m stated values; O(m + K) against K slots), one uniform per round.

>>> ADVERSARY.resolve_params({})
{}
"""

import math

from fastcdl._compiled._jit import kernel
from fastcdl.online.engine import k_point_only, slot, slots, uniform
from fastcdl.online.plugins import AdversarySpec

REL_TIE = 1e-9  # F_j within REL_TIE (1 + sum |bias|) of the least: tied
DIST_TIE = 1e-12  # midpoints this close in distance to the mean prediction: tied


@kernel
def gap(q, j):
    """Gap j of the stated values q: (lo, hi), lo = q[j-1] (0 for j = 0), hi = q[j] (1 for j = m)."""
    m = q.shape[0]
    return (0.0 if j == 0 else q[j - 1]), (1.0 if j == m else q[j])


@kernel
def target(q, n, s, mean):
    """The target c (a gap midpoint) for the table (q, n, s) and the round's mean prediction."""
    m = q.shape[0]
    neg = 0.0  # F_0: the negative bias of every value (all lie above gap 0)
    total = 0.0
    for i in range(m):
        b = q[i] * n[i] - s[i]
        total += abs(b)
        if b < 0.0:
            neg -= b
    # the least flippable bias F_j over the non-empty gaps (F_{j+1} = F_j + bias_j)
    best = math.inf
    f = neg
    for j in range(m + 1):
        lo, hi = gap(q, j)
        if hi > lo:
            best = min(best, f)
        if j < m:
            f += q[j] * n[j] - s[j]
    tol = REL_TIE * (1.0 + total)
    # the least distance of a tied gap's midpoint to the mean prediction
    near = math.inf
    f = neg
    for j in range(m + 1):
        lo, hi = gap(q, j)
        if hi > lo and f <= best + tol:
            near = min(near, abs(0.5 * (lo + hi) - mean))
        if j < m:
            f += q[j] * n[j] - s[j]
    # the lowest tied gap within DIST_TIE of that distance
    f = neg
    for j in range(m + 1):
        lo, hi = gap(q, j)
        if hi > lo and f <= best + tol and abs(0.5 * (lo + hi) - mean) <= near + DIST_TIE:
            return 0.5 * (lo + hi)
        if j < m:
            f += q[j] * n[j] - s[j]
    return 0.5  # not reached: some gap of [0, 1] is non-empty when the q are distinct


@kernel
def mean_k(view, table):
    """The round's expected stated prediction over its K slots."""
    mean = 0.0
    for i in range(slots(view, table)):
        p, q, b, x = slot(view, table, i)
        mean += p * q
    return mean


# the K-point code, compiled for a K-point forecaster's table only (engine.k_point_only)
_mean_k = k_point_only(mean_k, 0.0)


@kernel
def respond(view, table, par, rng):
    mean = view.prob0 * view.stated0 + view.prob1 * view.stated1
    if slots(view, table) > 2:  # a K-point forecaster's table (a constant 2 for two-point ones)
        mean = _mean_k(view, table)
    c = target(table.q, table.n, table.s, mean)
    return 1 if uniform(rng) < c else 0


ADVERSARY = AdversarySpec("signpreserve", respond, {}, version=1, doc=__doc__, k_points=True)
