"""Equal-mass (quantile) bin edges, chosen among the distinct predictions (docs/metrics.md,
"Quantile bins").

Asked for m bins over T rounds, the k-th edge (k = 1..m-1) is the smallest prediction v with
at least k T / m of the weight at or below it: the order statistic of rank ceil(k T / m) for
unweighted rounds. Equal edges are kept once, an edge at the largest prediction is dropped
(nothing lies above it) and an edge at 1 is the last edge already, so ties give fewer bins
than asked, never a prediction value split between bins. The bins are then the usual
right-closed intervals with the same edge rule as every binned table
(fastcdl.bucket_table.bin_cuts), so ``bucket_stats(y, p, bins=m, strategy="quantile")`` equals
``bucket_stats(y, p, bins=its edges)``.

An edge at 0 (at least k T / m of the weight on p = 0) cannot be stored, since edges rise
strictly from 0; it is stored as the smallest positive float64, 5e-324, which keeps the
zeros in a bin of their own.
"""

from __future__ import annotations

import numpy as np

from fastcdl._compiled import buckets as _kb
from fastcdl._validate import first_bad_prob

__all__ = ["quantile_edges_of_rounds", "quantile_edges_of_table", "edges_from_quantiles"]


def edges_from_quantiles(v: np.ndarray) -> np.ndarray:
    """Bin edges from the m quantile values v_1 <= ... <= v_m (v_m the largest prediction).

    >>> edges_from_quantiles(np.array([0.2, 0.2, 0.7, 0.9])).tolist()
    [0.0, 0.2, 0.7, 1.0]
    >>> edges_from_quantiles(np.array([0.0, 0.5, 0.5])).tolist()
    [0.0, 5e-324, 1.0]
    """
    top = v[-1]
    inner = np.unique(v[:-1])
    inner = inner[(inner < top) & (inner < 1.0)]
    if inner.shape[0] and inner[0] == 0.0:
        inner[0] = np.nextafter(0.0, 1.0)
        inner = np.unique(inner)
    return np.concatenate([[0.0], inner, [1.0]])


def _ranks(T: int, m: int) -> np.ndarray:
    """ceil(k T / m) for k = 1..m, in exact integer arithmetic."""
    k = np.arange(1, m + 1, dtype=np.int64)
    return (k * np.int64(T) + (m - 1)) // m


def quantile_edges_of_table(values: np.ndarray, counts: np.ndarray, m: int) -> np.ndarray:
    """Quantile edges of an exact table (values sorted and distinct, counts > 0). O(m log m').

    >>> quantile_edges_of_table(np.array([0.1, 0.4, 0.8]), np.array([5, 1, 4]), 2).tolist()
    [0.0, 0.1, 1.0]
    """
    C = np.cumsum(counts)
    T = C[-1]
    if counts.dtype.kind == "f":  # weight(p <= v) m >= k T, products rather than a quotient
        idx = np.searchsorted(C * m, np.arange(1, m + 1, dtype=np.float64) * T, side="left")
    else:
        idx = np.searchsorted(C, _ranks(int(T), m), side="left")
    idx = np.minimum(idx, C.shape[0] - 1)
    return edges_from_quantiles(values[idx])


# The counting grid of the quantile edges: 2^16 cells at least (as the binning grid), at
# most 2^19 (4 MB of counts: 2^19 counted faster than 2^20 at 10^4 bins, T = 10^7), else about
# 64 cells per rank.
MIN_EDGE_GRID = 1 << 16
MAX_EDGE_GRID = 1 << 19


def edge_grid(T: int, m: int) -> int:
    """Cells of the counting grid for m quantile ranks over T rounds: a power of two, about
    64 m (so the cells holding ranks hold about 1/64 of the rounds, if they spread), within
    [2^16, 2^19] and not above T rounded up to a power of two.

    >>> edge_grid(10**7, 15), edge_grid(10**7, 10**4), edge_grid(10**5, 10**4)
    (65536, 524288, 131072)
    """
    want = max(64 * m, MIN_EDGE_GRID)
    G = MIN_EDGE_GRID
    while G < want and G < MAX_EDGE_GRID and G < T:
        G <<= 1
    return G


def quantile_edges_of_rounds(p: np.ndarray, m: int, n_parts: int = 1):
    """Quantile edges of unweighted predictions p (float64), or None if some p is outside
    [0, 1] or NaN.

    No sort of all the predictions: a count of the predictions in each cell of a grid of
    :func:`edge_grid` cells (one pass) says which cells hold the ranks ceil(k T / m); a second
    pass gathers the predictions of those cells only, cell by cell, and selects the ranks
    among each cell's few. O(T) unless the predictions crowd into a few cells (width 2^-16
    to 2^-19); then O(T log T) at worst. Up to 2^16 rounds, a plain sort. ``n_parts`` > 1
    runs both passes on numba's thread pool over up to that many contiguous parts of the
    rounds, each of at least 2 G rounds (call it where the pool is safe, fastcdl._parallel);
    the edges are the same.

    >>> quantile_edges_of_rounds(np.array([0.9, 0.1, 0.4, 0.4]), 2).tolist()
    [0.0, 0.4, 1.0]
    """
    T = p.shape[0]
    r = _ranks(T, m)
    if T <= MIN_EDGE_GRID:  # fewer rounds than cells: a sort is cheaper than the grid
        if first_bad_prob(p) >= 0:
            return None
        return edges_from_quantiles(np.sort(p)[r - 1])
    G = edge_grid(T, m)
    hist = np.zeros(G, dtype=np.int64)
    # each part's counts take G entries: parts of at least 2 G rounds keep them below a
    # quarter of the predictions' memory, however many threads there are
    n_parts = min(n_parts, max(1, T // (2 * G)))
    if n_parts > 1:
        small = (T + n_parts - 1) // n_parts < 2**31  # int32 counts halve the parts' memory
        part_hists = np.zeros(n_parts * G, dtype=np.int32 if small else np.int64)
        if not _kb.count_grid_parallel(p, p.view(np.uint64), G, hist, part_hists):
            return None
    elif not _kb.count_grid(p, p.view(np.uint64), G, hist):
        return None
    cells, offsets, slot, pos = _kb.rank_cells(hist, r)
    if n_parts > 1:
        buf = _kb.gather_grid_cells_parallel(p, G, cells, offsets, part_hists)
    else:
        buf = _kb.gather_grid_cells(p, G, cells, offsets)
    return edges_from_quantiles(_kb.order_statistics(buf, offsets, slot, pos))


def chunk_binning(bins, strategy):
    """For readers that reduce chunks and merge (fastcdl.io, fastcdl.dask): (the bins each
    chunk is reduced with, whether the merged table is rebinned at the end).

    Equal-width bins with a known count or edges bin every chunk; quantile edges and
    bins="auto" depend on all the rounds, so the chunks' exact tables are merged (exactly)
    and the merged table is rebinned (:meth:`fastcdl.BucketStats.rebin`). Checks both.
    """
    from fastcdl._validate import check_binning

    spec = check_binning(bins, strategy)
    if spec is None or (strategy == "uniform" and not isinstance(spec, str)):
        return bins, False
    return None, True
