"""The V-kink decision-loss curve f, its upper concave envelope, CDL, VCDL and UCal.

SPEC 2.1-2.3. Bucket i with prediction x_i and frequency qhat_i = s_i / n_i contributes
a ramp n_i v_i(mu) / T to f: ``s_i - n_i mu`` on (x_i, qhat_i) when x_i < qhat_i (an
"up" ramp) and ``n_i mu - s_i`` on (qhat_i, x_i] when qhat_i < x_i (a "down" ramp).
One sweep over the sorted breakpoints keeps running sums of the active ramps'
intercepts (A) and slopes (B) and reads both one-sided values f(b) and f(b+) at every
breakpoint b with exact comparisons. With integer counts A and B are sums of integers,
hence exact below 2^53.
"""

import numpy as np
from fastcdl._kernels._jit import kernel


@kernel
def _ramps(x, qhat, n, s, coef):
    """Split buckets into up and down ramps: (start, end, dA, dB) per kind, sorted by start and by end."""
    m = x.shape[0]
    n_up = 0
    n_dn = 0
    for i in range(m):
        if x[i] < qhat[i]:
            n_up += 1
        elif qhat[i] < x[i]:
            n_dn += 1
    up_start = np.empty(n_up)
    up_end = np.empty(n_up)
    up_a = np.empty(n_up)
    up_b = np.empty(n_up)
    dn_start = np.empty(n_dn)
    dn_end = np.empty(n_dn)
    dn_a = np.empty(n_dn)
    dn_b = np.empty(n_dn)
    u = 0
    d = 0
    for i in range(m):
        if x[i] < qhat[i]:
            up_start[u] = x[i]
            up_end[u] = qhat[i]
            up_a[u] = coef[i] * s[i]
            up_b[u] = -coef[i] * n[i]
            u += 1
        elif qhat[i] < x[i]:
            dn_start[d] = qhat[i]
            dn_end[d] = x[i]
            dn_a[d] = -coef[i] * s[i]
            dn_b[d] = coef[i] * n[i]
            d += 1
    return up_start, up_end, up_a, up_b, dn_start, dn_end, dn_a, dn_b


@kernel
def sweep(x, qhat, n, s, coef, extra, T):
    """Both one-sided values of f(mu) = (1/T) sum_i coef_i n_i v(x_i, qhat_i; mu) at every breakpoint.

    Breakpoints are the x_i, the qhat_i, 0, 1/2, 1 and the ``extra`` points, sorted and
    distinct. Returns (b, f_left, f_right) with f_left = f(b) (SPEC 2.1 tie rule: a ramp
    counts at its closed end, so f is left-continuous) and f_right = f(b+) (the other
    tie rule). Cost O(m log m) for the sorts, O(m) for the sweep.
    """
    up_start, up_end, up_a, up_b, dn_start, dn_end, dn_a, dn_b = _ramps(x, qhat, n, s, coef)
    o_us = np.argsort(up_start, kind="mergesort")
    o_ue = np.argsort(up_end, kind="mergesort")
    o_ds = np.argsort(dn_start, kind="mergesort")
    o_de = np.argsort(dn_end, kind="mergesort")

    pts = np.empty(2 * x.shape[0] + 3 + extra.shape[0])
    k = 0
    for i in range(x.shape[0]):
        pts[k] = x[i] + 0.0  # + 0.0 maps -0.0 to 0.0
        pts[k + 1] = qhat[i] + 0.0
        k += 2
    pts[k] = 0.0
    pts[k + 1] = 0.5
    pts[k + 2] = 1.0
    k += 3
    for i in range(extra.shape[0]):
        pts[k] = extra[i] + 0.0
        k += 1
    pts.sort()
    nb = 0
    for i in range(pts.shape[0]):
        if i == 0 or pts[i] != pts[i - 1]:
            pts[nb] = pts[i]
            nb += 1
    b = pts[:nb].copy()
    f_left = np.empty(nb)
    f_right = np.empty(nb)

    A = 0.0  # sum of intercepts of the active ramps
    B = 0.0  # sum of slopes of the active ramps
    active = 0  # number of active ramps: with none, f is exactly 0 (float sums of
    # weighted ramps entering and leaving need not cancel to 0.0 by themselves)
    ius = 0
    iue = 0
    ids = 0
    ide = 0
    for j in range(nb):
        mu = b[j]
        # up ramps ending here are open at qhat: not in f(mu)
        while iue < o_ue.shape[0] and up_end[o_ue[iue]] <= mu:
            A -= up_a[o_ue[iue]]
            active -= 1
            B -= up_b[o_ue[iue]]
            iue += 1
        if active == 0:
            A = 0.0
            B = 0.0
        f_left[j] = (A + B * mu) / T
        # down ramps ending here are closed at x: in f(mu), not in f(mu+)
        while ide < o_de.shape[0] and dn_end[o_de[ide]] <= mu:
            A -= dn_a[o_de[ide]]
            active -= 1
            B -= dn_b[o_de[ide]]
            ide += 1
        # up ramps starting here: not in f(mu), in f(mu+)
        while ius < o_us.shape[0] and up_start[o_us[ius]] <= mu:
            A += up_a[o_us[ius]]
            active += 1
            B += up_b[o_us[ius]]
            ius += 1
        if active == 0:
            A = 0.0
            B = 0.0
        f_right[j] = (A + B * mu) / T
        # down ramps starting here are open at qhat (and worth 0 there)
        while ids < o_ds.shape[0] and dn_start[o_ds[ids]] <= mu:
            A += dn_a[o_ds[ids]]
            active += 1
            B += dn_b[o_ds[ids]]
            ids += 1
    return b, f_left, f_right


