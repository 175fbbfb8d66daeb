"""The one place that checks and converts user input.

Every problem raises :class:`ValidationError` (a ValueError) naming the argument and the
problem, with the same facts as fields (argument, index, value, reason), so readers that
know more about where the data came from (a file's column and row, a chunk's offset in a
dask array) rebuild the message from the fields instead of parsing its text. Nothing is
clipped, rescaled or guessed. The O(T) scans are compiled kernels
(fastcdl._compiled.buckets); the hot binning kernel refuses what it cannot bin and this
module then says why.

Sections: arrays of rounds (refuse_masked, prepare_rounds, check_rounds, check_bins,
check_binning, check_table, check_payoff, check_kinks), k-outcome forecasts
(check_distributions), and scalar
parameters of forecasters, adversaries, presets and parallel work (check_name,
check_int, check_positive_int, check_count, check_real, check_seed, check_horizon,
check_n_jobs, check_outcome, check_gains).
"""

from __future__ import annotations

import math
import numbers
import operator
import sys

import numpy as np

from fastcdl._compiled import buckets as _k

# The largest integer ``bins``: a binned table costs memory per bin, not per round, so a
# typo like bins=10**9 would allocate tens of gigabytes for five rounds. The ceiling
# depends on nothing but ``bins``, so every chunk of a file or dask array (each reduced
# with the same bins, then merged) passes or fails alike. See bucket_stats.
MAX_BINS = 1 << 24


class ValidationError(ValueError):
    """Bad input: which argument, where, what value, and why.

    A ValueError whose fields say what its message says in words.

    Parameters
    ----------
    argument : str
        The name of the offending argument ("y_prob", "bins", "m", ...).
    reason : str
        What is wrong, as the words that follow the argument's name ("must lie in [0, 1]",
        "contains NaN").
    index : int or tuple of int, optional
        The position of the first offending element (an int; a (row, column) pair for 2-D
        input).
    value : optional
        The offending value (kept as a plain Python number or string, never a numpy scalar).
    message : str, optional
        The message, when it should say more than the standard one built from the fields.

    Attributes
    ----------
    argument, reason, index, value
        As given (``index`` and ``value`` as plain Python numbers, or None).

    Notes
    -----
    Positions are counted from 0 and the messages say so: "index 3 (0-based)" in a 1-D array,
    "row 3 (0-based), column 1" in a 2-D one, and for files (fastcdl.io) "row 3 (0-based)" of
    the data rows, the header not counted, as pandas numbers them.

    :meth:`describe` rebuilds the message with another name for the argument or another
    description of the position; fastcdl.io and fastcdl.dask use it to name a file's
    column and row, or an index of the whole dask array.

    Examples
    --------
    >>> e = ValidationError("y_prob", "must lie in [0, 1]", index=3, value=1.5)
    >>> str(e)
    'y_prob must lie in [0, 1]; found 1.5 at index 3 (0-based)'
    >>> e.describe("column 'p'", where="row 5 (0-based), line 7")
    "column 'p' must lie in [0, 1]; found 1.5 at row 5 (0-based), line 7"
    """

    def __init__(self, argument, reason, index=None, value=None, message=None):
        if isinstance(value, np.generic):
            value = value.item()  # 1.5, not np.float64(1.5)
            if isinstance(value, np.generic):  # longdouble has no Python equivalent
                value = float(value)
        if isinstance(index, np.integer):
            index = int(index)
        elif isinstance(index, tuple):
            index = tuple(int(i) for i in index)
        self.argument = argument
        self.reason = reason
        self.index = index
        self.value = value
        self._message = message
        super().__init__(message if message is not None else self.describe())

    def __reduce__(self):  # picklable (Dask sends errors between processes)
        return (type(self), (self.argument, self.reason, self.index, self.value, self._message))

    def _names_value(self) -> bool:
        # NaN and infinities are named by the reason ("contains NaN"), not quoted
        return isinstance(self.value, float) and not math.isfinite(self.value)

    def describe(self, subject=None, *, where=None) -> str:
        """The message with ``subject`` in place of the argument's name, and the position
        given in words as ``where`` in place of the index.

        Parameters
        ----------
        subject : str, optional
            What to call the argument ("column 'p'"); None: its name.
        where : str, optional
            The position in words ("row 5 (0-based), line 7", "index 345 (0-based) of
            chunk 2"); None: from ``index``.

        Returns
        -------
        str
            Without arguments, the standard message.

        Examples
        --------
        >>> ValidationError("bins", "must be positive", value=0).describe()
        'bins must be positive, got 0'
        """
        text = f"{self.argument if subject is None else subject} {self.reason}"
        found = self.value is not None and not self._names_value()
        if where is None and self.index is not None:
            where = _position(self.index)
        if where is None:
            return f"{text}, got {self.value!r}" if found else text
        return f"{text}; found {self.value!r} at {where}" if found else f"{text}, first at {where}"


