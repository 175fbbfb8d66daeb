"""Sorting and summing in compiled code, bit for bit as numpy does it.

The envelope kernels (fastcdl._compiled.envelope, tablecdl) sort here, from the Python API and
from a user's njit function (fastcdl.kernels) alike: numba's own np.sort and np.argsort cost
seconds to compile, these plain loops a fraction of one:

- :func:`argsort_stable`: a stable merge sort of indices. A stable argsort is unique (ties
  keep their index order), so it equals ``np.argsort(x, kind="stable")`` for every input
  without NaN.
- :func:`merge_distinct`: the sorted distinct union of two sorted arrays, -0.0 read as 0.0:
  with the fixed points it builds ``np.unique(np.concatenate(...) + 0.0)``.
- :func:`pairwise_sum`: numpy's pairwise summation of a float64 array (``np.sum``), so a
  total of float counts rounds exactly as ``n.sum()`` does.
- :func:`sort_keys`: uint64 keys sorted by an LSD radix sort, for the exact table's outcome
  keys; equal to ``np.sort(keys)`` (a sorted array of integers is unique) and, measured, 2.5-3.4x
  faster than it from 10^4 keys on (results/benchmarks/metrics.md).
"""

import numba as nb
import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.hugepages import empty_huge

_RUN = 8  # runs sorted by insertion before merging


@kernel
def _insertion(ka, ia, lo, hi, budget):
    """Insertion sort of the pairs (ka, ia)[lo:hi] by key, stable, until ``budget`` moves are
    spent. Returns the end of the sorted prefix (hi when done)."""
    moves = 0
    for i in range(lo + 1, hi):
        kv = ka[i]
        if not (ka[i - 1] > kv):
            continue
        if moves > budget:
            return i
        iv = ia[i]
        j = i
        while j > lo and ka[j - 1] > kv:  # strict: equal keys keep their order
            ka[j] = ka[j - 1]
            ia[j] = ia[j - 1]
            j -= 1
        moves += i - j
        ka[j] = kv
        ia[j] = iv
    return hi


@kernel
def _merge(ka, ia, kb, ib, lo, mid, hi):
    """Merge the sorted ranges [lo, mid) and [mid, hi) of (ka, ia) into (kb, ib), ties to the left."""
    i = lo
    j = mid
    k = lo
    if mid > lo and mid < hi and not (ka[mid - 1] > ka[mid]):  # already in order: a copy
        for c in range(lo, hi):
            kb[c] = ka[c]
            ib[c] = ia[c]
        return
    while i < mid and j < hi:
        if ka[j] < ka[i]:
            kb[k] = ka[j]
            ib[k] = ia[j]
            j += 1
        else:
            kb[k] = ka[i]
            ib[k] = ia[i]
            i += 1
        k += 1
    while i < mid:
        kb[k] = ka[i]
        ib[k] = ia[i]
        i += 1
        k += 1
    while j < hi:
        kb[k] = ka[j]
        ib[k] = ia[j]
        j += 1
        k += 1


RADIX_MIN = 512  # from this length on, an unsorted array is radix-sorted


_DIGIT = 11  # bits of a radix digit of the float keys: six passes cover 64 bits
_VALUES = 1 << _DIGIT


