"""The log loss (logarithmic score) of probability forecasts: :func:`log_loss`.

    log_loss = (1/T) sum_t -log(p_t if y_t = 1 else 1 - p_t)        (natural logarithm)

With the Brier score it is the proper loss a leaderboard reports next to the calibration
measures: a forecaster cannot lower its expected log loss by stating anything other than its
belief. A prediction of 0 (or 1) for a round whose outcome was 1 (or 0) costs +inf, and the
mean is then +inf; 0 log 0 counts as 0, so a certain and right prediction costs nothing.
fastcdl never clips the predictions (scikit-learn's ``log_loss`` clips them to [eps, 1 - eps]
and so gives a large finite number where this gives inf; the two agree away from 0 and 1).
"""

from __future__ import annotations

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_binning, check_rounds, prepare_rounds
from fastcdl.bucket_table import BucketStats

__all__ = ["log_loss", "log_loss_table"]


def _binned_error():
    return ValidationError(
        "y_true",
        "is a binned BucketStats",
        message="the log loss needs each round's prediction, which a binned BucketStats does not keep: "
        "pass y_true and y_prob, or an exact table (bins=None)",
    )


def _summed(p, ones, zeros):
    """sum of -(ones log p + zeros log(1 - p)), with 0 log 0 = 0 (inf where a zero-probability
    outcome occurred)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0 = -inf; its product with 0 discarded
        terms = np.where(ones == 0, 0.0, ones * np.log(p)) + np.where(zeros == 0, 0.0, zeros * np.log1p(-p))
    return 0.0 - float(terms.sum())


def log_loss_table(st: BucketStats) -> float:
    """The log loss of an exact bucket table, O(m): sum_i -(s_i log q_i + (n_i - s_i) log(1 - q_i)) / sum_i n_i.

    >>> import fastcdl as fc
    >>> round(log_loss_table(fc.bucket_stats([0, 1, 1], [0.5, 0.5, 1.0])), 6)
    0.462098
    """
    if st.edges is not None:
        raise _binned_error()
    q, n, s = (np.asarray(a, dtype=np.float64) for a in st.table())
    total = n.sum()
    if total == 0:
        return float("nan")
    return float(_summed(q, s, n - s) / total)


@accepts_multiclass()
@fill_docstring
def log_loss(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform") -> float:
    """The mean log loss -log(probability given to the outcome), natural logarithm.

    From raw arrays it is computed on the rounds, O(T), and does not depend on ``bins``; from
    an exact BucketStats on the table, O(m). +inf when a round's outcome had probability 0;
    predictions are never clipped (module docstring). NaN for no rounds.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The mean log loss; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for a binned BucketStats (it does not keep each round's prediction).

    Examples
    --------
    >>> round(log_loss([0, 1], [0.25, 0.5]), 6)
    0.490415
    >>> log_loss([1], [0.0])
    inf
    """
    if isinstance(y_true, BucketStats):
        return log_loss_table(stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy))
    if y_prob is None:
        raise ValidationError("y_prob", "is required unless the first argument is a BucketStats")
    check_binning(bins, strategy)
    y, p, w = prepare_rounds(y_true, y_prob, sample_weight)
    check_rounds(y, p, w)
    yf = np.asarray(y, dtype=np.float64)
    if w.shape[0]:
        total = float(w.sum())
        return float(_summed(p, w * yf, w * (1.0 - yf)) / total) if total > 0 else float("nan")
    return float(_summed(p, yf, 1.0 - yf) / yf.shape[0]) if yf.shape[0] else float("nan")