# -- arrays of rounds -----------------------------------------------------------------


def refuse_masked(x, name: str) -> None:
    """Raise ValidationError when ``x`` is a numpy masked array with masked entries.

    np.asarray drops a mask without a word, so the masked entries would be measured as if they
    were data. Which rounds to leave out is the caller's to say: pass the unmasked ones. A
    masked array with nothing masked is read as its data.
    """
    # (numpy imports numpy.ma on first use of np.ma, about 10 ms: a process that never
    # imported it holds no masked array)
    if "numpy.ma" in sys.modules and isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        if mask.any():
            at = tuple(int(i) for i in np.argwhere(mask)[0])
            n = int(mask.sum())
            keep = f"{name}[~{name}.mask]" if mask.ndim == 1 else f"{name}[~{name}.mask.any(axis=1)]"
            raise ValidationError(
                name,
                "is a numpy masked array with masked entries",
                index=at[0] if len(at) == 1 else at,
                message=f"{name} is a numpy masked array with {n} masked entr{'y' if n == 1 else 'ies'} (the "
                f"first at {_position(at)}): fastcdl does not read masks; pass the rounds that are not "
                f"masked, {keep}, with the same rounds of the other arrays",
            )


def _position(at) -> str:
    """A position in an array in words, 0-based: "index 3 (0-based)", "row 3 (0-based), column 1"."""
    at = at if isinstance(at, tuple) else (at,)
    if len(at) == 1:
        return f"index {at[0]} (0-based)"
    return f"row {at[0]} (0-based), column {at[1]}"


def _as_1d(x, name: str) -> np.ndarray:
    if x is None:
        raise ValidationError(name, "is required")
    refuse_masked(x, name)
    arr = np.asarray(x)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValidationError(name, "must be numeric") from None
    if arr.ndim != 1:
        raise ValidationError(name, f"must be 1-D, got an array of shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValidationError(name, "is empty")
    if arr.dtype.kind not in "biuf":
        raise ValidationError(name, f"must be numeric, got dtype {arr.dtype}")
    if not arr.dtype.isnative:  # the kernels read native byte order only
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _bad_float(name: str, arr: np.ndarray, i: int, rule: str) -> ValidationError:
    v = arr[i].item()
    if math.isnan(v):
        return ValidationError(name, "contains NaN", index=i, value=v)
    if math.isinf(v):
        return ValidationError(name, "contains infinite values", index=i, value=v)
    return ValidationError(name, rule, index=i, value=v)


# dtypes of y the compiled check reads directly; others (float16, longdouble) are
# checked with numpy, which the kernels cannot take
_KERNEL_Y = frozenset(
    np.dtype(t)
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64, np.float32, np.float64)
)


# Below this many values the checks run in numpy (a few passes of microseconds) instead of the
# compiled one-pass kernels, each of which costs 0.1-0.5 s to compile per dtype and layout: a first
# call on a small input compiles none of them (results/benchmarks/compile_profile.md).
SMALL = 1 << 14


def first_bad_prob(p: np.ndarray) -> int:
    """Index of the first p outside [0, 1] (NaN included), or -1: the compiled check from
    :data:`SMALL` values on, numpy's below (the same index)."""
    if p.shape[0] >= SMALL:
        return _k.first_bad_prob(p)
    if p.shape[0] and p.min() >= 0.0 and p.max() <= 1.0:  # a NaN makes min and max NaN: not here
        return -1
    good = (p >= 0.0) & (p <= 1.0)
    return -1 if good.all() else int(np.argmin(good))


