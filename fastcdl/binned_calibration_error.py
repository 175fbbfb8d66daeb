"""The binned calibration error under scikit-learn's names: :func:`fastcdl.calibration_error`.

scikit-learn's ``calibration_error`` (pull request 34261, with the ``neg_l2_calibration_error``
scorer; earlier drafts had ``norm="l1" | "l2" | "max"``) bins the predictions as
``sklearn.calibration.calibration_curve`` does and compares, in each non-empty bin, the mean
prediction with the frequency of the positive class. This module computes the same numbers on
fastcdl's bucket table, so a model scored here and there gets one value:

- ``norm="l1"``: ``sum_k (w_k / W) |ybar_k - pbar_k|``, the binned ECE (:func:`fastcdl.ece` of the
  binned table);
- ``norm="l2"``: the root of sum_k (w_k / W) (ybar_k - pbar_k)^2 (``squared=True``: without the
  root, the calibration term of the Brier score's binned decomposition, :func:`fastcdl.k2`);
- ``norm="max"``: ``max_k |ybar_k - pbar_k|`` over the non-empty bins (:func:`fastcdl.mce`).

w_k is the weight (or count) of bin k, W the total. Bins follow ``calibration_curve``:
``strategy="uniform"``, n_bins equal widths; ``strategy="quantile"``, edges at numpy's
percentiles of the predictions (linear interpolation; with sample weights the weighted
inverted-CDF percentiles). A prediction on an interior edge goes to the lower bin (as
``np.searchsorted`` on the interior edges, and as fastcdl's binning). Empty bins count for
nothing, so n_bins larger than the rounds is allowed: the bins that hold rounds are those
measured (equal quantile edges merge into one bin, as they give empty bins there).

:func:`fastcdl.ece` with ``strategy="quantile"`` uses predictions as edges (order statistics,
docs/metrics.md) rather than interpolated percentiles: the two agree when no percentile falls
between two predictions. docs/peers.md maps every peer's function to fastcdl's.
"""

from __future__ import annotations

import math

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_name, check_positive_int, check_rounds, prepare_rounds
from fastcdl.bucket_table import BucketStats
from fastcdl.exact import ece, k2
from fastcdl.sample import mce

# calibration_error itself is documented as fastcdl.calibration_error
__all__ = ["NORMS", "quantile_edges"]

#: The norms of :func:`fastcdl.calibration_error`.
NORMS = ("l1", "l2", "max")

# an edge at 0 (a quarter of the rounds or more at p = 0) is stored as the smallest positive
# float64, as fastcdl's quantile bins do: the zeros keep a bin of their own
_ABOVE_ZERO = 5e-324


def quantile_edges(y_prob, n_bins: int, sample_weight=None) -> np.ndarray:
    """Bin edges at the percentiles of the predictions, as scikit-learn's ``calibration_curve``
    with ``strategy="quantile"``, made fit for :func:`fastcdl.bucket_stats`: the interior
    percentiles (``np.percentile``, linear interpolation; with weights, numpy's weighted
    ``inverted_cdf``) between the edges 0 and 1, each kept once; an interior edge at 1 is
    dropped (the predictions at it go to the bin below, which ends at 1), one at 0 becomes
    5e-324 (the zeros alone in the first bin). O(T) (numpy's partition).

    Parameters
    ----------
    y_prob : array-like of shape (T,)
        Predictions in [0, 1] (checked by the caller).
    n_bins : int
    sample_weight : array-like of shape (T,), optional

    Returns
    -------
    ndarray
        Strictly increasing edges from 0 to 1.

    Examples
    --------
    >>> quantile_edges(np.array([0.1, 0.2, 0.3, 0.4]), 2).tolist()
    [0.0, 0.25, 1.0]
    """
    q = np.linspace(0.0, 100.0, n_bins + 1)[1:-1]
    if sample_weight is None or np.asarray(sample_weight).shape[0] == 0:
        inner = np.percentile(y_prob, q)
    else:
        keep = sample_weight > 0
        inner = np.percentile(y_prob[keep], q, weights=sample_weight[keep], method="inverted_cdf")
    inner = np.unique(inner)
    inner = inner[inner < 1.0]
    inner[inner == 0.0] = _ABOVE_ZERO
    return np.concatenate([[0.0], inner, [1.0]])


