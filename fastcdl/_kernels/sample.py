"""Estimators of calibration from a sample: monotone CDL, cutoff CE, ATB, smCE, Brier (docs/estimators.md).

Every kernel takes the bucket table sorted by prediction: q (float64, sorted, distinct),
n and s (float64 counts and positives; integer counts arrive as exact floats) and returns
plain numbers or arrays. Nothing here sorts or validates; fastcdl/sample.py does both.

- monotone_*, pav_kernel: the V-kink curve f_M of the best non-decreasing recalibration.
  With suffix sums Y_j = sum_{i>=j} s_i and N_j = sum_{i>=j} n_i, T f_M(mu) = max_j
  (Y_j - mu N_j) minus the forecaster's own term (Y_j(mu) - mu N_j(mu)), j(mu) the first
  bucket with q >= mu. The max is read on the upper hull of the points (N_j, Y_j), whose
  edges are the PAV blocks, with a pointer walk over sorted kinks: O(m + k). The concave
  envelope at 1/2 is envelope_at_half of fastcdl/_kernels/envelope.py, as for the exact CDL.
- cutoff_kernel: the range of the prefix sums of s_i - q_i n_i, P_0 = 0 included. O(m).
- brier_*, murphy_kernel, mce_kernel: the classic numbers. O(m) (O(T) on raw rounds).
- atb_kernel: the two-bin integral in closed form over the pieces between predictions. O(m).
- smce_kernel: the dual of the one-sided smooth-calibration LP as a dynamic programme over a
  convex piecewise-linear function whose breakpoints sit in one heap. O(m log m).
"""

import numpy as np

from fastcdl._kernels._jit import kernel
from fastcdl._kernels.envelope import envelope_at_half

# --------------------------------------------------------------------------------------
# monotone CDL and VCDL


@kernel
def suffix_hull(n, s):
    """(N, Y, hull): suffix sums N_j, Y_j (j = 0..m, N_m = Y_m = 0) and the indices j of the
    vertices of the upper hull of the points (N_j, Y_j), increasing in j (hull[0] = 0,
    hull[-1] = m). Consecutive vertices a < b bound the PAV blocks
    a..b-1. Andrew's monotone chain over j = m, m-1, ..., 0 (N increasing); points on a
    hull edge are dropped. O(m)."""
    m = n.shape[0]
    N = np.empty(m + 1)
    Y = np.empty(m + 1)
    stack = np.empty(m + 1, dtype=np.int64)  # only the touched part costs memory
    N[m] = 0.0
    Y[m] = 0.0
    stack[0] = m
    k = 1
    for j in range(m - 1, -1, -1):
        N[j] = N[j + 1] + n[j]
        Y[j] = Y[j + 1] + s[j]
        while k >= 2:
            i0 = stack[k - 2]
            i1 = stack[k - 1]
            cross = (N[i1] - N[i0]) * (Y[j] - Y[i0]) - (Y[i1] - Y[i0]) * (N[j] - N[i0])
            if cross >= 0.0:
                k -= 1
            else:
                break
        stack[k] = j
        k += 1
    hull = np.empty(k, dtype=np.int64)
    for t in range(k):
        hull[t] = stack[k - 1 - t]
    return N, Y, hull


@kernel
def _walk(q, N, Y, hull, mu, state):
    """T f_M(mu) and T f_M(mu+) for the next kink mu >= the previous one.

    state = [h, jl, jr]: the optimal hull vertex so far (it moves to larger j as mu grows),
    the first bucket with q >= mu and the first with q > mu. Differences of suffix sums
    are formed before the one multiplication by mu, so integer tables lose at most two
    roundings; the forecaster's own set is among the candidates of the max, so both values
    are >= 0 and are clamped there.
    """
    m = q.shape[0]
    h = state[0]
    while h + 1 < hull.shape[0]:
        a = hull[h]
        b = hull[h + 1]
        if (Y[b] - Y[a]) - mu * (N[b] - N[a]) >= 0.0:
            h += 1
        else:
            break
    jl = state[1]
    while jl < m and q[jl] < mu:
        jl += 1
    jr = state[2]
    while jr < m and q[jr] <= mu:
        jr += 1
    state[0] = h
    state[1] = jl
    state[2] = jr
    k = hull[h]
    left = (Y[k] - Y[jl]) - mu * (N[k] - N[jl])
    right = (Y[k] - Y[jr]) - mu * (N[k] - N[jr])
    return max(left, 0.0), max(right, 0.0)