def first_bad_outcome(y: np.ndarray) -> int:
    """Index of the first y other than 0 and 1 (NaN included), or -1, as :func:`first_bad_prob`."""
    if y.shape[0] >= SMALL:
        return _k.first_bad_outcome(y)
    good = (y == 0) | (y == 1)
    return -1 if good.all() else int(np.argmin(good))


def first_bad_weight(w: np.ndarray) -> int:
    """Index of the first weight that is negative, NaN or infinite, or -1, as :func:`first_bad_prob`."""
    if w.shape[0] >= SMALL:
        return _k.first_bad_weight(w)
    good = (w >= 0.0) & (w < np.inf)
    return -1 if good.all() else int(np.argmin(good))


def _outcomes_u8(y: np.ndarray):
    """(y as a contiguous uint8 array of 0/1, or None; index of the first y not 0/1 or -1)."""
    if y.dtype == np.bool_:
        return np.ascontiguousarray(y).view(np.uint8), -1
    if y.dtype == np.uint8:
        y = np.ascontiguousarray(y)
        i = first_bad_outcome(y)
        return (y, -1) if i < 0 else (None, i)
    if y.dtype in _KERNEL_Y and y.shape[0] >= SMALL:
        out = np.empty(y.shape[0], dtype=np.uint8)
        i = _k.outcomes_to_u8(y, out)
        return (out, -1) if i < 0 else (None, i)
    # small, or float16 or longdouble (no kernel reads them): numpy
    good = (y == 0) | (y == 1)
    if not good.all():
        return None, int(np.argmin(good))
    return np.ascontiguousarray(y == 1).view(np.uint8), -1


def _bad_outcome(y: np.ndarray, i: int) -> ValidationError:
    if y.dtype.kind == "f" and not np.isfinite(y[i]):
        return _bad_float("y_true", y, i, "")
    e = ValidationError("y_true", "must contain only 0 and 1 (bool or 0/1 numbers)", index=i, value=y[i])
    return ValidationError(
        e.argument,
        e.reason,
        e.index,
        e.value,
        message=f"{e}; for other labels pass pos_label (the label of the positive class)",
    )


def prepare_rounds(y_true, y_prob, sample_weight=None, keep_y=()):
    """Convert (y_true, y_prob, sample_weight) to kernel-ready 1-D arrays; check shapes and y.

    keep_y: dtypes of y_true passed on as they are (contiguous), unchecked, for a caller whose
    kernel checks the outcomes as it reads them (and calls :func:`check_rounds` when it refuses
    a round): the equal-width binning reads float64 outcomes so, one pass over them instead of
    a conversion and a pass.

    y_true is checked to hold only 0 and 1 and becomes contiguous uint8 whatever its
    numeric dtype (bool is a view; uint8 is used as is; int8..int64, uint16..uint64,
    float16, float32, float64 are converted after the check), so the grouping and
    binning kernels compile once, for uint8. y_prob becomes contiguous float64 (no copy
    when it already is; float16 and float32 convert exactly); sample_weight becomes
    float64, or an empty array when absent. The values of y_prob and sample_weight are
    checked by :func:`check_rounds` or by the binning kernel.
    """
    try:
        y = _as_1d(y_true, "y_true")
    except ValidationError as e:
        if e.reason.startswith("must be numeric"):
            raise ValidationError(
                e.argument,
                e.reason,
                message=f"{e}; for labels other than 0 and 1 pass pos_label (the label of the positive class)",
            ) from None
        raise
    p = _as_1d(y_prob, "y_prob")
    if y.shape[0] != p.shape[0]:
        raise ValidationError(
            "y_true",
            "has a different length from y_prob",
            message=f"y_true and y_prob have different lengths ({y.shape[0]} and {p.shape[0]})",
        )
    p = np.ascontiguousarray(p, dtype=np.float64)
    if sample_weight is None:
        w = np.empty(0, dtype=np.float64)
    else:
        w = _as_1d(sample_weight, "sample_weight")
        if w.shape[0] != p.shape[0]:
            raise ValidationError(
                "sample_weight",
                "has a different length from y_prob",
                message=f"sample_weight and y_prob have different lengths ({w.shape[0]} and {p.shape[0]})",
            )
        w = np.ascontiguousarray(w, dtype=np.float64)
    if y.dtype in keep_y:
        return np.ascontiguousarray(y), p, w
    y8, i = _outcomes_u8(y)
    if y8 is None:
        i_p = first_bad_prob(p)  # a bad y_prob is reported first, as check_rounds does
        if i_p >= 0:
            raise _bad_float("y_prob", p, i_p, "must lie in [0, 1]")
        raise _bad_outcome(y, i)
    return y8, p, w


