"""Step 1 of Algorithm 1 and its relatives: the forecaster's distribution for one round.

A distribution is written into three length-2 arrays: raw points ``pts``, probabilities
``probs`` and bucket indices ``bkt`` (a point mass uses slot 0 and gives slot 1
probability 0 and the same bucket). The bucket index travels with its raw point and is
never recovered from a float. Buckets are 0-based: bucket i of docs/algorithm1.md is
index i - 1, I_b = (b/m, (b+1)/m] (I_0 closed), stated value (b+1)/m.
"""

from fastcdl._kernels._jit import kernel


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
