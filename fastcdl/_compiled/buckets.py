"""Kernels that reduce rounds (y_t, p_t) to the bucket table (q_i, n_i, s_i).

Plain loops; no validation beyond refusing what cannot be binned (a binning kernel
returns False on the first round it cannot place, and the caller explains why).
"""

import numba as nb
import numpy as np
from numba import prange

from fastcdl._compiled._jit import kernel

# Rounds per chunk of the parallel binning kernels. The chunking depends only on T
# and the number of bins, never on the thread count, so float sums are reproducible.
CHUNK = 1 << 20


# The checks below read the rounds in blocks of CHECK_BLOCK: within a block a branch-free
# count of the bad values, which the compiler vectorizes, and a scalar search only in a block
# that has one. A loop that stops at the first bad value cannot be vectorized, and one that
# branches on the outcome mispredicts on every other round of 0/1 data: converting 3 10^7
# float64 outcomes took 190 ms that way, 9 ms blocked (one-off timings on the 2-core Zen 5
# machine of docs/metrics.md, "Speed, and when a second thread is used").
CHECK_BLOCK = 4096


@kernel
def first_bad_prob(p):
    """Index of the first p outside [0, 1] (NaN included), or -1. O(T)."""
    T = p.shape[0]
    for start in range(0, T, CHECK_BLOCK):
        block = p[start : min(T, start + CHECK_BLOCK)]
        n_bad = 0
        for i in range(block.shape[0]):
            n_bad += 1 - np.int64((block[i] >= 0.0) & (block[i] <= 1.0))
        if n_bad:
            for i in range(block.shape[0]):
                if not (block[i] >= 0.0 and block[i] <= 1.0):
                    return start + i
    return -1


@kernel
def first_bad_outcome(y):
    """Index of the first y that is not 0 or 1 (NaN included), or -1. O(T)."""
    T = y.shape[0]
    for start in range(0, T, CHECK_BLOCK):
        block = y[start : min(T, start + CHECK_BLOCK)]
        n_bad = 0
        for i in range(block.shape[0]):
            n_bad += np.int64(block[i] != 0) - np.int64(block[i] == 1)
        if n_bad:
            for i in range(block.shape[0]):
                if block[i] != 0 and block[i] != 1:
                    return start + i
    return -1


@kernel
def outcomes_to_u8(y, out):
    """Write 0/1 outcomes y into the uint8 array out; index of the first y that is not 0
    or 1 (NaN included), or -1 (out is then meaningless). One pass, O(T); compiled once per
    dtype of y, so the kernels downstream see uint8 only."""
    T = y.shape[0]
    for start in range(0, T, CHECK_BLOCK):
        stop = min(T, start + CHECK_BLOCK)
        block = y[start:stop]
        dst = out[start:stop]
        n_bad = 0
        for i in range(block.shape[0]):
            v = block[i]
            dst[i] = np.uint8(v == 1)
            n_bad += np.int64(v != 0) - np.int64(v == 1)  # 1 for a value other than 0 and 1
        if n_bad:
            for i in range(block.shape[0]):
                if block[i] != 0 and block[i] != 1:
                    return start + i
    return -1


@kernel
def first_bad_weight(w):
    """Index of the first weight that is negative, NaN or infinite, or -1. O(T)."""
    for i in range(w.shape[0]):
        if not (w[i] >= 0.0 and w[i] < np.inf):
            return i
    return -1


@kernel
def outcome_keys(y, p_bits, keys):
    """uint64 keys that sort like (p, y), into ``keys``: the bits of p shifted left, y in the
    low bit. Returns ``keys``.

    ``p_bits`` is the float64 prediction array viewed as uint64. For p in [0, 1] the
    IEEE-754 bit pattern is monotone in p once the sign bit (set only by -0.0) is
    cleared, so one integer sort groups rounds by prediction and outcome: no argsort.
    The caller allocates ``keys`` (and the other large outputs below) with numpy: numpy
    asks the kernel for huge pages on large arrays, and first touching 10^7 keys took
    about 40 ms less than in memory allocated inside a kernel (measured).
    """
    for i in range(p_bits.shape[0]):
        keys[i] = _outcome_key(p_bits[i], y[i])
    return keys


@kernel(inline="always")
def _outcome_key(bits, y):
    """One round's outcome key: the bits of p with the sign bit (set only by -0.0) cleared,
    shifted left, y in the low bit."""
    return ((bits & nb.uint64(0x7FFFFFFFFFFFFFFF)) << nb.uint64(1)) | nb.uint64(y != 0)


@kernel
def outcome_keys_split(y, p_bits, pivot, keys):
    """:func:`outcome_keys` written in two parts: the keys below ``pivot`` from the start of
    ``keys``, the others from its end backwards. Returns how many are below. Each part can
    then be sorted alone: the first part's keys all sort before the second's. One pass,
    no branch on the data (each key is written at both ends, one write then overwritten or
    past the other end). O(T)."""
    lo = 0
    hi = p_bits.shape[0] - 1
    for i in range(p_bits.shape[0]):
        key = _outcome_key(p_bits[i], y[i])
        below = key < pivot
        keys[lo] = key
        keys[hi] = key
        lo += 1 if below else 0
        hi -= 0 if below else 1
    return lo