def _binned(y_true, y_prob, sample_weight, n_bins, strategy) -> BucketStats:
    check_name(strategy, ("uniform", "quantile"), "strategy")
    check_positive_int(n_bins, "n_bins")
    if isinstance(y_true, BucketStats):
        if y_true.edges is None:
            raise ValidationError(
                "y_true",
                "is an exact BucketStats",
                message="calibration_error bins the predictions itself, and an exact BucketStats is not binned: pass y_true and y_prob, or a binned "
                "BucketStats (bins=...), whose bins are used as they are",
            )
        return stats_of(y_true, y_prob, None, sample_weight)
    if strategy == "uniform":
        return stats_of(y_true, y_prob, n_bins, sample_weight)
    y, p, w = prepare_rounds(y_true, y_prob, sample_weight)
    check_rounds(y, p, w)
    return stats_of(y, p, quantile_edges(p, n_bins, w if w.shape[0] else None), w if w.shape[0] else None)


@accepts_multiclass()
@fill_docstring
def calibration_error(
    y_true, y_prob=None, *, sample_weight=None, norm="l2", squared=False, n_bins=10, strategy="uniform"
) -> float:
    """Binned calibration error with scikit-learn's conventions. O(T) to bin, O(n_bins) after.

    Over the non-empty bins k of the predictions, with w_k the bin's weight, W the total,
    ybar_k its frequency of y = 1 and pbar_k its mean prediction: ``norm="l1"`` gives
    ``sum_k (w_k / W) |ybar_k - pbar_k|`` (the binned ECE), ``"l2"`` the root of
    ``sum_k (w_k / W) (ybar_k - pbar_k)^2`` (``squared=True``: the sum itself), ``"max"`` the
    largest ``|ybar_k - pbar_k|``. Bins as ``sklearn.calibration.calibration_curve``: equal widths,
    or edges at the predictions' percentiles (:func:`fastcdl.binned_calibration_error.quantile_edges`); a prediction on an
    interior edge goes to the lower bin; empty bins are skipped, so n_bins may exceed the rounds.
    Scorers for model selection: :mod:`fastcdl.scorers`.

    Parameters
    ----------
    {{y_true}}
        A BucketStats must be binned (its bins are used; n_bins and strategy are then ignored).
    {{y_prob}}
    {{sample_weight}}
    norm : {"l1", "l2", "max"}, default "l2"
        How the bins' gaps are combined.
    squared : bool, default False
        With ``norm="l2"``, the mean squared gap (no root). Refused with the other norms.
    n_bins : int, default 10
        The number of bins.
    strategy : {"uniform", "quantile"}, default "uniform"
        Equal widths, or edges at the percentiles of the predictions.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The calibration error; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> y, p = [0, 1, 1, 1], [0.2, 0.4, 0.8, 0.9]
    >>> [round(calibration_error(y, p, norm=norm, n_bins=2), 6) for norm in ("l1", "l2", "max")]
    [0.175, 0.176777, 0.2]
    >>> round(calibration_error(y, p, squared=True, n_bins=2), 6)
    0.03125
    """
    check_name(norm, NORMS, "norm")
    if not isinstance(squared, (bool, np.bool_)):
        raise ValidationError("squared", "must be True or False", value=squared)
    if squared and norm != "l2":
        raise ValidationError(
            "squared", "applies to norm='l2' only", message=f"squared=True applies to norm='l2' only, got norm={norm!r}"
        )
    st = _binned(y_true, y_prob, sample_weight, n_bins, strategy)
    if norm == "l1":
        return ece(st)
    if norm == "max":
        return mce(st)
    k = max(k2(st), 0.0)
    return k if squared else math.sqrt(k)