@kernel
def monotone_curve(q, n, s, mus, T):
    """(f_M(mu), f_M(mu+)) at each kink of ``mus`` (sorted increasing). O(m + len(mus)).

    f_M(mu) uses the forecaster's acting set {q_i >= mu} (the tie rule of docs/metrics.md),
    f_M(mu+) the set {q_i > mu}.
    """
    N, Y, hull = suffix_hull(n, s)
    state = np.zeros(3, dtype=np.int64)
    f_left = np.empty(mus.shape[0])
    f_right = np.empty(mus.shape[0])
    for t in range(mus.shape[0]):
        left, right = _walk(q, N, Y, hull, mus[t], state)
        f_left[t] = left / T
        f_right[t] = right / T
    return f_left, f_right


@kernel
def monotone_cdl_kernel(q, n, s, T):
    """(cdl_M, j1, j2, b, h, right, vcdl_M, jv): CDL_M = 2 fbar_M(1/2) and VCDL_M.

    The candidates b are the predictions with 0, 1/2 and 1 merged in (sorted, distinct),
    h_j = max(f_M(b_j), f_M(b_j+)) and right_j = 1 where the larger is f_M(b_j+). Between
    consecutive predictions f_M is convex (a max of lines minus a line), so its concave
    envelope and the sup of f_M / max(mu, 1 - mu) (quasi-convex on each side of 1/2) are
    attained at the candidates, from one side. j1, j2 index the worst task's kinks in b,
    jv the VCDL_M kink. O(m).
    """
    m = q.shape[0]
    N, Y, hull = suffix_hull(n, s)
    state = np.zeros(3, dtype=np.int64)
    b = np.empty(m + 3)
    h = np.empty(m + 3)
    right = np.empty(m + 3, dtype=np.uint8)
    fixed = np.array([0.0, 0.5, 1.0])
    i = 0
    k = 0
    nb = 0
    jv = 0
    best = -1.0
    while i < m or k < 3:
        if k >= 3 or (i < m and q[i] <= fixed[k]):
            x = q[i] + 0.0  # -0.0 is the prediction 0
            i += 1
        else:
            x = fixed[k]
            k += 1
        if nb > 0 and b[nb - 1] == x:
            continue
        fl, fr = _walk(q, N, Y, hull, x, state)
        b[nb] = x
        h[nb] = max(fl, fr) / T
        right[nb] = 1 if fr > fl else 0
        r = h[nb] / max(x, 1.0 - x)
        if r > best:
            best = r
            jv = nb
        nb += 1
    value, j1, j2 = envelope_at_half(b[:nb], h[:nb])
    return 2.0 * value, j1, j2, b[:nb], h[:nb], right[:nb], best, jv


@kernel
def pav_kernel(n, s):
    """Isotonic (non-decreasing) regression of s_i / n_i with weights n_i, per bucket. O(m)."""
    m = n.shape[0]
    N, Y, hull = suffix_hull(n, s)
    iso = np.empty(m)
    for k in range(hull.shape[0] - 1):
        a = hull[k]
        b = hull[k + 1]
        v = (Y[a] - Y[b]) / (N[a] - N[b])
        for i in range(a, b):
            iso[i] = v
    return iso


# --------------------------------------------------------------------------------------
# cutoff calibration error, ATB, Brier, MCE


