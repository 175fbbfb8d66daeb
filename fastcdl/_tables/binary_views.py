"""Binary views of other forecasts: pos_label, predict_proba columns, and k-class reductions.

Every binary metric (fastcdl.exact, fastcdl.sample) is wrapped by :func:`accepts_multiclass`,
which adds two keyword arguments:

- ``pos_label``: y_true holds two labels of any type (strings, -1/1, ...); the rounds with
  y_true == pos_label are the positive ones (as in scikit-learn's metrics).
- ``multiclass="top-label" | "classwise"`` for y_prob of shape (T, k), one column per class,
  labels 0..k-1 (docs/metrics.md, "Top-label and class-wise"):

  * top-label: the confidence max_j P_tj against 1{y_t = argmax_j P_tj} (ties: the lowest
    index), one binary problem;
  * class-wise: for each class j, P_tj against 1{y_t = j}; the result is a
    :class:`ClasswiseResult` with the per-class values and their weighted mean (weights 1/k).

y_prob of shape (T, 1) or (T, 2) without ``multiclass`` is a binary predict_proba output:
the column of the positive class is used (column 1, or pos_label's column among the sorted
labels). Rows of a 2-D y_prob must sum to 1 within their precision (see
fastcdl._validate.ROW_SUM_TOL: 1e-9 for float64, k * 4 * eps(float32) for float32 rows).

The reductions are plain functions (:func:`binary_views`), for estimators that want them
without the decorator.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import numpy as np

from fastcdl._validate import ValidationError, check_distributions, check_name, refuse_masked
from fastcdl.bucket_table import BucketStats

__all__ = ["MULTICLASS", "ClasswiseResult", "accepts_multiclass", "binary_views", "top_label", "binary_outcomes"]

MULTICLASS = ("top-label", "classwise")


@dataclass(frozen=True, eq=False)
class ClasswiseResult:
    """Class-wise values of a metric: one per class j (the binary problem P_tj against
    1{y_t = j}) and their weighted mean.

    Returned by the metrics with ``multiclass="classwise"``; ``float(result)`` is the mean.

    Attributes
    ----------
    per_class : ndarray or tuple
        The per-class results: an array of floats (k,) for number-valued metrics,
        (k, n_kinks) for curves, a tuple of result objects otherwise.
    weights : ndarray of shape (k,)
        The weight of each class in the mean: 1/k each (the class-wise ECE of Kull et al.
        2019 and its analogues); re-weight ``per_class`` yourself for others.
    mean : float, ndarray or None
        ``sum_j weights_j per_class_j`` (an array for curves; for result objects the
        weighted mean of their ``value``, or None when they have none).

    Examples
    --------
    >>> import fastcdl as fc
    >>> P = [[0.75, 0.25], [0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]
    >>> r = fc.ece([0, 1, 1, 1], P, multiclass="classwise")
    >>> r.per_class.tolist(), float(r)
    ([0.25, 0.25], 0.25)
    """

    per_class: object
    weights: np.ndarray
    mean: object

    def __float__(self) -> float:
        if self.mean is None or np.ndim(self.mean) != 0:
            raise TypeError("this class-wise result has no single mean value")
        return float(self.mean)

    def __repr__(self) -> str:
        k = len(self.weights)
        if np.ndim(self.mean) == 0 and self.mean is not None:
            return f"ClasswiseResult(mean={float(self.mean):.6g}, k={k} classes)"
        return f"ClasswiseResult(k={k} classes)"


def top_label(y: np.ndarray, P: np.ndarray):
    """(correct as bool (T,), confidence as float64 (T,)) of labels y and distributions P:
    the predicted class is argmax_j P_tj (ties: the lowest index). O(T k)."""
    pred = np.argmax(P, axis=1)
    conf = np.take_along_axis(P, pred[:, None], axis=1)[:, 0].astype(np.float64)
    return pred == y, conf


def binary_views(y_true, P, multiclass: str, name: str = "y_prob"):
    """The binary problems of k-class forecasts: a list of (y as bool, p as float64).

    "top-label": one problem, :func:`top_label`; "classwise": k problems, (y == j, P[:, j]).
    y_true holds labels 0..k-1 and P is (T, k), checked as in fastcdl.cdl_multiclass
    (rows summing to 1 within their precision). O(T k).
    """
    check_name(multiclass, MULTICLASS, "multiclass")
    y, P = check_distributions(y_true, P, name=name)
    if multiclass == "top-label":
        return [top_label(y, P)]
    return [(y == j, P[:, j].astype(np.float64)) for j in range(P.shape[1])]


def binary_outcomes(y_true, pos_label) -> np.ndarray:
    """y_true == pos_label as bool, for y_true with at most two distinct labels of any type."""
    refuse_masked(y_true, "y_true")
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValidationError("y_true", f"must be 1-D, got an array of shape {y.shape}")
    try:
        labels = np.unique(y)
    except TypeError:
        raise ValidationError("y_true", "holds labels of types that cannot be compared") from None
    shown = ", ".join(repr(v.item() if isinstance(v, np.generic) else v) for v in labels[:5])
    if labels.shape[0] > 2:
        raise ValidationError(
            "y_true",
            "must hold at most two labels when pos_label is given",
            value=int(labels.shape[0]),
            message=f"y_true holds {labels.shape[0]} labels ({shown}{', ...' if labels.shape[0] > 5 else ''}); "
            "pos_label makes a binary problem of two labels. For more classes pass y_prob with one "
            "column per class (labels 0..k-1) and multiclass='top-label' or 'classwise'",
        )
    if labels.shape[0] == 2 and not np.any(labels == pos_label):
        raise ValidationError(
            "pos_label",
            f"must be one of the labels of y_true ({shown})",
            value=_plain(pos_label),
        )
    return y == pos_label


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _positive_column(y_true, k: int, pos_label) -> int:
    """The column of the positive class in a (T, 2) predict_proba output."""
    if k == 1:
        return 0
    if pos_label is None:
        return 1
    labels = np.unique(np.asarray(y_true))
    if labels.shape[0] == 2:
        (hit,) = np.flatnonzero(labels == pos_label)[:1].tolist() or [None]
        if hit is None:
            shown = ", ".join(repr(_plain(v)) for v in labels)
            raise ValidationError(
                "pos_label", f"must be one of the labels of y_true ({shown})", value=_plain(pos_label)
            )
        return int(hit)  # scikit-learn's classes_ are the sorted labels
    if (
        isinstance(pos_label, (bool, np.bool_, int, np.integer))
        and int(pos_label) in (0, 1)
        and np.all(np.isin(labels, [0, 1]))
    ):
        return int(pos_label)
    raise ValidationError(
        "pos_label",
        "does not say which column of y_prob is the positive class",
        value=_plain(pos_label),
        message=f"y_true holds only the label(s) {[_plain(v) for v in labels]}, so it cannot tell which "
        f"column of y_prob is pos_label={_plain(pos_label)!r}'s; pass that column alone, y_prob[:, j]",
    )


def _binary_column(y_true, P: np.ndarray, pos_label, name: str) -> np.ndarray:
    k = P.shape[1]
    n_y = np.shape(y_true)[0] if np.ndim(y_true) >= 1 else None
    if n_y is not None and n_y != P.shape[0]:
        raise ValidationError(
            "y_true",
            "has a different length from y_prob",
            message=f"y_true and {name} have different lengths ({n_y} and {P.shape[0]} rows)",
        )
    if k == 1:
        return P[:, 0]
    # a (T, 2) predict_proba output: rows must be distributions; y is checked later as 0/1
    # (or mapped by pos_label), so only the rows are checked here
    check_distributions(np.zeros(P.shape[0], np.int64), P, name=name)
    return P[:, _positive_column(y_true, k, pos_label)]


def reduce(y_true, y_prob, multiclass, pos_label, name="y_prob"):
    """("binary", [(y, p)]) or (multiclass, [(y_j, p_j), ...]): the binary problems to measure."""
    if isinstance(y_true, BucketStats):
        which = "multiclass" if multiclass is not None else "pos_label"
        raise ValidationError(which, "does not apply to a BucketStats (it already holds a binary table)")
    if multiclass is not None:
        check_name(multiclass, MULTICLASS, "multiclass")
    refuse_masked(y_prob, name)
    refuse_masked(y_true, "y_true")
    P = np.asarray(y_prob) if y_prob is not None else None
    if P is not None and P.ndim == 2 and multiclass is not None:
        if pos_label is not None:
            raise ValidationError(
                "pos_label",
                "applies to binary problems, not to y_prob with one column per class",
                message="pos_label applies to binary problems; with multiclass=..., y_true holds the "
                "labels 0..k-1 of y_prob's columns",
            )
        return multiclass, binary_views(y_true, P, multiclass, name)
    y = binary_outcomes(y_true, pos_label) if pos_label is not None else y_true
    if P is not None and P.ndim == 2:
        if P.shape[1] > 2:
            raise ValidationError(
                name,
                f"has {P.shape[1]} columns: pass multiclass='top-label' or 'classwise'",
                message=f"{name} has {P.shape[1]} columns (one per class): pass multiclass='top-label' "
                "(the confidence of the predicted class against being right) or multiclass='classwise' "
                "(each class against the rest)",
            )
        return "binary", [(y, _binary_column(y_true, P, pos_label, name))]
    if multiclass is None:
        return "binary", [(y, y_prob)]
    # a 1-D probability of y = 1 seen as the two-class distribution (1 - p, p)
    from fastcdl._validate import prepare_rounds

    y8, p, _ = prepare_rounds(y, y_prob)
    P2 = np.column_stack([1.0 - p, p])
    return multiclass, binary_views(y8.astype(np.int64), P2, multiclass, name)


def _combine(kind, results, kw, call):
    k = len(results)
    weights = np.full(k, 1.0 / k)
    if kind == "value":
        per = np.array([float(r) for r in results])
        return ClasswiseResult(per, weights, float(weights @ per))
    if kind == "curve":
        return results  # handled by the caller
    values = [getattr(r, "value", None) for r in results]
    mean = None
    if all(isinstance(v, (float, int, np.floating)) for v in values):
        mean = float(weights @ np.array(values, dtype=np.float64))
    return ClasswiseResult(tuple(results), weights, mean)


def accepts_multiclass(kind: str = "value", lead: int = 0):
    """Decorator: fn(y_true, y_prob=None, **kw) also takes ``multiclass=`` and ``pos_label=``.

    kind: "value" (a number per class; class-wise gives per-class values and their mean),
    "report" (a result object per class; the mean of their ``value``), "curve" (returns
    (kinks, values); class-wise evaluates every class at the union of the classes' kinks),
    "table" (bucket tables; class-wise gives one per class, no mean).
    lead: the positional arguments before y_true (1 for ``interval(metric, y_true, y_prob)``).
    Without multiclass and pos_label and with a 1-D y_prob the call goes straight through.
    """

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*a, multiclass=None, pos_label=None, **kw):
            head, a = a[:lead], a[lead:]
            if len(a) >= 1:
                y_true, a = a[0], a[1:]
            else:
                y_true = kw.pop("y_true")
            if len(a) >= 1:
                y_prob, a = a[0], a[1:]
            else:
                y_prob = kw.pop("y_prob", None)
            if multiclass is None and pos_label is None and (y_prob is None or np.ndim(y_prob) < 2):
                return fn(*head, y_true, y_prob, *a, **kw)
            form, views = reduce(y_true, y_prob, multiclass, pos_label)
            if form != "classwise":
                ((y, p),) = views
                return fn(*head, y, p, *a, **kw)
            if kind == "curve":
                if kw.get("kinks") is None:
                    parts = [fn(*head, y, p, *a, **kw)[0] for y, p in views]
                    kw = {**kw, "kinks": np.unique(np.concatenate(parts))}
                curves = [fn(*head, y, p, *a, **kw) for y, p in views]
                kinks = curves[0][0]
                per = np.vstack([c[1] for c in curves])
                weights = np.full(len(views), 1.0 / len(views))
                return kinks, ClasswiseResult(per, weights, weights @ per)
            results = [fn(*head, y, p, *a, **kw) for y, p in views]
            if kind == "table":
                return ClasswiseResult(tuple(results), np.full(len(results), 1.0 / len(results)), None)
            return _combine(kind, results, kw, fn)

        sig = inspect.signature(fn)
        extra = [
            inspect.Parameter("multiclass", inspect.Parameter.KEYWORD_ONLY, default=None),
            inspect.Parameter("pos_label", inspect.Parameter.KEYWORD_ONLY, default=None),
        ]
        params = list(sig.parameters.values())
        at = next((i for i, q in enumerate(params) if q.kind == inspect.Parameter.VAR_KEYWORD), len(params))
        wrapper.__signature__ = sig.replace(parameters=params[:at] + extra + params[at:])
        return wrapper

    return deco
