"""Bucket tables of data larger than memory, reduced chunk by chunk with Dask (see README.md).

Every chunk of a dask array (or every file of a Parquet dataset) becomes a
:class:`~fastcdl.BucketStats` on a worker, with the compiled kernel of
:func:`fastcdl.bucket_stats`; the tables are then merged with ``+`` in a tree, a few at
a time, so no worker ever holds more than one chunk and a few tables, and only the
final table (O(m) for m buckets) reaches the caller. Merging is exact, so the result
equals the table of the whole arrays and ``fastcdl.cdl(result)`` is the exact CDL.

The work runs on the current Dask scheduler: the distributed ``Client`` when one is
active, otherwise Dask's default (threads). ``import fastcdl`` does not import Dask;
importing this module does.
"""

from __future__ import annotations

import math
from pathlib import Path

import dask
import dask.array as da
import numpy as np

from fastcdl import exact as _metrics
from fastcdl._validate import ValidationError, refuse_masked
from fastcdl.bucket_table import BucketStats

__all__ = ["bucket_stats", "bucket_stats_parquet"]

# Tables merged per task of the reduction tree: depth log_8(chunks), and a task holds
# at most 8 tables of m buckets.
_SPLIT_EVERY = 8


def _block_stats(y, p, w, bins, offset, block, n_jobs=None):
    """(BucketStats of one chunk or None when it carries no weight, number of rows).

    Validation errors are re-raised with the chunk's index turned into an index of the
    whole array (``offset`` is the chunk's first index; None when chunk sizes are
    unknown, and then the message names the index within chunk ``block``).
    """
    n = p.shape[0]
    if n == 0 and y.shape[0] == 0 and (w is None or w.shape[0] == 0):
        return None, 0  # dask arrays may have empty chunks (after filtering, say)
    try:
        if w is not None and w.shape[0] == n and n > 0 and np.all(w == 0):
            # a chunk of zero weights is valid when other chunks carry weight: check its
            # values, then leave it out of the merge
            _metrics.bucket_stats(y, p, bins=bins, n_jobs=n_jobs)
            return None, n
        return _metrics.bucket_stats(y, p, bins=bins, sample_weight=w, n_jobs=n_jobs), n
    except ValidationError as e:
        if not isinstance(e.index, int):
            message = str(e) if offset is not None else f"{e} (in chunk {block})"
            raise ValidationError(e.argument, e.reason, None, e.value, message) from None
        if offset is None:
            raise ValidationError(
                e.argument, e.reason, None, e.value, e.describe(where=f"index {e.index} (0-based) of chunk {block}")
            ) from None
        raise ValidationError(e.argument, e.reason, offset + e.index, e.value) from None


def _merge(*parts):
    """Merge (table or None, rows) pairs: the sum of the tables and of the row counts."""
    total, rows = None, 0
    for st, n in parts:
        rows += n
        if st is not None:
            total = st if total is None else total + st
    return total, rows


def _tree_reduce(parts):
    """One delayed (table, rows) from many, merged _SPLIT_EVERY at a time."""
    merge = dask.delayed(_merge, pure=True)
    while len(parts) > 1:
        parts = [merge(*parts[i : i + _SPLIT_EVERY]) for i in range(0, len(parts), _SPLIT_EVERY)]
    return parts[0]


def _as_dask_1d(x, name: str):
    if hasattr(x, "to_dask_array"):  # a dask dataframe column: chunks of unknown size
        x = x.to_dask_array()
    refuse_masked(x, name)
    arr = x if isinstance(x, da.Array) else da.asarray(np.asarray(x))
    if arr.ndim != 1:
        raise ValidationError(name, f"must be 1-D, got an array of shape {arr.shape}")
    return arr


def _check_options(bins, strategy, n_jobs):
    """(bins of each chunk, whether to rebin the merged table), checked before any work is scheduled."""
    from fastcdl._validate import check_n_jobs
    from fastcdl.binning import chunk_binning

    out = chunk_binning(bins, strategy)
    check_n_jobs(n_jobs)
    return out