@kernel
def upper_hull(b, h):
    """Indices of the vertices of the upper concave envelope of points (b_j, h_j), b increasing.

    Andrew's monotone chain; points on a hull edge are dropped. O(len(b)).
    """
    idx = np.empty(b.shape[0], dtype=np.int64)
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
def cdl_kernel(q, n, s, T):
    """CDL = 2 fbar(1/2) and VCDL = max_b max(f(b), f(b+)) / max(b, 1-b) (SPEC 2.2).

    Returns (cdl, j1, j2, b, f_left, f_right, vcdl, jv) where j1, j2 index the worst
    task's kinks in b and jv the VCDL kink. O(m log m).
    """
    m = q.shape[0]
    qhat = s / n
    coef = np.ones(m)
    b, f_left, f_right = sweep(q, qhat, n, s, coef, np.empty(0), T)
    h = np.maximum(f_left, f_right)
    value, j1, j2 = envelope_at_half(b, h)
    jv = 0
    best = -1.0
    for j in range(b.shape[0]):
        r = h[j] / max(b[j], 1.0 - b[j])
        if r > best:
            best = r
            jv = j
    return 2.0 * value, j1, j2, b, f_left, f_right, best, jv


@kernel
def ucal_kernel(q, n, s, T):
    """UCal = 2 gbar(1/2), gbar the upper concave envelope of max(g, 0) (SPEC 2.3). O(m log m).

    g(mu) = (1/T) sum_i n_i [v_i(mu) - v^pbar_i(mu)], where v^pbar puts pbar = s/T in place
    of q_i: the same sweep over the buckets' ramps and, with coefficient -1, the
    ramps from pbar to each qhat_i.
    """
    m = q.shape[0]
    qhat = s / n
    pbar = s.sum() / T
    x = np.empty(2 * m)
    qh = np.empty(2 * m)
    nn = np.empty(2 * m)
    ss = np.empty(2 * m)
    coef = np.empty(2 * m)
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
    b, g_left, g_right = sweep(x, qh, nn, ss, coef, np.empty(0), T)
    h = np.maximum(np.maximum(g_left, g_right), 0.0)
    value, _, _ = envelope_at_half(b, h)
    return 2.0 * value


@kernel
def v_curve(q, n, s, T, mus):
    """f(mu) with the SPEC 2.1 tie rule at each mu of ``mus``. O((m + k) log(m + k))."""
    qhat = s / n
    coef = np.ones(q.shape[0])
    b, f_left, _ = sweep(q, qhat, n, s, coef, mus, T)
    out = np.empty(mus.shape[0])
    for i in range(mus.shape[0]):
        out[i] = f_left[np.searchsorted(b, mus[i] + 0.0)]
    return out