@kernel(read_only=(0, 1))  # one compilation for read-only and writable callers
def _radix(x, ia):
    """Stable LSD radix sort of the indices ``ia`` by x[ia]. Returns (x[order], order).

    The keys are the float64 bits mapped to an order-preserving uint64 (negative floats
    reversed, positive ones above them; -0.0 read as 0.0). Each key travels with its index as
    one record of two words, so a pass scatters one stream per digit value, not two. Six passes
    of 11-bit digits (against eight of 8 bits: 2048 destinations fit the caches and, on huge
    pages, the TLB); a pass whose digit is the same for every key, and the passes above the
    highest bit in which two keys differ, are skipped. O(6 (m + 2048)) time, 4m words of memory.
    """
    n = ia.shape[0]
    rec = empty_huge(2 * n, np.uint64)  # (key, index) records
    recf = rec.view(np.float64)
    top = np.uint64(1) << np.uint64(63)
    mask = np.uint64(_VALUES - 1)
    for i in range(n):
        recf[2 * i] = x[ia[i]] + 0.0  # -0.0 is 0.0, as comparisons have it
    hist = np.zeros((6, _VALUES), dtype=np.int64)
    first = rec[0]
    first = ~first if first & top else first | top
    differ = np.uint64(0)
    for i in range(n):
        k = rec[2 * i]
        k = ~k if k & top else k | top
        rec[2 * i] = k
        rec[2 * i + 1] = np.uint64(ia[i])
        differ |= k ^ first
        for d in range(6):
            hist[d, (k >> np.uint64(_DIGIT * d)) & mask] += 1
    a = rec
    b = empty_huge(2 * n, np.uint64)
    pos = np.empty(_VALUES, dtype=np.int64)
    for d in range(6):
        shift = np.uint64(_DIGIT * d)
        if (differ >> shift) == 0:  # every key agrees from this digit up
            break
        if not _digit_starts(hist, d, _VALUES, n, pos):
            continue
        for i in range(n):
            k = a[2 * i]
            j = pos[(k >> shift) & mask]
            b[2 * j] = k
            b[2 * j + 1] = a[2 * i + 1]
            pos[(k >> shift) & mask] = j + 1
        a, b = b, a
    out = empty_huge(n, np.float64)
    order = empty_huge(n, np.int64)
    for i in range(n):
        o = np.int64(a[2 * i + 1])
        order[i] = o
        out[i] = x[o]
    return out, order


@kernel
def _digit_starts(hist, row, width, n, pos):
    """Where each value of the digit counted in row ``row`` of ``hist`` (``width`` values)
    starts in the output of its stable pass, into ``pos``. False when every key has the same
    digit (the pass would change nothing)."""
    for v in range(width):
        if hist[row, v] == n:
            return False
    c = 0
    for v in range(width):
        pos[v] = c
        c += hist[row, v]
    return True


@kernel
def sort_keys(keys):
    """A sorted copy of the uint64 array ``keys``: equal to ``np.sort(keys)``.

    LSD radix sort: one pass counts the digit histograms, then one stable scatter per digit,
    skipping a digit that is the same for every key (the high bytes of the outcome keys of
    predictions in [0, 1] often are). The digits are eight bytes, or six bytes and one of 10
    bits when the keys differ only in their low 58 bits (a pass fewer). O(8 (n + 1024)) time,
    2n words of memory. Faster than numpy's comparison sort from about 10^4 keys on.

    >>> import numpy as np
    >>> sort_keys(np.array([3, 1, 2**63 + 5, 2], dtype=np.uint64)).tolist()
    [1, 2, 3, 9223372036854775813]
    """
    return sort_keys_into(keys.copy(), np.empty(keys.shape[0], dtype=np.uint64))


@kernel
def _key_histograms(keys):
    """Counts of the digits of uint64 keys in one pass, (9, 1024): rows 0-7 the eight 8-bit
    digits, row 8 the 10-bit digit at bits 48-57; and the OR of every key XOR the first, whose
    highest set bit is the highest bit in which two keys differ. O(n)."""
    hist = np.zeros((9, 1024), dtype=np.int64)
    differ = nb.uint64(0)
    if keys.shape[0] == 0:
        return hist, differ
    first = keys[0]
    for i in range(keys.shape[0]):
        k = keys[i]
        differ |= k ^ first
        for d in range(8):
            hist[d, (k >> nb.uint64(8 * d)) & nb.uint64(255)] += 1
        hist[8, (k >> nb.uint64(48)) & nb.uint64(1023)] += 1
    return hist, differ