@kernel
def count_runs(keys):
    """The number of distinct predictions among sorted outcome keys. O(T)."""
    one = nb.uint64(1)
    m = 0
    for i in range(keys.shape[0]):
        if i == 0 or (keys[i] >> one) != (keys[i - 1] >> one):
            m += 1
    return m


@kernel
def runs_of_keys(keys, value_bits, counts, positives):
    """Exact bucket table from sorted outcome keys, into arrays of :func:`count_runs`
    entries: the values' bit patterns (view them as float64), counts and positives. O(T)."""
    one = nb.uint64(1)
    j = -1
    for i in range(keys.shape[0]):
        bits = keys[i] >> one
        if i == 0 or bits != (keys[i - 1] >> one):
            j += 1
            value_bits[j] = bits
            counts[j] = 0
            positives[j] = 0
        counts[j] += 1
        positives[j] += np.int64(keys[i] & one)


@kernel
def runs_weighted(p_sorted, y_sorted, w_sorted):
    """Weighted exact table from rounds sorted by p: (values, counts, positives, rounds), where
    rounds counts the rounds of positive weight in each bucket. O(T)."""
    T = p_sorted.shape[0]
    m = 0
    for i in range(T):
        if i == 0 or p_sorted[i] != p_sorted[i - 1]:
            m += 1
    values = np.empty(m, dtype=np.float64)
    counts = np.zeros(m, dtype=np.float64)
    positives = np.zeros(m, dtype=np.float64)
    rounds = np.zeros(m, dtype=np.int64)
    j = -1
    for i in range(T):
        if i == 0 or p_sorted[i] != p_sorted[i - 1]:
            j += 1
            values[j] = p_sorted[i] + 0.0
        counts[j] += w_sorted[i]
        rounds[j] += w_sorted[i] > 0.0
        if y_sorted[i] != 0:
            positives[j] += w_sorted[i]
    return values, counts, positives, rounds


# An interior edge e is widened to e * EDGE_SLACK (4 to 8 ulps above e): a prediction within
# that much above an edge goes to the lower bin, so grid values computed as 3 * 0.1 =
# 0.30000000000000004 or 0.1 + 0.5 = 0.6 land in the bin of 3/10 or 6/10 whatever their last
# bits (scikit-learn's calibration_curve behaves so on its linspace edges). The product is
# exact-rounded IEEE arithmetic, the same in numpy (fastcdl.bucket_table.bin_cuts) and in the kernels.
EDGE_SLACK = 1.0 + 2.0**-50


@kernel(inline="always")
def bin_of(x, edges, m, uniform):
    """Bin of x for bins [0, c_1], (c_1, c_2], ..., (c_{m-1}, 1] (0-based), where the cut
    c_j = e_j * EDGE_SLACK is the interior edge e_j widened by 4 to 8 ulps.

    Uniform edges start from the guess floor(x m) and correct it against the cuts (x m is
    within a few ulps of the truth, so one step suffices), which agrees exactly with a
    search of the cuts; other edges are searched in O(log m).
    """
    if uniform:
        j = max(0, min(int(x * m), m - 1))
        if j > 0 and x <= edges[j] * EDGE_SLACK:
            j -= 1
        elif x > edges[j + 1] * EDGE_SLACK:
            j += 1
        return j
    lo = 0
    hi = m  # invariant: the bin is in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if x > edges[mid] * EDGE_SLACK:
            lo = mid
        else:
            hi = mid
    return lo


# Arbitrary edges are found through a grid of G equal cells: cell(x) = floor(x G) is exact
# (G is a power of two) and non-decreasing in x, so the bins a cell's rounds can fall in are
# those between the cuts of the cells before it and the cuts of the cells up to it
# (cell_starts, cell_cuts), and only the cuts inside the round's own cell are searched. The result is
# bin_of's, bit for bit; the cost per round is O(1) unless many cuts share a cell. G is about
# the number of bins, between MIN_GRID and GRID cells: a small table stays in cache.
GRID = 1 << 16
MIN_GRID = 1 << 10


@kernel(inline="always")
def cell_of(x, G):
    """The cell of x in [0, 1] in a grid of G cells (x slightly above 1, a widened cut, goes
    to the last cell)."""
    return min(int(x * G), G - 1)


@kernel
def cell_starts(edges):
    """starts[g] = the number of cuts c_j = e_j * EDGE_SLACK (j = 1..m-1) whose cell is below g,
    g = 0..G, in a grid of G cells: the power of two at or above m, within [MIN_GRID, GRID]
    (G = len(starts) - 1). A round in cell g lies in a bin between starts[g] and
    starts[g + 1]. O(m + G)."""
    m = edges.shape[0] - 1
    G = MIN_GRID
    while G < m and G < GRID:
        G <<= 1
    starts = np.zeros(G + 1, dtype=np.int64)
    for j in range(1, m):
        starts[cell_of(edges[j] * EDGE_SLACK, G) + 1] += 1
    for g in range(G):
        starts[g + 1] += starts[g]
    return starts


