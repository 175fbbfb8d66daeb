"""Estimators of calibration from a sample: monotone CDL, cutoff CE, ATB, smCE, Brier (docs/estimators.md).

Every kernel takes the bucket table sorted by prediction: q (float64, sorted, distinct),
n and s (float64 counts and positives; integer counts arrive as exact floats) and returns
plain numbers or arrays. Nothing here sorts or validates; fastcdl/sample.py does both.

- monotone_*, pav_kernel: the V-kink curve f_M of the best non-decreasing recalibration.
  With suffix sums Y_j = sum_{i>=j} s_i and N_j = sum_{i>=j} n_i, T f_M(mu) = max_j
  (Y_j - mu N_j) minus the forecaster's own term (Y_j(mu) - mu N_j(mu)), j(mu) the first
  bucket with q >= mu. The max is read on the upper hull of the points (N_j, Y_j), whose
  edges are the PAV blocks, with a pointer walk over sorted kinks: O(m + k). The concave
  envelope at 1/2 is envelope_at_half of fastcdl/_compiled/envelope.py, as for the exact CDL.
- cutoff_kernel: the range of the prefix sums of s_i - q_i n_i, P_0 = 0 included. O(m).
- brier_*, murphy_kernel, mce_kernel: the classic numbers. O(m) (O(T) on raw rounds).
- atb_kernel: the two-bin integral in closed form over the pieces between predictions. O(m).
- smce_*: the dual of the one-sided smooth-calibration LP as two dynamic programmes over convex
  piecewise-linear functions, one from each end, joined at a middle bucket. O(m log m).
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.envelope import envelope_at_half

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


@kernel(nogil=True)  # an interval's subsamples run it on two threads (fastcdl._parallel.share)
def monotone_cdl_kernel(q, n, s, T):
    """(cdl_M, j1, j2, b, h, right, vcdl_M, jv): CDL_M = 2 fbar_M(1/2) and VCDL_M.

    The candidates b are the predictions with 0, 1/2 and 1 merged in (sorted, distinct),
    h_j = max(f_M(b_j), f_M(b_j+)) and right_j = 1 where the larger is f_M(b_j+). Between
    consecutive predictions f_M is convex (a max of lines minus a line), so its concave
    envelope and the sup of f_M / max(mu, 1 - mu) (quasi-convex on each side of 1/2) are
    attained at the candidates, from one side. j1, j2 index the worst task's kinks in b,
    jv the VCDL_M kink. O(m).

    The walk of :func:`_walk` written out: the predictions are distinct, so at a candidate
    x = q_i the first bucket with q >= x is i and the first with q > x is i + 1, and at a
    fixed point between q_{i-1} and q_i both are i; only the hull vertex is searched (the
    same numbers as :func:`_walk`, in about 0.75 of its time on distinct subsamples: by
    hand, docs/compile-time.md).
    """
    m = q.shape[0]
    N, Y, hull = suffix_hull(n, s)
    b = np.empty(m + 3)
    h = np.empty(m + 3)
    right = np.empty(m + 3, dtype=np.uint8)
    fixed = np.array([0.0, 0.5, 1.0])
    last = hull.shape[0] - 1
    top = 0  # the optimal hull vertex so far: it moves to larger j as x grows
    i = 0
    k = 0
    nb = 0
    jv = 0
    best = -1.0
    while i < m or k < 3:
        if k >= 3 or (i < m and q[i] <= fixed[k]):
            x = q[i] + 0.0  # -0.0 is the prediction 0
            jl = i  # the forecaster's acting set {q >= x} starts at i, {q > x} at i + 1
            i += 1
            jr = i
        else:
            x = fixed[k]
            k += 1
            jl = i
            jr = i
        if nb > 0 and b[nb - 1] == x:
            continue
        while top < last:
            a0 = hull[top]
            a1 = hull[top + 1]
            if (Y[a1] - Y[a0]) - x * (N[a1] - N[a0]) >= 0.0:
                top += 1
            else:
                break
        v = hull[top]
        fl = max((Y[v] - Y[jl]) - x * (N[v] - N[jl]), 0.0)
        fr = max((Y[v] - Y[jr]) - x * (N[v] - N[jr]), 0.0)
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
# smooth calibration error: two forward programmes that meet in the middle
#
# The one-sided dual (docs/estimators.md): with r_i = sign (s_i - q_i n_i), sign making
# R = sum_i r_i >= 0, and d_i = q_{i+1} - q_i,
#
#     T smCE = R + min over z (z_{-1} = z_{m-1} = 0) of sum_i d_i |z_i|  s.t.  z_i - z_{i-1} <= r_i,
#
# z_i the flow across gap i (between buckets i and i + 1). A forward programme over buckets
# 0 .. J - 1 gives S_L(y), the least cost of gaps 0 .. J - 1 with z_{J-1} >= y; the same
# programme over the buckets in reverse order, m - 1 .. J + 1 (flows negated, which keeps the
# constraints' form), gives S_R. Bucket J joins them: the answer is
#
#     min over y in [lo, hi] of  S_L(y) + S_R(-y - r_J),   lo = -U_R - r_J, hi = U_L,
#
# U the sums of the r of each side (the ends of the domains). Each S is its minimum M plus
# w (x - position)^+ over its breakpoints, so the sum is convex piecewise linear in y and its
# minimum sits where the breakpoints' weights, read from the left, reach the right side's
# total weight: a weighted selection, O(number of breakpoints). The two programmes are
# independent: fastcdl runs them on two threads.
#
# Inside a programme (smce_side), the breakpoints live in a bucket queue: their stored keys
# (-U at the round they enter, fixed for life) are known in advance, so one counting pass lays
# out buckets by key, about SMCE_BUCKET breakpoints each. A round adds a breakpoint of weight
# 2 d and takes d of weight from the breakpoints with the least keys (the slope trick). Taking
# is deferred: the demand of past rounds is held as one number while it is less than the
# first bucket's live weight, and is taken only when a breakpoint enters the first bucket (or
# an earlier one) or at the end: then the first bucket is put in order (insertion; a 4-ary
# heap for buckets laid out for more than SMCE_SORTED_MAX breakpoints, which data whose walk
# crowds into few values can make: O(m log m) at worst) and its least keys are used up in
# turn. When the demand reaches the first bucket's weight, the whole bucket is used up,
# in any order, and the next non-empty one becomes first. The programme's minimum M is not
# carried round by round: it is the weight times level taken from breakpoints, minus
# sum_k d_k U_k (a round's demand d_k costs d_k times the level it is taken from minus U_k;
# demand that finds no breakpoint is taken at level 0).

# breakpoints per bucket of the queue (measured on one thread: 128 as fast as 64 at 10^5
# buckets and 6-13% faster at 10^6 and 10^7; 256 slower below 10^7)
SMCE_BUCKET = 128
SMCE_SORTED_MAX = 256  # a bucket laid out for more breakpoints is kept as a heap, not sorted
SMCE_BLOCK = 1024  # rounds between the checkpoints that balance the two sides


@kernel
def _heap_push(h, base, size, key, weight):
    """Push (key, weight) on the 4-ary min-heap of ``size`` entries stored as interleaved
    pairs at h[2 base:]. Returns the new size. O(log size)."""
    j = size
    while j > 0:
        p = (j - 1) >> 2
        if h[2 * (base + p)] <= key:
            break
        h[2 * (base + j)] = h[2 * (base + p)]
        h[2 * (base + j) + 1] = h[2 * (base + p) + 1]
        j = p
    h[2 * (base + j)] = key
    h[2 * (base + j) + 1] = weight
    return size + 1


@kernel
def _heap_pop(h, base, size):
    """Remove the top of the heap of :func:`_heap_push`. Returns the new size. O(log size)."""
    size -= 1
    key = h[2 * (base + size)]
    weight = h[2 * (base + size) + 1]
    j = 0
    while True:
        c = 4 * j + 1
        if c >= size:
            break
        if c + 3 < size:  # four children: their minimum without branches
            k0 = h[2 * (base + c)]
            k1 = h[2 * (base + c) + 2]
            k2 = h[2 * (base + c) + 4]
            k3 = h[2 * (base + c) + 6]
            a = c + 1 if k1 < k0 else c
            ka = k1 if k1 < k0 else k0
            b = c + 3 if k3 < k2 else c + 2
            kb = k3 if k3 < k2 else k2
            best = b if kb < ka else a
            bk = kb if kb < ka else ka
        else:
            best = c
            bk = h[2 * (base + c)]
            for cc in range(c + 1, size):
                if h[2 * (base + cc)] < bk:
                    bk = h[2 * (base + cc)]
                    best = cc
        if bk >= key:
            break
        h[2 * (base + j)] = bk
        h[2 * (base + j) + 1] = h[2 * (base + best) + 1]
        j = best
    h[2 * (base + j)] = key
    h[2 * (base + j) + 1] = weight
    return size


@kernel
def smce_split(r):
    """(R, sign, J, checkpoints) for the residuals r_i: the sign that makes R = sign sum r_i
    >= 0, and the junction bucket J that gives both programmes about as much work. O(m).

    checkpoints[c] is the prefix sum r_0 + ... + r_{c B - 1} (B = SMCE_BLOCK, unsigned; the
    last entry the total), from which each side estimates the range of its keys; any
    estimate is correct (the buckets only need to be ordered by key), a good one balances
    them. :func:`table_residuals` and :func:`keys_residuals` fill them in their own pass.
    """
    m = r.shape[0]
    blocks = (m + SMCE_BLOCK - 1) // SMCE_BLOCK
    checkpoints = np.empty(blocks + 1)
    R = 0.0
    for i in range(m):
        if i % SMCE_BLOCK == 0:
            checkpoints[i // SMCE_BLOCK] = R
        R += r[i]
    checkpoints[blocks] = R
    R, sign, J = smce_balance(checkpoints, m)
    return R, sign, J, checkpoints


@kernel
def smce_balance(checkpoints, m):
    """(R, sign, J) from the checkpoints of :func:`smce_split` for m buckets. O(m / B)."""
    blocks = checkpoints.shape[0] - 1
    R = checkpoints[blocks]
    sign = 1.0 if R >= 0.0 else -1.0
    # breakpoints enter the left programme where the prefix sum is > 0 and the right one
    # where the suffix sum is > 0. A round costs about 1, a breakpoint about 3 more
    # (measured): estimate each block's cost from a checkpoint, split where the costs meet
    right = 0
    for c in range(blocks):
        right += 4 if sign * (R - checkpoints[c]) > 0.0 else 1
    left = 0
    J = m - 1
    for c in range(blocks):
        if left >= right:
            J = c * SMCE_BLOCK
            break
        left += 4 if sign * checkpoints[c + 1] > 0.0 else 1
        right -= 4 if sign * (R - checkpoints[c]) > 0.0 else 1
    return R * sign, sign, J


@kernel
def _take(h, top, srt, end, heap, demand):
    """Take ``demand`` (less than their total weight) from the breakpoints h[top:end] of the
    first bucket, least keys first, after putting h[srt:end] in order with h[top:srt] (sorted,
    or a heap rooted at top when ``heap``). Returns (top, end, weight times level taken). The
    last breakpoint touched keeps the rest of its weight. O(breakpoints moved), O(log) each
    for a heap."""
    taken = 0.0
    if heap:
        for j in range(srt, end):
            srt = top + _heap_push(h, top, srt - top, h[2 * j], h[2 * j + 1])
        while end - top > 1 and demand >= h[2 * top + 1]:
            w = h[2 * top + 1]
            demand -= w
            taken -= w * h[2 * top]
            end = top + _heap_pop(h, top, end - top)
    else:
        for a in range(srt, end):
            key = h[2 * a]
            w = h[2 * a + 1]
            j = a
            while j > top and h[2 * j - 2] > key:
                h[2 * j] = h[2 * j - 2]
                h[2 * j + 1] = h[2 * j - 1]
                j -= 1
            h[2 * j] = key
            h[2 * j + 1] = w
        while top < end - 1 and demand >= h[2 * top + 1]:
            w = h[2 * top + 1]
            demand -= w
            taken -= w * h[2 * top]
            top += 1
    h[2 * top + 1] -= demand
    taken -= demand * h[2 * top]
    return top, end, taken


# Complexity above ruff's 15 (noqa: C901): one pass of the dual's walk with every case a branch
# of the loop, so that numba keeps the walk's state in registers. One copy serves both sides:
# a copy specialised per side (``side`` a constant) ran 1.05x-1.21x faster at 10^4 to 10^6
# buckets but cost a second compilation of this body, 1.8 s of every first smCE
# (results/benchmarks/smce-copies.md).
@kernel(nogil=True)
def smce_side(q, r, sign, J, side, checkpoints, h, S, out):  # noqa: C901
    """One forward programme (side 0: buckets 0 .. J - 1; side 1: m - 1 .. J + 1, reversed)
    in h[:2 J] or h[2 J:], then a summary of its live breakpoints per bucket of the queue in
    S[side] and out[4 side:] = (M, U, number of buckets). O(k log k) for k buckets, about
    linear on calibrated samples. Releases the GIL: the two sides write disjoint parts of h,
    S and out, so two threads can run them at once (fastcdl.sample.smce does).
    """
    m = q.shape[0]
    if side == 0:
        i0, step, count, gap, slot0 = 0, 1, J, 0, 0
    else:
        i0, step, count, gap, slot0 = m - 1, -1, m - 1 - J, -1, J
    # the keys' range, estimated from the checkpoints (the prefix sums of r every block)
    R = checkpoints[checkpoints.shape[0] - 1]
    top_sum = 0.0
    for c in range(checkpoints.shape[0]):
        if side == 0 and c * SMCE_BLOCK <= J:
            top_sum = max(top_sum, sign * checkpoints[c])
        elif side == 1 and c * SMCE_BLOCK >= J:
            top_sum = max(top_sum, sign * (R - checkpoints[c]))
    K = max(1, count // SMCE_BUCKET)
    scale = K / top_sum if top_sum > 0.0 else 0.0
    # one counting pass lays the buckets out
    start = np.zeros(K + 1, dtype=np.int64)
    U = 0.0
    for k in range(count):
        i = i0 + step * k
        U += sign * r[i]
        if U > 0.0:
            start[K - int(min(U * scale, K - 1.0))] += 1
    start[0] = slot0
    for b in range(K):
        start[b + 1] += start[b]
    # a bucket's live breakpoints are h[start + head : start + size]; the first bucket's
    # (the least keys) are h[top:end] instead, of which h[top:srt] are in order, Wf their
    # weight, and ``demand`` what past rounds still have to take from them (< Wf)
    size = np.zeros(K, dtype=np.int64)
    head = np.zeros(K, dtype=np.int64)
    first = K
    top = 0
    srt = 0
    end = 0
    heap = False
    Wf = 0.0
    demand = 0.0
    taken = 0.0  # weight times level taken from breakpoints
    dU = 0.0
    U = 0.0
    for k in range(count):
        i = i0 + step * k
        d = q[i + 1 + gap] - q[i + gap]
        U += sign * r[i]
        dU += d * U
        if U > 0.0:
            b = K - 1 - int(min(U * scale, K - 1.0))
            if b > first:
                j = start[b] + size[b]
                h[2 * j] = -U
                h[2 * j + 1] = 2.0 * d
                size[b] += 1
            else:
                if first < K and demand > 0.0:  # the past demand goes before this breakpoint
                    top, end, t = _take(h, top, srt, end, heap, demand)
                    srt = end
                    taken += t
                    Wf -= demand
                    demand = 0.0
                if b < first:  # an empty bucket becomes first
                    if first < K:
                        head[first] = top - start[first]
                        size[first] = end - start[first]
                    first = b
                    top = start[b] + head[b]
                    srt = top
                    end = top
                    heap = start[b + 1] - start[b] > SMCE_SORTED_MAX
                    Wf = 0.0
                h[2 * end] = -U
                h[2 * end + 1] = 2.0 * d
                end += 1
                Wf += 2.0 * d
        if first < K:
            demand += d
            while demand >= Wf:  # the first bucket is used up, in any order
                for j in range(top, end):
                    taken -= h[2 * j + 1] * h[2 * j]
                demand -= Wf
                head[first] = end - start[first]
                size[first] = end - start[first]
                first += 1
                while first < K and head[first] == size[first]:
                    first += 1
                Wf = 0.0
                if first == K:  # the rest is taken at level 0
                    demand = 0.0
                    break
                top = start[first] + head[first]
                srt = top
                end = start[first] + size[first]
                heap = start[first + 1] - start[first] > SMCE_SORTED_MAX
                for j in range(top, end):
                    Wf += h[2 * j + 1]
    if first < K:
        if demand > 0.0:
            top, end, t = _take(h, top, srt, end, heap, demand)
            taken += t
        head[first] = top - start[first]
        size[first] = end - start[first]
    # per bucket, the live breakpoints in the junction's variable y: one of S_L at position
    # key + U is at y = key + U; one of S_R, read at -y - r_J, is at y = -(key + U) - r_J
    # (y increases with the bucket on the left, decreases on the right). S[side, b] = (weight,
    # weight * y, least y, largest y, first and end index in h) for the junction
    rJ = sign * r[J]
    for b in range(K):
        lo = start[b] + head[b]
        hi = start[b] + size[b]
        W = 0.0
        Y = 0.0
        ymin = np.inf
        ymax = -np.inf
        for j in range(lo, hi):
            y = h[2 * j] + U if side == 0 else -(h[2 * j] + U) - rJ
            w = h[2 * j + 1]
            W += w
            Y += w * y
            ymin = min(ymin, y)
            ymax = max(ymax, y)
        S[side, b, 0] = W
        S[side, b, 1] = Y
        S[side, b, 2] = ymin
        S[side, b, 3] = ymax
        S[side, b, 4] = lo
        S[side, b, 5] = hi
    out[4 * side] = taken - dU
    out[4 * side + 1] = U
    out[4 * side + 2] = K


@kernel
def weighted_select(h, a, b, need):
    """The smallest y among the pairs (y, weight) in h[2a:2b] whose weights, summed over
    y' <= y, reach ``need`` (> 0); +inf when none does. Reorders the pairs. Expected O(b - a):
    a quickselect with three-way partitions around a median of three."""
    lo = a
    hi = b
    while hi - lo > 16:
        v0 = h[2 * lo]
        v1 = h[2 * ((lo + hi) >> 1)]
        v2 = h[2 * (hi - 1)]
        piv = max(min(v0, v1), min(max(v0, v1), v2))
        lt = lo
        i = lo
        gt = hi
        wl = 0.0
        we = 0.0
        while i < gt:
            v = h[2 * i]
            if v < piv:
                wl += h[2 * i + 1]
                h[2 * i], h[2 * lt] = h[2 * lt], v
                h[2 * i + 1], h[2 * lt + 1] = h[2 * lt + 1], h[2 * i + 1]
                lt += 1
                i += 1
            elif v > piv:
                gt -= 1
                h[2 * i], h[2 * gt] = h[2 * gt], v
                h[2 * i + 1], h[2 * gt + 1] = h[2 * gt + 1], h[2 * i + 1]
            else:
                we += h[2 * i + 1]
                i += 1
        if wl >= need:
            hi = lt
        elif wl + we >= need:
            return piv
        else:
            need -= wl + we
            lo = gt
    for i in range(lo + 1, hi):  # a short segment: insertion sort, then walk
        v = h[2 * i]
        w = h[2 * i + 1]
        j = i - 1
        while j >= lo and h[2 * j] > v:
            h[2 * j + 2] = h[2 * j]
            h[2 * j + 3] = h[2 * j + 1]
            j -= 1
        h[2 * j + 2] = v
        h[2 * j + 3] = w
    acc = 0.0
    for i in range(lo, hi):
        acc += h[2 * i + 1]
        if acc >= need:
            return h[2 * i]
    return np.inf


# Complexity above ruff's 15 (noqa: C901): the join of the two sides' walks in one loop over the
# checkpoints, every case a branch of it (the state stays in registers; see smce_side).
@kernel
def smce_join(r, sign, J, h, S, out):  # noqa: C901
    """Bucket J joins the two programmes of :func:`smce_side`: min over y in [lo, hi] of
    F(y) = S_L(y) + S_R(-y - r_J). O(buckets) plus the breakpoints of the few buckets around
    the minimum.

    The slope of F at y is the weight of the breakpoints at or left of y minus W_R, the right
    side's total, so the minimum is the least y where that weight reaches W_R. Walking both
    sides' buckets in order of their least y finds the first bucket where the summed weight
    reaches W_R; the answer lies between its least y and the largest y of the buckets walked,
    so only the buckets overlapping that interval are searched one by one (a weighted
    selection). F itself is read off the buckets' sums, one by one only where a bucket
    straddles the minimum, with (yi - y)^+ = (y - yi)^+ + yi - y for the right side.
    """
    ML, UL, KL = out[0], out[1], int(out[2])
    MR, UR, KR = out[4], out[5], int(out[6])
    rJ = sign * r[J]
    lo = -UR - rJ
    hi = UL
    WR = 0.0
    moment = 0.0
    for b in range(KR):
        WR += S[1, b, 0]
        moment += S[1, b, 1]
    y = lo
    if WR > 0.0:
        # buckets by least y: the left ones in their order, the right ones in reverse
        i = 0
        k = KR - 1
        acc = 0.0
        top = -np.inf  # the largest y of the buckets walked
        start_y = np.inf
        while True:
            while i < KL and S[0, i, 0] == 0.0:  # empty buckets (least y +inf) are skipped
                i += 1
            while k >= 0 and S[1, k, 0] == 0.0:
                k -= 1
            if i == KL and k < 0:
                break
            if k < 0 or (i < KL and S[0, i, 2] <= S[1, k, 2]):
                side, b = 0, i
                i += 1
            else:
                side, b = 1, k
                k -= 1
            acc += S[side, b, 0]
            top = max(top, S[side, b, 3])
            if acc >= WR:
                start_y = S[side, b, 2]
                break
        if start_y == np.inf:
            y = hi  # the weight never reaches WR (rounding): F falls all the way
        else:
            # below start_y: whole buckets; between start_y and top: the breakpoints
            base = 0.0
            n = 0
            for side in range(2):
                for b in range(KL if side == 0 else KR):
                    if S[side, b, 0] == 0.0 or S[side, b, 2] > top:
                        continue
                    if S[side, b, 3] < start_y:
                        base += S[side, b, 0]
                    else:
                        n += int(S[side, b, 5] - S[side, b, 4])
            pairs = np.empty(2 * n)
            n = 0
            for side in range(2):
                U = UL if side == 0 else UR
                for b in range(KL if side == 0 else KR):
                    if S[side, b, 0] == 0.0 or S[side, b, 2] > top or S[side, b, 3] < start_y:
                        continue
                    for j in range(int(S[side, b, 4]), int(S[side, b, 5])):
                        pairs[2 * n] = h[2 * j] + U if side == 0 else -(h[2 * j] + U) - rJ
                        pairs[2 * n + 1] = h[2 * j + 1]
                        n += 1
            y = max(lo, min(hi, weighted_select(pairs, 0, n, WR - base)))
    F = ML + MR + moment - WR * y
    for side in range(2):
        U = UL if side == 0 else UR
        for b in range(KL if side == 0 else KR):
            if S[side, b, 0] == 0.0 or S[side, b, 2] >= y:
                continue
            if S[side, b, 3] < y:
                F += S[side, b, 0] * y - S[side, b, 1]
            else:
                for j in range(int(S[side, b, 4]), int(S[side, b, 5])):
                    yi = h[2 * j] + U if side == 0 else -(h[2 * j] + U) - rJ
                    if yi < y:
                        F += h[2 * j + 1] * (y - yi)
    return F


@kernel
def smce_summaries(m):
    """The per-bucket summaries of both programmes (see :func:`smce_side`): (2, K + 1, 6), K
    the most buckets a side lays out for a table of m buckets."""
    return np.zeros((2, max(1, (m - 1) // SMCE_BUCKET) + 1, 6))


@kernel
def smce_at(q, r, T, J):
    """smCE with the programmes joined at bucket J: any J in [0, m - 1] gives the same value
    up to rounding (tests use it). O(m log m)."""
    R, sign, _, checkpoints = smce_split(r)
    h = np.empty(2 * max(q.shape[0] - 1, 1))
    S = smce_summaries(q.shape[0])
    out = np.zeros(8)
    for side in range(2):
        smce_side(q, r, sign, J, side, checkpoints, h, S, out)
    return smce_value(r, T, R, sign, J, h, S, out)


@kernel(nogil=True)  # with smce_side and smce_value, an interval's subsamples on two threads
def smce_setup(q, checkpoints):
    """(R, sign, J, S, out) for the programmes of the table with predictions q: R, sign and
    the junction J (:func:`smce_balance`), the per-bucket summaries S and the sides' results
    ``out``, to be filled by :func:`smce_side` for sides 0 and 1. O(m / B)."""
    R, sign, J = smce_balance(checkpoints, q.shape[0])
    return R, sign, J, smce_summaries(q.shape[0]), np.zeros(8)


@kernel(nogil=True)
def smce_value(r, T, R, sign, J, h, S, out):
    """smCE from the two programmes' results (:func:`smce_setup`, both sides run): the
    junction, O(buckets) plus the breakpoints around the minimum."""
    return (R + max(smce_join(r, sign, J, h, S, out), 0.0)) / T


@kernel(nogil=True)
def smce_qr(q, r, T, checkpoints, h):
    """smCE of the table with predictions q (strictly increasing) and residuals
    r_i = s_i - q_i n_i over T rounds (checkpoints: their prefix sums, as :func:`smce_split`
    makes them), the breakpoints in ``h`` (2 max(m - 1, 1) floats, overwritten), on one
    thread. fastcdl.sample.smce runs the same steps with the two sides on two threads: the
    same value, bit for bit. O(m log m), about linear on calibrated samples."""
    R, sign, J, S, out = smce_setup(q, checkpoints)
    for side in range(2):
        smce_side(q, r, sign, J, side, checkpoints, h, S, out)
    return smce_value(r, T, R, sign, J, h, S, out)


@kernel
def smce_checkpoints(m):
    """An array for the checkpoints of m buckets (see :func:`smce_split`)."""
    return np.empty((m + SMCE_BLOCK - 1) // SMCE_BLOCK + 1)


@kernel
def table_residuals(q, n, s, r, checkpoints):
    """r_i = s_i - q_i n_i into ``r`` and their checkpoints (:func:`smce_split`, into an
    array of :func:`smce_checkpoints`); returns T = sum n_i. O(m)."""
    T = 0.0
    R = 0.0
    m = q.shape[0]
    for i in range(m):
        if i % SMCE_BLOCK == 0:
            checkpoints[i // SMCE_BLOCK] = R
        r[i] = s[i] - q[i] * n[i]
        R += r[i]
        T += n[i]
    checkpoints[(m + SMCE_BLOCK - 1) // SMCE_BLOCK] = R
    return T


@kernel
def smce_kernel(q, n, s):
    """smCE = max (1/T) sum_i w_i r_i over |w_i| <= 1, |w_{i+1} - w_i| <= d_i, with
    r_i = s_i - q_i n_i and d_i = q_{i+1} - q_i (docs/estimators.md), on one thread.
    O(m log m), about linear on calibrated samples."""
    m = q.shape[0]
    r = np.empty(m)
    checkpoints = smce_checkpoints(m)
    T = table_residuals(q, n, s, r, checkpoints)
    return smce_qr(q, r, T, checkpoints, np.empty(2 * max(m - 1, 1)))


@kernel
def keys_residuals(keys, r, checkpoints):
    """Sorted outcome keys (fastcdl._compiled.buckets.outcome_keys) -> the exact table's
    distinct predictions, as bit patterns in keys[:m], residuals r_i = s_i - q_i n_i in
    r[:m] and their checkpoints (:func:`smce_split`; ``checkpoints`` as long as for m = T),
    in one pass; returns m. The same numbers as :func:`table_residuals` on the table (bit
    for bit); ``keys`` is overwritten. O(T)."""
    T = keys.shape[0]
    one = np.uint64(1)
    cell = np.empty(1, dtype=np.uint64)  # a prediction's bits, read back as a float64
    value = cell.view(np.float64)
    m = 0
    n = 0
    s = 0
    R = 0.0
    last = np.uint64(0)  # the previous prediction's bits, held here rather than read back
    for t in range(T):
        key = keys[t]  # read before keys[m], m <= t, is written
        bits = key >> one
        if t > 0 and bits != last:
            r[m - 1] = float(s) - value[0] * float(n)
            R += r[m - 1]
            n = 0
            s = 0
        if n == 0:
            if m % SMCE_BLOCK == 0:
                checkpoints[m // SMCE_BLOCK] = R
            keys[m] = bits
            cell[0] = bits
            last = bits
            m += 1
        n += 1
        s += np.int64(key & one)
    if T > 0:
        r[m - 1] = float(s) - value[0] * float(n)
        R += r[m - 1]
    checkpoints[(m + SMCE_BLOCK - 1) // SMCE_BLOCK] = R
    return m