def check_rounds(y, p, w) -> None:
    """Raise ValidationError for the first bad value in arrays from :func:`prepare_rounds`
    (y_prob outside [0, 1] or NaN, then bad or all-zero weights; y was checked there)."""
    i = first_bad_prob(p)
    if i >= 0:
        raise _bad_float("y_prob", p, i, "must lie in [0, 1]")
    if y.dtype != np.uint8:  # not from prepare_rounds: check it here
        i = first_bad_outcome(y)
        if i >= 0:
            raise _bad_outcome(y, i)
    if w.shape[0]:
        i = first_bad_weight(w)
        if i >= 0:
            raise _bad_float("sample_weight", w, i, "must be non-negative")
        if not w.sum() > 0:
            raise ValidationError("sample_weight", "sums to zero: there are no rounds to measure")


def check_bins(bins):
    """Return (edges, uniform) for bins = int m or an array of edges.

    An integer m must satisfy 1 <= m <= MAX_BINS = 2^24: a binned table costs memory per
    bin (about 50 bytes: counts, outcome and prediction sums, edges and the per-chunk
    partial tables), whatever the number of rounds, so 2^24 bins take about 0.8 GB and
    bins=10**9 would take 50 GB for five rounds. The ceiling is fixed rather than tied
    to the number of rounds because chunked readers (fastcdl.io, fastcdl.dask) build
    tables over the same bins from chunks of any size and merge them. An array of edges
    is not limited: the caller already holds it.
    """
    if isinstance(bins, (bool, np.bool_, str)) or (
        isinstance(bins, numbers.Number) and not isinstance(bins, numbers.Integral)
    ):
        raise ValidationError("bins", "must be a positive integer, 'auto' or an array of edges", value=bins)
    if isinstance(bins, numbers.Integral):
        m = operator.index(bins)
        if m <= 0:
            raise ValidationError("bins", "must be a positive integer", value=m)
        if m > MAX_BINS:
            raise ValidationError(
                "bins",
                f"must be at most 2^24 = {MAX_BINS}: a binned table takes about 50 bytes "
                "per bin, whatever the number of rounds",
                value=m,
            )
        return np.arange(m + 1, dtype=np.float64) / m, True
    edges = np.asarray(bins)
    if edges.ndim != 1 or edges.dtype.kind not in "iuf":
        raise ValidationError("bins", "must be a positive integer or a 1-D array of edges")
    edges = np.array(edges, dtype=np.float64, copy=True)  # the table keeps it; never the caller's
    if edges.shape[0] < 2:
        raise ValidationError("bins", "need at least two edges", message="bin edges need at least two values (0 and 1)")
    if not np.all(np.isfinite(edges)):
        i = int(np.argmin(np.isfinite(edges)))
        raise ValidationError(
            "bins",
            "contain NaN or infinite edges",
            index=i,
            value=edges[i],
            message="bin edges contain NaN or infinite values",
        )
    if edges[0] != 0.0 or edges[-1] != 1.0:
        raise ValidationError(
            "bins",
            "must start at 0 and end at 1",
            message=f"bin edges must start at 0 and end at 1, got {edges[0].item()!r} ... {edges[-1].item()!r}",
        )
    if not np.all(np.diff(edges) > 0):
        i = int(np.argmin(np.diff(edges) > 0)) + 1
        raise ValidationError(
            "bins",
            "must be strictly increasing",
            index=i,
            value=edges[i],
            message="bin edges must be strictly increasing",
        )
    return edges, False


STRATEGIES = ("uniform", "quantile")


