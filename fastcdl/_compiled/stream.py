"""Bucket tables that grow one round at a time inside compiled code (fastcdl.kernels).

Two kinds, with the semantics of :class:`fastcdl.BucketStats`:

- :data:`BucketTable` (exact buckets): one bucket per distinct prediction, kept sorted.
  ``q``, ``n`` and ``s`` have a capacity; ``size[0]`` buckets are in use. Adding a round
  is a binary search (O(log m)) and, for a new prediction, an insertion (O(m) moves); a
  full table doubles its capacity and returns the new table, and the old one is marked
  stale (``size[0] = -1``) so that a later use of it raises instead of losing rounds.
- :data:`BinnedTable`: counts, outcomes and prediction sums per bin of fixed edges,
  the bins of ``bucket_stats(bins=...)`` with its edge rule (both place a round with
  buckets.bin_of). Adding is O(1) (O(log m) for arbitrary edges).

Counts are int64 (rounds) or float64 (sums of weights), fixed when the table is made.
The per-round functions are inlined into their callers (``inline="always"``): a call that
passes the table's namedtuple of arrays in and out costs reference counting per array,
about as much again as the search itself.
-0.0 is the prediction 0.0. A round of weight 0 creates no bucket (bucket_stats drops
empty buckets).
"""

from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.buckets import bin_of

BucketTable = namedtuple("BucketTable", ["q", "n", "s", "size"])
BinnedTable = namedtuple("BinnedTable", ["edges", "uniform", "n", "s", "ps"])
BucketTable.__doc__ = """An exact bucket table that grows as rounds arrive (fastcdl.kernels.table_new).

Attributes
----------
q : ndarray of float64
    The buckets' predictions; the first ``size[0]`` are in use, sorted.
n, s : ndarray of int64 or float64
    Rounds (or weights) per bucket and those with y = 1.
size : ndarray of int64, shape (1,)
    Buckets in use.

Examples
--------
>>> BucketTable._fields
('q', 'n', 's', 'size')
"""
BinnedTable.__doc__ = """A bucket table over fixed bins (fastcdl.kernels.binned_new).

Attributes
----------
edges : ndarray of float64
    The bin edges, from 0 to 1.
uniform : bool
    Whether the edges are i/m (O(1) binning).
n, s : ndarray of int64 or float64
    Rounds (or weights) per bin and those with y = 1.
ps : ndarray of float64
    The sum of the predictions in each bin.

Examples
--------
>>> BinnedTable._fields
('edges', 'uniform', 'n', 's', 'ps')
"""


@kernel
def stream_new(capacity):
    """An empty exact table with int64 counts and room for ``capacity`` buckets (at least 1)."""
    c = max(capacity, 1)
    return BucketTable(
        np.empty(c), np.zeros(c, dtype=np.int64), np.zeros(c, dtype=np.int64), np.zeros(1, dtype=np.int64)
    )


@kernel
def stream_new_weighted(capacity):
    """An empty exact table with float64 counts (weights) and room for ``capacity`` buckets."""
    c = max(capacity, 1)
    return BucketTable(np.empty(c), np.zeros(c), np.zeros(c), np.zeros(1, dtype=np.int64))


@kernel(inline="always")
def _live(tab):
    k = tab.size[0]
    if k < 0:
        raise ValueError("stale BucketTable: a full table grew; use the table that table_add returned")
    return k


@kernel(inline="always")
def _find(q, k, p):
    """First index j < k with q[j] >= p (k if none): where p is or goes."""
    lo = 0
    hi = k
    while lo < hi:
        mid = (lo + hi) >> 1
        if q[mid] < p:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def _grow(tab, k):
    c = 2 * tab.q.shape[0]
    q = np.empty(c)
    n = np.zeros(c, dtype=tab.n.dtype)
    s = np.zeros(c, dtype=tab.s.dtype)
    for i in range(k):
        q[i] = tab.q[i]
        n[i] = tab.n[i]
        s[i] = tab.s[i]
    size = np.zeros(1, dtype=np.int64)
    size[0] = k
    tab.size[0] = -1  # the old table is stale from now on
    return BucketTable(q, n, s, size)