@kernel
def cell_cuts(edges):
    """The cut inside each cell of :func:`cell_starts`' grid: cuts[g] = c_j when cell g holds
    exactly one cut, 2.0 when it holds none (no x exceeds it), -1.0 when it holds several.
    In the usual case a round's bin is starts[g] + (x > cuts[g]): two loads at the same
    index, no search. O(m + G)."""
    starts = cell_starts(edges)
    G = starts.shape[0] - 1
    cuts = np.full(G, 2.0)
    for g in range(G):
        k = starts[g + 1] - starts[g]
        if k == 1:
            cuts[g] = edges[starts[g] + 1] * EDGE_SLACK
        elif k > 1:
            cuts[g] = -1.0
    return cuts


@kernel(inline="always")
def bin_of_cells(x, edges, starts, cuts):
    """bin_of(x, edges, m, False) through the grid (starts from :func:`cell_starts`, cuts from
    :func:`cell_cuts`): a search of the cuts in x's cell only."""
    g = cell_of(x, cuts.shape[0])
    lo = np.int64(starts[g])
    cut = cuts[g]
    if cut >= 0.0:  # at most one cut in the cell (the usual case): no branch on x
        return lo + np.int64(x > cut)
    hi = np.int64(starts[g + 1])  # the bin is in [lo, hi]: invariant cut_{lo} < x <= cut_{hi + 1}
    while hi > lo:
        mid = (lo + hi + 1) >> 1
        if x > edges[mid] * EDGE_SLACK:
            lo = mid
        else:
            hi = mid - 1
    return lo


@kernel(inline="always")
def bin_of_table(x, edges, m, uniform, grid):
    """The bin of x: bin_of for uniform edges, bin_of_cells for others (grid from :func:`_grid`)."""
    if uniform:
        return bin_of(x, edges, m, True)
    return bin_of_cells(x, edges, grid[0], grid[1])


@kernel
def _grid(edges, uniform):
    """(cell_starts(edges), cell_cuts(edges)), or placeholders for uniform edges (found
    without the grid)."""
    if uniform:
        return np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.float64)
    return cell_starts(edges), cell_cuts(edges)


@kernel
def chunking(T, m):
    """(n_chunks, step): fixed by T and m alone, never by the thread count."""
    chunk = CHUNK if CHUNK >= 16 * m else 16 * m
    n_chunks = (T + chunk - 1) // chunk
    if n_chunks > 64:
        n_chunks = 64
    if n_chunks < (T >> 31) + 1:  # < 2^31 rounds per chunk (see _PACK)
        n_chunks = (T >> 31) + 1
    if n_chunks < 1:
        n_chunks = 1
    return n_chunks, (T + n_chunks - 1) // n_chunks


# One int64 per bin counts rounds in the high 32 bits and outcomes y = 1 in the low 32:
# a single scattered add per round instead of two (a chunk has < 2^31 rounds).
_PACK = np.int64(1) << np.int64(32)

# Partial tables are flat arrays, chunk c's bins at [c m, (c + 1) m), and the bad-round
# flags int64: one-dimensional allocations only, which numba compiles once for the package
# (its two-dimensional and boolean np.zeros cost a few tenths of a second more to compile).


# The uniform binning loop works on blocks of UNIFORM_BLOCK rounds in two passes: the first finds
# every round's bin with no branch (the compiler vectorizes it, 8 rounds to an AVX-512 register),
# the second makes the scattered adds. A bin index in a buffer of 4-byte unsigned integers costs
# the adds no test for negative indices.
UNIFORM_BLOCK = 1024


@kernel(inline="always")
def uniform_bin(x, m, mf):
    """bin_of(x, edges, m, True) for x in [0, 1] and the edges e_j = j / m, with no branch and
    no table. mf is m as a float.

    The guess j = min(floor(fl(x m)), m - 1) is never below the answer and at most one above:
    x above the cut c_k = e_k (1 + 2^-50) puts x m above k (1 + 2^-51), which a rounding of
    relative size 2^-53 cannot bring below k; x at or below c_j keeps fl(x m) below j + 1.
    So only the cut at the guess's lower edge is compared, computed as the edges were,
    (j / m) * EDGE_SLACK: IEEE division and multiplication are correctly rounded, so it is
    the double a search of np.arange(m + 1) / m widened by EDGE_SLACK compares with, bit for
    bit (m <= 2^24, so j and j / m are exact inputs)."""
    j = min(np.int32(x * mf), np.int32(m - 1))
    return j - np.int32((x <= (j / mf) * EDGE_SLACK) & (j > 0))