def check_binning(bins, strategy="uniform"):
    """Check ``bins`` and ``strategy`` together; return bins as None, "auto", an int m or an
    array of edges (checked by :func:`check_bins`).

    strategy="uniform" (the default) takes any bins; strategy="quantile" chooses the edges
    itself, so it needs a number of bins or "auto" (not None, not an array of edges).
    """
    check_name(strategy, STRATEGIES, "strategy")
    if isinstance(bins, str):
        if bins != "auto":
            raise ValidationError(
                "bins",
                "must be a positive integer, 'auto' or an array of edges",
                value=bins,
                message=f"bins must be a positive integer, 'auto' or an array of edges; got {bins!r}",
            )
        return bins
    if bins is None:
        if strategy == "quantile":
            raise ValidationError(
                "bins",
                "is needed with strategy='quantile'",
                message="strategy='quantile' needs bins: a number of bins or 'auto' (bins=None means exact buckets)",
            )
        return None
    edges, uniform = check_bins(bins)
    if strategy == "quantile" and not uniform:
        raise ValidationError(
            "bins",
            "must be a number of bins or 'auto' with strategy='quantile'",
            message="strategy='quantile' chooses its own edges: pass bins=m or bins='auto', not an array of edges",
        )
    return edges.shape[0] - 1 if uniform else edges


def auto_bins(T) -> int:
    """bins='auto': round(T^(1/3)) bins for T rounds (at least 1, at most MAX_BINS).

    >>> auto_bins(1000), auto_bins(10**7), auto_bins(1)
    (10, 215, 1)
    """
    return int(min(max(math.floor(float(T) ** (1.0 / 3.0) + 0.5), 1), MAX_BINS))


def check_table(values, counts, positives, prob_sums=None):
    """Validate a bucket table (q_i, n_i, s_i[, prob sums]); drop empty buckets."""
    q = _as_1d(values, "values").astype(np.float64)
    n = _as_1d(counts, "counts")
    s = _as_1d(positives, "positives")
    if not (q.shape == n.shape == s.shape):
        raise ValidationError(
            "counts",
            "has a different length from values or positives",
            message="values, counts and positives have different lengths",
        )
    i = first_bad_prob(q)
    if i >= 0:
        raise _bad_float("values", q, i, "must lie in [0, 1]")
    integer = n.dtype.kind in "biu" and s.dtype.kind in "biu"
    n = n.astype(np.int64 if integer else np.float64)
    s = s.astype(np.int64 if integer else np.float64)
    for name, col in (("counts", n), ("positives", s)):
        if not np.all(np.isfinite(col)):
            i = int(np.argmin(np.isfinite(col)))
            raise ValidationError(
                name, "must be finite", index=i, value=col[i], message="counts and positives must be finite"
            )
    for name, col in (("counts", n), ("positives", s)):
        if np.any(col < 0):
            i = int(np.argmax(col < 0))
            raise ValidationError(
                name, "must be non-negative", index=i, value=col[i], message="counts and positives must be non-negative"
            )
    if np.any(s > n):
        i = int(np.argmax(s > n))
        raise ValidationError(
            "positives", "cannot exceed counts", index=i, value=s[i], message="positives cannot exceed counts"
        )
    ps = q * n if prob_sums is None else _as_1d(prob_sums, "prob_sums").astype(np.float64)
    if ps.shape != q.shape:
        raise ValidationError("prob_sums", "has a different length from values")
    keep = n > 0
    if not keep.any():
        raise ValidationError("counts", "are all zero", message="the table is empty: all counts are zero")
    return q[keep], n[keep], s[keep], ps[keep]


def check_payoff(payoff) -> np.ndarray:
    """A payoff matrix (n_actions, 2) with entries in [0, 1], as contiguous float64."""
    refuse_masked(payoff, "payoff")
    u = np.asarray(payoff)
    if u.dtype.kind not in "biuf":
        raise ValidationError("payoff", f"must be numeric, got dtype {u.dtype}")
    if u.ndim != 2 or u.shape[1] != 2 or u.shape[0] < 1:
        raise ValidationError(
            "payoff",
            f"must have shape (n_actions, 2) with rows = actions and columns = y = 0, 1; got shape {u.shape}",
        )
    u = np.ascontiguousarray(u, dtype=np.float64)
    if np.isnan(u).any():
        i = tuple(np.argwhere(np.isnan(u))[0])
        raise ValidationError("payoff", "contains NaN", index=i, value=u[i], message="payoff contains NaN")
    out = ~((u >= 0.0) & (u <= 1.0))
    if out.any():
        i = tuple(np.argwhere(out)[0])
        raise ValidationError(
            "payoff", "entries must lie in [0, 1]", index=i, value=u[i], message="payoff entries must lie in [0, 1]"
        )
    return u


