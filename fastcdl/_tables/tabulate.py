"""Rounds to bucket tables: fastcdl.bucket_stats and the table every metric of fastcdl.exact reads.

Exact tables (one bucket per distinct prediction, from sorted outcome keys), binned tables
(equal-width or quantile edges, serial or threaded binning), and the one entry point of the
metrics (stats_of: rounds or a BucketStats, checked once).
"""

from __future__ import annotations

import numba
import numpy as np

from fastcdl._parallel import num_threads, parallel_safe

from fastcdl._validate import ValidationError, auto_bins, check_binning, check_n_jobs, check_rounds, prepare_rounds
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._compiled import buckets as _kb
from fastcdl._tables.outcome_keys import runs_of_sorted_keys, sorted_outcome_keys
from fastcdl._tables.sample_size import check_sample_size
from fastcdl.binning import quantile_edges_of_rounds, quantile_edges_of_table
from fastcdl.bucket_table import BucketStats


@accepts_multiclass("table")
def bucket_stats(y_true, y_prob, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> BucketStats:
    """Reduce rounds (y_t, p_t) to the bucket table (q_i, n_i, s_i).

    bins=None: every distinct prediction is a bucket (the definitions of docs/metrics.md, exactly);
    O(T log T), one integer sort. bins=m: the intervals [0, 1/m], ((i-1)/m, i/m];
    bins=array: the same with those edges (from 0 to 1). Binned buckets are represented
    by their mean prediction; O(T) (O(T log m) for arbitrary edges), parallel over
    chunks, same result for any number of threads.

    Edge rule: a prediction on an interior edge e, or within 4 to 8 ulps above it
    (p <= e * (1 + 2^-50)), goes to the lower bin, as in scikit-learn's
    calibration_curve. So grid values land in the same bin however they were computed:
    np.arange(0, 1.0001, 0.1) holds 0.6000000000000001, which goes with 0.6 into
    (0.5, 0.6]. The cuts are fastcdl.bucket_table.bin_cuts(edges); the table's ``edges`` are
    the nominal ones.

    strategy="quantile" (with bins=m or "auto"): m equal-mass bins whose edges are
    predictions, so tied predictions are never split and ties can give fewer bins than
    asked (len(table.edges) - 1 says how many); the table equals the one binned with its
    edges (fastcdl.binning, docs/metrics.md "Quantile bins"). O(T) without weights (a grid
    count and a gather, no sort), O(T log T) with weights. bins="auto": round(T^(1/3))
    bins for T rounds (with sample weights, the rows of positive weight), with either strategy.

    An integer m is at most 2^24 (fastcdl.MAX_BINS), else ValueError naming
    bins: a binned table takes memory per bin (about 50 bytes), not per round, so
    bins=10**9 would allocate about 50 GB even for five rounds. The ceiling is fixed
    rather than relative to the number of rounds because tables over the same bins are
    built from chunks of any size and merged (fastcdl.io, fastcdl.dask); an array of
    edges has no ceiling.

    n_jobs: threads for the binning kernel (None: numba's current count,
    numba.get_num_threads(), all cores by default: on a quiet 2-core machine the second
    thread took the binning to 0.52-0.55x of one thread's time; on a busy one n_jobs=1 can be
    faster, docs/metrics.md "Speed"); the count is set for this call and restored afterwards.
    Off the main thread under numba's workqueue threading layer (which aborts the
    process when two threads launch parallel kernels at once, as under Dask's threaded
    scheduler) the kernel runs serially. The table never depends on n_jobs.

    y_true may be bool or any integer or float dtype holding 0 and 1 (float16
    included); y_prob any float or integer dtype (float16 converts exactly).

    Parameters
    ----------
    y_true : array-like of shape (T,)
        The outcomes, 0 and 1.
    y_prob : array-like of shape (T,)
        The predicted probabilities of y = 1, in [0, 1].
    sample_weight : array-like of shape (T,), optional
        Nonnegative, finite weights; the counts become sums of weights (float64).
    bins : None, int, "auto" or array-like, default None
        None: every distinct prediction is a bucket; m: m equal bins (or equal-mass bins with
        ``strategy="quantile"``); "auto": round(T^(1/3)) bins; an array: the edges, from 0
        to 1.
    strategy : {"uniform", "quantile"}, default "uniform"
        How an integer or "auto" ``bins`` places its edges.
    n_jobs : int, optional
        Threads for the binning kernel (None: numba's current count).

    Returns
    -------
    BucketStats
        The table: one bucket per distinct prediction, or per non-empty bin.

    Raises
    ------
    ValidationError
        (a ValueError) naming the argument, the position and the value: outcomes other than
        0/1, predictions outside [0, 1] or NaN, arrays of different lengths, bad weights,
        or bad bins (an integer above 2^24).

    Examples
    --------
    >>> import fastcdl as fc
    >>> st = fc.bucket_stats([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2])
    >>> st.values.tolist(), st.counts.tolist(), st.positives.tolist()
    ([0.2, 0.7], [2, 2], [0, 2])
    """
    n_jobs = check_n_jobs(n_jobs)
    spec = check_binning(bins, strategy)
    equal_width = strategy == "uniform" and spec is not None and not isinstance(spec, np.ndarray)
    # the equal-width binning checks float64 outcomes as it reads them (one pass instead of two)
    keep_y = (np.dtype(np.float64),) if equal_width and sample_weight is None else ()
    y, p, w = prepare_rounds(y_true, y_prob, sample_weight, keep_y=keep_y)
    weighted = w.shape[0] > 0
    if spec is None:
        return _exact_table(y, p, w)
    m = auto_bins(auto_rounds(p, w)) if isinstance(spec, str) else spec
    if strategy == "quantile":
        if weighted:
            exact = _exact_table(y, p, w)
            edges = quantile_edges_of_table(exact.values, exact.counts, m)
        else:
            serial = _serial(p.shape[0], m, n_jobs)
            with num_threads(None if serial else n_jobs):
                edges = quantile_edges_of_rounds(p, m, 1 if serial else numba.get_num_threads())
            if edges is None:
                check_rounds(y, p, w)  # raises, naming the first bad value
        return _binned_table(y, p, w, edges, False, n_jobs)
    if isinstance(spec, np.ndarray):
        return _binned_table(y, p, w, spec, False, n_jobs)
    return _binned_table(y, p, w, np.arange(m + 1, dtype=np.float64) / m, True, n_jobs)


def _exact_table(y, p, w) -> BucketStats:
    """Every distinct prediction its own bucket: one integer sort (unweighted), else an argsort."""
    check_rounds(y, p, w)
    if not w.shape[0]:
        q, n, s = runs_of_sorted_keys(sorted_outcome_keys(y, p))
    else:
        order = np.argsort(p, kind="stable")
        q, n, s, rounds = _kb.runs_weighted(p[order], y[order], w[order])
        keep = n > 0
        q, n, s, rounds = q[keep], n[keep], s[keep], rounds[keep]
        return BucketStats._owned(q, n, s, q * n, rounds=rounds)
    return BucketStats._owned(q, n, s, q * n)


def auto_rounds(p, w) -> int:
    """The T of bins="auto": the rounds, or with weights the rounds of positive weight (a round
    of weight 0 is absent from every table, so the weighted exact table's ``rounds`` count the
    same T and its rebin("auto") chooses the same m)."""
    return int(np.count_nonzero(w > 0)) if w.shape[0] else p.shape[0]


def _serial(T, m, n_jobs) -> bool:
    """Whether T rounds in m bins are reduced by the serial kernels: for one chunk, one thread
    or an unsafe pool (the parallel kernels are then never compiled); both give the same table."""
    return _kb.chunking(T, m)[0] == 1 or n_jobs == 1 or not parallel_safe()


def _binned_table(y, p, w, edges, uniform, n_jobs) -> BucketStats:
    """The rounds in the bins of ``edges`` (checked), each bucket at its mean prediction."""
    weighted = w.shape[0] > 0
    m = edges.shape[0] - 1
    dtype = np.float64 if weighted else np.int64
    n = np.zeros(m, dtype=dtype)
    s = np.zeros(m, dtype=dtype)
    ps = np.zeros(m, dtype=np.float64)
    serial = _serial(p.shape[0], m, n_jobs)
    with num_threads(None if serial else n_jobs):
        if weighted:
            binner = _kb.bin_rounds_weighted if serial else _kb.bin_rounds_weighted_parallel
            binned = binner(y, p, w, edges, uniform, n, s, ps)
        else:
            binner = _kb.bin_rounds if serial else _kb.bin_rounds_parallel
            binned = binner(y, p, edges, uniform, n, s, ps)
    if not binned:
        check_rounds(y, p, w)  # raises, naming the first bad value
    if weighted and not n.sum() > 0:
        raise ValidationError("sample_weight", "sums to zero: there are no rounds to measure")
    (idx,) = np.nonzero(n > 0)
    n, s, ps = n[idx], s[idx], ps[idx]
    # The exact mean of a bin lies inside the bin; rounding of ps / n can step an ulp
    # outside it, which would break the order of the buckets, so it is put back (to the
    # nominal edges: a bin's points may lie up to 8 ulps above its upper edge, see above).
    q = np.clip(ps / n, edges[idx], edges[idx + 1])
    return BucketStats._owned(q, n, s, ps, edges, idx.astype(np.int64))


def stats_of(y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform") -> BucketStats:
    if isinstance(y_true, BucketStats):
        strategy = None if strategy == "uniform" else strategy
        if (
            y_prob is not None
            or bins is not None
            or sample_weight is not None
            or n_jobs is not None
            or strategy is not None
        ):
            extra = next(
                name
                for name, v in (
                    ("y_prob", y_prob),
                    ("bins", bins),
                    ("sample_weight", sample_weight),
                    ("n_jobs", n_jobs),
                    ("strategy", strategy),
                )
                if v is not None
            )
            raise ValidationError(
                extra,
                "is not accepted with a BucketStats",
                message=f"{extra} is not accepted with a BucketStats: pass either a BucketStats alone or y_true and "
                "y_prob (with bins, strategy, sample_weight and n_jobs); an exact BucketStats is rebinned with its "
                "rebin(bins, strategy=...)",
            )
        return y_true
    if y_prob is None:
        raise ValidationError("y_prob", "is required unless the first argument is a BucketStats")
    return bucket_stats.__wrapped__(
        y_true, y_prob, bins=bins, strategy=strategy, sample_weight=sample_weight, n_jobs=n_jobs
    )


def table_of(y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform"):
    return stats_of(y_true, y_prob, bins, sample_weight, n_jobs, strategy).table()


def checked_stats(name, y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform") -> BucketStats:
    """stats_of, then the SampleSizeWarning check of an exact metric called ``name`` (the user's
    call is 5 frames up: check, this, the metric, its multiclass wrapper)."""
    st = stats_of(y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    check_sample_size(st, name, stacklevel=5)
    return st


def checked_table(name, y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform"):
    st = stats_of(y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    check_sample_size(st, name, stacklevel=5)
    return st.table()