@kernel
def _bin_span_uniform(y, p, m, ny, pp):
    """All rounds of (y, p) into the m equal bins of one partial table (packed counts ny, sums
    pp, both of length m); False if some round cannot be binned.

    Blocked in two passes (UNIFORM_BLOCK): bins first, with the checks, branch-free; adds
    second. The edge rule costs one division a round, done 8 at a time, the same on any data:
    a guess corrected only in blocks with a round near an edge ran 1.07x this loop's time on
    random predictions but 1.86x on predictions on the edges' grid, where every block needs
    the correction, and the one-pass loop with bin_of's branch 1.23x and 1.09x
    (results/benchmarks/uniform-bins-variants.md, scripts/bench_uniform_variants.py).
    """
    T = p.shape[0]
    mf = np.float64(m)
    bins = np.empty(UNIFORM_BLOCK, dtype=np.uint32)
    n_bad = 0
    for start in range(0, T, UNIFORM_BLOCK):
        stop = min(T, start + UNIFORM_BLOCK)
        xs = p[start:stop]
        ys = y[start:stop]
        for i in range(stop - start):
            x = xs[i]
            yt = ys[i]
            good = (x >= 0.0) & (x <= 1.0) & ((yt == 0) | (yt == 1))
            n_bad += 1 - np.int64(good)
            bins[i] = np.uint32(uniform_bin(x if good else 0.0, m, mf))
        for i in range(stop - start):
            j = bins[i]
            # the outcome as the number it is (0 or 1 once checked; a table with a bad round is
            # thrown away): written as ``y != 0`` the compiler made it a branch, taken at random
            ny[j] += _PACK + np.int64(ys[i])
            pp[j] += xs[i]
    return n_bad == 0


@kernel
def _bin_span(y, p, edges, uniform, grid, start, stop, ny, pp, off):
    """Rounds start..stop-1 into one partial table (packed counts ny, prediction sums pp, from
    index off on). False if some round cannot be binned. No early exit: a branch-free check
    keeps the loop at memory speed on good data."""
    m = edges.shape[0] - 1
    if uniform:
        return _bin_span_uniform(y[start:stop], p[start:stop], m, ny[off : off + m], pp[off : off + m])
    return _bin_span_cells(y, p, edges, grid[0], grid[1], start, stop, ny, pp, off)


@kernel
def _bin_span_cells(y, p, edges, starts, cuts, start, stop, ny, pp, off):
    """_bin_span for edges other than uniform, with bin_of_cells written out in the loop: a
    stand-alone copy of this loop that called bin_of_cells (inlined by numba or not) ran about
    3x slower at T = 5 10^6 rounds."""
    G = cuts.shape[0]
    ok = True
    for t in range(start, stop):
        x = p[t]
        yt = y[t]
        ok &= (x >= 0.0) & (x <= 1.0) & ((yt == 0) | (yt == 1))
        g = cell_of(x, G) if ok else 0
        lo = np.int64(starts[g])
        cut = cuts[g]
        if cut >= 0.0:
            j = lo + np.int64(x > cut)
        else:
            hi = np.int64(starts[g + 1])
            while hi > lo:
                mid = (lo + hi + 1) >> 1
                if x > edges[mid] * EDGE_SLACK:
                    lo = mid
                else:
                    hi = mid - 1
            j = lo
        ny[off + j] += _PACK + np.int64(yt)  # the outcome as a number, no branch (see _bin_span_uniform)
        pp[off + j] += x
    return ok


@kernel
def _bin_span_weighted(y, p, w, edges, uniform, grid, start, stop, pn, ps, pp, off):
    """As _bin_span with weights: weight sums per bin; also refuses negative or non-finite weights."""
    m = edges.shape[0] - 1
    ok = True
    for t in range(start, stop):
        x = p[t]
        yt = y[t]
        wt = w[t]
        ok &= (x >= 0.0) & (x <= 1.0) & ((yt == 0) | (yt == 1)) & (wt >= 0.0) & (wt < np.inf)
        j = bin_of_table(x, edges, m, uniform, grid) if ok else 0
        pn[off + j] += wt
        ps[off + j] += wt * yt  # wt or +0.0, which leaves a sum of weights >= 0 unchanged: no branch
        pp[off + j] += wt * x
    return ok


@kernel(parallel=True)
def _bin_chunks(y, p, edges, uniform, grid, step, part_ny, part_p, bad):
    T = p.shape[0]
    m = edges.shape[0] - 1
    for c in prange(bad.shape[0]):
        ok = _bin_span(y, p, edges, uniform, grid, c * step, min(T, (c + 1) * step), part_ny, part_p, c * m)
        bad[c] = 0 if ok else 1


@kernel(parallel=True)
def _bin_chunks_weighted(y, p, w, edges, uniform, grid, step, part_n, part_s, part_p, bad):
    T = p.shape[0]
    m = edges.shape[0] - 1
    for c in prange(bad.shape[0]):
        ok = _bin_span_weighted(
            y, p, w, edges, uniform, grid, c * step, min(T, (c + 1) * step), part_n, part_s, part_p, c * m
        )
        bad[c] = 0 if ok else 1