def bucket_stats(y_true, y_prob, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> BucketStats:
    """Bucket table (q_i, n_i, s_i) of dask arrays, reduced chunk by chunk.

    Each chunk is reduced on a worker by :func:`fastcdl.bucket_stats` (which validates
    it) and the tables are merged with ``+`` in a tree.

    The result equals ``fastcdl.bucket_stats`` of the whole arrays: exactly for counts
    and outcome sums without weights (and for exact buckets their prediction sums,
    q_i n_i); float sums (weights, binned prediction sums) are added in a different
    order and may differ in the last bits.

    Cost: the in-memory cost per chunk (O(c log c) exact, O(c) binned, for c rows) in
    parallel, plus O(m log m) per merge over O(chunks) merges; memory per worker
    O(c + m); the caller receives O(m).

    Parameters
    ----------
    y_true : dask array, dask dataframe column, or array-like
        Outcomes 0/1, rechunked to ``y_prob``'s chunks when theirs differ (columns of one
        dataframe already share their partitions).
    y_prob : dask array, dask dataframe column, or array-like
        Probabilities, 1-D (a numpy array or list becomes one chunk).
    bins : None, int, "auto" or array-like, default None
        As in :func:`fastcdl.bucket_stats`: None for exact buckets, an int m (at most 2^24,
        the same ceiling for every chunk size) or an array of edges.
    strategy : {"uniform", "quantile"}, default "uniform"
        "quantile" (and ``bins="auto"``) need all the predictions: the chunks' exact
        tables are merged and the result is rebinned (:meth:`fastcdl.BucketStats.rebin`;
        the caller then receives a table as large as the exact one before it is rebinned).
    sample_weight : dask array or array-like, optional
        Nonnegative weights, rechunked as ``y_true``.
    n_jobs : int, optional
        Numba threads each task bins its chunk with (None: numba's count on the worker).
        On Dask's threaded scheduler with numba's workqueue threading layer, where two
        tasks launching numba's thread pool at once would abort the process, each task
        bins serially (see :func:`fastcdl.bucket_stats`); the table is the same.

    Returns
    -------
    BucketStats

    Raises
    ------
    ValidationError
        (a ValueError) naming the problem as the in-memory function does (NaN or infinite
        values, probabilities outside [0, 1], outcomes other than 0/1, negative weights,
        length mismatch, empty input, bad bins), with indices into the whole array.

    Examples
    --------
    >>> import dask.array as da, fastcdl.dask
    >>> p = da.from_array([0.2, 0.7, 0.7, 0.2, 0.7], chunks=2)
    >>> y = da.from_array([0, 1, 1, 0, 0], chunks=2)
    >>> st = fastcdl.dask.bucket_stats(y, p)
    >>> st.values.tolist(), st.counts.tolist(), st.positives.tolist()
    ([0.2, 0.7], [2, 3], [0, 2])
    """
    chunk_bins, rebin = _check_options(bins, strategy, n_jobs)
    y = _as_dask_1d(y_true, "y_true")
    p = _as_dask_1d(y_prob, "y_prob")
    w = None if sample_weight is None else _as_dask_1d(sample_weight, "sample_weight")
    known = not any(math.isnan(c) for a in (y, p, w) if a is not None for c in a.chunks[0])
    if known:
        if y.shape[0] != p.shape[0]:
            raise ValidationError(
                "y_true",
                "has a different length from y_prob",
                message=(f"y_true and y_prob have different lengths ({y.shape[0]} and {p.shape[0]})"),
            )
        if w is not None and w.shape[0] != p.shape[0]:
            raise ValidationError(
                "sample_weight",
                "has a different length from y_prob",
                message=(f"sample_weight and y_prob have different lengths ({w.shape[0]} and {p.shape[0]})"),
            )
        if p.shape[0] == 0:
            raise ValidationError("y_prob", "is empty")
        y = y.rechunk(p.chunks)
        w = None if w is None else w.rechunk(p.chunks)
        offsets = np.cumsum((0,) + p.chunks[0][:-1]).tolist()
    else:
        # Chunk sizes unknown (say, from a dataframe): chunks pair up one to one, and a
        # chunk whose lengths differ is reported by the in-memory validation.
        if any(a.numblocks != p.numblocks for a in (y, w) if a is not None):
            raise ValidationError(
                "y_true",
                "has a different number of chunks from y_prob",
                message=(
                    "y_true, y_prob and sample_weight have unknown chunk sizes and different "
                    "numbers of chunks; call .compute_chunk_sizes() on them first"
                ),
            )
        offsets = [None] * p.numblocks[0]
    blocks = [b.to_delayed().ravel() for b in (y, p)]
    wb = [None] * len(offsets) if w is None else w.to_delayed().ravel()
    task = dask.delayed(_block_stats, pure=True)
    parts = [
        task(yb, pb, wbk, chunk_bins, off, j, n_jobs)
        for j, (yb, pb, wbk, off) in enumerate(zip(blocks[0], blocks[1], wb, offsets))
    ]
    total, rows = _tree_reduce(parts).compute()
    if total is None:
        if rows:
            raise ValidationError("sample_weight", "sums to zero: there are no rounds to measure")
        raise ValidationError("y_prob", "is empty")
    return total.rebin(bins, strategy=strategy) if rebin else total


def _parquet_files(path: Path) -> list[str]:
    """The data files of a Parquet dataset (one file, or a folder of files), in order."""
    from fastcdl.io import InputError

    if not path.exists():
        raise InputError(f"{path}: cannot read: No such file or directory")
    if path.is_file():
        return [str(path)]
    import pyarrow.dataset as pads

    try:
        files = pads.dataset(str(path), format="parquet").files
    except Exception as e:  # pyarrow raises several types while discovering a dataset
        raise InputError(f"{path}: not a readable Parquet dataset ({e})") from None
    if not files:
        raise InputError(f"{path}: the folder holds no Parquet files")
    return sorted(files)


def _parquet_file_stats(file: str, cols: list[str], bins, n_jobs=None):
    from fastcdl.io import file_stats

    return file_stats(Path(file), "parquet", cols, bins, n_jobs)


def bucket_stats_parquet(
    path, *, y_col="y", p_col="p", weight_col=None, bins=None, strategy="uniform", n_jobs=None
) -> BucketStats:
    """Bucket table (q_i, n_i, s_i) of a Parquet dataset, reduced file by file.

    ``path`` is a Parquet file or a folder of them (as written by pyarrow or Dask; files
    whose names start with ``_`` or ``.`` are skipped). Each file is read by one task, in
    record batches of :data:`fastcdl.io.CHUNK_ROWS` rows, reduced with
    :func:`fastcdl.bucket_stats`, and the tables are merged with ``+`` in a tree on the
    current Dask scheduler. The workers open the files themselves, so on a cluster
    ``path`` must be visible to every worker.

    The result equals :func:`fastcdl.bucket_stats` of the concatenated columns (see
    :func:`bucket_stats` for the last bits of float sums).

    Cost: O(rows of the file) per task (times log for exact buckets) in parallel over
    files, plus O(m log m) per merge; memory per worker O(CHUNK_ROWS + m).

    Parameters
    ----------
    path : str or Path
        A Parquet file or a folder of them.
    y_col : str, default "y"
        The column of 0/1 outcomes.
    p_col : str, default "p"
        The column of probabilities.
    weight_col : str, optional
        The column of sample weights.
    bins, strategy, n_jobs
        As in :func:`bucket_stats`.

    Returns
    -------
    BucketStats

    Raises
    ------
    fastcdl.io.InputError
        (a ValueError) with one line naming the file, the column and the row within that
        file ("row 5 (0-based)") where known, for missing files or columns, unreadable
        files, NaN or null values, outcomes other than 0/1, probabilities outside [0, 1],
        negative weights, or a dataset without rows.

    Examples
    --------
    >>> import os, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> import fastcdl, fastcdl.dask
    >>> folder = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"y": [0, 1], "p": [0.25, 0.75]}), os.path.join(folder, "a.parquet"))
    >>> pq.write_table(pa.table({"y": [0, 1], "p": [0.25, 0.75]}), os.path.join(folder, "b.parquet"))
    >>> st = fastcdl.dask.bucket_stats_parquet(folder)
    >>> st.counts.tolist(), fastcdl.cdl(st)
    ([2, 2], 0.25)
    """
    from fastcdl.io import InputError

    try:
        chunk_bins, rebin = _check_options(bins, strategy, n_jobs)
    except ValueError as e:
        raise InputError(str(e)) from None
    cols = [y_col, p_col] + ([weight_col] if weight_col else [])
    if len(set(cols)) < len(cols):
        raise InputError(f"the outcome, probability and weight columns must differ, got {cols}")
    path = Path(path)
    task = dask.delayed(_parquet_file_stats, pure=True)
    parts = [task(f, cols, chunk_bins, n_jobs) for f in _parquet_files(path)]
    total, rows = _tree_reduce(parts).compute()
    if total is None:
        if rows:
            raise InputError(f"{path}: no rows with positive weight in column {weight_col!r}")
        raise InputError(f"{path}: no rows")
    return total.rebin(bins, strategy=strategy) if rebin else total
