"""Read a file of predictions into one bucket table, chunk by chunk (docs/metrics.md; see README.md).

CSV, Parquet (pyarrow, read in record batches) and ``.npz`` files are reduced chunk by
chunk: each chunk becomes a :class:`~fastcdl.BucketStats` and the tables merge exactly with
``+``, so files larger than memory give the same table as the whole arrays would.

Every problem with the file raises :class:`InputError` (a ValueError) with one line
naming the file and, where it can be known, the column and the row: for CSV the row
counts lines from 1 (the header is row 1); for Parquet and ``.npz`` it is the offset of
the data row within the file, counting from 0.
"""

from __future__ import annotations

import csv
import zipfile
import zlib
from pathlib import Path

import numpy as np

from fastcdl._validate import ValidationError
from fastcdl.stats import BucketStats

__all__ = ["CHUNK_ROWS", "InputError", "read_stats"]

CHUNK_ROWS = 1 << 20

_ZIP_MAGIC = b"PK\x03\x04"


class InputError(ValueError):
    """A problem with the user's file or options (the command line exits with status 2)."""


def _chunk_stats(path, chunk, cols, bins, locate, n_jobs=None) -> BucketStats | None:
    """BucketStats of one chunk; None when it holds no weight. ``locate(i)`` names row i.

    A ValidationError about one value of y_true, y_prob or sample_weight (its fields
    name the argument and the index in the chunk) is told in terms of the file's column
    and row; any other problem is told with the chunk's rows.
    """
    from fastcdl.metrics import bucket_stats

    y_col, p_col = cols[0], cols[1]
    w_col = cols[2] if len(cols) > 2 else None
    y, p = chunk[y_col], chunk[p_col]
    w = chunk[w_col] if w_col else None
    names = {"y_true": y_col, "y_prob": p_col, "sample_weight": w_col}
    try:
        if w is not None and np.all(w == 0):
            # a chunk of zero weights is valid (other chunks may carry weight): check its
            # values, then leave it out of the merge
            bucket_stats(y, p, bins=bins, n_jobs=n_jobs)
            return None
        return bucket_stats(y, p, bins=bins, sample_weight=w, n_jobs=n_jobs)
    except ValueError as e:
        if isinstance(e, ValidationError) and e.argument in names and isinstance(e.index, int):
            raise InputError(f"{path}: {e.describe(f'column {names[e.argument]!r}', where=locate(e.index))}") from None
        raise InputError(f"{path}: {e} ({locate(None)})") from None


def _float_cell(text: str, path: Path, col: str, row: int) -> float:
    try:
        v = float(text)
    except ValueError:
        what = "empty cell" if not text.strip() else f"not a number: {text!r}"
        raise InputError(f"{path}: column {col!r}, row {row}: {what}") from None
    if v != v:
        raise InputError(f"{path}: column {col!r}, row {row}: NaN")
    return v


def _columns(path: Path, buf: dict, rows: list) -> dict:
    """Convert a chunk of CSV cells to float64 arrays; on failure name the first bad cell."""
    out = {}
    for c, cells in buf.items():
        try:
            arr = np.array(cells, dtype=np.float64)
        except ValueError:
            for text, row in zip(cells, rows):
                _float_cell(text, path, c, row)
            raise  # pragma: no cover - numpy and float() disagree on some cell
        bad = np.flatnonzero(np.isnan(arr))
        if bad.shape[0]:
            raise InputError(f"{path}: column {c!r}, row {rows[bad[0]]}: NaN")
        out[c] = arr
    return out