def check_kinks(kinks, name: str = "kink") -> np.ndarray:
    """Kinks mu as a 1-D float64 array in [0, 1]."""
    refuse_masked(kinks, name)
    k = np.asarray(kinks)
    if k.dtype.kind not in "biuf":
        raise ValidationError(name, "must be numeric")
    k = np.ascontiguousarray(np.atleast_1d(k), dtype=np.float64)
    if k.ndim != 1:
        raise ValidationError(name, "must be a number or a 1-D array")
    if k.shape[0] == 0:
        raise ValidationError(name, "is empty")
    bad = first_bad_prob(k)
    if bad >= 0:
        raise _bad_float(name, k, bad, "must lie in [0, 1]")
    return k


# -- k-outcome forecasts (fastcdl.multiclass) -------------------------------------------


# Rows of predicted distributions must sum to 1 within their precision: 1e-9 for float64
# rows; k * 4 * eps(float32) (k * 4.8e-7) for float32 rows, which is what torch, JAX and
# TensorFlow return (their softmax rows are off by a few 1e-8), and for float64 arrays whose
# entries are all float32 values (float32 output converted later); k * 4 * eps(float16)
# for float16 rows. Rows read from text files carry the precision they were printed with:
# 1e-9 plus half a unit in the last printed digit of each entry (fastcdl.io; docs/metrics.md).
ROW_SUM_TOL = 1e-9


def row_sum_tolerance(P: np.ndarray) -> tuple[float, str]:
    """(tolerance on |row sum - 1|, name of the precision) for an array of distributions."""
    k = P.shape[1]
    if P.dtype == np.float16:
        return k * 4 * float(np.finfo(np.float16).eps), "float16"
    if P.dtype == np.float32:
        return k * 4 * float(np.finfo(np.float32).eps), "float32"
    return ROW_SUM_TOL, "float64"


def check_distributions(y_true, P, row_sum_tol=None, name="P", printed=None):
    """Validate labels and predicted distributions; return (labels int64, P (T, k)).

    P: shape (T, k), k >= 2, entries finite and in [0, 1], rows summing to 1 within
    ``row_sum_tol`` (None: the tolerance of P's precision, see ROW_SUM_TOL above; rows are
    used as given, never renormalised). ``printed``: for float64 rows read from text, a (T,)
    array of what each row's printed digits let its sum miss 1 by (half a unit in the last
    printed digit of each entry, summed); row t is then accepted within ROW_SUM_TOL +
    printed[t]. P comes back as float32 when it is float32 or float16 (no copy of a large
    float32 array), else as float64. y_true: T integer labels in 0..k-1 (bool, integer or
    integer-valued float arrays). ``name`` names P in messages.
    """
    if y_true is None or P is None:
        raise ValidationError(
            "y_true" if y_true is None else name, "is required", message=f"y_true and {name} are required"
        )
    refuse_masked(P, name)
    refuse_masked(y_true, "y_true")
    P0 = np.asarray(P)
    P = _checked_rows(P0, name)
    _check_row_sums(P, P0, name, row_sum_tol, printed)
    return _checked_labels(y_true, P.shape[0], P.shape[1], name), P


