"""Read a file of predictions into bucket tables, chunk by chunk (docs/metrics.md; see README.md).

One reader for every command (``fastcdl metrics``, ``fastcdl plot``) and one list of formats,
chosen by the file name's suffix (or ``fmt=``):

======================  =====================================================================
suffix                  format
======================  =====================================================================
.csv .tsv .txt          delimited text, read by pyarrow's streaming CSV reader; the delimiter
                        (comma, tab, semicolon or pipe) is found in the header line unless
                        given; a UTF-8 BOM and CRLF line ends are fine
.jsonl .ndjson          JSON lines (pyarrow's streaming JSON reader)
+ .gz .bz2 .zst .zstd   either of the two, compressed (``data.csv.gz``)
.parquet .pq            Parquet (pyarrow, record batches)
.feather .arrow .ipc    Feather v2 / Arrow IPC file (or stream)
.npz                    numpy archive of named 1-D arrays
.npy                    numpy structured array (named fields)
``-``                   standard input: CSV unless ``fmt=`` says otherwise
======================  =====================================================================

Anything else is refused as an unsupported format. Each chunk of CHUNK_ROWS rows becomes a
:class:`~fastcdl.BucketStats` and the tables merge exactly with ``+``, so files larger than
memory give the same table as the whole arrays would.

Text cells are parsed strictly: decimal numbers and exponents (``0.5``, ``1e-3``); no
underscores (``0_1``) or hex; outcomes also as ``true``/``false`` (any case). An empty cell, or
text that is not a number, is an error naming its column and row; ``nan`` reads as NaN and is
refused as such. With ``skip_missing=True`` rows with an empty, ``NA``, ``N/A``, ``NaN``,
``null`` or ``None`` cell (or a null or NaN value in binary formats) in a column that is read
are skipped and counted instead.

Every problem with the file raises :class:`InputError` (a ValueError) with one line naming the
file and, where it can be known, the column and the row. Rows are named as fastcdl names
positions in arrays, counted from 0 and said so: "row 4 (0-based)" is the fifth data row, the
header not counted, the row pandas' ``read_csv`` (or ``read_parquet``, ...) puts at index 4 and
the index the Python functions report for the same arrays. Text files read from a path add the
line of the file, blank lines and the header counted from 1 ("row 4 (0-based), line 6"); the
file is read again to find it, only when there is something to report.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastcdl._tables.binary_views import top_label
from fastcdl._files.columns import Columns, shown_names, resolve_columns
from fastcdl._files.formats import COMPRESSIONS as COMPRESSIONS
from fastcdl._files.formats import DELIMITERS as DELIMITERS
from fastcdl._files.formats import FORMAT_NAMES as FORMAT_NAMES
from fastcdl._files.formats import FORMATS, InputError, detect_format, supported_formats
from fastcdl._files.formats import MISSING as MISSING
from fastcdl._files.sources import open_source
from fastcdl._files.cells import printed_half_units
from fastcdl._validate import ROW_SUM_TOL, ValidationError, check_distributions
from fastcdl._writing import writing_to as writing_to
from fastcdl.bucket_table import BucketStats

__all__ = [
    "CHUNK_ROWS",
    "FORMATS",
    "Columns",
    "FileStats",
    "InputError",
    "detect_format",
    "read_arrays",
    "read_file",
    "read_stats",
    "resolve_columns",
    "supported_formats",
]

#: Rows read and reduced at a time (a record batch): memory per reader is O(CHUNK_ROWS + m).
CHUNK_ROWS = 1 << 20


@dataclass(frozen=True, eq=False)
class FileStats:
    """What a file holds, reduced: the bucket tables and the facts the command line reports.

    Returned by :func:`read_file`; frozen.

    Attributes
    ----------
    stats : BucketStats or None
        The bucket table: of (y, p) for a binary file, of the top-label problem for k
        classes with multiclass="top-label"; None for "classwise".
    per_class : tuple of BucketStats or None
        Classwise: one table per class (P_j against y == j), else None.
    columns : Columns
        The columns read.
    n_rows : int
        Data rows read (skipped rows included).
    skipped : int
        Rows skipped for a missing value (skip_missing=True).
    integer_weights : bool or None
        True when every weight is a whole number, None without weights.
    rows : tuple or None
        k classes: (distinct rows Q (m, k), weighted outcome counts (m, k)) when there are
        at most ``max_rows`` distinct rows (the exact multiclass CDL's input), else None.
    printed_slack : float
        k classes read from text: the most any row's printed digits let its sum miss 1 by,
        beyond the float64 tolerance (0.0 when no row needed it); the rows are used as
        written, so they sum to 1 within ROW_SUM_TOL + this.
    rows_over : int
        k classes with more than ``max_rows`` distinct rows: how many distinct rows the file
        had when the count passed max_rows (a lower bound of its distinct rows; the count
        stops there), else 0.
    bins, strategy : object, str
        The binning asked for (``bins=None``: one bucket per prediction).
    skip_missing : bool
        Whether rows with a missing value were skipped (and counted in ``skipped``).

    Examples
    --------
    See :func:`read_file`.
    """

    stats: BucketStats | None
    per_class: tuple | None
    columns: Columns
    n_rows: int
    skipped: int
    integer_weights: bool | None
    rows: tuple | None
    printed_slack: float = 0.0
    rows_over: int = 0
    bins: object = None
    strategy: str = "uniform"
    skip_missing: bool = False

    @property
    def weighted(self) -> bool:
        """Whether the file has a weight column."""
        return self.columns.weight is not None


class _Reducer:
    def __init__(self, source, cols: Columns, bins, n_jobs, max_rows):
        self.source = source
        self.cols = cols
        self.bins = bins
        self.n_jobs = n_jobs
        # per binary problem, the chunks' tables: exact ones are merged once at the end (one
        # stable sort of their runs, O(m log chunks), not O(m) per chunk), binned ones as
        # they come (m is small)
        self.stacks = [[] for _ in (cols.p if cols.multiclass == "classwise" else (None,))]
        self.n_rows = 0
        self.skipped = 0
        self.integer_weights = None if cols.weight is None else True
        self.max_rows = max_rows
        self.rows = (np.zeros((0, len(cols.p))), np.zeros((0, len(cols.p)))) if cols.multiclass else None
        self.rows_over = 0
        self.printed_slack = 0.0  # the most a row's printed digits let it miss a sum of 1
        self.digits_unread = False  # standard input read as JSON lines: its digits are gone

    # a ValidationError about one value is told as the file's column and row
    def _fail(self, e, rows, names):
        path = self.source.path
        if isinstance(e, ValidationError) and e.argument in names and e.index is not None:
            i, j = e.index if isinstance(e.index, tuple) else (e.index, None)
            col = names[e.argument] if j is None or e.argument != "P" else self.cols.p[j]
            if e.argument == "P" and j is None:  # a row of P
                subject = f"columns {', '.join(self.cols.p)}"
                hint = (
                    "; JSON lines on standard input cannot be read again for the digits they were printed "
                    "with: pass the file's path"
                    if self.digits_unread
                    else "; normalise the rows if they are meant to sum to 1"
                )
                raise InputError(f"{path}: {e.describe(subject, where=self.source.where(rows[i]))}{hint}") from None
            raise InputError(f"{path}: {e.describe(f'column {col!r}', where=self.source.where(rows[i]))}") from None
        span = f" (in rows {rows[0]}..{rows[-1]}, 0-based)" if rows.shape[0] else ""
        raise InputError(f"{path}: {e}{span}") from None

    def add(self, rows, arrays):
        from fastcdl import exact

        self.n_rows += rows.shape[0]
        cols = self.cols
        w = arrays[cols.weight] if cols.weight else None
        if w is not None and self.integer_weights:
            with np.errstate(invalid="ignore"):
                self.integer_weights = bool(np.all(np.floor(w) == w))
        names = {"y_true": cols.y, "y_prob": cols.p[0], "sample_weight": cols.weight, "P": cols.p[0]}
        zero = w is not None and bool(np.all(w == 0))
        try:
            if cols.multiclass is None:
                views = [(arrays[cols.y], arrays[cols.p[0]])]
            else:
                P = np.column_stack([arrays[c] for c in cols.p])
                if P.dtype.kind != "f":
                    P = P.astype(np.float64)
                printed = self._printed_slack(rows, arrays, P)
                y, P = check_distributions(arrays[cols.y], P, printed=printed)
                if printed is not None:
                    self.printed_slack = max(self.printed_slack, float(printed.max()))
                if self.rows is not None:
                    self._add_rows(y, P, w)
                if cols.multiclass == "top-label":
                    views = [top_label(y, P)]
                else:
                    views = [(y == j, P[:, j].astype(np.float64)) for j in range(P.shape[1])]
            tables = []
            for yy, pp in views:
                if zero:  # valid (other chunks may carry weight): check, then leave out of the merge
                    exact.bucket_stats(yy, pp, bins=self.bins, n_jobs=self.n_jobs)
                    tables.append(None)
                else:
                    tables.append(exact.bucket_stats(yy, pp, bins=self.bins, sample_weight=w, n_jobs=self.n_jobs))
        except ValueError as e:
            self._fail(e, rows, names)
        for stack, t in zip(self.stacks, tables):
            if t is None:
                continue
            if t.edges is not None and stack:
                t = stack.pop() + t
            stack.append(t)

    def _printed_slack(self, rows, arrays, P):
        """Rows read from text: per row, what its printed digits let its sum miss 1 by (half a
        unit in the last printed digit of each entry, summed; docs/metrics.md), found for the
        rows beyond the float64 tolerance only; None when no row is, or the file is binary or
        standard input read as JSON lines (whose digits cannot be read again)."""
        printed = getattr(self.source, "printed", None)
        if printed is None or P.dtype != np.float64:
            return None
        with np.errstate(invalid="ignore"):
            at = np.flatnonzero(np.abs(P.sum(axis=1) - 1.0) > ROW_SUM_TOL)
        if at.shape[0] == 0:
            return None
        cells = printed(rows, arrays, at, self.cols.p)
        if cells is None:
            self.digits_unread = True
            return None
        slack = np.zeros(P.shape[0])
        slack[at] = sum(printed_half_units(c) for c in cells)
        return slack

    def totals(self) -> list:
        """The merged table of each binary problem (None where no row carried weight)."""
        return [None if not stack else stack[0] if len(stack) == 1 else _merge_exact(stack) for stack in self.stacks]

    def _add_rows(self, y, P, w):
        k = P.shape[1]
        Q, inv = np.unique(P.astype(np.float64), axis=0, return_inverse=True)
        inv = inv.ravel()
        weights = None if w is None else np.asarray(w, dtype=np.float64)
        C = np.bincount(inv * k + y, weights=weights, minlength=Q.shape[0] * k).reshape(-1, k)
        Q0, C0 = self.rows
        Q, inv = np.unique(np.concatenate([Q0, Q]), axis=0, return_inverse=True)
        if Q.shape[0] > self.max_rows:
            self.rows = None
            self.rows_over = Q.shape[0]
            return
        merged = np.zeros((Q.shape[0], k))
        np.add.at(merged, inv.ravel(), np.concatenate([C0, C]))
        self.rows = (Q, merged)

    def result(self) -> FileStats:
        cols = self.cols
        totals = self.totals()
        if cols.multiclass == "classwise":
            empty = any(t is None for t in totals)
            stats, per_class = None, None if empty else tuple(totals)
        else:
            empty = totals[0] is None
            stats, per_class = totals[0], None
        if empty:
            if self.n_rows > self.skipped and cols.weight:
                raise InputError(f"{self.source.path}: no rows with positive weight in column {cols.weight!r}")
            if self.skipped:
                raise InputError(f"{self.source.path}: no rows left: all {self.skipped} have a missing value")
            raise InputError(f"{self.source.path}: no rows")
        rows = self.rows
        if rows is not None:
            keep = rows[1].sum(axis=1) > 0
            rows = (rows[0][keep], rows[1][keep])
        return FileStats(
            stats,
            per_class,
            cols,
            self.n_rows,
            self.skipped,
            self.integer_weights,
            rows,
            self.printed_slack,
            self.rows_over,
        )


def _merge_exact(tables) -> BucketStats:
    """The exact tables of consecutive chunks merged into one: the same table as merging them
    left to right with ``+`` (a stable sort keeps chunk order within each value, so float
    weights add in the same order)."""
    q = np.concatenate([t.values for t in tables])
    order = np.argsort(q, kind="stable")  # sorted runs: timsort merges them
    q = q[order]
    start = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    n = np.add.reduceat(np.concatenate([t.counts for t in tables])[order], start)
    s = np.add.reduceat(np.concatenate([t.positives for t in tables])[order], start)
    keys = q[start]
    rounds = None
    if n.dtype.kind == "f" and all(t.rounds_known for t in tables):  # weighted: the rounds per bucket too
        rounds = np.add.reduceat(np.concatenate([t.rounds_per_bucket for t in tables])[order], start)
    return BucketStats._owned(keys, n, s, keys * n, rounds=rounds)


def _rechunk(chunks, reducer):
    """Feed the reducer pieces of exactly CHUNK_ROWS rows (the last one shorter)."""
    held, held_rows, n = [], [], 0
    for rows, arrays in chunks:
        if arrays is None:  # skipped rows
            reducer.skipped += rows.shape[0]
            reducer.n_rows += rows.shape[0]
            continue
        held.append(arrays)
        held_rows.append(rows)
        n += rows.shape[0]
        size = CHUNK_ROWS
        while n >= size:
            all_rows = np.concatenate(held_rows)
            cat = {c: _concat([h[c] for h in held]) for c in held[0]}
            reducer.add(all_rows[:size], {c: a[:size] for c, a in cat.items()})
            held = [{c: a[size:] for c, a in cat.items()}]
            held_rows = [all_rows[size:]]
            n -= size
    if n:
        all_rows = np.concatenate(held_rows)
        reducer.add(all_rows, {c: _concat([h[c] for h in held]) for c in held[0]})


def _concat(parts):
    """numpy arrays or pyarrow arrays (cells as printed) joined end to end."""
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    import pyarrow as pa

    return pa.concat_arrays(parts) if len(parts) > 1 else parts[0]


def read_file(
    path,
    *,
    y_col="y",
    p_col=None,
    p_cols=None,
    p_prefix=None,
    multiclass=None,
    weight_col=None,
    bins=None,
    strategy="uniform",
    n_jobs=None,
    fmt=None,
    delimiter=None,
    skip_missing=False,
    max_rows=1000,
) -> FileStats:
    """Read a file of predictions (module docstring) into a :class:`FileStats`.

    Memory O(CHUNK_ROWS + m); cost O(T log T) for exact buckets, O(T) for bins=M, plus
    parsing (pyarrow).

    Parameters
    ----------
    path : str or Path
        The file, or "-" for standard input.
    y_col : str, default "y"
        Binary files: the outcomes (0/1, or true/false); k classes: the labels 0..k-1.
    p_col : str, optional
        Binary files: the probability column (default "p").
    p_cols : list of str or str, optional
        k classes: one probability column per class (a list or ``"p_0,p_1,..."``). Without
        p_cols or p_prefix they are found by themselves (p0.., p_0.., prob_0.., proba_0..)
        when the file has no column "p".
    p_prefix : str, optional
        k classes: ``"p_"`` reads p_0, p_1, ...
    multiclass : {"top-label", "classwise"}, optional
        k classes: the reduction (default "top-label"; docs/metrics.md).
    weight_col : str, optional
        Sample weights.
    bins, strategy, n_jobs
        As in :func:`fastcdl.bucket_stats`: quantile bins and bins="auto" need all the
        rows, so the file's exact table is built and then rebinned
        (:meth:`fastcdl.BucketStats.rebin`; memory as for exact buckets).
    fmt : str, optional
        The format when the suffix does not say it ("csv", "tsv", "jsonl", "parquet",
        "feather", "npz", "npy", "csv.gz", ...).
    delimiter : str, optional
        The CSV delimiter (default: found in the header line).
    skip_missing : bool, default False
        Skip rows with a missing value instead of refusing them.
    max_rows : int, default 1000
        The most distinct rows of k-class predictions kept for the exact multiclass CDL.

    Returns
    -------
    FileStats

    Raises
    ------
    InputError
        (a ValueError) naming the file, the column and the row (module docstring).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "f.csv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("y,p\\n0,0.25\\n1,0.75\\n")
    >>> fs = read_file(path)
    >>> fs.n_rows, fs.stats.counts.tolist()
    (2, [1, 1])
    """
    from fastcdl._validate import check_n_jobs
    from fastcdl.binning import chunk_binning

    try:
        chunk_bins, rebin = chunk_binning(bins, strategy)
        check_n_jobs(n_jobs)
    except ValueError as e:
        raise InputError(str(e)) from None
    source = open_source(path, fmt, delimiter, chunk_rows=CHUNK_ROWS)
    cols = resolve_columns(
        source.names,
        source.path,
        y_col=y_col,
        p_col=p_col,
        p_cols=p_cols,
        p_prefix=p_prefix,
        weight_col=weight_col,
        multiclass=multiclass,
    )
    reducer = _Reducer(source, cols, chunk_bins, n_jobs, max_rows)
    _rechunk(source.chunks(cols, skip_missing), reducer)
    fs = dataclasses.replace(reducer.result(), bins=bins, strategy=strategy, skip_missing=bool(skip_missing))
    if not rebin:
        return fs
    return dataclasses.replace(
        fs,
        stats=None if fs.stats is None else fs.stats.rebin(bins, strategy=strategy),
        per_class=None if fs.per_class is None else tuple(t.rebin(bins, strategy=strategy) for t in fs.per_class),
    )


def read_stats(
    path, *, y_col="y", p_col="p", weight_col=None, bins=None, strategy="uniform", n_jobs=None, **options
) -> BucketStats:
    """Bucket table (q_i, n_i, s_i) of the outcomes and predictions in a file.

    The columns are read CHUNK_ROWS rows at a time; each chunk is reduced with
    :func:`fastcdl.bucket_stats` and the tables are merged with ``+``, which is exact, so
    memory is O(CHUNK_ROWS + m) for a file of any size. Cost O(T log T) for exact buckets,
    O(T) for ``bins=M``, plus parsing (pyarrow; a 10^7-row CSV in about a second).

    Parameters
    ----------
    path : str or Path
        Any file of the module docstring's list, or "-" for standard input.
    y_col : str, default "y"
        The 0/1 outcomes.
    p_col : str, default "p"
        The probabilities.
    weight_col : str, optional
        Sample weights.
    bins, strategy, n_jobs
        As in :func:`read_file`.
    **options
        As in :func:`read_file`: ``p_cols``, ``p_prefix``, ``multiclass="top-label"``,
        ``fmt``, ``delimiter``, ``skip_missing``; class-wise tables come from
        :func:`read_file`.

    Returns
    -------
    BucketStats

    Raises
    ------
    InputError
        (a ValueError) with one line naming the file, and the column and row where known,
        for a missing or unreadable file, an unsupported format, missing columns,
        non-numeric cells, NaN or missing values, outcomes other than 0/1, probabilities
        outside [0, 1], negative weights, an empty file, ``bins`` that is not a positive
        integer (at most 2^24) or an array of edges, or a bad ``n_jobs``.

    Examples
    --------
    >>> from fastcdl.io import read_stats
    >>> st = read_stats("examples/forecasts.csv")   # doctest: +SKIP
    >>> st.total, st.n_buckets                       # doctest: +SKIP
    (1095, 21)
    """
    if options.get("multiclass") == "classwise":
        raise InputError("read_stats gives one table; read class-wise tables with read_file")
    if p_col == "p" and (options.get("p_cols") or options.get("p_prefix")):
        p_col = None
    if p_col == "p":
        p_col = None  # the default: a file without column p may hold one column per class
    return read_file(
        path, y_col=y_col, p_col=p_col, weight_col=weight_col, bins=bins, strategy=strategy, n_jobs=n_jobs, **options
    ).stats


def file_stats(path: Path, kind: str, cols: list[str], bins, n_jobs=None):
    """(merged BucketStats of a file's chunks, number of rows read), for fastcdl.dask.

    ``cols`` is [y, p] or [y, p, weight]. The table is None when no row carries weight (no
    rows, or all weights zero), so callers that merge several files can decide whether that
    is an error.
    """
    source = open_source(path, kind, chunk_rows=CHUNK_ROWS)
    missing = [c for c in cols if c not in source.names]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing}; the file has {shown_names(source.names)}")
    columns = Columns(cols[0], (cols[1],), cols[2] if len(cols) > 2 else None, None)
    reducer = _Reducer(source, columns, bins, n_jobs, 0)
    _rechunk(source.chunks(columns, False), reducer)
    return reducer.totals()[0], reducer.n_rows


def read_arrays(
    y_true,
    y_prob,
    *,
    sample_weight=None,
    bins=None,
    strategy="uniform",
    multiclass=None,
    pos_label=None,
    max_rows=1000,
) -> FileStats:
    """The :class:`FileStats` of arrays: what :func:`read_file` gives of a file that holds them
    (the tables, and for k classes the distinct rows for the exact k-class CDL), so that
    :func:`fastcdl.summary` reports arrays and files alike.

    Cost O(T log T) (O(T) binned); k classes add O(T k log T) for the distinct rows.

    Parameters
    ----------
    y_true, y_prob, sample_weight, bins, strategy, multiclass, pos_label
        As in :func:`fastcdl.summary`.
    max_rows : int, default 1000
        k classes: the distinct rows are kept up to this many (``rows`` is None beyond).

    Returns
    -------
    FileStats
        The columns are named "y_true", "y_prob" (binary) or "0".."k-1" (k classes) and
        "sample_weight".

    Examples
    --------
    >>> fs = read_arrays([0, 1, 1], [0.25, 0.75, 0.75])
    >>> fs.n_rows, fs.stats.counts.tolist()
    (3, [1, 2])
    """
    from fastcdl._tables.binary_views import reduce
    from fastcdl._tables.tabulate import stats_of

    form, views = reduce(y_true, y_prob, multiclass, pos_label)
    tables = [stats_of(y, p, bins, sample_weight, strategy=strategy) for y, p in views]
    T = int(np.shape(views[0][1])[0])
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    integer_weights = None if w is None else bool(np.all(w == np.floor(w)))
    rows, rows_over = None, 0
    if form == "binary":
        names = ("y_prob",)
    else:
        y, P = check_distributions(*_labels_and_rows(y_true, y_prob))
        k = P.shape[1]
        names = tuple(str(j) for j in range(k))
        Q, inv = np.unique(P.astype(np.float64), axis=0, return_inverse=True)
        C = np.bincount(inv.ravel() * k + y, weights=w, minlength=Q.shape[0] * k).reshape(-1, k).astype(np.float64)
        keep = C.sum(axis=1) > 0
        Q, C = Q[keep], C[keep]
        if Q.shape[0] > max_rows:
            rows_over = int(Q.shape[0])
        else:
            rows = (Q, C)
    cols = Columns("y_true", names, None if w is None else "sample_weight", None if form == "binary" else form)
    classwise = form == "classwise"
    return FileStats(
        None if classwise else tables[0],
        tuple(tables) if classwise else None,
        cols,
        T,
        0,
        integer_weights,
        rows,
        bins=bins,
        strategy=strategy,
        rows_over=rows_over,
    )


def _labels_and_rows(y_true, y_prob):
    """(labels, (T, k) rows) of k-class input; a 1-D probability of y = 1 as the rows (1 - p, p)."""
    P = np.asarray(y_prob)
    if P.ndim == 1:
        from fastcdl._validate import prepare_rounds

        y8, p, _ = prepare_rounds(y_true, P)
        return y8.astype(np.int64), np.column_stack([1.0 - p, p])
    return y_true, P
