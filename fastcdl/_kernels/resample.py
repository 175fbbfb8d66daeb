"""Replicate bucket tables from cell counts (fastcdl/uncertainty.py, docs/estimators.md).

A table is resampled through its cells: a cell is a bucket together with an outcome and a
round weight (for the bootstrap) or a bucket and a round weight (for consistency
resampling). numpy's Generator draws the counts of all cells of a batch of replicates
(multinomial or binomial); these kernels add them up into the replicates' bucket columns,
O(number of cells) per replicate.
"""

import numpy as np

from fastcdl._kernels._jit import kernel


@kernel
def scatter_cells(counts, cell_bucket, cell_y, cell_w, m):
    """Bucket counts and positives of each replicate: n[b, i] = sum over cells c of bucket i
    of counts[b, c] w_c, and s[b, i] the same over cells with y_c = 1. counts (B, C) int64."""
    B = counts.shape[0]
    C = counts.shape[1]
    n = np.zeros((B, m))
    s = np.zeros((B, m))
    for b in range(B):
        for c in range(C):
            k = counts[b, c]
            if k != 0:
                v = k * cell_w[c]
                i = cell_bucket[c]
                n[b, i] += v
                if cell_y[c] != 0:
                    s[b, i] += v
    return n, s


@kernel
def scatter_positives(draws, cell_bucket, cell_w, m):
    """Positives of each replicate: s[b, i] = sum over cells c of bucket i of draws[b, c] w_c."""
    B = draws.shape[0]
    C = draws.shape[1]
    s = np.zeros((B, m))
    for b in range(B):
        for c in range(C):
            k = draws[b, c]
            if k != 0:
                s[b, cell_bucket[c]] += k * cell_w[c]
    return s
