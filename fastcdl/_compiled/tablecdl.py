"""CDL and VCDL of a bucket table in one compiled call: the sorts, the sweep and the hull fused.

For fastcdl.cdl / vcdl and fastcdl.kernels.cdl_of_table / vcdl. cdl_report computes the same numbers
in three steps (envelope.curve_inputs' sorts, then envelope.cdl_kernel's sweep, upper hull
and read-out at 1/2, keeping the whole curve); this kernel performs the very
same floating-point operations in the same order, in one pass and with a few small
allocations:

- the candidates b are merged on the fly from q (sorted), the frequencies in the order of
  their stable argsort, and 0, 1/2, 1 (each value + 0.0, duplicates skipped): the sequence
  np.unique(np.concatenate([q, qhat, [0, 0.5, 1]]) + 0.0) of the Python path;
- the four ramp lists of envelope.sweep (up and down ramps in the order of their starts and
  of their ends) are pointers that walk the identity (q is sorted, so its stable argsort
  is the identity) and the frequencies' argsort (the kinds and counts gathered into that
  order first), skipping ramps of the other kind;
- h = max(f(b), f(b+)) is the larger numerator A + B b divided by T once (division by
  T > 0 and its rounding are monotone, so this is the same float as the larger quotient);
- the upper hull is built as the candidates arrive (Andrew's monotone chain is online in
  increasing b) and read at 1/2 as envelope.envelope_at_half reads it.

Buckets with n_i = 0 are skipped, and T is numpy's pairwise sum of the non-zero counts, as
for BucketStats.from_table(q, n, s). tests/test_kernels_api.py checks equality with
fastcdl.cdl and fastcdl.vcdl bit for bit (random tables, ties, float counts, empty buckets).
"""

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.hugepages import empty_huge
from fastcdl._compiled.sort import RADIX_MIN, pairwise_sum, sort_pairs

_INF = np.inf


# From this many one-round buckets on, cdl_of_table takes the fused kernel's radix sort. Below, the
# numpy front took 1.03x-1.21x its time at 10^4-10^6 one-round buckets and saves the radix sort's
# compile, several seconds, in a first call; with many distinct frequencies it took 1.4x-1.7x, so
# those tables keep the radix sort from RADIX_MIN on (results/benchmarks/one-round-front.md; at 10^7
# one-round buckets the front took 0.99x there and 1.43x in a first run, so the large tables keep
# the kernel). The exact CDL of one-round tables measures noise (fastcdl.summary's advice), so its
# first call counts for more than a tenth of its run time.
ONE_ROUND_FUSED_FROM = 1 << 21

_UP = 1  # bucket kinds: up ramp (q_i < qhat_i), down ramp (qhat_i < q_i); 0 otherwise
_DOWN = 2


@kernel
def _next_id(i, kind, want, m):
    """The next bucket >= i of kind ``want``, or m."""
    while i < m and kind[i] != want:
        i += 1
    return i


@kernel
def _next_bucket(i, n, m):
    while i < m and n[i] == 0:
        i += 1
    return i


@kernel
def frequencies(q, n, s):
    """(qhat, kind, k, T) of the table: each bucket's frequency s_i / n_i (inf for an empty
    bucket, which sorts last), its kind (_UP, _DOWN or 0), the number k of non-empty buckets
    and T, numpy's pairwise sum of their counts. O(m)."""
    m = q.shape[0]
    qhat = empty_huge(m, np.float64)
    kind = np.zeros(m, dtype=np.int8)
    k = 0
    for i in range(m):
        if n[i] != 0:
            qhat[i] = s[i] / n[i]
            k += 1
            if q[i] < qhat[i]:
                kind[i] = _UP
            elif qhat[i] < q[i]:
                kind[i] = _DOWN
        else:
            qhat[i] = _INF  # sorts last; never a candidate or a ramp
    if k == 0:
        return qhat, kind, k, np.nan
    if k == m:
        T = pairwise_sum(n)
    else:
        nf = np.empty(k)
        j = 0
        for i in range(m):
            if n[i] != 0:
                nf[j] = n[i]
                j += 1
        T = pairwise_sum(nf)
    return qhat, kind, k, T


