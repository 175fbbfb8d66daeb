"""KL-calibration of a bucket table: the mean over rounds of the Kullback-Leibler divergence
between each stated value's frequency of y = 1 and the value itself (docs/pseudo.md).

    KLCal = (1/N) sum_j n_j KL(qhat_j || q_j),   qhat_j = s_j / n_j,
    KL(a || b) = a ln(a / b) + (1 - a) ln((1 - a) / (1 - b)),   0 ln 0 = 0,

with N = sum_j n_j. On the bucket table of a run (counts n_j) it is KL-calibration; on the
run's expected-count table (weights sum_t P_t(j), docs/pseudo.md) it is pseudo
KL-calibration, the pseudo swap regret of the log loss (Luo, Senapati and Sharan 2025).

Convention at the ends: a stated value q_j = 0 with some y = 1 in its bucket (s_j > 0), or
q_j = 1 with some y = 0 (s_j < n_j), has KL(qhat_j || q_j) = +inf (the log loss of stating
that value is infinite), so the measure is +inf: a documented value, never NaN. A stated
value 0 whose outcomes are all 0 (or 1 with all 1) contributes 0.

>>> from fastcdl.bucket_table import BucketStats
>>> kl_calibration(BucketStats.from_table([0.5], [4], [2]))
0.0
>>> kl_calibration(BucketStats.from_table([0.0, 0.5], [1, 1], [1, 0]))
inf

:func:`klcal` is the same measure in the signature of every metric, ``klcal(y_true, y_prob)``.
"""

from __future__ import annotations

import math

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass

__all__ = ["kl_calibration", "klcal"]


@accepts_multiclass()
@fill_docstring
def klcal(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> float:
    """KL-calibration: the mean over rounds of KL(frequency || stated value) of each bucket
    (``kl_calibration`` of the rounds' bucket table; docs/pseudo.md). O(T log T) for the
    table, O(m) after.

    Exact buckets only: every stated value must be its own bucket (``bins`` is refused with a
    ValueError, as the bins' means are no stated values).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        Nonnegative; +inf when a stated 0 met y = 1 or a stated 1 met y = 0; a
        :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> round(klcal([0, 1, 0, 1], [0.25, 0.25, 0.75, 0.75]), 6)
    0.143841
    """
    from fastcdl._tables.sample_size import check_sample_size
    from fastcdl._tables.tabulate import stats_of

    st = stats_of(y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    check_sample_size(st, "klcal", stacklevel=4)
    return kl_calibration(st)


def kl_calibration(stats) -> float:
    """KL-calibration of a table: (1/N) sum_j n_j KL(s_j / n_j || q_j).

    Exact buckets only (each stated value its own bucket, as a run's table); weighted tables
    (such as a run's expected-count table, for pseudo KL-calibration) use their weights as
    n_j. Cost O(m), vectorised.

    Parameters
    ----------
    stats : BucketStats
        A table of stated values q_j with counts (or weights) n_j and outcomes s_j.

    Returns
    -------
    float
        Nonnegative; +inf when a stated value 0 met y = 1 or a stated value 1 met y = 0;
        0.0 for an empty table.

    Raises
    ------
    ValidationError
        (a ValueError) for a binned table (the bins' means are no stated values).

    Examples
    --------
    >>> from fastcdl.bucket_table import BucketStats
    >>> round(kl_calibration(BucketStats.from_table([0.25, 0.75], [2, 2], [1, 1])), 6)
    0.143841
    """
    from fastcdl._validate import ValidationError

    if stats.edges is not None:
        raise ValidationError(
            "stats",
            "must be a table of exact buckets (bins=None), not a binned one",
            message="kl_calibration needs exact buckets (each stated value its own bucket); got a binned table",
        )
    q = np.asarray(stats.values, dtype=np.float64)
    n = np.asarray(stats.counts, dtype=np.float64)
    s = np.asarray(stats.positives, dtype=np.float64)
    total = float(n.sum())
    if total <= 0.0:
        return 0.0
    f = n - s  # rounds (or weight) with y = 0
    if np.any((s > 0) & (q <= 0.0)) or np.any((f > 0) & (q >= 1.0)):
        return math.inf  # a stated 0 met y = 1, or a stated 1 met y = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ones = np.where(s > 0, s * np.log(s / (n * q)), 0.0)  # 0 ln 0 = 0
        zeros = np.where(f > 0, f * np.log(f / (n * (1.0 - q))), 0.0)
    return float((ones + zeros).sum()) / total