@kernel
def cutoff_kernel(q, n, s):
    """(max_k P_k - min_k P_k, k_min, k_max, V) with P_k = (1/T) sum_{i<k} (s_i - q_i n_i),
    k = 0..m (P_0 = 0), and V = sum_i n_i q_i (1 - q_i). The interval of buckets attaining
    the range is min(k_min, k_max) .. max(k_min, k_max) - 1. O(m)."""
    m = q.shape[0]
    T = 0.0
    for i in range(m):
        T += n[i]
    P = 0.0
    lo = 0.0
    hi = 0.0
    k_lo = 0
    k_hi = 0
    V = 0.0
    for i in range(m):
        P += s[i] - q[i] * n[i]
        V += n[i] * q[i] * (1.0 - q[i])
        if P < lo:
            lo = P
            k_lo = i + 1
        if P > hi:
            hi = P
            k_hi = i + 1
    return (hi - lo) / T, k_lo, k_hi, V


@kernel
def atb_kernel(q, n, s):
    """ATB = (1/T^2) sum_{k=0..m} (q_{k+1} - q_k) (R_k^2 + (R_m - R_k)^2), q_0 = 0, q_{m+1} = 1,
    R_k = sum_{i<=k} (q_i n_i - s_i). O(m)."""
    m = q.shape[0]
    T = 0.0
    Rm = 0.0
    for i in range(m):
        T += n[i]
        Rm += q[i] * n[i] - s[i]
    R = 0.0
    prev = 0.0
    total = 0.0
    for i in range(m):
        total += (q[i] - prev) * (R * R + (Rm - R) * (Rm - R))
        R += q[i] * n[i] - s[i]
        prev = q[i]
    total += (1.0 - prev) * (R * R + (Rm - R) * (Rm - R))
    return total / (T * T)


@kernel
def brier_table_kernel(q, n, s):
    """(1/T) sum_i [(n_i - s_i) q_i^2 + s_i (1 - q_i)^2], the Brier score of the table. O(m)."""
    T = 0.0
    total = 0.0
    for i in range(q.shape[0]):
        T += n[i]
        total += (n[i] - s[i]) * q[i] * q[i] + s[i] * (1.0 - q[i]) * (1.0 - q[i])
    return total / T


@kernel
def brier_rounds_kernel(y, p, w):
    """(1/sum w) sum_t w_t (p_t - y_t)^2 over raw rounds (w empty: unit weights). O(T)."""
    total = 0.0
    W = 0.0
    weighted = w.shape[0] > 0
    for t in range(p.shape[0]):
        d = p[t] - y[t]
        if weighted:
            total += w[t] * d * d
            W += w[t]
        else:
            total += d * d
    if not weighted:
        W = p.shape[0]
    return total / W


@kernel
def murphy_kernel(q, n, s):
    """(reliability, resolution, uncertainty) of the table: (1/T) sum n_i (q_i - qhat_i)^2,
    (1/T) sum n_i (qhat_i - ybar)^2 and ybar (1 - ybar). O(m)."""
    T = 0.0
    S = 0.0
    for i in range(q.shape[0]):
        T += n[i]
        S += s[i]
    ybar = S / T
    rel = 0.0
    res = 0.0
    for i in range(q.shape[0]):
        h = s[i] / n[i]
        rel += n[i] * (q[i] - h) * (q[i] - h)
        res += n[i] * (h - ybar) * (h - ybar)
    return rel / T, res / T, ybar * (1.0 - ybar)


@kernel
def mce_kernel(q, n, s):
    """(max_i |q_i - qhat_i|, argmax) over the (non-empty) buckets. O(m)."""
    best = -1.0
    arg = 0
    for i in range(q.shape[0]):
        d = abs(q[i] - s[i] / n[i])
        if d > best:
            best = d
            arg = i
    return best, arg


# --------------------------------------------------------------------------------------
# smooth calibration error: one 4-ary min-heap of (position, weight) pairs


@kernel
def _heap_push(h, size, key, weight):
    """Push (key, weight) on a 4-ary min-heap by key, stored as interleaved pairs in a
    float64 array. Returns the new size. O(log size)."""
    j = size
    while j > 0:
        p = (j - 1) >> 2
        if h[2 * p] <= key:
            break
        h[2 * j] = h[2 * p]
        h[2 * j + 1] = h[2 * p + 1]
        j = p
    h[2 * j] = key
    h[2 * j + 1] = weight
    return size + 1