def _checked_rows(P, name):
    """P as a contiguous float32 (from float32 or float16) or float64 array, after checking its
    dtype, shape (T, k >= 2, T >= 1), finiteness and range [0, 1]."""
    if P.dtype == object or P.dtype.kind not in "biuf":
        raise ValidationError(name, f"must be a numeric array, got dtype {P.dtype}")
    if P.ndim != 2:
        raise ValidationError(name, f"must be 2-D with shape (T, k), got an array of shape {P.shape}")
    T, k = P.shape
    if T == 0:
        raise ValidationError(name, "is empty: there are no rounds")
    if k < 2:
        raise ValidationError(name, f"must have at least two columns (outcomes), got {k}")
    if P.dtype in (np.float16, np.float32):
        P = np.ascontiguousarray(P, dtype=np.float32)  # float16 converts exactly
    else:
        P = np.ascontiguousarray(P, dtype=np.float64)
    bad = ~np.isfinite(P)
    if bad.any():
        t, j = (int(v) for v in np.argwhere(bad)[0])
        what = "NaN" if np.isnan(P[t, j]) else "infinite values"
        raise ValidationError(name, f"contains {what}", index=(t, j), value=P[t, j])
    out = (P < 0.0) | (P > 1.0)
    if out.any():
        t, j = (int(v) for v in np.argwhere(out)[0])
        v = P[t, j].item()
        raise ValidationError(name, "entries must lie in [0, 1]", index=(t, j), value=v)
    return P


def _check_row_sums(P, given, name, row_sum_tol, printed):
    """Rows summing to 1 within the tolerance of check_distributions (``given``: P as passed,
    whose dtype sets the automatic tolerance)."""
    k = P.shape[1]
    auto = row_sum_tol is None
    tol, precision = row_sum_tolerance(given) if auto else (float(row_sum_tol), "")
    dev = np.abs(P.sum(axis=1, dtype=np.float64) - 1.0)
    if printed is not None:  # rows read from text: the precision they were printed with
        tol = tol + np.asarray(printed, dtype=np.float64)
    elif auto and precision == "float64" and (dev > tol).any() and np.array_equal(P, P.astype(np.float32)):
        # float32 output converted to float64: it carries float32's precision
        tol, precision = k * 4 * float(np.finfo(np.float32).eps), "float32-valued"
    if not (dev > tol).any():
        return
    t = int(np.flatnonzero(dev > tol)[0])
    total = float(P[t].sum(dtype=np.float64))
    if printed is not None:
        rule = f"within {float(tol[t]):.2g}: {ROW_SUM_TOL:g} plus half a unit in the last printed digit of each entry"
    elif auto:
        rule = f"within {tol:.2g}, the tolerance for {precision} rows with k = {k}"
    else:
        rule = f"within {tol:g}"
    raise ValidationError(
        name,
        f"rows must sum to 1 ({rule})",
        index=t,
        value=total,
        message=f"each row of {name} must sum to 1 ({rule}); row {t} (0-based) sums to {total!r}, off by "
        f"{abs(total - 1.0):.2g}. If the rows are probabilities that lost precision, "
        f"normalise them first: {name} / {name}.sum(axis=1, keepdims=True)",
    )


