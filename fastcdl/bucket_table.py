"""The bucket table (q_i, n_i, s_i) every metric is a function of (docs/metrics.md).

A :class:`BucketStats` holds, for each non-empty bucket and in increasing order of the
bucket's prediction value:

- ``values``    q_i, the bucket's prediction (the distinct prediction itself when
  ``edges is None``; the mean prediction inside the bin otherwise);
- ``counts``    n_i, the number (or total sample weight) of rounds in the bucket;
- ``positives`` s_i, the number (or weight) of those rounds with y = 1;
- ``prob_sums`` the sum of the (weighted) predictions in the bucket;
- ``edges``     None for exact buckets, else the bin edges the table was built with;
- ``bins``      None for exact buckets, else the index of each bucket's bin;
- ``rounds``    for a weighted exact table, the number of rounds (rows of positive weight) in
  each bucket, which the weight sums do not say; None otherwise (without weights ``counts``
  are the rounds; a weighted table from :meth:`BucketStats.from_table` does not know them).
  The SampleSizeWarning reads it (:func:`fastcdl.exact.one_round_share`), and
  :meth:`BucketStats.rebin` with bins="auto" counts the rounds from it.

Counts and positives are int64 when no sample weights were given (so sums over 10^10
rounds stay exact) and float64 otherwise. Two tables over the same binning merge
exactly with ``+``, so chunks, streams and distributed partitions combine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._compiled.buckets import EDGE_SLACK, merge_sorted_keys

__all__ = ["BucketStats", "bin_cuts"]


def bin_cuts(edges: np.ndarray) -> np.ndarray:
    """The cuts between bins: 0, e_1 * EDGE_SLACK, ..., e_{m-1} * EDGE_SLACK, 1.

    Bin j holds the predictions in (c_j, c_{j+1}] (bin 0 also holds 0): an interior edge is
    widened by 4 to 8 ulps (EDGE_SLACK = 1 + 2^-50), so a prediction within that much above
    an edge goes to the lower bin and a grid value lands in the same bin however its last
    bits were computed (docs/metrics.md, "Binned tables"). The same products as the
    binning kernel's (fastcdl._compiled.buckets.bin_of), bit for bit.

    >>> bin_cuts(np.array([0.0, 0.5, 1.0])).tolist()
    [0.0, 0.5000000000000004, 1.0]
    """
    cuts = np.asarray(edges, dtype=np.float64) * EDGE_SLACK
    cuts[0] = 0.0
    cuts[-1] = 1.0
    return cuts


@dataclass(frozen=True, eq=False, repr=False)
class BucketStats:
    """Per-bucket counts of a forecaster's predictions: the table (q_i, n_i, s_i).

    Build one with :func:`fastcdl.bucket_stats` (from arrays), with
    :meth:`from_table` (from a table you already hold), or by merging tables with ``+``:
    two tables over the same binning merge exactly, so chunks, streams and distributed
    partitions combine. Every metric takes one in place of ``(y_true, y_prob)``. Frozen;
    its arrays are read-only copies, one entry per non-empty bucket in increasing order of
    the bucket's prediction.

    Attributes
    ----------
    values : ndarray of float64
        q_i, the bucket's prediction (the distinct prediction itself when ``edges is None``;
        the mean prediction inside the bin otherwise).
    counts : ndarray of int64 or float64
        n_i, the number (or total sample weight) of rounds in the bucket. int64 when no
        sample weights were given (so sums over 10^10 rounds stay exact), float64 otherwise.
    positives : ndarray of int64 or float64
        s_i, the number (or weight) of those rounds with y = 1.
    prob_sums : ndarray of float64
        The sum of the (weighted) predictions in the bucket.
    edges : ndarray or None
        None for exact buckets, else the bin edges the table was built with.
    bins : ndarray or None
        None for exact buckets, else the index of each bucket's bin.
    rounds : ndarray or None
        For a weighted exact table, the number of rounds (rows of positive weight) in each
        bucket, which the weight sums do not say; None otherwise.

    Examples
    --------
    >>> import fastcdl as fc
    >>> a = fc.bucket_stats([0, 1, 1], [0.2, 0.7, 0.7])
    >>> b = fc.bucket_stats([0, 1], [0.7, 0.9])
    >>> (a + b).counts.tolist()
    [1, 3, 1]
    """

    values: np.ndarray
    counts: np.ndarray
    positives: np.ndarray
    prob_sums: np.ndarray
    edges: np.ndarray | None = None
    bins: np.ndarray | None = None
    rounds: np.ndarray | None = None

    def __post_init__(self):
        # The table owns read-only copies: freezing an array passed in would freeze the
        # caller's array too (O(m), small next to building the table).
        for name in ("values", "counts", "positives", "prob_sums", "edges", "bins", "rounds"):
            arr = getattr(self, name)
            if arr is not None:
                arr = np.array(arr, copy=True)
                arr.setflags(write=False)
                object.__setattr__(self, name, arr)

    # -- construction ---------------------------------------------------------------
    @classmethod
    def _owned(cls, values, counts, positives, prob_sums, edges=None, bins=None, rounds=None) -> "BucketStats":
        """A table of arrays that the caller has just made and holds nowhere else: frozen in
        place instead of copied (a table of 10^7 buckets saves four copies)."""
        obj = object.__new__(cls)
        for name, arr in (
            ("values", values),
            ("counts", counts),
            ("positives", positives),
            ("prob_sums", prob_sums),
            ("edges", edges),
            ("bins", bins),
            ("rounds", rounds),
        ):
            if arr is not None:
                arr.setflags(write=False)
            object.__setattr__(obj, name, arr)
        return obj

    @classmethod
    def from_table(cls, values, counts, positives, prob_sums=None) -> "BucketStats":
        """Exact buckets from a table (q_i, n_i, s_i); values need not be sorted or distinct.

        Equal values are merged. Cost O(m log m).

        Parameters
        ----------
        values : array-like of float
            q_i, in [0, 1].
        counts : array-like of int or float
            n_i, rounds (or weights) per bucket, nonnegative; float counts make a weighted
            table.
        positives : array-like of int or float
            s_i, those with y = 1, 0 <= s_i <= n_i.
        prob_sums : array-like of float, optional
            The buckets' sums of predictions; default ``values * counts``.

        Returns
        -------
        BucketStats

        Raises
        ------
        ValidationError
            (a ValueError) naming the array and the first bad entry.

        Examples
        --------
        >>> BucketStats.from_table([0.5, 0.1], [4, 2], [2, 0]).values.tolist()
        [0.1, 0.5]
        """
        from fastcdl._validate import check_table

        q, n, s, ps = check_table(values, counts, positives, prob_sums)
        order = np.argsort(q, kind="stable")
        q, n, s, ps = q[order], n[order], s[order], ps[order]
        keys, (n, s, ps) = _collapse(q, (n, s, ps))
        return cls(keys, n, s, ps)

    def rebin(self, bins, *, strategy="uniform") -> "BucketStats":
        """This exact table's rounds in bins: ``bins`` and ``strategy`` as in
        :func:`fastcdl.bucket_stats` (m, "auto", or an array of edges; "uniform" or
        "quantile"), with the same edge rule, so the counts and outcomes equal those of
        ``bucket_stats(y, p, bins=..., strategy=...)`` of the table's rounds; the prediction
        sums are the buckets' q_i n_i added up, equal to the rounds' sums up to rounding.

        This is how quantile bins meet chunked data: quantile edges depend on all the
        predictions, so chunk tables are merged exactly (bins=None) and the merged table is
        rebinned (fastcdl.io and fastcdl.dask do so). "auto" counts the table's rounds (with
        weights, the rounds of positive weight, ``rounds``), as bucket_stats counts them, so it
        chooses the same m; a weighted table that does not know its rounds (from
        :meth:`from_table`) refuses it. O(m log m).

        Parameters
        ----------
        bins : int, "auto" or array-like
            As in :func:`fastcdl.bucket_stats`.
        strategy : {"uniform", "quantile"}, default "uniform"
            As in :func:`fastcdl.bucket_stats`.

        Returns
        -------
        BucketStats
            The binned table.

        Raises
        ------
        ValidationError
            (a ValueError) for a binned table, bad bins, or "auto" on a weighted table
            whose rounds are unknown.

        Examples
        --------
        >>> st = BucketStats.from_table([0.1, 0.2, 0.8, 0.9], [1, 3, 3, 1], [0, 1, 2, 1])
        >>> q = st.rebin(2, strategy="quantile")
        >>> q.edges.tolist(), q.counts.tolist()
        ([0.0, 0.2, 1.0], [4, 4])
        """
        from fastcdl._validate import ValidationError, auto_bins, check_binning
        from fastcdl.binning import quantile_edges_of_table

        spec = check_binning(bins, strategy)
        if self.edges is not None:
            raise ValidationError(
                "bins",
                "can only rebin an exact table",
                message="rebin needs an exact table (built with bins=None): a binned table has lost its predictions",
            )
        if spec is None:
            return self
        if isinstance(spec, str):
            if not self.rounds_known:
                raise ValidationError(
                    "bins",
                    "'auto' needs the number of rounds, which this weighted table does not know",
                    message="bins='auto' needs the number of rounds, which this weighted table does not know (built "
                    "by BucketStats.from_table, or merged with such a table): pass bins=m",
                )
            spec = auto_bins(int(self.rounds_per_bucket.sum()))
        if strategy == "quantile":
            edges = quantile_edges_of_table(self.values, self.counts, spec)
        elif isinstance(spec, np.ndarray):
            edges = spec
        else:
            edges = np.arange(spec + 1, dtype=np.float64) / spec
        # bin j holds the values in (c_j, c_j+1]: as the values are sorted, it starts at the
        # first value above c_j, found by one search per cut (not one per bucket)
        first = np.zeros(edges.shape[0], dtype=np.int64)
        first[1:-1] = np.searchsorted(self.values, bin_cuts(edges)[1:-1], side="right")
        first[-1] = self.values.shape[0]
        held = first[:-1] < first[1:]
        start, idx = first[:-1][held], np.flatnonzero(held)
        n, s, ps = (np.add.reduceat(c, start) for c in (self.counts, self.positives, self.prob_sums))
        q = np.clip(ps / n, edges[idx], edges[idx + 1])
        return BucketStats._owned(q, n, s, ps, edges, idx)

    # -- derived quantities ---------------------------------------------------------
    @property
    def n_buckets(self) -> int:
        """m, the number of non-empty buckets."""
        return int(self.values.shape[0])

    @property
    def total(self):
        """T, the number (or total weight) of rounds."""
        return self.counts.sum()

    @property
    def frequencies(self) -> np.ndarray:
        """qhat_i = s_i / n_i, the empirical frequency of y = 1 in each bucket."""
        return self.positives / self.counts

    @property
    def weighted(self) -> bool:
        """Whether the counts are sums of sample weights (float64)."""
        return self.counts.dtype.kind == "f"

    @property
    def rounds_known(self) -> bool:
        """Whether the number of rounds in each bucket is known: unweighted tables (the counts),
        weighted exact tables built from rounds (``rounds``)."""
        return not self.weighted or self.rounds is not None

    @property
    def rounds_per_bucket(self) -> np.ndarray | None:
        """The number of rounds in each bucket (int64): the counts without weights, ``rounds``
        with weights; None when unknown."""
        return self.counts.astype(np.int64) if not self.weighted else self.rounds

    def table(self):
        """(q, n, s) as float64 arrays, the form the metric kernels take.

        Returns
        -------
        q, n, s : ndarray of float64
            Read-only: the table's own arrays when already float64, else contiguous copies,
            frozen too, so that a kernel meets one array type whatever the counts' dtype
            (numba compiles read-only and writable arrays as two types).

        Examples
        --------
        >>> BucketStats.from_table([0.5], [4], [2]).table()
        (array([0.5]), array([4.]), array([2.]))
        """
        out = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in (self.values, self.counts, self.positives))
        for a in out:
            if a.flags.writeable:  # a converted copy (the table's own arrays are frozen already)
                a.setflags(write=False)
        return out

    # -- merging --------------------------------------------------------------------
    def __add__(self, other: "BucketStats") -> "BucketStats":
        if not isinstance(other, BucketStats):
            return NotImplemented
        if (self.edges is None) != (other.edges is None) or (
            self.edges is not None
            and (self.edges.shape != other.edges.shape or not np.array_equal(self.edges, other.edges))
        ):
            raise ValueError("cannot merge BucketStats built with different bins")
        dtype = np.result_type(self.counts.dtype, other.counts.dtype)
        cols = lambda t: (  # noqa: E731
            t.counts.astype(dtype),
            t.positives.astype(dtype),
            t.prob_sums.astype(np.float64),
        )
        if self.edges is None:
            # a weighted merge keeps the rounds per bucket when both sides know them
            track = dtype.kind == "f" and self.rounds_known and other.rounds_known
            extra = lambda t: (t.rounds_per_bucket,) if track else ()  # noqa: E731
            keys, merged = _merge(self.values, cols(self) + extra(self), other.values, cols(other) + extra(other))
            n, s = merged[0], merged[1]
            # an exact bucket's prediction sum is q_i n_i by definition; recomputing it
            # (rather than adding two rounded products) keeps merge(a, b) == stats(a ++ b)
            return BucketStats(keys, n, s, keys * n, rounds=merged[3] if track else None)
        keys, (n, s, ps) = _merge(self.bins.astype(np.float64), cols(self), other.bins.astype(np.float64), cols(other))
        bins = keys.astype(np.int64)
        # as in bucket_stats: ps / n can round an ulp outside its bin; the exact mean cannot
        q = np.clip(ps / n, self.edges[bins], self.edges[bins + 1])
        return BucketStats(q, n, s, ps, self.edges.copy(), bins)

    def __eq__(self, other):
        if not isinstance(other, BucketStats):
            return NotImplemented

        def same(a, b):
            return (a is None and b is None) or (
                a is not None and b is not None and a.shape == b.shape and np.array_equal(a, b)
            )

        return all(
            same(getattr(self, f), getattr(other, f))
            for f in ("values", "counts", "positives", "prob_sums", "edges", "bins")
        )

    __hash__ = None

    def __repr__(self) -> str:
        kind = "exact" if self.edges is None else f"{self.edges.shape[0] - 1} bins"
        return f"BucketStats({kind}, n_buckets={self.n_buckets}, T={self.total})"


def _collapse(keys, cols):
    """Sum columns over runs of equal keys (keys sorted)."""
    if keys.shape[0] == 0:
        return keys, cols
    start = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[start], tuple(np.add.reduceat(c, start) for c in cols)


def _merge(ka, ca, kb, cb):
    keys, idx_a, idx_b = merge_sorted_keys(
        np.ascontiguousarray(ka, dtype=np.float64), np.ascontiguousarray(kb, dtype=np.float64)
    )
    out = []
    for a, b in zip(ca, cb):
        c = np.zeros(keys.shape[0], dtype=a.dtype)
        c[idx_a] = a  # idx_a and idx_b are each free of repeats
        c[idx_b] += b
        out.append(c)
    return keys, tuple(out)