@kernel
def _heap_pop(h, size):
    """Remove the top of the heap of :func:`_heap_push`. Returns the new size. O(log size)."""
    size -= 1
    key = h[2 * size]
    weight = h[2 * size + 1]
    j = 0
    while True:
        c = 4 * j + 1
        if c >= size:
            break
        best = c
        bk = h[2 * c]
        e = min(c + 4, size)
        for cc in range(c + 1, e):
            if h[2 * cc] < bk:
                bk = h[2 * cc]
                best = cc
        if bk >= key:
            break
        h[2 * j] = bk
        h[2 * j + 1] = h[2 * best + 1]
        j = best
    h[2 * j] = key
    h[2 * j + 1] = weight
    return size


@kernel
def smce_kernel(q, n, s):
    """smCE = max (1/T) sum_i w_i r_i over |w_i| <= 1, |w_{i+1} - w_i| <= d_i, with
    r_i = s_i - q_i n_i and d_i = q_{i+1} - q_i (docs/estimators.md). O(m log m).

    One side of the box suffices: the q_i lie in [0, 1], so any feasible w varies by at
    most 1 < 2 and cannot touch both -1 and 1. With R = sum_i r_i >= 0 (else r -> -r) and
    w = 1 + u, T smCE = R + max { sum_i r_i u_i : u_i <= 0, |u_{i+1} - u_i| <= d_i }, and
    that maximum equals its LP dual

        min over z (z_0 = z_m = 0) of  sum_i d_i |z_i|  subject to  z_i - z_{i-1} <= r_i.

    A forward dynamic programme: S_i(x) = min over z_i >= x of the cost with z_i, a
    non-decreasing convex piecewise-linear function of x <= U_i = r_1 + ... + r_i, flat
    (at its minimum M) on the left, then rising at breakpoints of positive weight. A step
    shifts S by r_{i+1} (one offset for every breakpoint), adds d_{i+1} |z| (a breakpoint
    at 0 of weight 2 d_{i+1}, and slope -d_{i+1} on the flat part) and takes the suffix
    minimum again, which removes weight d_{i+1} from the leftmost breakpoints while M
    follows the walk. The answer is S_{m-1}(-r_m). One min-heap finds the leftmost
    breakpoint; each enters it once and leaves it at most once.
    """
    m = q.shape[0]
    T = 0.0
    R = 0.0
    for i in range(m):
        T += n[i]
        R += s[i] - q[i] * n[i]
    sign = 1.0 if R >= 0.0 else -1.0
    h = np.empty(2 * m)  # the breakpoints: stored position (position - off) and weight
    size = 0
    off = 0.0  # every breakpoint's position is its stored key plus off
    U = 0.0  # the right end of the domain of S
    M = 0.0  # the minimum of S, its value on the flat part
    for i in range(m - 1):
        r = sign * (s[i] - q[i] * n[i])
        off += r
        U += r
        d = q[i + 1] - q[i]
        if U > 0.0:
            size = _heap_push(h, size, -off, 2.0 * d)
        # the flat part now falls with slope -d: walk right to the new minimum
        g = -d
        x = h[0] + off if size > 0 else U  # the leftmost breakpoint, at or left of 0
        M += d * abs(x)
        while size > 0:
            w = h[1]
            if g + w < 0.0:
                size = _heap_pop(h, size)
                g += w
                nx = h[0] + off if size > 0 else U
                M += g * (nx - x)
                x = nx
            else:
                h[1] = g + w  # the part of the weight left of the new minimum is gone
                break
    off += sign * (s[m - 1] - q[m - 1] * n[m - 1])
    value = M  # S_{m-1}(-r_m): the breakpoints left of it add their weight times the distance
    for k in range(size):
        x = h[2 * k] + off
        if x < 0.0:
            value -= h[2 * k + 1] * x
    return (abs(R) + max(value, 0.0)) / T