def _checked_labels(y_true, T, k, name):
    """y_true as int64 labels 0..k-1 of T rounds (bool, integer or integer-valued floats)."""
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValidationError("y_true", f"must be 1-D, got an array of shape {y.shape}")
    if y.shape[0] != T:
        raise ValidationError(
            "y_true",
            f"has a different number of rounds from {name}",
            message=f"y_true and {name} have different numbers of rounds ({y.shape[0]} and {T})",
        )
    if y.dtype == np.bool_:
        y = y.astype(np.int64)
    if y.dtype.kind == "f":
        whole = np.isfinite(y) & (y == np.round(y))
        if not whole.all():
            i = int(np.flatnonzero(~whole)[0])
            raise ValidationError("y_true", f"must contain integer labels 0..{k - 1}", index=i, value=y[i])
    elif y.dtype.kind not in "iu":
        raise ValidationError(
            "y_true", f"must contain integer labels 0..{k - 1} (column j of {name} is label j), got dtype {y.dtype}"
        )
    bad = (y < 0) | (y > k - 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        v = y[i].item()
        raise ValidationError(
            "y_true",
            f"must contain labels 0..{k - 1} ({name} has {k} columns)",
            index=i,
            value=v,
            message=f"y_true must contain labels 0..{k - 1} ({name} has {k} columns); found {v!r} at {_position(i)}",
        )
    return y.astype(np.int64)


# -- scalar parameters ----------------------------------------------------------------


def _py(v):
    """A numpy scalar as the Python value it holds (messages show 0.1, not np.float64(0.1))."""
    return v.item() if isinstance(v, np.generic) else v


def check_name(name, allowed, what):
    """``name`` if it is one of ``allowed``; ``what`` names the argument in the message."""
    if not isinstance(name, str) or name not in allowed:
        raise ValidationError(
            what,
            f"must be one of {', '.join(allowed)}",
            value=name,
            message=f"{what} must be one of {', '.join(allowed)}; got {_py(name)!r}",
        )
    return name


def check_int(value, name, low=None):
    """``value`` as an int (bools refused), at least ``low`` when given."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValidationError(name, "must be an integer", value=value)
    value = int(value)
    if low is not None and value < low:
        raise ValidationError(name, f"must be >= {low}", value=value)
    return value


def check_positive_int(value, name):
    """``value`` as an int >= 1 (bools refused): "must be a positive integer"."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValidationError(name, "must be a positive integer", value=value)
    return int(value)


def check_count(value, name, minimum=1):
    """As check_int, with one message for both problems: "must be an integer >= minimum"."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValidationError(
            name,
            f"must be an integer >= {minimum}",
            value=value,
            message=f"{name} must be an integer >= {minimum}, got {_py(value)!r}",
        )
    return int(value)


def check_real(value, name, low=None, high=None, low_open=False):
    """``value`` as a finite float in [low, high] (or (low, high] with low_open)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(name, "must be a real number", value=value)
    value = float(value)
    if not math.isfinite(value):
        raise ValidationError(name, "must be finite", value=value, message=f"{name} must be finite, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValidationError(name, f"must be {'>' if low_open else '>='} {low}", value=value)
    if high is not None and value > high:
        raise ValidationError(name, f"must be <= {high}", value=value)
    return value


def check_seed(seed):
    return check_int(seed, "seed", low=0)


# The longest game: rounds are counted in int64 (at most 2^63 - 1), and 2^62 leaves room for
# the sums of counts. A larger horizon would fail inside a compiled loop ("Int value is too large").
MAX_HORIZON = 1 << 62


def check_horizon(horizon, name="horizon", low=1):
    """``horizon`` as an int in low..MAX_HORIZON (2^62); ``name`` names it in the message."""
    T = check_int(horizon, name, low=low)
    if T > MAX_HORIZON:
        raise ValidationError(name, "must be at most 2^62 (rounds are counted in 64-bit integers)", value=T)
    return T


def check_n_jobs(n_jobs):
    """None (numba's current thread count, left as None) or a thread count 1..NUMBA_NUM_THREADS."""
    import numba

    if n_jobs is None:
        return None
    n = check_int(n_jobs, "n_jobs", low=1)
    most = int(numba.config.NUMBA_NUM_THREADS)
    if n > most:
        raise ValidationError(
            "n_jobs",
            f"must be at most {most} (numba's NUMBA_NUM_THREADS; set that variable "
            "before starting Python for more threads)",
            value=n,
        )
    return n


def check_outcome(y) -> int:
    """One round's outcome y as int 0 or 1 (bools and 0.0/1.0 accepted)."""
    if isinstance(y, (bool, np.bool_)):
        return int(y)
    if isinstance(y, numbers.Real) and not isinstance(y, numbers.Integral):
        if math.isfinite(float(y)) and float(y) in (0.0, 1.0):
            return int(y)
    elif isinstance(y, numbers.Integral) and int(y) in (0, 1):
        return int(y)
    raise ValidationError("y", "must be 0 or 1", value=y)


def check_gains(gains) -> np.ndarray:
    """A 2 x K game's gains, shape (K, 2), finite, as contiguous float64 (fastcdl.online.minimax)."""
    A = np.asarray(gains)
    if A.dtype.kind not in "biuf":
        raise ValidationError("gains", f"must be numeric, got dtype {A.dtype}")
    if A.ndim != 2 or A.shape[1] != 2 or A.shape[0] < 1:
        raise ValidationError("gains", f"must have shape (K, 2) with K >= 1 (columns y = 0, 1); got shape {A.shape}")
    A = np.ascontiguousarray(A, dtype=np.float64)
    if not np.isfinite(A).all():
        i = tuple(np.argwhere(~np.isfinite(A))[0])
        raise ValidationError("gains", "must be finite", index=i, value=A[i], message="gains must be finite")
    return A