@kernel
def _add_packed_parts(part_ny, part_p, bad, counts, positives, prob_sums):
    """Add the partial tables in chunk order (False, adding nothing, if a chunk had a bad round)."""
    n_chunks = bad.shape[0]
    m = counts.shape[0]
    for c in range(n_chunks):
        if bad[c] != 0:
            return False
    low = (np.int64(1) << np.int64(32)) - 1
    for c in range(n_chunks):
        for j in range(m):
            counts[j] += part_ny[c * m + j] >> np.int64(32)
            positives[j] += part_ny[c * m + j] & low
            prob_sums[j] += part_p[c * m + j]
    return True


@kernel
def bin_rounds(y, p, edges, uniform, counts, positives, prob_sums):
    """Accumulate unweighted rounds into the m = len(edges) - 1 bins (exact int64 counts).

    Returns False, leaving the outputs untouched, if some round cannot be binned
    (p outside [0, 1] or NaN, y not 0/1). Rounds are cut into chunks fixed by T and m
    alone (:func:`chunking`); each chunk fills its own partial table and the partials are
    added in chunk order, so the result does not depend on the number of threads, and
    each prediction sum is a two-level (blocked) sum. This kernel fills the chunks one
    after another on the calling thread; :func:`bin_rounds_parallel` fills them on
    numba's thread pool with the same result. Callers use this one for a single chunk
    (waking the pool costs more than T < 2^20 rounds, and small inputs then never compile
    the parallel kernel), for one thread, and where the pool is unsafe.
    Cost O(T) (arbitrary edges too, unless many share a cell of the grid: O(log m) at
    worst), memory O(n_chunks * m).
    """
    T = p.shape[0]
    m = edges.shape[0] - 1
    n_chunks, step = chunking(T, m)
    part_ny = np.zeros(n_chunks * m, dtype=np.int64)
    part_p = np.zeros(n_chunks * m, dtype=np.float64)
    bad = np.zeros(n_chunks, dtype=np.int64)
    grid = _grid(edges, uniform)
    for c in range(n_chunks):
        ok = _bin_span(y, p, edges, uniform, grid, c * step, min(T, (c + 1) * step), part_ny, part_p, c * m)
        bad[c] = 0 if ok else 1
    return _add_packed_parts(part_ny, part_p, bad, counts, positives, prob_sums)


@kernel
def bin_rounds_parallel(y, p, edges, uniform, counts, positives, prob_sums):
    """:func:`bin_rounds` with the chunks filled on numba's thread pool; the same result."""
    T = p.shape[0]
    m = edges.shape[0] - 1
    n_chunks, step = chunking(T, m)
    part_ny = np.zeros(n_chunks * m, dtype=np.int64)
    part_p = np.zeros(n_chunks * m, dtype=np.float64)
    bad = np.zeros(n_chunks, dtype=np.int64)
    _bin_chunks(y, p, edges, uniform, _grid(edges, uniform), step, part_ny, part_p, bad)
    return _add_packed_parts(part_ny, part_p, bad, counts, positives, prob_sums)


@kernel
def _add_weighted_parts(part_n, part_s, part_p, bad, counts, positives, prob_sums):
    n_chunks = bad.shape[0]
    m = counts.shape[0]
    for c in range(n_chunks):
        if bad[c] != 0:
            return False
    for c in range(n_chunks):
        for j in range(m):
            counts[j] += part_n[c * m + j]
            positives[j] += part_s[c * m + j]
            prob_sums[j] += part_p[c * m + j]
    return True


@kernel
def bin_rounds_weighted(y, p, w, edges, uniform, counts, positives, prob_sums):
    """As :func:`bin_rounds` with sample weights: counts and positives are weight sums.

    Also refuses negative, NaN or infinite weights. Serial, like bin_rounds.
    """
    T = p.shape[0]
    m = edges.shape[0] - 1
    n_chunks, step = chunking(T, m)
    part_n = np.zeros(n_chunks * m, dtype=np.float64)
    part_s = np.zeros(n_chunks * m, dtype=np.float64)
    part_p = np.zeros(n_chunks * m, dtype=np.float64)
    bad = np.zeros(n_chunks, dtype=np.int64)
    grid = _grid(edges, uniform)
    for c in range(n_chunks):
        ok = _bin_span_weighted(
            y, p, w, edges, uniform, grid, c * step, min(T, (c + 1) * step), part_n, part_s, part_p, c * m
        )
        bad[c] = 0 if ok else 1
    return _add_weighted_parts(part_n, part_s, part_p, bad, counts, positives, prob_sums)


@kernel
def bin_rounds_weighted_parallel(y, p, w, edges, uniform, counts, positives, prob_sums):
    """:func:`bin_rounds_weighted` with the chunks filled on numba's thread pool; the same result."""
    T = p.shape[0]
    m = edges.shape[0] - 1
    n_chunks, step = chunking(T, m)
    part_n = np.zeros(n_chunks * m, dtype=np.float64)
    part_s = np.zeros(n_chunks * m, dtype=np.float64)
    part_p = np.zeros(n_chunks * m, dtype=np.float64)
    bad = np.zeros(n_chunks, dtype=np.int64)
    _bin_chunks_weighted(y, p, w, edges, uniform, _grid(edges, uniform), step, part_n, part_s, part_p, bad)
    return _add_weighted_parts(part_n, part_s, part_p, bad, counts, positives, prob_sums)