@kernel(nogil=True)
def sort_keys_into(keys, scratch):
    """:func:`sort_keys` in place: ``keys`` and ``scratch`` (as long) are the two buffers of
    the passes, so both are overwritten; returns the one that holds the sorted keys.
    O(7 or 8 (n + 1024)), no allocation of O(n)."""
    n = keys.shape[0]
    hist, differ = _key_histograms(keys)
    # keys that differ only in their low 58 bits (the outcome keys of predictions from about
    # 2^-60 to 1) take six 8-bit digits and one of 10 bits: a pass fewer than eight bytes
    narrow = (differ >> nb.uint64(58)) == 0
    a = keys
    b = scratch
    pos = np.empty(1024, dtype=np.int64)
    for d in range(7 if narrow else 8):
        row = 8 if narrow and d == 6 else d
        width = 1024 if row == 8 else 256
        if not _digit_starts(hist, row, width, n, pos):
            continue
        shift = nb.uint64(8 * d)
        mask = nb.uint64(width - 1)
        for i in range(n):
            k = a[i]
            v = (k >> shift) & mask
            j = pos[v]
            b[j] = k
            pos[v] = j + 1
        a, b = b, a
    return a


@kernel(read_only=(0,))  # one compilation for read-only and writable callers
def sort_pairs(x):
    """(keys, order): x sorted and its stable argsort (equal to np.argsort(x, kind="stable"))
    for x without NaN. O(m log m) time, O(m) memory.

    Insertion sort first, for at most 8m element moves (2m from 512 elements on): a nearly
    sorted array (the frequencies of a nearly calibrated table, in the order of its
    predictions) is done in O(m + inversions). Otherwise, from 512 elements on, a radix
    sort finishes it (O(m)); below, :func:`sort_pairs_small` finishes it. Every step is stable.
    """
    n = x.shape[0]
    if n < RADIX_MIN:
        return sort_pairs_small(x)
    ka = empty_huge(n, np.float64)
    ia = empty_huge(n, np.int64)
    for i in range(n):
        ka[i] = x[i]
        ia[i] = i
    if _insertion(ka, ia, 0, n, 2 * n) == n:
        return ka, ia
    return _radix(x, ia)  # ia: equal keys still in index order (insertion is stable)


@kernel(read_only=(0,))  # one compilation for read-only and writable callers
def sort_pairs_small(x):
    """:func:`sort_pairs` without the radix sort, for any length (the same pairs: a stable sort
    is unique), O(m log m): what a caller of small arrays compiles (the radix sort and its
    huge-page helpers cost about a second of compilation; results/benchmarks/compile_profile.md).

    Insertion sort first, for at most 8m element moves; the rest is merge-sorted bottom-up
    (runs of 8 by insertion) and merged with the sorted prefix.

    >>> import numpy as np
    >>> sort_pairs_small(np.array([0.5, 0.25, 0.5, 0.0]))[1].tolist()
    [3, 1, 0, 2]
    """
    n = x.shape[0]
    ka = np.empty(n)
    ia = np.empty(n, dtype=np.int64)
    for i in range(n):
        ka[i] = x[i]
        ia[i] = i
    p = _insertion(ka, ia, 0, n, 8 * n)
    if p == n:
        return ka, ia
    for lo in range(p, n, _RUN):
        _insertion(ka, ia, lo, min(lo + _RUN, n), n * n)
    kb = np.empty(n)
    ib = np.empty(n, dtype=np.int64)
    for i in range(p):
        kb[i] = ka[i]
        ib[i] = ia[i]
    width = _RUN
    while width < n - p:
        for lo in range(p, n, 2 * width):
            _merge(ka, ia, kb, ib, lo, min(lo + width, n), min(lo + 2 * width, n))
        ka, kb = kb, ka
        ia, ib = ib, ia
        width *= 2
    if p == 0:
        return ka, ia
    _merge(ka, ia, kb, ib, 0, p, n)  # the insertion-sorted prefix holds the smaller indices
    return kb, ib