def _csv_chunks(path: Path, cols: list[str]):
    """Yield (rows, dict of float64 arrays), CHUNK_ROWS records at a time.

    ``rows[i]`` is the file row of record i (the header is row 1; a record spanning
    several lines is numbered by its last line).
    """
    try:
        fh = path.open(newline="", encoding="utf-8-sig")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    with fh:
        reader = csv.reader(fh)
        try:
            # blank lines before the header are skipped, as blank records are below
            header = next(rec for rec in reader if rec)
        except StopIteration:
            raise InputError(f"{path}: the file is empty") from None
        except (csv.Error, UnicodeDecodeError) as e:
            raise InputError(f"{path}: not a readable CSV file ({e})") from None
        header = [h.strip() for h in header]
        missing = [c for c in cols if c not in header]
        if missing:
            raise InputError(f"{path}: missing column(s) {missing}; the header has {header}")
        idx = [header.index(c) for c in cols]
        need = max(idx)
        buf = {c: [] for c in cols}
        rows = []
        try:
            for rec in reader:
                if not rec:
                    continue
                if len(rec) <= need:
                    c = next(c for c, i in zip(cols, idx) if i >= len(rec))
                    raise InputError(f"{path}: row {reader.line_num} has no value for column {c!r}")
                for c, i in zip(cols, idx):
                    buf[c].append(rec[i])
                rows.append(reader.line_num)
                if len(rows) >= CHUNK_ROWS:
                    yield rows, _columns(path, buf, rows)
                    buf = {c: [] for c in cols}
                    rows = []
        except (csv.Error, UnicodeDecodeError) as e:
            raise InputError(f"{path}: not a readable CSV file near row {reader.line_num} ({e})") from None
        if rows:
            yield rows, _columns(path, buf, rows)