@kernel
def merge_sorted_keys(ka, kb):
    """Union of two strictly increasing key arrays: (keys, where ka went, where kb went). O(a + b)."""
    na = ka.shape[0]
    nb_ = kb.shape[0]
    keys = np.empty(na + nb_, dtype=np.float64)
    ia = np.empty(na, dtype=np.int64)
    ib = np.empty(nb_, dtype=np.int64)
    i = 0
    j = 0
    k = 0
    while i < na or j < nb_:
        if j >= nb_ or (i < na and ka[i] < kb[j]):
            keys[k] = ka[i]
            ia[i] = k
            i += 1
        elif i >= na or kb[j] < ka[i]:
            keys[k] = kb[j]
            ib[j] = k
            j += 1
        else:
            keys[k] = ka[i]
            ia[i] = k
            ib[j] = k
            i += 1
            j += 1
        k += 1
    return keys[:k].copy(), ia, ib


# -- equal-mass (quantile) bins ----------------------------------------------------------
# Quantile edges are found through a counting grid of their own, G cells of width 1/G (G a
# power of two, so the cell min(floor(x G), G - 1) is exact and non-decreasing in x). G grows
# with the number of quantile ranks (fastcdl.binning.edge_grid) so that the cells holding
# ranks, whose predictions are gathered, hold a small share of the rounds (at 10^4 ranks,
# 2^19 cells: about 2% of the rounds, where 2^16 cells gathered 15%).

# 1.0 as float64 bits: for p in [0, 1] the bits are at most ONE_BITS, and the only other bit
# pattern of a valid p is -0.0's. An integer test keeps the count loop at memory speed, and a
# round that fails it is counted in cell 0 (so no index is ever computed from NaN).
ONE_BITS = np.uint64(0x3FF0000000000000)
MINUS_ZERO_BITS = np.uint64(0x8000000000000000)


@kernel
def _count_grid_span(p, p_bits, G, hist):
    """Count p into hist; False if some p is bad. A loop over a whole array (callers pass
    slices) runs about twice as fast here as one over range(start, stop)."""
    n_bad = 0
    for t in range(p.shape[0]):
        b = p_bits[t]
        n_bad += (b > ONE_BITS) and (b != MINUS_ZERO_BITS)
        g = min(int(p[t] * G), G - 1) if b <= ONE_BITS else 0
        hist[g] += 1
    return n_bad == 0


@kernel
def count_grid(p, p_bits, G, hist):
    """Add the number of predictions p in each of the G grid cells to hist (G,); False if some
    p is outside [0, 1] or NaN (hist is then meaningless). p_bits is p viewed as uint64.
    O(T), serial: on the 2-core machine of results/benchmarks/metrics.md, shared with other
    jobs, two threads (partial histograms added afterwards) counted slower than one, as the
    parallel binning kernels then do; :func:`count_grid_parallel` counts on the thread pool."""
    return _count_grid_span(p, p_bits, G, hist)


@kernel(inline="always")
def part_bounds(T, n_parts, c):
    """Rounds [lo, hi) of part c when T rounds are cut into n_parts equal contiguous parts."""
    step = (T + n_parts - 1) // n_parts
    return min(T, c * step), min(T, (c + 1) * step)


@kernel(parallel=True)
def _count_parts(p, p_bits, G, part_hists, bad):
    n_parts = bad.shape[0]
    for c in prange(n_parts):
        lo, hi = part_bounds(p.shape[0], n_parts, c)
        ok = _count_grid_span(p[lo:hi], p_bits[lo:hi], G, part_hists[c * G : (c + 1) * G])
        bad[c] = 0 if ok else 1


@kernel(parallel=True)
def _add_part_hists(part_hists, n_parts, hist):
    G = hist.shape[0]
    for b in prange((G + 4095) >> 12):
        for g in range(b << 12, min(G, (b + 1) << 12)):
            acc = 0
            for c in range(n_parts):
                acc += part_hists[c * G + g]
            hist[g] += acc


@kernel
def count_grid_parallel(p, p_bits, G, hist, part_hists):
    """:func:`count_grid` on numba's thread pool: the rounds are cut into n_parts =
    len(part_hists) / G contiguous parts, part c counted into part_hists[c G:(c + 1) G]
    (zeros on entry, int32 where a part has fewer than 2^31 rounds; kept for
    :func:`gather_grid_cells_parallel`), then the parts are added into hist. Integer
    counts: the same hist for any n_parts and thread count. O(T + n_parts G)."""
    n_parts = part_hists.shape[0] // G
    bad = np.zeros(n_parts, dtype=np.int64)
    _count_parts(p, p_bits, G, part_hists, bad)
    _add_part_hists(part_hists, n_parts, hist)
    return bad.sum() == 0


