"""The descriptions that many public docstrings share (the rounds, the binning, the
multiclass reductions), written once.

A docstring names an entry on a line of its own, ``{{bins}}``, indented as the entry should
be; :func:`fill` puts the entry's text there when the function is defined, so ``help()``,
the API reference and the doctests all see the full docstring. An unknown name fails at
import.
"""

import re
import textwrap

ENTRIES = {
    "y_true": """\
y_true : array-like of shape (T,), or BucketStats
    The outcomes: 0 and 1 (bool, or any integer or float dtype), or two labels of any type
    with ``pos_label``, or the labels 0..k-1 of k-class forecasts with ``multiclass``. A
    bucket table (:func:`fastcdl.bucket_stats`) may stand in place of both arrays, with
    ``y_prob`` left out.""",
    "y_prob": """\
y_prob : array-like of shape (T,), (T, 1), (T, 2) or (T, k), optional
    The predicted probability of y = 1 (any float or integer dtype), or a predict_proba
    output of shape (T, 1) or (T, 2) (the positive class's column is used), or k-class
    forecasts (rows summing to 1) with ``multiclass``. Left out when ``y_true`` is a
    BucketStats.""",
    "bins": """\
bins : None, int, "auto" or array-like, default None
    None: every distinct prediction is its own bucket (the definitions of docs/metrics.md,
    exactly). m: m bins, at most 2^24. "auto": round(T^(1/3)) bins. An array: the bin edges,
    from 0 to 1. Binned buckets are represented by their mean prediction; a prediction on an
    interior edge goes to the lower bin (:func:`fastcdl.bucket_stats`).""",
    "strategy": """\
strategy : {"uniform", "quantile"}, default "uniform"
    With an integer or "auto" ``bins``: bins of equal width, or of equal mass with
    predictions as edges (tied predictions are never split, so there can be fewer bins).""",
    "sample_weight": """\
sample_weight : array-like of shape (T,), optional
    Nonnegative, finite weights of the rounds; the counts n_i and s_i become sums of
    weights.""",
    "n_jobs": """\
n_jobs : int, optional
    Threads for binning (None: numba's current count, all cores unless NUMBA_NUM_THREADS
    says otherwise; a second thread paid on every pooled kernel of a quiet 2-core machine,
    docs/metrics.md), set for this call and restored afterwards. The result does not depend
    on it; on a machine whose other cores are busy, 1 can be faster.""",
    "multiclass": """\
multiclass : {"top-label", "classwise"}, optional
    For k-class forecasts ``y_prob`` of shape (T, k): "top-label" measures the confidence
    max_j P_tj against 1{y_t = argmax_j P_tj}; "classwise" measures each class j, P_tj
    against 1{y_t = j}, and returns a :class:`fastcdl.ClasswiseResult`.""",
    "pos_label": """\
pos_label : scalar, optional
    The label of the positive class, when ``y_true`` holds two labels other than 0/1
    (as in scikit-learn's metrics).""",
    "table": """\
q : ndarray of float64
    The buckets' predictions, strictly increasing, in [0, 1].
n : ndarray of int or float
    Rounds (or sums of weights) per bucket; buckets with n_i = 0 are skipped.
s : ndarray of int or float
    Those with y = 1, 0 <= s_i <= n_i. Nothing is checked (docs/kernels.md).""",
    "raises": """\
ValidationError
    (a ValueError) when an argument is invalid: outcomes other than the two labels,
    predictions outside [0, 1] or NaN, arrays of different lengths, bad bins or weights.
    Its fields (``argument``, ``index``, ``value``) say which and where.""",
    "warns": """\
SampleSizeWarning
    With ``bins=None``, when at least half of the rounds (or of the weight) sit in buckets
    of one round: the exact value then measures sampling noise.""",
}


def fill(fn):
    """Put the shared entries into ``fn.__doc__`` in place of their ``{{name}}`` lines."""

    def entry(match):
        return textwrap.indent(ENTRIES[match.group(2)], match.group(1))

    fn.__doc__ = re.sub(r"^( *)\{\{(\w+)\}\}$", entry, fn.__doc__, flags=re.M)
    return fn