@kernel(inline="always")
def stream_add(tab, p, y, w):
    """Add w rounds (or weight w) at prediction p with outcome y (0 or 1). Returns the table
    to use from now on: ``tab`` itself, or a larger copy when ``tab`` was full."""
    k = _live(tab)
    p = p + 0.0
    j = _find(tab.q, k, p)
    if j < k and tab.q[j] == p:
        tab.n[j] += w
        if y != 0:
            tab.s[j] += w
        return tab
    if not w > 0:
        return tab  # a round of weight 0 makes no bucket
    if k == tab.q.shape[0]:
        tab = _grow(tab, k)
    for i in range(k, j, -1):
        tab.q[i] = tab.q[i - 1]
        tab.n[i] = tab.n[i - 1]
        tab.s[i] = tab.s[i - 1]
    tab.q[j] = p
    tab.n[j] = w
    tab.s[j] = w if y != 0 else 0
    tab.size[0] = k + 1
    return tab


@kernel
def stream_merge(a, b):
    """A new table holding the rounds of both (counts of equal predictions added, a's first)."""
    ka = _live(a)
    kb = _live(b)
    c = max(ka + kb, 1)
    q = np.empty(c)
    n = np.zeros(c, dtype=a.n.dtype)
    s = np.zeros(c, dtype=a.s.dtype)
    i = 0
    j = 0
    k = 0
    while i < ka or j < kb:
        if j >= kb or (i < ka and a.q[i] < b.q[j]):
            q[k] = a.q[i]
            n[k] = a.n[i]
            s[k] = a.s[i]
            i += 1
        elif i >= ka or b.q[j] < a.q[i]:
            q[k] = b.q[j]
            n[k] = b.n[j]
            s[k] = b.s[j]
            j += 1
        else:
            q[k] = a.q[i]
            n[k] = a.n[i] + b.n[j]
            s[k] = a.s[i] + b.s[j]
            i += 1
            j += 1
        k += 1
    size = np.zeros(1, dtype=np.int64)
    size[0] = k
    return BucketTable(q, n, s, size)


@kernel
def stream_view(tab):
    """(q, n, s): views of the buckets in use (valid until the next add)."""
    k = _live(tab)
    return tab.q[:k], tab.n[:k], tab.s[:k]


@kernel
def uniform_edges(m):
    """The edges i/m, i = 0..m, computed as bucket_stats(bins=m) computes them."""
    e = np.empty(m + 1)
    for i in range(m + 1):
        e[i] = np.float64(i) / m
    return e


@kernel
def _copy(edges):
    e = np.empty(edges.shape[0])
    for i in range(edges.shape[0]):
        e[i] = edges[i]
    return e


@kernel
def binned_new(edges, uniform):
    """An empty binned table with int64 counts over ``edges`` (0 = e_0 < ... < e_m = 1,
    copied). ``uniform``: the edges are :func:`uniform_edges` (a bin is found in O(1))."""
    m = edges.shape[0] - 1
    return BinnedTable(_copy(edges), uniform, np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros(m))


@kernel
def binned_new_weighted(edges, uniform):
    """As :func:`binned_new` with float64 counts (sums of weights)."""
    m = edges.shape[0] - 1
    return BinnedTable(_copy(edges), uniform, np.zeros(m), np.zeros(m), np.zeros(m))


@kernel(inline="always")
def binned_add(tab, p, y, w):
    """Add w rounds (or weight w) at prediction p in [0, 1] with outcome y. O(1) or O(log m)."""
    m = tab.edges.shape[0] - 1
    j = bin_of(p, tab.edges, m, tab.uniform)
    tab.n[j] += w
    if y != 0:
        tab.s[j] += w
    tab.ps[j] += w * p


@kernel
def binned_merge(a, b):
    """A new binned table with the rounds of both (same edges)."""
    m = a.n.shape[0]
    n = np.empty(m, dtype=a.n.dtype)
    s = np.empty(m, dtype=a.s.dtype)
    ps = np.empty(m)
    for j in range(m):
        n[j] = a.n[j] + b.n[j]
        s[j] = a.s[j] + b.s[j]
        ps[j] = a.ps[j] + b.ps[j]
    return BinnedTable(a.edges.copy(), a.uniform, n, s, ps)


@kernel
def binned_view(tab):
    """(q, n, s) of the non-empty bins, q the mean prediction in each bin (kept inside the
    bin, as bucket_stats does). New arrays. O(m)."""
    m = tab.n.shape[0]
    k = 0
    for j in range(m):
        if tab.n[j] > 0:
            k += 1
    q = np.empty(k)
    n = np.empty(k, dtype=tab.n.dtype)
    s = np.empty(k, dtype=tab.s.dtype)
    i = 0
    for j in range(m):
        if tab.n[j] > 0:
            v = tab.ps[j] / tab.n[j]
            q[i] = min(max(v, tab.edges[j]), tab.edges[j + 1])
            n[i] = tab.n[j]
            s[i] = tab.s[j]
            i += 1
    return q, n, s