@kernel
def table_cdl(q, n, s, with_vcdl):
    """(cdl, mu1, mu2, vcdl, buckets, vcdl_kink) of the table (q sorted; n, s counts of any
    numeric type).

    mu1, mu2: the worst task's kinks (both 1/2 for the V task at 1/2); vcdl and vcdl_kink (the
    first breakpoint where f / max(mu, 1 - mu) is largest, envelope.cdl_kernel's b[jv]) are
    computed only when ``with_vcdl`` (else NaN); buckets: the number with n_i != 0 (0: every
    value NaN).
    O(m log m) for the sort of the frequencies, then O(m). From Python, :func:`cdl_of_table`
    gives the same numbers and compiles the radix sort only for a table large enough to use it.
    """
    qhat, kind, k, T = frequencies(q, n, s)
    if k == 0:
        return np.nan, np.nan, np.nan, np.nan, 0, np.nan
    qs, oq = sort_pairs(qhat)  # the frequencies sorted, and their stable argsort
    m = q.shape[0]
    work = (np.empty(m, dtype=np.int8), empty_huge(2 * m, np.float64))
    hull = (empty_huge(m + k + 3, np.float64), empty_huge(m + k + 3, np.float64))
    return sweep(q, n, s, with_vcdl, kind, k, T, qs, oq, *work, *hull)


def cdl_of_table(q, n, s, with_vcdl):
    """:func:`table_cdl` from Python, bit for bit. A table of fewer than 512 buckets with float64
    counts gets its frequencies, kinds, T and sorted frequencies from numpy (the same divisions,
    numpy's pairwise sum, which :func:`fastcdl._compiled.sort.pairwise_sum` reproduces, and the
    unique stable argsort) and only :func:`sweep` compiled: a first call on a small table
    compiles neither the sorts nor the huge-page helpers (results/benchmarks/compile_profile.md).
    So does a table of one-round buckets (continuous scores) below ONE_ROUND_FUSED_FROM buckets:
    its frequencies are 0 or 1, which numpy's stable argsort orders as fast as the radix sort.
    Other tables take the fused kernel."""
    m = q.shape[0]
    if n.dtype != np.float64 or (m >= RADIX_MIN and (m >= ONE_ROUND_FUSED_FROM or not (n == 1.0).all())):
        return table_cdl(q, n, s, with_vcdl)
    if n.all():  # every bucket holds rounds (a table from rounds always does): no masks
        k = m
        qhat = s / n
        kind = (q < qhat).view(np.int8) + _DOWN * (qhat < q).view(np.int8)
        T = float(n.sum())
    else:
        full = n != 0
        k = int(np.count_nonzero(full))
        if k == 0:
            return np.nan, np.nan, np.nan, np.nan, 0, np.nan
        with np.errstate(divide="ignore", invalid="ignore"):
            qhat = np.where(full, s / np.where(full, n, 1.0), _INF)  # empty buckets sort last
        kind = (full & (q < qhat)).view(np.int8) + _DOWN * (full & (qhat < q)).view(np.int8)
        T = float(n[full].sum())
    oq = np.argsort(qhat, kind="stable")
    work = np.empty(2 * m + 2 * (m + k + 3))  # sn_o, hb, hh in one allocation
    return sweep(
        q,
        n,
        s,
        with_vcdl,
        kind,
        k,
        T,
        qhat[oq],
        oq,
        np.empty(m, np.int8),
        work[: 2 * m],
        work[2 * m : 3 * m + k + 3],
        work[3 * m + k + 3 :],
    )


