"""The one place that checks and converts user input.

Every problem raises ValueError naming the argument and the problem; nothing is clipped,
rescaled or guessed. The O(T) scans are compiled kernels (fastcdl._kernels.buckets); the
hot binning kernel refuses what it cannot bin and this module then says why.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from fastcdl._kernels import buckets as _k


def _as_1d(x, name: str) -> np.ndarray:
    if x is None:
        raise ValueError(f"{name} is required")
    arr = np.asarray(x)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    return arr


def _describe_bad_float(name: str, arr: np.ndarray, i: int, rule: str) -> str:
    v = arr[i]
    if np.isnan(v):
        return f"{name} contains NaN (first at index {i})"
    if np.isinf(v):
        return f"{name} contains infinite values (first at index {i})"
    return f"{name} {rule}; found {v.item()!r} at index {i}"  # 1.5, not np.float64(1.5)


def prepare_rounds(y_true, y_prob, sample_weight=None):
    """Convert (y_true, y_prob, sample_weight) to kernel-ready 1-D arrays; check shapes only.

    y_prob becomes contiguous float64 (no copy when it already is); y_true keeps its
    numeric dtype (bool becomes uint8, a view); sample_weight becomes float64, or an
    empty array when absent. Values are checked by :func:`check_rounds` or by the
    binning kernel.
    """
    y = _as_1d(y_true, "y_true")
    p = _as_1d(y_prob, "y_prob")
    if y.shape[0] != p.shape[0]:
        raise ValueError(
            f"y_true and y_prob have different lengths ({y.shape[0]} and {p.shape[0]})"
        )
    if y.dtype == np.bool_:
        y = y.view(np.uint8)
    y = np.ascontiguousarray(y)
    p = np.ascontiguousarray(p, dtype=np.float64)
    if sample_weight is None:
        w = np.empty(0, dtype=np.float64)
    else:
        w = _as_1d(sample_weight, "sample_weight")
        if w.shape[0] != p.shape[0]:
            raise ValueError(
                f"sample_weight and y_prob have different lengths ({w.shape[0]} and {p.shape[0]})"
            )
        w = np.ascontiguousarray(w, dtype=np.float64)
    return y, p, w


def check_rounds(y, p, w) -> None:
    """Raise ValueError for the first bad value in arrays from :func:`prepare_rounds`."""
    i = _k.first_bad_prob(p)
    if i >= 0:
        raise ValueError(_describe_bad_float("y_prob", p, i, "must lie in [0, 1]"))
    i = _k.first_bad_outcome(y)
    if i >= 0:
        if y.dtype.kind == "f" and not np.isfinite(y[i]):
            raise ValueError(_describe_bad_float("y_true", y, i, ""))
        raise ValueError(
            f"y_true must contain only 0 and 1 (bool or 0/1 numbers); found {y[i].item()!r} at index {i}"
        )
    if w.shape[0]:
        i = _k.first_bad_weight(w)
        if i >= 0:
            raise ValueError(_describe_bad_float("sample_weight", w, i, "must be non-negative"))
        if not w.sum() > 0:
            raise ValueError("sample_weight sums to zero: there are no rounds to measure")


def check_bins(bins):
    """Return (edges, uniform) for bins = int m or an array of edges."""
    if isinstance(bins, (bool, np.bool_, str)) or (
        isinstance(bins, numbers.Number) and not isinstance(bins, numbers.Integral)
    ):
        raise ValueError(f"bins must be a positive integer or an array of edges, got {bins!r}")
    if isinstance(bins, numbers.Integral):
        m = operator.index(bins)
        if m <= 0:
            raise ValueError(f"bins must be a positive integer, got {m}")
        return np.arange(m + 1, dtype=np.float64) / m, True
    edges = np.asarray(bins)
    if edges.ndim != 1 or edges.dtype.kind not in "iuf":
        raise ValueError("bins must be a positive integer or a 1-D array of edges")
    edges = np.array(edges, dtype=np.float64, copy=True)  # the table keeps it; never the caller's
    if edges.shape[0] < 2:
        raise ValueError("bin edges need at least two values (0 and 1)")
    if not np.all(np.isfinite(edges)):
        raise ValueError("bin edges contain NaN or infinite values")
    if edges[0] != 0.0 or edges[-1] != 1.0:
        raise ValueError(f"bin edges must start at 0 and end at 1, got {edges[0]!r} ... {edges[-1]!r}")
    if not np.all(np.diff(edges) > 0):
        raise ValueError("bin edges must be strictly increasing")
    return edges, False


def check_table(values, counts, positives, prob_sums=None):
    """Validate a bucket table (q_i, n_i, s_i[, prob sums]); drop empty buckets."""
    q = _as_1d(values, "values").astype(np.float64)
    n = _as_1d(counts, "counts")
    s = _as_1d(positives, "positives")
    if not (q.shape == n.shape == s.shape):
        raise ValueError("values, counts and positives have different lengths")
    if _k.first_bad_prob(q) >= 0:
        i = _k.first_bad_prob(q)
        raise ValueError(_describe_bad_float("values", q, i, "must lie in [0, 1]"))
    integer = n.dtype.kind in "biu" and s.dtype.kind in "biu"
    n = n.astype(np.int64 if integer else np.float64)
    s = s.astype(np.int64 if integer else np.float64)
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(s))):
        raise ValueError("counts and positives must be finite")
    if np.any(n < 0) or np.any(s < 0):
        raise ValueError("counts and positives must be non-negative")
    if np.any(s > n):
        raise ValueError("positives cannot exceed counts")
    ps = q * n if prob_sums is None else _as_1d(prob_sums, "prob_sums").astype(np.float64)
    if ps.shape != q.shape:
        raise ValueError("prob_sums has a different length from values")
    keep = n > 0
    if not keep.any():
        raise ValueError("the table is empty: all counts are zero")
    return q[keep], n[keep], s[keep], ps[keep]


def check_payoff(payoff) -> np.ndarray:
    """A payoff matrix (n_actions, 2) with entries in [0, 1], as contiguous float64."""
    u = np.asarray(payoff)
    if u.dtype.kind not in "biuf":
        raise ValueError(f"payoff must be numeric, got dtype {u.dtype}")
    if u.ndim != 2 or u.shape[1] != 2 or u.shape[0] < 1:
        raise ValueError(
            f"payoff must have shape (n_actions, 2) with rows = actions and columns = y = 0, 1; got shape {u.shape}"
        )
    u = np.ascontiguousarray(u, dtype=np.float64)
    if np.isnan(u).any():
        raise ValueError("payoff contains NaN")
    if not ((u >= 0.0) & (u <= 1.0)).all():
        raise ValueError("payoff entries must lie in [0, 1]")
    return u


def check_kinks(kinks, name: str = "kink") -> np.ndarray:
    """Kinks mu as a 1-D float64 array in [0, 1]."""
    k = np.asarray(kinks)
    if k.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric")
    k = np.ascontiguousarray(np.atleast_1d(k), dtype=np.float64)
    if k.ndim != 1:
        raise ValueError(f"{name} must be a number or a 1-D array")
    if k.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    bad = _k.first_bad_prob(k)
    if bad >= 0:
        raise ValueError(_describe_bad_float(name, k, bad, "must lie in [0, 1]"))
    return k
