"""The V-kink decision-loss curve f, its upper concave envelope, CDL, VCDL and UCal.

docs/exact-cdl.md. Bucket i with prediction x_i and frequency qhat_i = s_i / n_i contributes
a ramp n_i v_i(mu) / T to f: ``s_i - n_i mu`` on (x_i, qhat_i) when x_i < qhat_i (an
"up" ramp) and ``n_i mu - s_i`` on (qhat_i, x_i] when qhat_i < x_i (a "down" ramp).
One sweep over the sorted breakpoints keeps running sums of the active ramps'
intercepts (A) and slopes (B) and reads both one-sided values f(b) and f(b+) at every
breakpoint b with exact comparisons. With integer counts A and B are sums of integers,
hence exact below 2^53. The sweep takes the sorted breakpoints and the argsorts from its
caller.

The entry points from a bucket table (q sorted, float64 counts: what BucketStats.table()
gives) sort with fastcdl's own stable sorts (fastcdl._compiled.sort) and call the sweep. They
replaced a numpy twin that sorted with np.unique and np.argsort in Python (fastcdl/_envelope.py,
retired): the same floats, and 0.78-1.08x its time from 10^3 to 10^6 buckets (faster in 10 of 12 cases)
(results/benchmarks/envelope-twins.md). The entry points are
:func:`cdl_curve` (the whole curve, for cdl_report), :func:`ucal_of_table` and
:func:`v_left`. fastcdl.cdl and fastcdl.vcdl use the fused kernel of tablecdl.py, which
performs the same operations in one pass.
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.hugepages import empty_huge
from fastcdl._compiled.sort import RADIX_MIN, argsort_stable, gather, merge_distinct, pairwise_sum

FIXED = np.array([0.0, 0.5, 1.0])  # candidates of every envelope: 0, 1/2, 1


@kernel(read_only=range(8))  # one compilation for read-only and writable callers
def sweep(x, qhat, n, s, coef, b, ox, oq, T):
    """Both one-sided values of f(mu) = (1/T) sum_i coef_i n_i v(x_i, qhat_i; mu) at every b_j.

    ``b`` holds the sorted distinct breakpoints (every x_i and qhat_i, 0, 1/2, 1 and any
    extra points), ``ox`` and ``oq`` the stable argsorts of x and qhat (the sorts are done
    by the caller, with numpy). Returns (f_left, f_right) with f_left = f(b) (the tie rule
    of docs/metrics.md: a ramp counts at its closed end, so f is left-continuous) and
    f_right = f(b+) (the other tie rule). O(m + len(b)).
    """
    m = x.shape[0]
    # Bucket i is an up ramp (s_i - n_i mu on (x_i, qhat_i)) when x_i < qhat_i and a down
    # ramp (n_i mu - s_i on (qhat_i, x_i]) when qhat_i < x_i. List each kind twice: in the
    # order its starts are met and in the order its ends are met.
    us = empty_huge(m, np.int64)
    ue = empty_huge(m, np.int64)
    ds = empty_huge(m, np.int64)
    de = empty_huge(m, np.int64)
    n_up = 0
    n_dn = 0
    for k in range(m):
        i = ox[k]
        if x[i] < qhat[i]:
            us[n_up] = i
            n_up += 1
        elif qhat[i] < x[i]:
            de[n_dn] = i
            n_dn += 1
    u = 0
    d = 0
    for k in range(m):
        i = oq[k]
        if x[i] < qhat[i]:
            ue[u] = i
            u += 1
        elif qhat[i] < x[i]:
            ds[d] = i
            d += 1

    nb = b.shape[0]
    f_left = empty_huge(nb, np.float64)
    f_right = empty_huge(nb, np.float64)
    A = 0.0  # sum of intercepts of the active ramps (+coef s up, -coef s down)
    B = 0.0  # sum of slopes of the active ramps (-coef n up, +coef n down)
    active = 0  # number of active ramps: with none, f is exactly 0 (float sums of
    # weighted ramps entering and leaving need not cancel to 0.0 by themselves)
    ius = 0
    iue = 0
    ids = 0
    ide = 0
    for j in range(nb):
        mu = b[j]
        # up ramps ending here are open at qhat: not in f(mu)
        while iue < n_up and qhat[ue[iue]] <= mu:
            i = ue[iue]
            A -= coef[i] * s[i]
            active -= 1
            B -= -coef[i] * n[i]
            iue += 1
        if active == 0:
            A = 0.0
            B = 0.0
        f_left[j] = (A + B * mu) / T
        # down ramps ending here are closed at x: in f(mu), not in f(mu+)
        while ide < n_dn and x[de[ide]] <= mu:
            i = de[ide]
            A -= -coef[i] * s[i]
            active -= 1
            B -= coef[i] * n[i]
            ide += 1
        # up ramps starting here: not in f(mu), in f(mu+)
        while ius < n_up and x[us[ius]] <= mu:
            i = us[ius]
            A += coef[i] * s[i]
            active += 1
            B += -coef[i] * n[i]
            ius += 1
        if active == 0:
            A = 0.0
            B = 0.0
        f_right[j] = (A + B * mu) / T
        # down ramps starting here are open at qhat (and worth 0 there)
        while ids < n_dn and qhat[ds[ids]] <= mu:
            i = ds[ids]
            A += -coef[i] * s[i]
            active += 1
            B += coef[i] * n[i]
            ids += 1
    return f_left, f_right


@kernel
def upper_hull(b, h):
    """Indices of the vertices of the upper concave envelope of points (b_j, h_j), b increasing.

    Andrew's monotone chain; points on a hull edge are dropped. O(len(b)).
    """
    idx = empty_huge(b.shape[0], np.int64)
    k = 0
    for j in range(b.shape[0]):
        while k >= 2:
            i0 = idx[k - 2]
            i1 = idx[k - 1]
            cross = (b[i1] - b[i0]) * (h[j] - h[i0]) - (h[i1] - h[i0]) * (b[j] - b[i0])
            if cross >= 0.0:
                k -= 1
            else:
                break
        idx[k] = j
        k += 1
    return idx[:k].copy()


@kernel
def envelope_at_half(b, h):
    """Read the upper concave envelope of (b, h) at 1/2 (b must contain 0, 1/2 and 1).

    Returns (value fbar(1/2), j1, j2): the hull vertices around 1/2 (j1 == j2 when
    1/2 is itself a vertex).
    """
    hull = upper_hull(b, h)
    for k in range(hull.shape[0]):
        j = hull[k]
        if b[j] == 0.5:
            return h[j], j, j
        if b[j] > 0.5:
            j1 = hull[k - 1]
            c1 = (2.0 * b[j] - 1.0) / (b[j] - b[j1])
            c2 = (1.0 - 2.0 * b[j1]) / (b[j] - b[j1])
            return 0.5 * (c1 * h[j1] + c2 * h[j]), j1, j
    return np.nan, -1, -1  # unreachable when 1/2 is among the b


@kernel
def cdl_kernel(q, qhat, n, s, coef, b, ox, oq, T):
    """CDL = 2 fbar(1/2) and VCDL = max_b max(f(b), f(b+)) / max(b, 1-b) (docs/exact-cdl.md).

    Inputs as for :func:`sweep` (coef all ones). Returns (cdl, j1, j2, f_left, f_right,
    vcdl, jv) where j1, j2 index the worst task's kinks in b and jv the VCDL kink. O(m).
    """
    f_left, f_right = sweep(q, qhat, n, s, coef, b, ox, oq, T)
    h = empty_huge(b.shape[0], np.float64)
    jv = 0
    best = -1.0
    for j in range(b.shape[0]):
        h[j] = max(f_left[j], f_right[j])
        r = h[j] / max(b[j], 1.0 - b[j])
        if r > best:
            best = r
            jv = j
    value, j1, j2 = envelope_at_half(b, h)
    return 2.0 * value, j1, j2, f_left, f_right, best, jv


@kernel
def ucal_kernel(x, qhat, n, s, coef, b, ox, oq, T):
    """UCal = 2 gbar(1/2), gbar the upper concave envelope of max(g, 0) (docs/exact-cdl.md).

    The ramps are the buckets' (x_i = q_i, coefficient 1) and, with coefficient -1, those
    from pbar to each qhat_i (x_i = pbar); inputs as for :func:`sweep`. O(m).
    """
    g_left, g_right = sweep(x, qhat, n, s, coef, b, ox, oq, T)
    h = empty_huge(b.shape[0], np.float64)
    for j in range(b.shape[0]):
        h[j] = max(max(g_left[j], g_right[j]), 0.0)
    value, _, _ = envelope_at_half(b, h)
    return 2.0 * value


# -- from a bucket table --------------------------------------------------------------------


@kernel
def frequencies(n, s):
    """qhat_i = s_i / n_i. O(m)."""
    qhat = empty_huge(n.shape[0], np.float64)
    for i in range(n.shape[0]):
        qhat[i] = s[i] / n[i]
    return qhat


@kernel
def _identity(m):
    idx = empty_huge(m, np.int64)
    for i in range(m):
        idx[i] = i
    return idx


@kernel
def curve_inputs(q, n, s, extra):
    """The sweep's inputs from a float64 table sorted by q: (qhat, coef, b, ox, oq, T), b the
    sorted distinct breakpoints (the values q_i, qhat_i, 0, 1/2, 1 and ``extra``, sorted; -0.0
    read as 0.0), ox the identity (q is sorted), oq the stable argsort of qhat, T numpy's
    pairwise sum of n. O(m log m)."""
    m = q.shape[0]
    qhat = frequencies(n, s)
    oq = argsort_stable(qhat)
    b = merge_distinct(merge_distinct(q, gather(qhat, oq)), FIXED)
    if extra.shape[0] > 0:
        b = merge_distinct(b, extra)
    return qhat, np.ones(m), b, _identity(m), oq, pairwise_sum(n)


@kernel
def cdl_curve(q, n, s):
    """(cdl, j1, j2, b, f_left, f_right, vcdl, jv) of a float64 table sorted by q (as
    :func:`cdl_kernel`, with the breakpoints b). O(m log m)."""
    qhat, coef, b, ox, oq, T = curve_inputs(q, n, s, np.empty(0))
    value, j1, j2, f_left, f_right, vmax, jv = cdl_kernel(q, qhat, n, s, coef, b, ox, oq, T)
    return value, j1, j2, b, f_left, f_right, vmax, jv


@kernel
def ucal_of_table(q, n, s):
    """UCal of a float64 table sorted by q with at least one bucket: the buckets' ramps and,
    negated, those from pbar (a sequential sum of s over T) to each qhat_i. O(m log m)."""
    m = q.shape[0]
    T = pairwise_sum(n)
    ones = 0.0
    for i in range(m):
        ones += s[i]
    pbar = ones / T
    qhat = frequencies(n, s)
    x = empty_huge(2 * m, np.float64)
    qh = empty_huge(2 * m, np.float64)
    nn = empty_huge(2 * m, np.float64)
    ss = empty_huge(2 * m, np.float64)
    coef = empty_huge(2 * m, np.float64)
    for i in range(m):
        x[i] = q[i]
        x[m + i] = pbar
        qh[i] = qhat[i]
        qh[m + i] = qhat[i]
        nn[i] = n[i]
        nn[m + i] = n[i]
        ss[i] = s[i]
        ss[m + i] = s[i]
        coef[i] = 1.0
        coef[m + i] = -1.0
    ox = argsort_stable(x)
    oq = argsort_stable(qh)
    b = merge_distinct(merge_distinct(gather(x, ox), gather(qh, oq)), FIXED)
    return ucal_kernel(x, qh, nn, ss, coef, b, ox, oq, T)


def ucal_from_table(q, n, s):
    """:func:`ucal_of_table` from Python, bit for bit. A table with float64 counts of fewer than
    RADIX_MIN buckets, or of one-round buckets (continuous scores; 0.62x-0.85x the kernel's time
    from 10^4 to 10^7 buckets in results/benchmarks/one-round-front.md), gets its ramps, their stable argsorts and the breakpoints from numpy (the same values: a
    stable argsort is unique, np.unique of the values with -0.0 read as 0.0 is merge_distinct's
    output, T is numpy's pairwise sum and the count of ones a sequential sum, as np.cumsum adds)
    and compiles only :func:`ucal_kernel`, not the radix sort. Other tables take
    :func:`ucal_of_table` (with many distinct frequencies the front took 1.12x-1.36x its time).
    O(m log m).
    """
    m = q.shape[0]
    if n.dtype != np.float64 or (m >= RADIX_MIN and not (n == 1.0).all()):
        return ucal_of_table(q, n, s)
    T = np.sum(n)
    pbar = np.cumsum(s, dtype=np.float64)[-1] / T
    qhat = s / n
    x = np.concatenate([q, np.full(m, pbar)])
    qh = np.concatenate([qhat, qhat])
    coef = np.concatenate([np.ones(m), -np.ones(m)])
    b = np.unique(np.concatenate([x, qh, FIXED]) + 0.0)
    ox = np.argsort(x, kind="stable")
    oq = np.argsort(qh, kind="stable")
    nn = np.concatenate([n, n])
    ss = np.concatenate([s, s]).astype(np.float64)
    return ucal_kernel(x, qh, nn, ss, coef, b, ox, oq, T)


@kernel
def v_left(q, n, s, mus):
    """f(mu) (the left-continuous tie rule) at each kink of ``mus`` (any order) for a float64
    table sorted by q with at least one bucket. O((m + k) log(m + k))."""
    om = argsort_stable(mus)
    qhat, coef, b, ox, oq, T = curve_inputs(q, n, s, gather(mus, om))
    f_left, _ = sweep(q, qhat, n, s, coef, b, ox, oq, T)
    out = empty_huge(mus.shape[0], np.float64)
    for k in range(mus.shape[0]):  # searchsorted(b, mu + 0.0): mu is one of the b
        mu = mus[k] + 0.0
        lo = 0
        hi = b.shape[0]
        while lo < hi:
            mid = (lo + hi) >> 1
            if b[mid] < mu:
                lo = mid + 1
            else:
                hi = mid
        out[k] = f_left[lo]
    return out