# Complexity above ruff's 15 (noqa: C901): the fused pass merges three candidate sources and
# walks four ramp lists in one loop (module docstring), the same operations in the same order
# as envelope.py's three steps, kept as one loop so that it reads against them step by step.
@kernel
def sweep(q, n, s, with_vcdl, kind, k, T, qs, oq, kind_o, sn_o, hb, hh):  # noqa: C901
    """The sweep, the upper hull and its read-out at 1/2 of :func:`table_cdl`, given the table's
    kinds, k and T (:func:`frequencies`) and its frequencies sorted with their stable argsort. O(m).
    kind_o, sn_o, hb, hh are work arrays of m, 2m, m + k + 3 and m + k + 3 values (int8, then
    float64), allocated by the caller: on huge pages for a large table (:func:`table_cdl`), by
    numpy for a small one (:func:`cdl_of_table`), so that the sweep compiles no allocator."""
    m = q.shape[0]
    # The buckets' kinds and counts in the order of oq, gathered once: the walkers over oq
    # then read them in sequence (read through oq inside the sweep, each was a cache miss at
    # 10^6 buckets that the next one waited for). 1.0 * s_i and 1.0 * n_i (the floats the
    # sweep adds) travel as one record of two floats; the kinds are bytes, in cache.
    for p in range(m):
        i = oq[p]
        kind_o[p] = kind[i]
        sn_o[2 * p] = 1.0 * s[i]
        sn_o[2 * p + 1] = 1.0 * n[i]
    nh = 0
    A = 0.0
    B = 0.0
    active = 0
    # envelope.sweep's four ramp lists as pointers: up ramps in the order of their starts and
    # down ramps in the order of their ends walk the identity (q is sorted, so its stable
    # argsort is the identity); up ramps in the order of their ends and down ramps in the
    # order of their starts walk oq. Each skips ramps of the other kind.
    iue = _next_id(0, kind_o, _UP, m)
    ids = _next_id(0, kind_o, _DOWN, m)
    ius = _next_id(0, kind, _UP, m)
    ide = _next_id(0, kind, _DOWN, m)
    # candidate pointers: q (skipping empty buckets), qhat via oq (k finite values), 0, 1/2, 1
    iq = _next_bucket(0, n, m)
    ih = 0
    fx = 0
    best = -1.0
    kink = np.nan
    last = 0.0
    first = True
    while iq < m or ih < k or fx < 3:
        mu = _INF
        if iq < m:
            mu = q[iq]
        if ih < k and qs[ih] < mu:
            mu = qs[ih]
        fv = 0.0 if fx == 0 else (0.5 if fx == 1 else 1.0)
        if fx < 3 and fv < mu:
            mu = fv
        # consume every source equal to mu
        if iq < m and q[iq] == mu:
            iq = _next_bucket(iq + 1, n, m)
        while ih < k and qs[ih] == mu:
            ih += 1
        if fx < 3 and fv == mu:
            fx += 1
        mu = mu + 0.0  # -0.0 is 0.0
        if not first and mu == last:
            continue
        first = False
        last = mu
        # -- envelope.sweep at mu, the same operations in the same order --
        while iue < m and qs[iue] <= mu:
            A -= sn_o[2 * iue]
            active -= 1
            B -= -sn_o[2 * iue + 1]
            iue = _next_id(iue + 1, kind_o, _UP, m)
        if active == 0:
            A = 0.0
            B = 0.0
        left = A + B * mu
        while ide < m and q[ide] <= mu:
            i = ide
            A -= -1.0 * s[i]
            active -= 1
            B -= 1.0 * n[i]
            ide = _next_id(ide + 1, kind, _DOWN, m)
        while ius < m and q[ius] <= mu:
            i = ius
            A += 1.0 * s[i]
            active += 1
            B += -1.0 * n[i]
            ius = _next_id(ius + 1, kind, _UP, m)
        if active == 0:
            A = 0.0
            B = 0.0
        right = A + B * mu
        while ids < m and qs[ids] <= mu:
            A += -sn_o[2 * ids]
            active += 1
            B += sn_o[2 * ids + 1]
            ids = _next_id(ids + 1, kind_o, _DOWN, m)
        # -- envelope.cdl_kernel: h, VCDL, and upper_hull's monotone chain --
        # max(f_left, f_right) with f = (A + B mu) / T: division by T > 0 is monotone, and
        # so is its rounding, so dividing the larger numerator gives the same float
        h = max(left, right) / T
        if with_vcdl:
            r = h / max(mu, 1.0 - mu)
            if r > best:
                best = r
                kink = mu
        while nh >= 2:
            cross = (hb[nh - 1] - hb[nh - 2]) * (h - hh[nh - 2]) - (hh[nh - 1] - hh[nh - 2]) * (mu - hb[nh - 2])
            if cross >= 0.0:
                nh -= 1
            else:
                break
        hb[nh] = mu
        hh[nh] = h
        nh += 1
    # -- envelope.envelope_at_half --
    value = np.nan
    mu1 = np.nan
    mu2 = np.nan
    for t in range(nh):
        if hb[t] == 0.5:
            value = hh[t]
            mu1 = hb[t]
            mu2 = hb[t]
            break
        if hb[t] > 0.5:
            b1 = hb[t - 1]
            b2 = hb[t]
            c1 = (2.0 * b2 - 1.0) / (b2 - b1)
            c2 = (1.0 - 2.0 * b1) / (b2 - b1)
            value = 0.5 * (c1 * hh[t - 1] + c2 * hh[t])
            mu1 = b1
            mu2 = b2
            break
    return 2.0 * value, mu1, mu2, (best if with_vcdl else np.nan), k, kink