def _npz_chunks(path: Path, cols: list[str]):
    """Yield (first row offset, dict of arrays) slices of CHUNK_ROWS of the named 1-D arrays."""
    # A .npz archive is a zip file. np.load would read anything else as a pickle (and
    # refuse it with a message about pickles) and fails on an empty file with EOFError,
    # so the zip header is checked first. The file is opened here, not by np.load, which
    # leaves its handle open when the archive turns out to be corrupt.
    try:
        fh = path.open("rb")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    with fh:
        magic = fh.read(4)
        if not magic:
            raise InputError(f"{path}: the file is empty")
        if magic != _ZIP_MAGIC:
            raise InputError(f"{path}: not a .npz archive of named arrays (not a zip file)")
        fh.seek(0)
        try:
            data = np.load(fh, allow_pickle=False)
        except OSError as e:
            raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
        except (ValueError, zipfile.BadZipFile) as e:
            raise InputError(f"{path}: not a readable .npz file ({e})") from None
        with data:
            missing = [c for c in cols if c not in data.files]
            if missing:
                raise InputError(f"{path}: missing array(s) {missing}; the file has {data.files}")
            arrays = {}
            for c in cols:
                try:
                    a = data[c]
                except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
                    raise InputError(f"{path}: array {c!r} is not readable ({e})") from None
                if a.ndim != 1:
                    raise InputError(f"{path}: array {c!r} must be 1-D, got shape {a.shape}")
                if a.dtype.kind not in "biuf":
                    raise InputError(f"{path}: array {c!r} must be numeric, got dtype {a.dtype}")
                arrays[c] = a
    lengths = {c: a.shape[0] for c, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{path}: arrays have different lengths {lengths}")
    n = lengths[cols[0]]
    for start in range(0, n, CHUNK_ROWS):
        yield start, {c: a[start : start + CHUNK_ROWS] for c, a in arrays.items()}


def _parquet_chunks(path: Path, cols: list[str]):
    """Yield (first row offset, dict of arrays), one pyarrow record batch of CHUNK_ROWS at a time."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("reading Parquet needs pyarrow: pip install 'fastcdl[io]'") from None
    if not path.exists():
        raise InputError(f"{path}: cannot read: No such file or directory")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")
    try:
        f = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for unreadable files
        raise InputError(f"{path}: not a readable Parquet file ({e})") from None
    with f:
        schema = f.schema_arrow
        missing = [c for c in cols if c not in schema.names]
        if missing:
            raise InputError(f"{path}: missing column(s) {missing}; the file has {schema.names}")
        for c in cols:
            t = schema.field(c).type
            if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
                raise InputError(f"{path}: column {c!r} has type {t}, not a number")
        start = 0
        batches = f.iter_batches(batch_size=CHUNK_ROWS, columns=cols)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except Exception as e:  # a corrupt page surfaces here, mid-file
                raise InputError(f"{path}: not a readable Parquet file after row offset {start} ({e})") from None
            chunk = {}
            for c in cols:
                col = batch.column(c)
                if col.null_count:
                    first = int(np.flatnonzero(pc.is_null(col).to_numpy(zero_copy_only=False))[0])
                    raise InputError(f"{path}: column {c!r}, row offset {start + first}: missing value (null)")
                a = col.to_numpy(zero_copy_only=False)
                if a.dtype.kind == "f":
                    bad = np.flatnonzero(np.isnan(a))
                    if bad.shape[0]:
                        raise InputError(f"{path}: column {c!r}, row offset {start + int(bad[0])}: NaN")
                chunk[c] = a
            yield start, chunk
            start += batch.num_rows


def read_stats(path, *, y_col="y", p_col="p", weight_col=None, bins=None, n_jobs=None) -> BucketStats:
    """Bucket table (q_i, n_i, s_i) of the outcomes and predictions in a file.

    ``path`` is a CSV file (a header row, then one row per round), a Parquet file or a
    ``.npz`` archive of named 1-D arrays (chosen by the suffix: ``.parquet``/``.pq``,
    ``.npz``, anything else is read as CSV). The columns ``y_col`` (0/1 outcomes),
    ``p_col`` (probabilities) and optionally ``weight_col`` (sample weights) are read
    CHUNK_ROWS rows at a time; each chunk is reduced with :func:`fastcdl.bucket_stats`
    and the tables are merged with ``+``, which is exact, so memory is O(CHUNK_ROWS + m)
    for a file of any size. Cost O(T log T) for exact buckets, O(T) for ``bins=M``, plus
    parsing (CSV is parsed in Python, roughly 1 s per million rows; Parquet by pyarrow).
    ``bins`` and ``n_jobs`` are as in :func:`fastcdl.bucket_stats`: an integer ``bins``
    is at most 2^24 whatever the size of the chunks (each chunk is binned alike and the
    tables merge), and ``n_jobs`` threads bin each chunk.

    Raises :class:`InputError` (a ValueError) with one line naming the file, and the
    column and row where known, for a missing or unreadable file, missing columns,
    non-numeric cells, NaN or missing values, outcomes other than 0/1, probabilities
    outside [0, 1], negative weights, an empty file, ``bins`` that is not a positive
    integer (at most 2^24) or an array of edges, or a bad ``n_jobs``.

    >>> from fastcdl.io import read_stats
    >>> st = read_stats("examples/forecasts.csv")   # doctest: +SKIP
    >>> st.total, st.n_buckets                       # doctest: +SKIP
    (1095, 21)
    """
    from fastcdl._validate import check_bins, check_n_jobs

    try:
        if bins is not None:
            check_bins(bins)
        check_n_jobs(n_jobs)
    except ValueError as e:
        raise InputError(str(e)) from None
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a file of predictions")
    cols = [y_col, p_col] + ([weight_col] if weight_col else [])
    if len(set(cols)) < len(cols):
        raise InputError(f"the outcome, probability and weight columns must differ, got {cols}")
    total, n_rows = _file_stats(path, _kind(path), cols, bins, n_jobs)
    if total is None:
        if n_rows:
            raise InputError(f"{path}: no rows with positive weight in column {weight_col!r}")
        raise InputError(f"{path}: no rows")
    return total


def _kind(path: Path) -> str:
    """The reader for a file, by its suffix: "parquet", "npz" or (anything else) "csv"."""
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    return "npz" if suffix == ".npz" else "csv"


def _file_stats(path: Path, kind: str, cols: list[str], bins, n_jobs=None):
    """(merged BucketStats of the file's chunks, number of rows read).

    The table is None when no row carries weight (no rows, or all weights zero), so
    callers that merge several files can decide whether that is an error.
    """
    total = None
    n_rows = 0
    if kind == "csv":
        for rows, chunk in _csv_chunks(path, cols):

            def locate(i, rows=rows):
                return f"in rows {rows[0]}..{rows[-1]}" if i is None else f"row {rows[i]}"

            st = _chunk_stats(path, chunk, cols, bins, locate, n_jobs)
            n_rows += len(rows)
            if st is not None:
                total = st if total is None else total + st
        return total, n_rows
    chunks = _npz_chunks(path, cols) if kind == "npz" else _parquet_chunks(path, cols)
    for start, chunk in chunks:
        n = chunk[cols[0]].shape[0]
        if n == 0:
            continue

        def locate(i, start=start, n=n):
            if i is None:
                return f"in the rows at offsets {start}..{start + n - 1}"
            return f"row offset {start + i}"

        st = _chunk_stats(path, chunk, cols, bins, locate, n_jobs)
        n_rows += n
        if st is not None:
            total = st if total is None else total + st
    return total, n_rows
