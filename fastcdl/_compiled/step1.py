"""Step 1 of Algorithm 1 and its relatives: the forecaster's distribution for one round.

A distribution is written into three length-2 arrays: raw points ``pts``, probabilities
``probs`` and bucket indices ``bkt`` (a point mass uses slot 0 and gives slot 1
probability 0 and the same bucket). The bucket index travels with its raw point and is
never recovered from a float. Buckets are 0-based: bucket i of docs/algorithm1.md is
index i - 1, I_b = (b/m, (b+1)/m] (I_0 closed), stated value (b+1)/m.
"""

from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.exact import sign_int_plus


@kernel
def sign_change(v):
    """Step 1's bracket by bisection on the sign of v, O(log m).

    Returns -1 if v_0 >= 0, m - 1 if v_{m-1} <= 0, else lo with v_lo < 0 <= v_{lo+1}.
    """
    m = v.shape[0]
    if v[0] >= 0.0:
        return -1
    if v[m - 1] <= 0.0:
        return m - 1
    lo = 0
    hi = m - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if v[mid] < 0.0:
            lo = mid
        else:
            hi = mid
    return lo


@kernel
def point_mass(x, b, pts, probs, bkt):
    pts[0] = x
    pts[1] = x
    probs[0] = 1.0
    probs[1] = 0.0
    bkt[0] = b
    bkt[1] = b


@kernel
def boundary_points(lo, m, delta, r, pts, probs, bkt):
    """Step 1's mixture: ptilde = (lo+1)/m (right end of bucket lo) with probability r and
    (lo+1)/m + delta (inside bucket lo+1, as 0 < delta <= 1/m) with probability 1 - r."""
    pts[0] = (lo + 1) / m
    pts[1] = pts[0] + delta
    probs[0] = r
    probs[1] = 1.0 - r
    bkt[0] = lo
    bkt[1] = lo + 1


@kernel
def step1_point_mass(v, pts, probs, bkt):
    """Step 1's cases that need no weights, from the signs of v (c, or G, which has c's signs).

    Plays 0 if v_0 >= 0, 1 if v_{m-1} <= 0, the right end of bucket lo+1 if v_{lo+1} = 0,
    and returns (lo, True); otherwise returns (lo, False) with v_lo < 0 < v_{lo+1}: the
    caller mixes the boundary points with the two buckets' weights. O(log m).
    """
    m = v.shape[0]
    lo = sign_change(v)
    if lo < 0:
        point_mass(0.0, 0, pts, probs, bkt)
    elif lo == m - 1:
        point_mass(1.0, m - 1, pts, probs, bkt)
    elif v[lo + 1] == 0.0:
        point_mass((lo + 2) / m, lo + 1, pts, probs, bkt)
    else:
        return lo, False
    return lo, True


@kernel
def step1_from_c(c, delta, pts, probs, bkt):
    """Step 1 on explicit weights c (docs/algorithm1.md): after it, max_y E[c_b (ptilde - y)] <= delta min(|c_lo|, c_hi)."""
    lo, done = step1_point_mass(c, pts, probs, bkt)
    if not done:
        boundary_points(lo, c.shape[0], delta, c[lo + 1] / (c[lo + 1] - c[lo]), pts, probs, bkt)
    return lo


# -- exact signs of the buckets' biases ---------------------------------------------------------
# Step 1 decides on the signs of G_b, the sum over the rounds drawn in bucket b of the raw point
# minus the outcome. The raw points are a/m + e delta (a an integer, e = 0 or 1, delta the float
# given): 0, the right ends (b+1)/m, and b/m + delta. So m G_b = I_b + (m D_b) delta exactly, with
# the integers I_b = sum (a - m y) and D_b = the number of points with e = 1; its sign is found
# without rounding (exact.sign_int_plus). A float sum of the points would leave a residue such as
# -1 + 7 x fl(1/7) = -2.2e-16 where G_b is 0, and change step 1's path.
ExactBias = namedtuple("ExactBias", ["sign", "I", "D"])
ExactBias.__doc__ = """The exact signs of step 1's biases G_b (fastcdl.kernels.exact_bias_new).

Attributes
----------
sign : ndarray of float64, shape (m,)
    -1, 0 or +1: the sign of each G_b.
I, D : ndarray of int64
    The integers with m G_b = I_b + (m D_b) delta.

Examples
--------
>>> ExactBias._fields
('sign', 'I', 'D')
"""


@kernel
def exact_bias(m):
    """A fresh ExactBias of m buckets: sign (float64, -1, 0 or +1 for step 1's bisection), I, D
    (int64)."""
    return ExactBias(np.zeros(m), np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64))


@kernel(inline="always")
def drawn_numerator(out, slot):
    """(a, e) with the drawn raw point = a/m + e delta, for the distributions step 1 writes:
    a mixture (probs[1] > 0) is boundary_points' right end (lo+1)/m of bucket lo in slot 0 and
    (lo+1)/m + delta in slot 1 (bucket lo+1); a point mass is 0 (bucket 0) or the right end
    of its bucket."""
    b = out.buckets[slot]
    if out.probs[1] > 0.0:
        if slot == 0:
            return b + 1, 0
        return b, 1
    if out.points[0] == 0.0:
        return 0, 0
    return b + 1, 0


@kernel(inline="always")
def add_drawn(eb, out, slot, y, m, delta):
    """add_to_bias for the drawn slot of step 1's distribution ``out`` (a Draw) and outcome y."""
    a, e = drawn_numerator(out, slot)
    add_to_bias(eb, out.buckets[slot], a, e, y, m, delta)


@kernel(inline="always")
def add_to_bias(eb, b, a, e, y, m, delta):
    """G_b += (a/m + e delta) - y, kept exactly, and sign_b updated."""
    eb.I[b] += a - m * y
    eb.D[b] += e
    eb.sign[b] = sign_int_plus(eb.I[b], m * eb.D[b], delta)
