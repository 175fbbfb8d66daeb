"""The SampleSizeWarning rule: the share of the rounds that sit in buckets of one round.

An exact metric of a table whose rounds sit mostly in single-round buckets measures sampling
noise; the metrics of fastcdl.exact and fastcdl.multiclass warn then (docs/estimators.md).
Rate experiments and resampling turn the check off for their thread (sample_size_check_off).
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings

from fastcdl.bucket_table import BucketStats


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


SAMPLE_SIZE_ADVICE = (
    "for a model's continuous scores use cdl_monotone (or cutoff_ce, smce, atb), "
    "or bin the predictions (bins='auto', strategy='quantile')"
)

# Rate experiments measure the exact CDL of an online sequence, which is what they study
# whatever the bucket sizes, and resampling evaluates a metric on many tables after the
# table itself was checked: fastcdl.trial_measures, fastcdl.uncertainty and run-folder
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

    >>> import numpy as np
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
    warnings.warn(
        SampleSizeWarning(
            f"{name}: {100 * share:.0f}% of {what} sit in buckets of one round (each distinct prediction is its own "
            f"bucket), so the exact {name} measures sampling noise; " + SAMPLE_SIZE_ADVICE
        ),
        stacklevel=stacklevel + 1,
    )


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