@kernel(read_only=(0,))  # one compilation for read-only and writable callers
def argsort_stable(x):
    """Stable argsort of a 1-D array without NaN: equal to np.argsort(x, kind="stable")."""
    return sort_pairs(x)[1]


@kernel(read_only=(0, 1))  # one compilation for read-only and writable callers
def merge_distinct(a, b):
    """Sorted distinct values of two sorted arrays, -0.0 read as 0.0. O(len(a) + len(b))."""
    na = a.shape[0]
    nb = b.shape[0]
    out = empty_huge(na + nb, np.float64)
    i = 0
    j = 0
    k = 0
    while i < na or j < nb:
        if j >= nb or (i < na and a[i] <= b[j]):
            v = a[i] + 0.0
            i += 1
        else:
            v = b[j] + 0.0
            j += 1
        if k == 0 or out[k - 1] != v:
            out[k] = v
            k += 1
    return out[:k]


@kernel
def gather(x, order):
    """x[order] as a new array (x in the order of an argsort). O(len(order))."""
    out = empty_huge(order.shape[0], np.float64)
    for k in range(order.shape[0]):
        out[k] = x[order[k]]
    return out


@kernel
def _block(a, lo, n):
    """numpy's sum of a[lo:lo + n], n <= 128: eight interleaved partial sums (n >= 8)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += np.float64(a[i])
        return res
    r0 = np.float64(a[lo])
    r1 = np.float64(a[lo + 1])
    r2 = np.float64(a[lo + 2])
    r3 = np.float64(a[lo + 3])
    r4 = np.float64(a[lo + 4])
    r5 = np.float64(a[lo + 5])
    r6 = np.float64(a[lo + 6])
    r7 = np.float64(a[lo + 7])
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += np.float64(a[lo + i])
        r1 += np.float64(a[lo + i + 1])
        r2 += np.float64(a[lo + i + 2])
        r3 += np.float64(a[lo + i + 3])
        r4 += np.float64(a[lo + i + 4])
        r5 += np.float64(a[lo + i + 5])
        r6 += np.float64(a[lo + i + 6])
        r7 += np.float64(a[lo + i + 7])
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += np.float64(a[lo + i])
        i += 1
    return res


@kernel
def pairwise_sum(a):
    """sum(a) rounded exactly as np.sum(a.astype(np.float64)) rounds it (each element is
    converted to float64 first, so integer counts need no float copy). O(m).

    numpy's pairwise summation: a block of at most 128 is summed by :func:`_block`; a
    longer range splits at half its length rounded down to a multiple of 8, and the sums
    of the halves are added. The recursion runs here on an explicit stack (numba cannot
    cache a recursive function for use from other compiled functions).
    """
    n = a.shape[0]
    if n <= 128:
        return _block(a, 0, n)
    depth = 2
    k = n
    while k > 128:
        k = k // 2 + 8
        depth += 1
    f_lo = np.empty(depth, dtype=np.int64)
    f_n = np.empty(depth, dtype=np.int64)
    f_phase = np.empty(depth, dtype=np.int64)
    vals = np.empty(depth + 1)
    top = 0  # frames in use
    nv = 0  # values in use
    f_lo[0] = 0
    f_n[0] = n
    f_phase[0] = 0
    top = 1
    while top > 0:
        j = top - 1
        lo = f_lo[j]
        cnt = f_n[j]
        if cnt <= 128:
            vals[nv] = _block(a, lo, cnt)
            nv += 1
            top -= 1
            continue
        n2 = cnt // 2
        n2 -= n2 % 8
        if f_phase[j] == 0:
            f_phase[j] = 1
            f_lo[top] = lo
            f_n[top] = n2
            f_phase[top] = 0
            top += 1
        elif f_phase[j] == 1:
            f_phase[j] = 2
            f_lo[top] = lo + n2
            f_n[top] = cnt - n2
            f_phase[top] = 0
            top += 1
        else:
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            top -= 1
    return vals[0]