@kernel(inline="always")
def popcount(x):
    """The number of set bits of the uint64 x (the SWAR sum: a few integer operations)."""
    x = x - ((x >> nb.uint64(1)) & nb.uint64(0x5555555555555555))
    x = (x & nb.uint64(0x3333333333333333)) + ((x >> nb.uint64(2)) & nb.uint64(0x3333333333333333))
    x = (x + (x >> nb.uint64(4))) & nb.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * nb.uint64(0x0101010101010101)) >> nb.uint64(56))


@kernel
def cell_bitmap(cells, G):
    """The increasing cells as a bitmap of G bits, and the count of set bits before each
    64-bit word: cell g's rank among the cells is below[g >> 6] + the set bits under g."""
    one = nb.uint64(1)
    n_words = (G + 63) >> 6
    words = np.zeros(n_words, dtype=np.uint64)
    for k in range(cells.shape[0]):
        words[cells[k] >> 6] |= one << nb.uint64(cells[k] & 63)
    below = np.zeros(n_words, dtype=np.int64)
    for i in range(1, n_words):
        below[i] = below[i - 1] + popcount(words[i - 1])
    return words, below


@kernel
def _gather_span(p, G, words, below, buf, fill):
    """Write each p whose cell is set in the bitmap to buf[fill[its rank]] (fill advances).
    A round's test reads the bitmap (G / 8 bytes, in cache); only the gathered rounds count
    bits for their rank: no search."""
    one = nb.uint64(1)
    for t in range(p.shape[0]):
        x = p[t]
        g = cell_of(x, G)
        word = words[g >> 6]
        bit = nb.uint64(g & 63)
        if (word >> bit) & one:
            k = below[g >> 6] + popcount(word & ((one << bit) - one))
            buf[fill[k]] = x
            fill[k] += 1


@kernel
def gather_grid_cells(p, G, cells, offsets):
    """The predictions of the increasing grid cells ``cells``, cell cells[k]'s (in the order
    of the rounds) at buf[offsets[k]:offsets[k + 1]] (offsets from the cells' counts). O(T)."""
    words, below = cell_bitmap(cells, G)
    buf = np.empty(offsets[cells.shape[0]], dtype=np.float64)
    _gather_span(p, G, words, below, buf, offsets[: cells.shape[0]].copy())
    return buf


@kernel(parallel=True)
def _gather_parts(p, G, words, below, buf, fills, K):
    n_parts = fills.shape[0] // K
    for c in prange(n_parts):
        lo, hi = part_bounds(p.shape[0], n_parts, c)
        _gather_span(p[lo:hi], G, words, below, buf, fills[c * K : (c + 1) * K])


@kernel
def gather_grid_cells_parallel(p, G, cells, offsets, part_hists):
    """:func:`gather_grid_cells` on numba's thread pool, the rounds cut into the parts of
    :func:`count_grid_parallel` (whose part_hists it takes): part c writes its rounds of cell
    cells[k] after those of the parts before it, so buf is the serial gather's, value for
    value. O(T + n_parts K) for K cells."""
    K = cells.shape[0]
    n_parts = part_hists.shape[0] // G
    words, below = cell_bitmap(cells, G)
    buf = np.empty(offsets[K], dtype=np.float64)
    fills = np.empty(n_parts * K, dtype=np.int64)
    for k in range(K):
        at = offsets[k]
        for c in range(n_parts):
            fills[c * K + k] = at
            at += part_hists[c * G + cells[k]]
    _gather_parts(p, G, words, below, buf, fills, K)
    return buf


