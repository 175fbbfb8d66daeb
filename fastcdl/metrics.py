"""Public calibration metrics for binary outcomes (docs/metrics.md).

Every function takes ``(y_true, y_prob)`` (outcomes first) or a :class:`BucketStats` in
their place, validates once, builds the bucket table and calls a compiled kernel. Every
one also takes ``pos_label=`` (labels other than 0/1), a (T, 1) or (T, 2) predict_proba
output, and k-class forecasts y_prob (T, k) with ``multiclass="top-label" | "classwise"``
(fastcdl._binary_views); :func:`swap_regret` and :func:`swap_report` take a task over k outcomes.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
import warnings
from dataclasses import dataclass

import numba
import numpy as np

from fastcdl import _docstrings, _parallel, _validate
from fastcdl._compiled import tasks as _kt
from fastcdl._binary_views import ClasswiseResult, accepts_multiclass
from fastcdl._compiled import buckets as _kb
from fastcdl._compiled import envelope as _env
from fastcdl._compiled.decisions import best_response, cfdl_kernel, swap_regret_kernel
from fastcdl._compiled.errors import ece_kernel, k2_kernel
from fastcdl._compiled.sort import sort_keys_into
from fastcdl._compiled.tablecdl import table_cdl
from fastcdl.binning import quantile_edges_of_rounds, quantile_edges_of_table
from fastcdl.stats import BucketStats

__all__ = [
    "bucket_stats",
    "ece",
    "k2",
    "cfdl",
    "swap_regret",
    "decision_loss_curve",
    "vcdl",
    "cdl",
    "cdl_report",
    "ucal",
    "swap_report",
    "CDLReport",
    "SwapReport",
    "ClasswiseResult",
    "CertificateWarning",
    "SampleSizeWarning",
]


class CertificateWarning(UserWarning):
    """:func:`cdl_report` could not give its worst task in float64 payoffs that attain the CDL.

    A kink closer to 0 or 1 than payoffs in [0, 1] can resolve (about 1e-16), or a tie at a
    kink that lowering entries by ulps could not break. The reported value is exact all the
    same; the report's ``exact`` is False.
    """


class SampleSizeWarning(UserWarning):
    """An exact metric of a table whose rounds sit mostly in buckets of one round.

    With bins=None every distinct prediction is its own bucket. On a model's continuous
    scores each bucket then holds one round, its frequency qhat_i is 0 or 1, and the exact
    CDL, VCDL, ECE, K2, UCal, MCE, RMSCE and CFDL measure sampling noise (a perfectly
    calibrated model gets CDL about 0.25 at any T). The value is still returned. What fits
    such data: fastcdl.cdl_monotone (and cutoff_ce, smce, atb), or binning
    (bins="auto", strategy="quantile"). Raised when at least half of the rounds sit in
    buckets with n_i < 2; with sample weights, when at least half of the weight sits in
    buckets that hold a single round of positive weight (the table counts them,
    BucketStats.rounds). fastcdl.cdl_multiclass applies the same rule to its buckets, the
    distinct rows of P. docs/estimators.md says which number to use when.

    Examples
    --------
    >>> import warnings
    >>> import fastcdl as fc
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = fc.cdl([0, 1, 1, 0], [0.1, 0.4, 0.6, 0.9])
    >>> caught[0].category.__name__
    'SampleSizeWarning'
    """


SAMPLE_SIZE_ADVICE = ("for a model's continuous scores use cdl_monotone (or cutoff_ce, smce, atb), "
                      "or bin the predictions (bins='auto', strategy='quantile')")

# Rate experiments measure the exact CDL of an online sequence, which is what they study
# whatever the bucket sizes, and resampling evaluates a metric on many tables after the
# table itself was checked: fastcdl.trial_metrics, fastcdl.uncertainty and run-folder
# figures turn the warning off for their thread.
_quiet = threading.local()


@contextlib.contextmanager
def sample_size_check_off():
    """Within this block (on this thread), exact metrics do not raise SampleSizeWarning: for
    callers that measure a sequence itself (an online forecaster's rounds) rather than a
    sample, or that have checked the table already (the replicates of a bootstrap)."""
    before = getattr(_quiet, "on", False)
    _quiet.on = True
    try:
        yield
    finally:
        _quiet.on = before


def single_round_share(rounds, weight) -> float:
    """The share of the weight in buckets that hold a single round (rounds_i < 2), from each
    bucket's rounds and weight (its count without weights). O(m).

    >>> single_round_share(np.array([1, 1, 4]), np.array([0.5, 2.0, 2.5]))
    0.5
    """
    return float(weight[rounds < 2].sum()) / float(weight.sum())


def one_round_share(stats: BucketStats) -> float:
    """The share of the rounds that sit in buckets of one round (n_i < 2) or, for a weighted
    table, the share of the weight in buckets of one round (of positive weight); NaN for
    binned tables and for weighted tables that do not know their rounds (built with
    BucketStats.from_table). O(m)."""
    if stats.edges is not None or not stats.rounds_known:
        return math.nan
    return single_round_share(stats.rounds_per_bucket, stats.counts)


def warn_sample_size(share: float, name: str, what: str, stacklevel: int) -> None:
    """Warn (SampleSizeWarning) if share >= 1/2, unless switched off on this thread. ``what``
    says of what the share is taken ("the 400 rounds", "the weight of the 400 rounds");
    ``stacklevel`` counts from this function's caller, as warnings.warn's from its own."""
    if getattr(_quiet, "on", False) or not share >= 0.5:
        return
    warnings.warn(SampleSizeWarning(
        f"{name}: {100 * share:.0f}% of {what} sit in buckets of one round (each distinct prediction is its own "
        f"bucket), so the exact {name} measures sampling noise; " + SAMPLE_SIZE_ADVICE), stacklevel=stacklevel + 1)


def check_sample_size(stats: BucketStats, name: str, stacklevel: int = 4) -> None:
    """Warn (SampleSizeWarning) when at least half of an exact table's rounds (or of its weight)
    sit in buckets of one round. ``stacklevel`` points at the user's call (public function,
    multiclass wrapper)."""
    if getattr(_quiet, "on", False):
        return
    share = one_round_share(stats)
    if stats.weighted:
        what = f"the weight of the {int(stats.rounds_per_bucket.sum())} rounds" if share == share else ""
    else:
        what = f"the {int(stats.total)} rounds"
    warn_sample_size(share, name, what, stacklevel)


@accepts_multiclass("table")
def bucket_stats(y_true, y_prob, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> BucketStats:
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
    (0.5, 0.6]. The cuts are fastcdl.stats.bin_cuts(edges); the table's ``edges`` are
    the nominal ones.

    strategy="quantile" (with bins=m or "auto"): m equal-mass bins whose edges are
    predictions, so tied predictions are never split and ties can give fewer bins than
    asked (len(table.edges) - 1 says how many); the table equals the one binned with its
    edges (fastcdl.binning, docs/metrics.md "Quantile bins"). O(T) without weights (a grid
    count and a gather, no sort), O(T log T) with weights. bins="auto": round(T^(1/3))
    bins for T rounds (with sample weights, the rows of positive weight), with either strategy.

    An integer m is at most 2^24 (fastcdl._validate.MAX_BINS), else ValueError naming
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
    bins : None, int, "auto" or array-like, default None
        None: every distinct prediction is a bucket; m: m equal bins (or equal-mass bins with
        ``strategy="quantile"``); "auto": round(T^(1/3)) bins; an array: the edges, from 0
        to 1.
    strategy : {"uniform", "quantile"}, default "uniform"
        How an integer or "auto" ``bins`` places its edges.
    sample_weight : array-like of shape (T,), optional
        Nonnegative, finite weights; the counts become sums of weights (float64).
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
    n_jobs = _validate.check_n_jobs(n_jobs)
    spec = _validate.check_binning(bins, strategy)
    equal_width = strategy == "uniform" and spec is not None and not isinstance(spec, np.ndarray)
    # the equal-width binning checks float64 outcomes as it reads them (one pass instead of two)
    keep_y = (np.dtype(np.float64),) if equal_width and sample_weight is None else ()
    y, p, w = _validate.prepare_rounds(y_true, y_prob, sample_weight, keep_y=keep_y)
    weighted = w.shape[0] > 0
    if spec is None:
        return _exact_table(y, p, w)
    m = _validate.auto_bins(auto_rounds(p, w)) if isinstance(spec, str) else spec
    if strategy == "quantile":
        if weighted:
            exact = _exact_table(y, p, w)
            edges = quantile_edges_of_table(exact.values, exact.counts, m)
        else:
            serial = _serial(p.shape[0], m, n_jobs)
            with _parallel.num_threads(None if serial else n_jobs):
                edges = quantile_edges_of_rounds(p, m, 1 if serial else numba.get_num_threads())
            if edges is None:
                _validate.check_rounds(y, p, w)  # raises, naming the first bad value
        return _binned_table(y, p, w, edges, False, n_jobs)
    if isinstance(spec, np.ndarray):
        return _binned_table(y, p, w, spec, False, n_jobs)
    return _binned_table(y, p, w, np.arange(m + 1, dtype=np.float64) / m, True, n_jobs)


# From this many rounds on the outcome keys are sorted by whichever of numpy's sort and the radix
# sort (sort_keys_into) runs faster on this machine (numpy_sorts_faster); below, numpy sorts
# them and the radix kernel is never compiled. Which is faster depends on the CPU: the radix
# sort was 2.5-3.4x faster than numpy's on the Xeon of results/benchmarks/metrics.md, numpy's
# (its AVX-512 sort) 1.8-2.5x faster than the radix sort on the AMD EPYC (Zen 5) of
# results/benchmarks/bucket-speed.md, from 2^14 to 10^7 keys (one-off timings; docs/metrics.md).
_RADIX_FROM = 1 << 14
_SORT_TRIAL_KEYS = 1 << 16
_numpy_sorts_faster = None


def numpy_sorts_faster() -> bool:
    """Whether numpy's sort of outcome keys beats the radix sort here: both sort the same
    2^16 keys of random predictions three times, once per process, and the best times are
    compared (about 2 ms). Either sort gives the same keys, so the choice changes no result."""
    global _numpy_sorts_faster
    if _numpy_sorts_faster is None:
        rng = np.random.default_rng(0)
        p = rng.random(_SORT_TRIAL_KEYS)
        keys = np.empty(_SORT_TRIAL_KEYS, dtype=np.uint64)
        _kb.outcome_keys((rng.random(_SORT_TRIAL_KEYS) < p).view(np.uint8), p.view(np.uint64), keys)
        a, b = np.empty_like(keys), np.empty_like(keys)
        best = [math.inf, math.inf]
        for _ in range(3):
            for i in (0, 1):
                a[:] = keys
                t = time.perf_counter()
                if i == 0:
                    a.sort()
                else:
                    sort_keys_into(a, b)
                best[i] = min(best[i], time.perf_counter() - t)
        _numpy_sorts_faster = bool(best[0] < best[1])
    return _numpy_sorts_faster


def sort_outcome_keys(keys, spare):
    """Sort outcome keys with numpy's sort or the radix sort, whichever is faster here
    (:func:`numpy_sorts_faster`); returns the buffer that holds them (keys or spare). Both
    release the GIL."""
    if numpy_sorts_faster():
        keys.sort()
        return keys
    return sort_keys_into(keys, spare)

# From this many rounds on the two halves of the keys are sorted side by side (see
# sorted_outcome_keys_and_spare); below, handing one over costs about what it saves.
_PAIRED_SORT_FROM = 1 << 16


def sorted_outcome_keys(y, p):
    """The rounds' outcome keys (p's bits, then y: fastcdl._compiled.buckets.outcome_keys),
    sorted: by prediction, then outcome. Checked rounds only. From _RADIX_FROM rounds on,
    the faster here of numpy's sort and the radix sort (O(T) passes), numpy's sort below. The kernels write into arrays numpy
    allocates (huge pages for large arrays, see outcome_keys)."""
    return sorted_outcome_keys_and_spare(y, p)[0]


def sorted_outcome_keys_and_spare(y, p):
    """(:func:`sorted_outcome_keys`, spare): the spare is an array as long, free for the
    caller (the radix sort's other buffer), so a caller that needs one more array of T
    words does not have to allocate it.

    From _PAIRED_SORT_FROM rounds on (and two threads allowed), the keys are written in two
    parts split at the median of a sample of the predictions, and the parts are sorted side
    by side (fastcdl._parallel.pair: the second on a helper thread if it starts in time).
    The sorted keys are the same either way."""
    T = p.shape[0]
    p_bits = p.view(np.uint64)
    keys = np.empty(T, dtype=np.uint64)
    spare = np.empty_like(keys)
    if T < _RADIX_FROM:
        _kb.outcome_keys(y, p_bits, keys)
        keys.sort()
        return keys, spare
    if T < _PAIRED_SORT_FROM or numba.config.NUMBA_NUM_THREADS < 2:
        _kb.outcome_keys(y, p_bits, keys)
        out = sort_outcome_keys(keys, spare)
        return out, (spare if out is keys else keys)
    _parallel.wake()  # while the keys are written
    pivot = np.median(p[:: max(1, T // 1023)])  # any pivot is correct; the median balances the parts
    below = _kb.outcome_keys_split(y, p_bits, np.uint64(np.float64(pivot).view(np.uint64)) << np.uint64(1), keys)
    done = [None, None]
    parts = ((keys[:below], spare[:below]), (keys[below:], spare[below:]))

    def part(i):
        return lambda: done.__setitem__(i, sort_outcome_keys(*parts[i]) is parts[i][0])

    _parallel.pair(part(0), part(1))
    if done[0] != done[1]:  # the parts ended in different buffers (passes skipped in one)
        parts[1][0 if done[0] else 1][:] = parts[1][0 if done[1] else 1]
    return (keys, spare) if done[0] else (spare, keys)


def _exact_table(y, p, w) -> BucketStats:
    """Every distinct prediction its own bucket: one integer sort (unweighted), else an argsort."""
    _validate.check_rounds(y, p, w)
    if not w.shape[0]:
        keys = sorted_outcome_keys(y, p)
        m = _kb.count_runs(keys)
        q, n, s = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
        _kb.runs_of_keys(keys, q.view(np.uint64), n, s)
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
    return _kb.chunking(T, m)[0] == 1 or n_jobs == 1 or not _parallel.parallel_safe()


def _binned_table(y, p, w, edges, uniform, n_jobs) -> BucketStats:
    """The rounds in the bins of ``edges`` (checked), each bucket at its mean prediction."""
    weighted = w.shape[0] > 0
    m = edges.shape[0] - 1
    dtype = np.float64 if weighted else np.int64
    n = np.zeros(m, dtype=dtype)
    s = np.zeros(m, dtype=dtype)
    ps = np.zeros(m, dtype=np.float64)
    serial = _serial(p.shape[0], m, n_jobs)
    with _parallel.num_threads(None if serial else n_jobs):
        if weighted:
            binner = _kb.bin_rounds_weighted if serial else _kb.bin_rounds_weighted_parallel
            binned = binner(y, p, w, edges, uniform, n, s, ps)
        else:
            binner = _kb.bin_rounds if serial else _kb.bin_rounds_parallel
            binned = binner(y, p, edges, uniform, n, s, ps)
    if not binned:
        _validate.check_rounds(y, p, w)  # raises, naming the first bad value
    if weighted and not n.sum() > 0:
        raise _validate.ValidationError("sample_weight", "sums to zero: there are no rounds to measure")
    (idx,) = np.nonzero(n > 0)
    n, s, ps = n[idx], s[idx], ps[idx]
    # The exact mean of a bin lies inside the bin; rounding of ps / n can step an ulp
    # outside it, which would break the order of the buckets, so it is put back (to the
    # nominal edges: a bin's points may lie up to 8 ulps above its upper edge, see above).
    q = np.clip(ps / n, edges[idx], edges[idx + 1])
    return BucketStats._owned(q, n, s, ps, edges, idx.astype(np.int64))


def _stats(y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform") -> BucketStats:
    if isinstance(y_true, BucketStats):
        strategy = None if strategy == "uniform" else strategy
        if y_prob is not None or bins is not None or sample_weight is not None or n_jobs is not None \
                or strategy is not None:
            extra = next(name for name, v in (("y_prob", y_prob), ("bins", bins), ("sample_weight", sample_weight),
                                              ("n_jobs", n_jobs), ("strategy", strategy)) if v is not None)
            raise _validate.ValidationError(
                extra, "is not accepted with a BucketStats",
                message=f"{extra} is not accepted with a BucketStats: pass either a BucketStats alone or y_true and "
                "y_prob (with bins, strategy, sample_weight and n_jobs); an exact BucketStats is rebinned with its "
                "rebin(bins, strategy=...)",
            )
        return y_true
    if y_prob is None:
        raise _validate.ValidationError("y_prob", "is required unless the first argument is a BucketStats")
    return bucket_stats.__wrapped__(y_true, y_prob, bins=bins, strategy=strategy, sample_weight=sample_weight,
                                    n_jobs=n_jobs)


def _table(y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform"):
    return _stats(y_true, y_prob, bins, sample_weight, n_jobs, strategy).table()


def _checked_stats(name, y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform") -> BucketStats:
    """_stats, then the SampleSizeWarning check of an exact metric called ``name`` (the user's
    call is 5 frames up: check, this, the metric, its multiclass wrapper)."""
    st = _stats(y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    check_sample_size(st, name, stacklevel=5)
    return st


def _checked_table(name, y_true, y_prob, bins, sample_weight, n_jobs=None, strategy="uniform"):
    st = _stats(y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    check_sample_size(st, name, stacklevel=5)
    return st.table()


@accepts_multiclass()
@_docstrings.fill
def ece(y_true, y_prob=None, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> float:
    """Expected calibration error ``(1/T) sum_i n_i |q_i - qhat_i|``. O(m) after binning.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The ECE of the bucket table; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> ece([0, 1, 1, 1], [0.5, 0.5, 1.0, 1.0])
    0.0
    """
    return float(ece_kernel(*_checked_table("ece", y_true, y_prob, bins, sample_weight, n_jobs, strategy)))


@accepts_multiclass()
@_docstrings.fill
def k2(y_true, y_prob=None, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> float:
    """Squared calibration error ``(1/T) sum_i n_i (q_i - qhat_i)^2``. O(m) after binning.

    The reliability term of the Brier score.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        K2 of the bucket table; a :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> k2([0, 0], [0.5, 0.5])
    0.25
    """
    return float(k2_kernel(*_checked_table("k2", y_true, y_prob, bins, sample_weight, n_jobs, strategy)))


@accepts_multiclass()
@_docstrings.fill
def cfdl(y_true, y_prob=None, *, payoff=None, kink=None, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> float:
    """Calibration fixed decision loss of one task (docs/metrics.md).

    What one decision maker gains per round by acting on each bucket's empirical frequency
    qhat_i instead of its prediction q_i, best responses with ties to the lowest action,
    evaluated exactly. O(m * n_actions) for a payoff matrix, O(m log m) for a kink.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    payoff : array-like of shape (n_actions, 2), optional
        The task U: rows are actions, columns the payoffs at y = 0 and y = 1, in [0, 1].
    kink : float, optional
        The V-shaped task with its kink at mu: the value is ``f(mu) / max(mu, 1 - mu)``.
        Exactly one of ``payoff`` and ``kink`` is given.
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The task's CFDL, at most :func:`cdl`; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also when both or neither of ``payoff`` and ``kink`` are given.

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> cfdl([1, 1, 0, 0], [0.3, 0.3, 0.7, 0.7], kink=0.5)
    1.0
    >>> cfdl([1, 1, 0, 0], [0.3, 0.3, 0.7, 0.7], payoff=[[1, 0], [0, 1]])
    1.0
    """
    if (payoff is None) == (kink is None):
        raise _validate.ValidationError(
            "payoff", "or kink is needed, not both",
            message="pass exactly one of payoff= (a matrix) or kink= (a V-shaped task)",
        )
    if payoff is not None:
        u = _validate.check_payoff(payoff)
        return float(cfdl_kernel(*_checked_table("cfdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy), u))
    mu = _validate.check_kinks(kink, "kink")
    if mu.shape[0] != 1:
        raise _validate.ValidationError("kink", "must be a single number; use decision_loss_curve for many")
    return float(_v_values(_checked_stats("cfdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy), mu)[0])


@_docstrings.fill
def swap_regret(y_true, y_prob=None, *, payoff, bins=None, strategy="uniform", sample_weight=None, n_jobs=None,
                multiclass=None, pos_label=None) -> float:
    """Swap regret of task U: ``(1/T) sum_a max_a' sum_{t: a*(p_t)=a} [U(a',y_t) - U(a,y_t)]``.

    Two outcomes: payoff (n_actions, 2), y_prob the probability of y = 1 (or a BucketStats);
    O(m * n_actions + n_actions^2) on the bucket table. k outcomes: payoff (n_actions, k),
    y_prob (T, k) distributions, y_true labels 0..k-1; ``a*(P_t) = argmax_a sum_y P_ty U(a, y)``
    with ties to the lowest index, decided exactly; O(T k n_actions + n_actions^2 k).
    :func:`swap_report` says which actions the regret comes from.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    payoff : array-like of shape (n_actions, 2) or (n_actions, k)
        The task U, rows = actions, one column per outcome, entries in [0, 1].
    {{bins}}
        Two outcomes only.
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
        Two-column payoffs only: a task over k outcomes takes the (T, k) forecasts as they are.
    {{pos_label}}

    Returns
    -------
    float
        The swap regret, at most the CDL of the forecasts; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for ``bins``, ``strategy``, ``n_jobs`` or ``multiclass`` with a task over k outcomes.

    Examples
    --------
    >>> swap_regret([0, 0, 1, 1], [0.9, 0.9, 0.9, 0.9], payoff=[[1, 0], [0, 1]])
    0.0
    >>> swap_regret([0, 1, 2], [[0.5, 0.25, 0.25]] * 3, payoff=[[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    0.0
    """
    if np.ndim(payoff) == 2 and np.shape(payoff)[1] > 2:
        if multiclass is not None or bins is not None or n_jobs is not None or strategy != "uniform":
            extra = ("multiclass" if multiclass is not None else "bins" if bins is not None
                     else "n_jobs" if n_jobs is not None else "strategy")
            raise _validate.ValidationError(
                extra, "does not apply to a task over k outcomes",
                message=f"{extra} does not apply to a task over k outcomes (payoff with {np.shape(payoff)[1]} columns)",
            )
        return swap_report(y_true, y_prob, payoff=payoff, sample_weight=sample_weight, pos_label=pos_label).value
    return _swap_regret_binary(y_true, y_prob, payoff=payoff, bins=bins, strategy=strategy,
                               sample_weight=sample_weight, n_jobs=n_jobs, multiclass=multiclass, pos_label=pos_label)


@accepts_multiclass()
def _swap_regret_binary(y_true, y_prob=None, *, payoff, bins=None, strategy="uniform", sample_weight=None,
                        n_jobs=None) -> float:
    u = _validate.check_payoff(payoff)
    return float(swap_regret_kernel(*_table(y_true, y_prob, bins, sample_weight, n_jobs, strategy), u))


@dataclass(frozen=True)
class SwapReport:
    """Where the swap regret of a task comes from, action by action (rows = actions of U).

    Returned by :func:`swap_report`; frozen.

    Attributes
    ----------
    value : float
        The swap regret, ``gain.sum()``.
    counts : ndarray of shape (n_actions,)
        Rounds (or weight) on which ``a*(P_t) = a``.
    mean_prediction : ndarray of shape (n_actions, k)
        The mean predicted distribution on those rounds.
    frequency : ndarray of shape (n_actions, k)
        The empirical distribution of y on those rounds.
    bias : ndarray of shape (n_actions, k)
        ``mean_prediction - frequency``: what the forecasts over- (> 0) or under-state when
        they recommend a (NaN for actions never taken).
    swap_to : ndarray of int64, shape (n_actions,)
        The best replacement of each action on its rounds (itself when no replacement
        gains; ties to the lowest index).
    gain : ndarray of shape (n_actions,)
        ``(1/T) sum_{t: a*(P_t) = a} [U(swap_to[a], y_t) - U(a, y_t)] >= 0``.
    payoff : ndarray of shape (n_actions, k)
        The task, as float64.

    Examples
    --------
    >>> r = swap_report([1, 1, 0, 1], [0.2, 0.2, 0.9, 0.9], payoff=[[1, 0], [0, 1]])
    >>> r
    SwapReport(value=0.5, 2 actions, 1 of them better replaced)
    >>> r.swap_to.tolist(), r.gain.tolist()
    ([1, 1], [0.5, 0.0])
    """

    value: float
    counts: np.ndarray
    mean_prediction: np.ndarray
    frequency: np.ndarray
    bias: np.ndarray
    swap_to: np.ndarray
    gain: np.ndarray
    payoff: np.ndarray

    def __repr__(self) -> str:
        moved = int(np.sum(self.swap_to != np.arange(self.swap_to.shape[0])))
        return (f"SwapReport(value={self.value:.6g}, {self.payoff.shape[0]} actions, "
                f"{moved} of them better replaced)")


def _check_task(payoff, k: int) -> np.ndarray:
    u = np.asarray(payoff)
    if u.dtype.kind not in "biuf":
        raise _validate.ValidationError("payoff", f"must be numeric, got dtype {u.dtype}")
    if u.ndim != 2 or u.shape[0] < 1 or u.shape[1] != k:
        raise _validate.ValidationError(
            "payoff", f"must have shape (n_actions, {k}): rows = actions, one column per outcome; got shape {u.shape}")
    u = np.ascontiguousarray(u, dtype=np.float64)
    bad = ~((u >= 0.0) & (u <= 1.0))
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        what = "contains NaN" if np.isnan(u[i]) else "entries must lie in [0, 1]"
        raise _validate.ValidationError("payoff", what, index=i, value=u[i], message=f"payoff {what}")
    return u


@_docstrings.fill
def swap_report(y_true, y_prob=None, *, payoff, sample_weight=None, pos_label=None) -> SwapReport:
    """Per-action report of a task's swap regret (see :class:`SwapReport`).

    Two outcomes: y_prob is the probability of y = 1 (or (T, 1), (T, 2) predict_proba, or a
    BucketStats), payoff (n_actions, 2), y_true 0/1 (or pos_label). k outcomes: y_prob
    (T, k) distributions, payoff (n_actions, k) with rows = actions and one column per
    outcome in [0, 1], y_true labels 0..k-1. The decision maker told P_t takes
    a*(P_t) = argmax_a sum_y P_ty U(a, y), ties to the lowest index (exactly). The swap
    regret is (1/T) sum_a max_a' sum_{t: a*(P_t) = a} [U(a', y_t) - U(a, y_t)]: what the
    best fixed replacement of each recommended action would have gained. At most the CDL
    of the forecasts (docs/metrics.md). O(T k n_actions + n_actions^2 k).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    payoff : array-like of shape (n_actions, 2) or (n_actions, k)
        The task U, rows = actions, one column per outcome, entries in [0, 1].
    {{sample_weight}}
    {{pos_label}}

    Returns
    -------
    SwapReport
        The regret and, per action, its rounds, mean prediction, frequency, bias, best
        replacement and gain.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> r = swap_report([0, 0, 0, 1], [0.8, 0.8, 0.8, 0.8], payoff=[[1, 0], [0, 1]])
    >>> r.value, r.swap_to.tolist(), r.bias[1].tolist()
    (0.5, [0, 0], [-0.55, 0.55])
    """
    if isinstance(y_true, BucketStats) or (y_prob is not None and np.ndim(y_prob) < 2) or np.shape(payoff)[-1:] == (2,):
        stats = _stats(*_binary_rounds(y_true, y_prob, pos_label), None, sample_weight)
        u = _check_task(payoff, 2)
        q, n, s = stats.table()
        act = np.empty(q.shape[0], dtype=np.int64)
        _kt.actions_of_values(q, u, act)
        A = u.shape[0]
        counts = np.bincount(act, weights=n, minlength=A)
        ones = np.bincount(act, weights=s, minlength=A)
        psum = np.bincount(act, weights=stats.prob_sums, minlength=A)
        outcomes = np.column_stack([counts - ones, ones])
        pred = np.column_stack([counts - psum, psum])
        return _swap_summary(u, counts, outcomes, pred, float(n.sum()))
    if pos_label is not None:
        raise _validate.ValidationError(
            "pos_label", "applies to binary problems, not to y_prob with one column per class")
    y, P = _validate.check_distributions(y_true, y_prob, name="y_prob")
    k = P.shape[1]
    u = _check_task(payoff, k)
    T = P.shape[0]
    if sample_weight is None:
        w = np.empty(0, dtype=np.float64)
    else:
        w = _validate.prepare_rounds(np.zeros(T, np.uint8), np.zeros(T), sample_weight)[2]
        _validate.check_rounds(np.zeros(T, np.uint8), np.zeros(T), w)
    A = u.shape[0]
    counts = np.zeros(A)
    outcomes = np.zeros(A * k)
    pred = np.zeros(A * k)
    _kt.action_tallies(P, y, w, u, counts, outcomes, pred)
    total = float(w.sum()) if w.shape[0] else float(T)
    return _swap_summary(u, counts, outcomes.reshape(A, k), pred.reshape(A, k), total)


def _binary_rounds(y_true, y_prob, pos_label):
    if isinstance(y_true, BucketStats):
        if pos_label is not None:
            raise _validate.ValidationError("pos_label", "does not apply to a BucketStats (it already holds a binary table)")
        return y_true, y_prob
    from fastcdl._binary_views import reduce

    _, ((y, p),) = reduce(y_true, y_prob, None, pos_label)
    return y, p


def _swap_summary(u, counts, outcomes, pred, T) -> SwapReport:
    """SwapReport from per-action weights, outcome counts (A, k) and prediction sums (A, k)."""
    A = u.shape[0]
    # G[a, b] = sum over a's rounds of U(b, y_t) - U(a, y_t)
    G = outcomes @ u.T
    G = G - np.diag(G)[:, None]
    G[np.arange(A), np.arange(A)] = 0.0
    best = np.argmax(G, axis=1)  # lowest index among the largest gains
    swap_to = np.where(G[np.arange(A), best] > 0.0, best, np.arange(A))
    gain = np.maximum(G[np.arange(A), best], 0.0) / T
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_prediction = pred / counts[:, None]
        frequency = outcomes / counts[:, None]
    return SwapReport(
        value=float(gain.sum()),
        counts=counts,
        mean_prediction=mean_prediction,
        frequency=frequency,
        bias=mean_prediction - frequency,
        swap_to=swap_to.astype(np.int64),
        gain=gain,
        payoff=u,
    )


def _v_values(stats: BucketStats, mus: np.ndarray) -> np.ndarray:
    q, n, s = stats.table()
    f = _env.v_left(q, n, s, mus)
    return f / np.maximum(mus, 1.0 - mus)


@accepts_multiclass("curve")
@_docstrings.fill
def decision_loss_curve(y_true, y_prob=None, *, kinks=None, bins=None, strategy="uniform", sample_weight=None, n_jobs=None):
    """``CFDL_mu = f(mu) / max(mu, 1 - mu)`` of the V-shaped tasks at the given kinks.

    The curve is linear-fractional between the breakpoints of f and its maximum (VCDL) sits
    on one of them. O((m + k) log(m + k)) for k kinks.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    kinks : array-like of float in [0, 1], optional
        Where to evaluate. None: at every breakpoint of f (the q_i, qhat_i, 0, 1/2, 1) and
        on a grid of 1001 points.
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
        Class-wise, every class is evaluated at the union of the classes' kinks.
    {{pos_label}}

    Returns
    -------
    kinks : ndarray
        The kinks mu, increasing.
    values : ndarray
        ``CFDL_mu`` at each kink; a :class:`ClasswiseResult` (per-class curves and their
        mean) with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> mu, v = decision_loss_curve([0, 1], [0.5, 0.5], kinks=[0.25, 0.5])
    >>> v.tolist()
    [0.0, 0.0]
    """
    stats = _checked_stats("decision_loss_curve", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    if kinks is None:
        q, n, s = stats.table()
        mus = np.unique(np.concatenate([q, s / n, np.linspace(0.0, 1.0, 1001)]) + 0.0)
    else:
        mus = _validate.check_kinks(kinks, "kinks")
    return mus, _v_values(stats, mus)


@dataclass(frozen=True)
class CDLReport:
    """The exact CDL with its certificate, the worst decision task.

    Returned by :func:`cdl_report`; frozen.

    Attributes
    ----------
    value : float
        CDL = 2 fbar(1/2).
    vcdl : float
        VCDL, attained at kink ``vcdl_kink`` by the one-sided value ``vcdl_side``.
    vcdl_kink : float
        Where VCDL is attained.
    vcdl_side : {"left", "right"}
        "left" when VCDL is f(mu) / max(mu, 1 - mu) there, "right" when it is the right limit.
    kinks : ndarray
        The worst task's kinks mu1 <= 1/2 <= mu2 (one kink, 1/2, when it is a V task).
    weights : ndarray
        The kinks' weights c_j (curvature of the task's scoring rule).
    sides : tuple of str
        Per kink, "left" when the value there is f(mu), "right" when it is f(mu+).
    payoff : ndarray of shape (n_actions, 2)
        The task's payoff matrix, rows = actions, columns = y = 0, 1, in [0, 1];
        ``cfdl(..., payoff=payoff) == value`` up to rounding when ``exact``.
    exact : bool
        False when float64 payoffs in [0, 1] cannot place a kink where it is: a kink closer
        to 0 or 1 than the payoffs' resolution (about 1e-16) while predictions or
        frequencies lie between it and the end. The value is exact all the same; a
        :class:`CertificateWarning` says so.

    Examples
    --------
    >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> r
    CDLReport(value=0.25, vcdl=0.166667 at 0.25, worst task: 3 actions, kinks [0.25, 0.75])
    >>> cfdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75], payoff=r.payoff) == r.value
    True
    """

    value: float
    vcdl: float
    vcdl_kink: float
    vcdl_side: str
    kinks: np.ndarray
    weights: np.ndarray
    sides: tuple
    payoff: np.ndarray
    exact: bool = True

    def action_at(self, p: float) -> int:
        """The worst task's best response at belief p, ties to the lowest row.

        Parameters
        ----------
        p : float
            The belief, P(y = 1), in [0, 1].

        Returns
        -------
        int
            The row of ``payoff``.

        Examples
        --------
        >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> r.action_at(0.0) != r.action_at(1.0)
        True
        """
        return int(best_response(self.payoff, float(p), 1.0))

    def ordered_task(self):
        """The worst task as a person would state it: (payoff, bounds).

        ``payoff`` rows are the actions that are the best response on an interval of beliefs
        of positive length, ordered from low to high beliefs; ``bounds`` (one fewer) are the
        beliefs where one hands over to the next. Actions that are the best response only
        at p = 0 or p = 1 (a kink there, reached only through a tie) and duplicate actions
        (a kink of weight 0) are left out. Exact ties at the kinks are broken by lowering
        entries by ulps rather than by the order of the rows, so
        cfdl(..., payoff=payoff) == value whenever no action was left out; an action left
        out takes with it the share of the value that predictions of exactly 0 or 1 bring.

        Returns
        -------
        payoff : ndarray of shape (n_actions, 2)
            The actions from low to high beliefs.
        bounds : ndarray of shape (n_actions - 1,)
            The beliefs where one action hands over to the next.

        Examples
        --------
        >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> payoff, bounds = r.ordered_task()
        >>> bounds.tolist()
        [0.25, 0.75]
        """
        u, _, rows, bounds = self._ordered()
        return u[rows].copy(), bounds

    def stated_task(self):
        """The worst task of :meth:`ordered_task` with its exact entries: (payoff, bounds, at_bounds).

        ``payoff`` has the entries of the task before ties were broken by lowering entries by
        ulps (1, not 0.9999999999999999); ``at_bounds[i]`` is the row taken by a decision maker
        whose belief is exactly ``bounds[i]``: i or i + 1, the tie that ordered_task's lowered
        entries break. Acting by these rows, the task gains what cfdl gains with ordered_task's
        payoff.

        Returns
        -------
        payoff : ndarray of shape (n_actions, 2)
            The actions from low to high beliefs, with their exact entries.
        bounds : ndarray of shape (n_actions - 1,)
            The beliefs where one action hands over to the next.
        at_bounds : list of int
            The row taken at each bound.

        Examples
        --------
        >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> payoff, bounds, at = r.stated_task()
        >>> payoff.tolist(), at
        ([[1.0, 0.0], [0.75, 0.75], [0.0, 1.0]], [1, 1])
        """
        u, exact, rows, bounds = self._ordered()
        at = [int(best_response(u[rows], float(b), 1.0)) for b in bounds]
        return exact[rows].copy(), bounds, at

    def _ordered(self):
        """(payoff with ties broken by ulps, the same before lowering, rows kept, bounds)."""
        mus = [float(k) for k in self.kinks]
        if len(mus) == 1:
            u = _ordered_v_task(self.sides[0])
            exact = _V_TASK.copy()
        else:
            c1, c2 = (float(c) for c in self.weights)
            u, _ = _three_action_task(mus[0], mus[1], c1, c2, self.sides, order=(0, 1, 2))
            exact = np.array(_three_actions(mus[0], mus[1], c1, c2))
        edges = sorted({0.0, 1.0, *mus})
        rows, bounds = [], []
        for lo, hi in zip(edges[:-1], edges[1:]):
            if hi <= lo:
                continue
            a = int(best_response(u, 0.5 * (lo + hi), 1.0))
            if rows and (rows[-1] == a or np.allclose(u[rows[-1]], u[a], rtol=0.0, atol=1e-12)):
                continue
            if rows:
                bounds.append(lo)
            rows.append(a)
        return u, exact, rows, np.array(bounds)

    def __repr__(self) -> str:
        ks = ", ".join(f"{k:.6g}" for k in self.kinks)
        return (
            f"CDLReport(value={self.value:.6g}, vcdl={self.vcdl:.6g} at {self.vcdl_kink:.6g}, "
            f"worst task: {self.payoff.shape[0]} actions, kinks [{ks}])"
        )


@accepts_multiclass()
@_docstrings.fill
def cdl(y_true, y_prob=None, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> float:
    """Calibration decision loss: the most any decision maker with payoffs in [0, 1] gains
    by recalibrating, computed exactly as 2 fbar(1/2) (docs/exact-cdl.md). O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The CDL, in [0, 1]; a :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    See Also
    --------
    cdl_report : the same value with the worst task that attains it.
    cdl_monotone : the sample estimator for continuous scores.

    Examples
    --------
    >>> cdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.25
    """
    q, n, s = _checked_table("cdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    # the fused kernel of fastcdl.kernels.cdl: envelope.cdl_curve's value bit for bit, without the
    # curve's arrays (cdl_report, which builds the curve, takes 2.5x cdl's time at 10^6 buckets in
    # results/benchmarks/bucket-speed.md)
    return float(table_cdl(q, n, s, False)[0])


@accepts_multiclass()
@_docstrings.fill
def vcdl(y_true, y_prob=None, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> float:
    """V-shaped calibration decision loss: sup over kinks mu of CFDL_mu (docs/metrics.md). O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The VCDL, at most :func:`cdl`; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> vcdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.16666666666666666
    """
    q, n, s = _checked_table("vcdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    return float(table_cdl(q, n, s, True)[3])  # envelope.cdl_curve's VCDL bit for bit, as in cdl


@accepts_multiclass()
@_docstrings.fill
def ucal(y_true, y_prob=None, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> float:
    """U-calibration error: sup over tasks of the external regret to the best fixed action
    (docs/exact-cdl.md), exactly. O(m log m).

    It can be 0 for a badly calibrated forecaster, so it is not a calibration measure on its
    own.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The UCal; a :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> ucal([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.0
    """
    q, n, s = _checked_table("ucal", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    return float(_env.ucal_of_table(q, n, s))


@accepts_multiclass("report")
@_docstrings.fill
def cdl_report(y_true, y_prob=None, *, bins=None, strategy="uniform", sample_weight=None, n_jobs=None) -> CDLReport:
    """CDL with its certificate: the worst task (at most 3 actions), its kinks and weights.

    O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{bins}}
    {{strategy}}
    {{sample_weight}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    CDLReport
        The value, VCDL and the worst task; with ``multiclass="classwise"`` a
        :class:`ClasswiseResult` of reports, whose mean is the mean of their values.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}
    CertificateWarning
        When float64 payoffs cannot attain the value (``exact`` is False).

    Examples
    --------
    >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> r.value, r.kinks.tolist()
    (0.25, [0.25, 0.75])
    """
    q, n, s = _checked_table("cdl_report", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    value, j1, j2, b, f_left, f_right, vmax, jv = _env.cdl_curve(q, n, s)

    def side(j):
        return "left" if f_left[j] >= f_right[j] else "right"

    kinks, weights, sides, payoff, settled = worst_task(b, j1, j2, side)
    attained = float(cfdl_kernel(q, n, s, payoff))
    exact = abs(attained - value) <= 1e-12 * max(1.0, abs(value))
    if not exact and settled:  # (an unsettled search has said so already)
        warnings.warn(
            CertificateWarning(
                f"cdl_report: the worst task's payoffs in float64 attain {attained:.6g}, not the CDL "
                f"{float(value):.6g}: a kink at {float(kinks[0]):.3g} or {float(kinks[-1]):.3g} is closer to 0 "
                "or 1 than payoffs in [0, 1] can resolve (report.exact is False; the value is exact)"
            ),
            stacklevel=2,
        )
    return CDLReport(
        value=float(value),
        vcdl=float(vmax),
        vcdl_kink=float(b[jv]),
        vcdl_side=side(jv),
        kinks=kinks,
        weights=weights,
        sides=sides,
        payoff=payoff,
        exact=exact,
    )


def worst_task(b, j1, j2, side):
    """The worst task from the envelope's hull vertices j1, j2 around 1/2 in the breakpoints b
    (j1 == j2: the V task at 1/2) and ``side(j)`` ("left" | "right") of each kink's value:
    (kinks, weights, sides, payoff, settled), as in docs/exact-cdl.md. Shared by cdl_report
    and the monotone report."""
    if j1 == j2:
        sides = (side(j1),)
        return np.array([0.5]), np.array([2.0]), sides, _v_task(sides[0]), True
    mu1, mu2 = float(b[j1]), float(b[j2])
    c1 = (2.0 * mu2 - 1.0) / (mu2 - mu1)
    c2 = (1.0 - 2.0 * mu1) / (mu2 - mu1)
    sides = (side(j1), side(j2))
    payoff, settled = _three_action_task(mu1, mu2, c1, c2, sides)
    return np.array([mu1, mu2]), np.array([c1, c2]), sides, payoff, settled


def _v_task(side: str) -> np.ndarray:
    """The V task with kink 1/2 and weight 2; ties at 1/2 fall on the side attaining the value."""
    left, right = [1.0, 0.0], [0.0, 1.0]
    return np.array([right, left] if side == "left" else [left, right])


_V_TASK = np.array([[1.0, 0.0], [0.0, 1.0]])


def _ordered_v_task(side: str) -> np.ndarray:
    """The V task with kink 1/2, rows [low, high]; at p = 1/2 'high' when side is "left"
    (its tie broken by lowering the other action's payoff by an ulp), else 'low'."""
    u = _V_TASK.copy()
    if side == "left":
        u[0, 0] = np.nextafter(1.0, 0.0)
    return u


def _three_actions(mu1, mu2, c1, c2):
    """The actions [a0, a1, a2] of c1 V_mu1 + c2 V_mu2 from low to high beliefs, before ties
    are broken (_three_action_task)."""
    # B - c1 mu1 = c2 mu2 and c1 (1 - mu1) = A - c2 (1 - mu2); the product forms are
    # nonnegative by construction, and min() only removes an ulp of rounding above 1.
    return [1.0, 0.0], [min(1.0, c2 * mu2), min(1.0, c1 * (1.0 - mu1))], [0.0, 1.0]


def _three_action_task(mu1, mu2, c1, c2, sides, order=None) -> np.ndarray:
    """Payoff matrix of c1 V_mu1 + c2 V_mu2 (docs/exact-cdl.md), rows ordered so ties attain the value.

    Actions from left to right: a0 = [B, 0], a1 = [B - c1 mu1, c1 (1 - mu1)], a2 = [0, A]
    with A = B = 1 at the optimum. At a kink the value is f(mu) ("left": the decision maker
    at p = mu must take the action of the piece to the right) or f(mu+) (the piece to the
    left). Rows are ordered to break exact ties that way; where rounding of the entries
    moved a kink off mu, the entry that moves only that kink is lowered by ulps until the
    exact best response at mu is the intended one. Returns (payoff, settled): settled is
    False when the search gave up (it warns). ``order`` (a permutation of 0, 1, 2) fixes the
    rows instead: (0, 1, 2) lists the actions from low to high beliefs, and the lowering of
    entries then also breaks the exact ties that the row order does not.
    """
    a0, a1, a2 = _three_actions(mu1, mu2, c1, c2)
    want1 = 1 if sides[0] == "left" else 0  # action wanted at p = mu1
    want2 = 2 if sides[1] == "left" else 1  # action wanted at p = mu2
    # (x, y) in `first` means row x must precede row y: ties go to the earlier row.
    first = [(1, 0) if want1 == 1 else (0, 1), (2, 1) if want2 == 2 else (1, 2)]
    if order is None:
        order = next(
            o for o in itertools.permutations(range(3)) if all(o.index(x) < o.index(y) for x, y in first)
        )
    u = np.array([[a0, a1, a2][a] for a in order])
    row = {a: order.index(a) for a in range(3)}
    # which entry to lower (row, column) to move the best response at a kink toward `want`
    lower = {
        (1, 1): (row[0], 0),  # kink 1 moves left: a1 wins at mu1
        (1, 0): (row[1], 0),  # kink 1 moves right: a0 wins at mu1
        (2, 2): (row[1], 1),  # kink 2 moves left: a2 wins at mu2
        (2, 1): (row[2], 1),  # kink 2 moves right: a1 wins at mu2
    }
    step = 1
    for _ in range(_TIE_ROUNDS):
        got1 = order[best_response(u, mu1, 1.0)]
        got2 = order[best_response(u, mu2, 1.0)]
        if got1 == want1 and got2 == want2:
            return u, True
        for k, got, want in ((1, got1, want1), (2, got2, want2)):
            if got != want:
                r, c = lower[(k, want)]
                for _ in range(step):
                    u[r, c] = np.nextafter(u[r, c], 0.0)
        step *= 2
    got1 = order[best_response(u, mu1, 1.0)]
    got2 = order[best_response(u, mu2, 1.0)]
    settled = got1 == want1 and got2 == want2
    if not settled:
        warnings.warn(
            CertificateWarning(
                f"cdl_report: after {_TIE_ROUNDS} rounds of lowering payoff entries the worst task's "
                f"best responses at its kinks mu1 = {mu1!r}, mu2 = {mu2!r} are actions {got1}, {got2} "
                f"instead of {want1}, {want2}; cfdl(..., payoff=report.payoff) may differ from the value"
            ),
            stacklevel=3,
        )
    return u, settled


# Rounds of the tie-breaking search in _three_action_task (each doubles the number of ulps an
# entry is lowered by; rounding moves a kink by an ulp or two, so one or two rounds do).
_TIE_ROUNDS = 200