@kernel
def rank_cells(hist, r):
    """Where the increasing ranks r (1-based) fall in the grid counts hist, in one scan:
    (cells, offsets, slot, pos), the distinct cells holding ranks (increasing), the starts of
    their predictions in a gather (offsets[k + 1] - offsets[k] = hist[cells[k]]), and for
    rank i its cell's index in cells and its 0-based position among that cell's predictions.
    O(G + m)."""
    n = r.shape[0]
    slot = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    cells = np.empty(n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    K = 0
    below = 0  # predictions in the cells before g
    g = 0
    for i in range(n):
        while below + hist[g] < r[i]:
            below += hist[g]
            g += 1
        if K == 0 or cells[K - 1] != g:
            cells[K] = g
            offsets[K + 1] = offsets[K] + hist[g]
            K += 1
        slot[i] = K - 1
        pos[i] = r[i] - below - 1
    return cells[:K].copy(), offsets[: K + 1].copy(), slot, pos


@kernel(inline="always")
def insertion_sort(a, lo, hi):
    """Sort a[lo:hi] in place; for the few values of a grid cell, where a call of a general
    sort costs more than the sort."""
    for i in range(lo + 1, hi):
        x = a[i]
        j = i - 1
        while j >= lo and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@kernel(inline="always")
def _sift_down(a, lo, root, end):
    """Move a[root] down the max-heap a[lo:end] (children of i: 2 (i - lo) + 1 + lo and the next)."""
    while True:
        child = 2 * (root - lo) + 1 + lo
        if child >= end:
            return
        if child + 1 < end and a[child] < a[child + 1]:
            child += 1
        if not a[root] < a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@kernel
def heap_sort(a, lo, hi):
    """Sort a[lo:hi] in place by heapsort: O(n log n) whatever the values (the fallback of
    :func:`intro_sort` and :func:`select`)."""
    for root in range(lo + (hi - lo) // 2 - 1, lo - 1, -1):
        _sift_down(a, lo, root, hi)
    for end in range(hi - 1, lo, -1):
        a[lo], a[end] = a[end], a[lo]
        _sift_down(a, lo, lo, end)


@kernel(inline="always")
def _partition(a, lo, hi):
    """Hoare's partition of a[lo:hi] (at least 3 values) around the median of its first,
    middle and last values: returns j, lo <= j < hi - 1, with every value of a[lo:j + 1] at
    most every value of a[j + 1:hi]."""
    mid = lo + (hi - lo - 1) // 2
    last = hi - 1
    if a[mid] < a[lo]:
        a[mid], a[lo] = a[lo], a[mid]
    if a[last] < a[lo]:
        a[last], a[lo] = a[lo], a[last]
    if a[last] < a[mid]:
        a[last], a[mid] = a[mid], a[last]
    pivot = a[mid]
    i = lo - 1
    j = hi
    while True:
        i += 1
        while a[i] < pivot:
            i += 1
        j -= 1
        while pivot < a[j]:
            j -= 1
        if i >= j:
            return j
        a[i], a[j] = a[j], a[i]


@kernel(inline="always")
def _depth_limit(n):
    """2 floor(log2 n) + 2: the partitions an introspective sort or select allows before heapsort."""
    d = 2
    while n > 1:
        n >>= 1
        d += 2
    return d


SMALL_RANGE = 16  # a range this short is finished by insertion


@kernel
def intro_sort(a, lo, hi):
    """Sort a[lo:hi] in place: quicksort (:func:`_partition`) that finishes short ranges by
    insertion and hands a range to :func:`heap_sort` after too many partitions, so O(n log n)
    at worst; a plain loop with a stack of the larger ranges (at most 64: the loop goes on with
    the smaller). numba's own ``ndarray.sort`` compiles about ten times as long."""
    stack = np.empty((64, 3), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = lo, hi, _depth_limit(hi - lo)
    top = 1
    while top > 0:
        top -= 1
        left, right, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        while right - left > SMALL_RANGE:
            if depth == 0:
                heap_sort(a, left, right)
                left = right
                break
            depth -= 1
            j = _partition(a, left, right)
            if j + 1 - left < right - j - 1:  # go on with the smaller range
                stack[top, 0], stack[top, 1], stack[top, 2] = j + 1, right, depth
                right = j + 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = left, j + 1, depth
                left = j + 1
            top += 1
        insertion_sort(a, left, right)


@kernel
def select(a, lo, hi, k):
    """The (k - lo)-th smallest value of a[lo:hi] (lo <= k < hi), a reordered: quickselect
    (:func:`_partition`) with heapsort after too many partitions, so O(n) expected and
    O(n log n) at worst."""
    d = _depth_limit(hi - lo)
    while hi - lo > SMALL_RANGE:
        if d == 0:
            heap_sort(a, lo, hi)
            return a[k]
        d -= 1
        j = _partition(a, lo, hi)
        if k <= j:
            hi = j + 1
        else:
            lo = j + 1
    insertion_sort(a, lo, hi)
    return a[k]


@kernel
def order_statistics(buf, offsets, want_slot, want_pos):
    """For each request i, the want_pos[i]-th smallest (0-based) of the values in slot
    want_slot[i], buf[offsets[k]:offsets[k + 1]] (buf is reordered). A slot with more than 4
    requests or at most 64 values is sorted in place (the small ones by insertion), others are
    searched by selection (O(size) per request). O(n log n) at worst for n values. The sort and
    the selection are fastcdl's (:func:`intro_sort`, :func:`select`): numba's ``ndarray.sort``
    and ``np.partition`` took 6.8 s of this kernel's first compile; an order statistic is one
    value, whichever algorithm finds it."""
    n_slots = offsets.shape[0] - 1
    asks = np.zeros(n_slots, dtype=np.int64)
    for i in range(want_slot.shape[0]):
        asks[want_slot[i]] += 1
    for k in range(n_slots):
        if offsets[k + 1] - offsets[k] <= 64:
            insertion_sort(buf, offsets[k], offsets[k + 1])
            asks[k] = -1  # sorted
        elif asks[k] > 4:
            intro_sort(buf, offsets[k], offsets[k + 1])
            asks[k] = -1
    out = np.empty(want_slot.shape[0], dtype=np.float64)
    for i in range(want_slot.shape[0]):
        k = want_slot[i]
        if asks[k] < 0:
            out[i] = buf[offsets[k] + want_pos[i]]
        else:
            out[i] = select(buf, offsets[k], offsets[k + 1], offsets[k] + want_pos[i])
    return out
