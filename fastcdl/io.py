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

import contextlib
import csv
import dataclasses
import io
import json
import re
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastcdl._binary_views import top_label
from fastcdl._validate import ROW_SUM_TOL, ValidationError, check_distributions
from fastcdl.stats import BucketStats

__all__ = ["CHUNK_ROWS", "FORMATS", "Columns", "FileStats", "InputError", "detect_format", "read_file",
           "read_stats", "resolve_columns", "supported_formats"]

#: Rows read and reduced at a time (a record batch): memory per reader is O(CHUNK_ROWS + m).
CHUNK_ROWS = 1 << 20

_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"

#: File suffix -> format ("csv", "jsonl", "parquet", ...); compressed text formats add one of
#: COMPRESSIONS.
FORMATS = {
    ".csv": "csv", ".tsv": "csv", ".txt": "csv",
    ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".parquet": "parquet", ".pq": "parquet",
    ".feather": "arrow", ".arrow": "arrow", ".ipc": "arrow",
    ".npz": "npz", ".npy": "npy",
}
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}
# names accepted by fmt= (and the command line's --format)
FORMAT_NAMES = {"csv": "csv", "tsv": "csv", "txt": "csv", "jsonl": "jsonl", "ndjson": "jsonl",
                "parquet": "parquet", "feather": "arrow", "arrow": "arrow", "ipc": "arrow",
                "npz": "npz", "npy": "npy"}
DELIMITERS = {",": ",", "comma": ",", "\t": "\t", "\\t": "\t", "tab": "\t", ";": ";", "semicolon": ";",
              "|": "|", "pipe": "|"}
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})
_KIND_NAMES = {"csv": "CSV", "jsonl": "JSON-lines", "parquet": "Parquet", "arrow": "Feather/Arrow IPC",
               "npz": ".npz", "npy": ".npy"}


class InputError(ValueError):
    """A problem with the user's file or options (the command line exits with status 2).

    A ValueError whose one-line message names the file, and the column and row where known.

    Examples
    --------
    >>> try:
    ...     detect_format("forecasts.xlsx")
    ... except InputError as e:
    ...     print(str(e).split(":")[1])
     unsupported format .xlsx
    """


def supported_formats() -> str:
    """The suffixes read, in words (for messages and --help).

    Returns
    -------
    str

    Examples
    --------
    >>> supported_formats().split(",")[0]
    '.csv'
    """
    return (".csv, .tsv, .txt, .jsonl, .ndjson (each also .gz, .bz2, .zst), .parquet, .pq, "
            ".feather, .arrow, .ipc, .npz, .npy, or - for standard input")


def detect_format(path, fmt=None):
    """The format and compression of a path.

    Parameters
    ----------
    path : str or Path
        The file ("-" is standard input, read as CSV).
    fmt : str, optional
        Overrides the suffix: one of FORMAT_NAMES, optionally with a compression suffix
        ("csv.gz").

    Returns
    -------
    format : str
        "csv", "jsonl", "parquet", "feather", "npz" or "npy".
    compression : str or None
        "gzip", "bz2", "zstd", or None.

    Raises
    ------
    InputError
        For an unsupported suffix or name.

    Examples
    --------
    >>> detect_format("a.csv.gz"), detect_format("b.parquet"), detect_format("-", "jsonl")
    (('csv', 'gzip'), ('parquet', None), ('jsonl', None))
    """
    name = str(path)
    if fmt is not None:
        parts = str(fmt).lower().lstrip(".").split(".")
        comp = COMPRESSIONS.get("." + parts[-1]) if len(parts) > 1 else None
        kind = FORMAT_NAMES.get(parts[0])
        if kind is None or (len(parts) > 1 and comp is None) or len(parts) > 2:
            raise InputError(f"--format {fmt!r} is not one of {', '.join(sorted(FORMAT_NAMES))} "
                             "(optionally with .gz, .bz2 or .zst)")
        if comp and kind not in ("csv", "jsonl"):
            raise InputError(f"--format {fmt!r}: only text formats (csv, jsonl) are read compressed")
        return kind, comp
    if name == "-":
        return "csv", None
    suffixes = [s.lower() for s in Path(name).suffixes]
    comp = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    base = suffixes[-2] if comp and len(suffixes) >= 2 else (suffixes[-1] if suffixes and not comp else None)
    kind = FORMATS.get(base)
    if kind is None or (comp and kind not in ("csv", "jsonl")):
        shown = "".join(suffixes[-2:] if comp else suffixes[-1:]) or "(none)"
        raise InputError(f"{path}: unsupported format {shown}: fastcdl reads {supported_formats()} "
                         "(--format names the format of a file with another name)")
    return kind, comp


# -- what to read -----------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """The columns a file is read with (:func:`resolve_columns`); frozen.

    Attributes
    ----------
    y : str
        The outcome column.
    p : tuple of str
        One probability column (binary) or one per class (labels 0..k-1 in that order).
    weight : str or None
        The weight column.
    multiclass : str or None
        None (binary), "top-label" or "classwise".

    Examples
    --------
    >>> resolve_columns(["y", "p_0", "p_1"], "f.csv").names
    ['y', 'p_0', 'p_1']
    """

    y: str
    p: tuple
    weight: str | None
    multiclass: str | None  # None (binary), "top-label" or "classwise"

    @property
    def names(self) -> list:
        """Every column read, outcome first."""
        return [self.y, *self.p] + ([self.weight] if self.weight else [])


_AUTO_PREFIXES = ("p_", "p", "prob_", "proba_")


def _numbered(names, prefix):
    """Columns prefix0, prefix1, ... (sorted by number); InputError if the numbers have gaps."""
    found = {}
    for n in names:
        rest = n[len(prefix):]
        if n.startswith(prefix) and rest.isdigit():
            found[int(rest)] = n
    if not found:
        return []
    idx = sorted(found)
    if idx != list(range(len(idx))):
        missing = next(i for i in range(len(idx) + 1) if i not in found)
        raise InputError(f"the columns {prefix}0, {prefix}1, ... must be numbered from 0 without gaps: "
                         f"{prefix}{missing} is missing (the file has {[found[i] for i in idx]})")
    return [found[i] for i in idx]


def resolve_columns(names, source, *, y_col="y", p_col=None, p_cols=None, p_prefix=None, weight_col=None,
                    multiclass=None) -> Columns:
    """Which columns of a file to read.

    Parameters
    ----------
    names : list of str
        The file's columns.
    source : str
        Names the file in messages.
    y_col : str, default "y"
        The outcome column.
    p_col : str, optional
        Binary: the probability column (default "p").
    p_cols : list of str or str, optional
        k classes: a list, or a comma-separated string.
    p_prefix : str, optional
        k classes: columns prefix0, prefix1, ... When p_col is not given and the file has no
        column "p", numbered columns p0.. / p_0.. are found by themselves.
    weight_col : str, optional
        The weight column.
    multiclass : {"top-label", "classwise"}, optional
        k classes: the reduction (default "top-label").

    Returns
    -------
    Columns

    Raises
    ------
    InputError
        For missing columns, conflicting options, or numbered columns with gaps.

    Examples
    --------
    >>> resolve_columns(["y", "p_0", "p_1", "p_2"], "f.csv")
    Columns(y='y', p=('p_0', 'p_1', 'p_2'), weight=None, multiclass='top-label')
    """
    names = list(names)
    if isinstance(p_cols, str):
        p_cols = [c.strip() for c in p_cols.split(",") if c.strip()]
    given = [n for n, v in (("p_col", p_col), ("p_cols", p_cols), ("p_prefix", p_prefix)) if v]
    if len(given) > 1:
        raise InputError(f"give one of --p-col, --p-cols and --p-prefix, not {' and '.join(given)}")
    if multiclass is not None and multiclass not in ("top-label", "classwise"):
        raise InputError(f"--multiclass must be top-label or classwise, got {multiclass!r}")
    # what is missing is told at once: the probability columns with the outcome and weight columns
    absent_p = None
    if p_cols:
        classes = list(p_cols)
    elif p_prefix:
        classes = _numbered(names, p_prefix) or None
        if classes is None:
            absent_p = f"{p_prefix}0, {p_prefix}1, ..."
    elif p_col is None and "p" not in names:
        classes = next((c for c in (_numbered(names, pre) for pre in _AUTO_PREFIXES) if len(c) >= 2), None)
        absent_p = "p" if classes is None else None
    else:
        classes = None
    if absent_p is not None:
        missing = [c for c in (y_col, absent_p, weight_col) if c and (c == absent_p or c not in names)]
        raise InputError(_missing_columns(source, missing, names, y_col, weight_col))
    if classes is None:
        if multiclass is not None:
            raise InputError("--multiclass applies to files with one probability column per class "
                             "(--p-cols or --p-prefix)")
        cols = Columns(y_col, (p_col or "p",), weight_col, None)
    else:
        if len(classes) < 2:
            raise InputError(f"one probability column per class needs at least two columns, got {classes}")
        cols = Columns(y_col, tuple(classes), weight_col, multiclass or "top-label")
    wanted = cols.names
    if len(set(wanted)) < len(wanted):
        raise InputError(f"the outcome, probability and weight columns must differ, got {wanted}")
    missing = [c for c in wanted if c not in names]
    if missing:
        raise InputError(_missing_columns(source, missing, names, y_col, weight_col))
    return cols


def _missing_columns(source, missing, names, y_col, weight_col) -> str:
    """One line: every missing column, the columns the file has, and the options that name them."""
    options = []
    for c in missing:
        opt = {y_col: "--y-col", weight_col: "--weight-col"}.get(c, "--p-col (or one column per class: --p-cols, "
                                                                    "--p-prefix)")
        if opt not in options:
            options.append(opt)
    return (f"{source}: missing column(s) {missing}; the file has {_shown(names)} "
            f"(name them with {', '.join(options)})")


def _shown(names, most=20) -> str:
    """A file's column names for a message: all of them, or the first ``most`` and how many more."""
    if len(names) <= most:
        return str(list(names))
    return f"[{', '.join(repr(n) for n in names[:most])}, ... ({len(names)} columns)]"


# -- sources: column names, then chunks of numeric arrays ---------------------------------
#
# A source yields (rows, {column: numpy array}) where rows[i] is the record index of element i
# (0-based, in the file's data rows); source.where(record) says where that is in words.


class _Text:
    """Where a text reader is: a file path (reopened for each pass) or standard input."""

    def __init__(self, path, compression):
        self.path = path
        self.compression = compression
        self.stdin = str(path) == "-"
        self._prefix = b""

    def open(self):
        import pyarrow as pa

        if self.stdin:
            raw = sys.stdin.buffer
            stream = pa.PythonFile(_Prefixed(self._prefix, raw), mode="r")
            if self.compression:
                stream = pa.CompressedInputStream(stream, self.compression)
            return stream
        try:
            return pa.input_stream(str(self.path), compression=self.compression)
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{self.path}: cannot read: {_os_reason(e)}") from None

    def head(self, n=1 << 16) -> bytes:
        """The first bytes (decompressed), up to the end of the first non-blank line."""
        import pyarrow as pa

        if self.stdin and not self.compression:
            data = b""
            raw = sys.stdin.buffer
            while True:
                block = raw.read1(n) if hasattr(raw, "read1") else raw.read(n)
                data += block
                if not block or _first_line_end(data) is not None or len(data) > _HEAD_LIMIT:
                    break
            self._prefix = data
            return data
        if self.stdin:  # compressed standard input: keep the raw bytes read, decompress them
            return self._compressed_stdin_head(n)
        stream = self.open()
        data = b""
        try:
            with stream:
                while True:
                    block = stream.read(n)
                    data += block
                    if not block or _first_line_end(data) is not None or len(data) > _HEAD_LIMIT:
                        break
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{self.path}: not a readable {self.compression}-compressed file ({_os_reason(e)})") from None
        return data


    def _compressed_stdin_head(self, n) -> bytes:
        """The first decompressed bytes of compressed standard input, up to the end of the first
        non-blank line: raw blocks are read (each twice the last) until they decompress that
        far (a bz2 block needs up to 900 kB) or the input ends; the raw bytes are kept."""
        import pyarrow as pa

        raw = b""
        while True:
            block = sys.stdin.buffer.read(n)
            raw += block
            self._prefix = raw
            data, error = b"", None
            stream = pa.CompressedInputStream(pa.BufferReader(raw), self.compression)
            try:
                while _first_line_end(data) is None and (chunk := stream.read(1 << 16)):
                    data += chunk
            except (OSError, pa.ArrowException) as e:  # not enough input yet, or not this format
                error = e
            if _first_line_end(data) is not None or len(data) > _HEAD_LIMIT:
                return data
            if not block:
                if error is not None:
                    raise InputError(f"standard input: not a readable {self.compression}-compressed file "
                                     f"({_os_reason(error)})") from None
                return data
            n *= 2


class _Prefixed(io.RawIOBase):
    """Bytes already read from a stream, then the rest of the stream."""

    def __init__(self, prefix: bytes, rest):
        self._prefix = prefix
        self._rest = rest

    def readable(self):
        return True

    def readinto(self, b):
        if self._prefix:
            n = min(len(b), len(self._prefix))
            b[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._rest.read(len(b))
        b[: len(data)] = data
        return len(data)


# the most bytes read to find the header line (a longer first line is not a header)
_HEAD_LIMIT = 1 << 24


def _first_line_end(data: bytes):
    """Index of the end of the first non-blank line, or None when it is not complete yet."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return None
        if data[start:end].strip():
            return end
        start = end + 1


def _os_reason(e) -> str:
    reason = getattr(e, "strerror", None) or str(e)
    return " ".join(reason.split())


@contextlib.contextmanager
def writing_to(path):
    """Re-raise an OSError that names no file as one naming ``path``: a failed write says
    "File too large" or "No space left on device" without the file, open() names it."""
    try:
        yield
    except OSError as e:
        if e.filename is None and e.errno is not None:
            raise OSError(e.errno, e.strerror, str(path)) from e
        raise


def _first_text_line(head: bytes, source):
    """(the first non-blank line of a text file's first bytes, the number of lines up to it);
    InputError for an empty file, bytes that are not UTF-8 text, or a first line that is not
    the start of a text file (NUL bytes, or longer than _HEAD_LIMIT)."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not just a character cut at the end of the sample
            raise InputError(f"{source}: not a readable text file (not UTF-8: byte {e.start} is "
                             f"{head[e.start:e.start + 1]!r}; binary files need their own suffix: "
                             f"{supported_formats()})") from None
        text = head[: e.start].decode("utf-8")
    lines = text.split("\n")
    at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if at is None:
        raise InputError(f"{source}: the file is empty")
    line = lines[at].rstrip("\r")
    if "\x00" in line:  # a binary file, or a sparse one (all zero bytes)
        raise InputError(f"{source}: not a readable text file: its first line holds NUL bytes (binary files need "
                         f"their own suffix: {supported_formats()})")
    if at == len(lines) - 1 and len(head) > _HEAD_LIMIT:
        raise InputError(f"{source}: the first line is longer than {_HEAD_LIMIT >> 20} MiB: not the start of a "
                         "text file of predictions")
    return line, at + 1


def _sniff(head: bytes, source, delimiter=None):
    """(header names stripped, delimiter, lines up to the header) from a text file's first bytes."""
    line, skip = _first_text_line(head, source)
    if delimiter is None:
        counts = {d: _count_outside_quotes(line, d) for d in (",", "\t", ";", "|")}
        delimiter = max(counts, key=lambda d: counts[d]) if max(counts.values()) > 0 else ","
    try:
        names = [h.strip() for h in next(csv.reader([line], delimiter=delimiter))]
    except csv.Error:  # a field longer than csv.field_size_limit() (131,072 characters)
        raise InputError(f"{source}: the header line holds a field of more than {csv.field_size_limit()} "
                         f"characters with delimiter {delimiter!r}: not a header of column names (is the "
                         "delimiter another one? --delimiter names it)") from None
    return names, delimiter, skip


def _count_outside_quotes(line: str, d: str) -> int:
    n, quoted = 0, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == d and not quoted:
            n += 1
    return n


# -- text cells to numbers ------------------------------------------------------------------


# a number as text: the digits after the point and the exponent say where its last digit is
_NUMBER_DIGITS = r"^\s*[+-]?\d*(?:\.(?P<frac>\d*))?(?:[eE]\+?(?P<exp>-?\d+))?\s*$"
_PRINTED = "printed"  # arrays[(_PRINTED, column)]: a chunk's cells of a class column as printed


def printed_half_units(cells) -> np.ndarray:
    """Half a unit in the last printed digit of each number (pyarrow strings): the most that
    rounding to the printed digits moved it. "0.123456" -> 5e-7, "0.5" -> 0.05, "1.5e-07" ->
    5e-9. A whole number written without a point or an exponent ("0", "1") is exact: 0. So is
    anything that is not a plain decimal number (NaN and the like are refused elsewhere).

    >>> import pyarrow as pa
    >>> printed_half_units(pa.array(["0.123456", "0.5", "1", "1.5e-07"])).tolist()
    [5e-07, 0.05, 0.0, 5e-09]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = pc.extract_regex(cells, _NUMBER_DIGITS)
    decimals = pc.utf8_length(parts.field("frac")).fill_null(0).to_numpy(zero_copy_only=False)
    exp = parts.field("exp").fill_null("")
    has_exp = pc.not_equal(exp, "").to_numpy(zero_copy_only=False)
    exp = pc.cast(pc.if_else(pc.equal(exp, ""), "0", exp), pa.int64()).to_numpy(zero_copy_only=False)
    half = 0.5 * 10.0 ** (exp - decimals.astype(np.float64))
    return np.where(((decimals == 0) & ~has_exp) | ~parts.is_valid().to_numpy(zero_copy_only=False), 0.0, half)


def _first_failing(arr, convert):
    """Index of the first element of a pyarrow array that ``convert`` refuses (bisection)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            convert(arr.slice(lo, mid - lo))
            lo = mid
        except Exception:  # noqa: BLE001 - pyarrow's conversion errors
            hi = mid
    return lo


def _to_float(arr):
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(arr, pa.float64())
    except pa.ArrowInvalid:
        return pc.cast(pc.utf8_trim_whitespace(arr), pa.float64())  # " 0.5 " as pandas reads it


def _to_outcome(arr):
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(arr, pa.float64())
    except pa.ArrowInvalid:
        t = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
        t = pc.if_else(pc.equal(t, "true"), "1", pc.if_else(pc.equal(t, "false"), "0", t))
        return pc.cast(t, pa.float64())


def _text_column(arr, col, kind, source, rows, where, delimiter):
    """float64 numpy array of a column of text cells; InputError naming the first bad cell."""
    import pyarrow as pa

    convert = _to_outcome if kind == "outcome" else _to_float
    try:
        out = convert(arr)
    except pa.ArrowInvalid:
        pass
    else:
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        if out.null_count == 0 and out.type == pa.float64():
            # read from the data buffer: pyarrow's to_numpy goes through its pandas shim, which
            # imports pandas whenever it is installed
            data = np.frombuffer(out.buffers()[1], dtype=np.float64, count=out.offset + len(out))
            return data[out.offset:].copy()
        return out.to_numpy(zero_copy_only=False)
    i = _first_failing(arr, convert)
    text = arr[i].as_py()
    if not text.strip():
        what = "empty cell"
    elif kind == "outcome":
        what = f"not 0, 1, true or false: {text!r}"
    else:
        what = f"not a number: {text!r}"
        if delimiter == ";" and "," in text:
            what += " (decimal commas are not read: write 0.5, not 0,5)"
    raise _CellError(i, f"{source}: column {col!r}, {where(rows[i])}: {what}")


class _CellError(Exception):
    """A cell that is not a number: its index in the batch and the message naming it."""

    def __init__(self, index, message):
        super().__init__(message)
        self.index = index


def _missing_mask(arr):
    """True where a text cell is empty, NA, N/A, NaN, null or None (any case, spaces around)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
    return pc.is_in(t, value_set=pa.array(sorted(MISSING))).to_numpy(zero_copy_only=False)


class _CSVSource:
    kind = "csv"

    def __init__(self, path, compression, delimiter=None):
        self.text = _Text(path, compression)
        self.path = "standard input" if self.text.stdin else path
        head = self.text.head()
        if not head.strip(b"\xef\xbb\xbf \t\r\n"):
            raise InputError(f"{self.path}: the file is empty")
        self.names, self.delimiter, self.skip = _sniff(head, self.path, delimiter)
        dup = sorted({n for n in self.names if self.names.count(n) > 1})
        if dup:
            raise InputError(f"{self.path}: the header names column(s) {dup} more than once")

    def where(self, record) -> str:
        return _row_and_line(record, self._line(record))

    def _line(self, record):
        """The line of the file where data row ``record`` (0-based) starts, counting blank lines
        and line breaks inside quoted cells as pyarrow reads them; None for standard input, whose
        lines are gone. Read again for a message, so it costs nothing until something is wrong."""
        if self.text.stdin:
            return None
        try:
            with self.text.open() as stream:
                lines = _text_lines(stream)
                for _ in range(self.skip):
                    next(lines, None)
                reader = csv.reader(lines, delimiter=self.delimiter)
                n, before = -1, 0
                for row in reader:
                    if row:  # a blank line is no row
                        n += 1
                        if n == record:
                            return self.skip + before + 1
                    before = reader.line_num
        except (csv.Error, OSError, UnicodeDecodeError, InputError):
            return None
        return None

    def chunks(self, cols: Columns, skip_missing):
        import pyarrow as pa
        import pyarrow.csv as pcsv

        bad_rows = []

        def on_invalid(row):
            bad_rows.append(row)
            return "error"

        kinds = {c: "outcome" if (c == cols.y and cols.multiclass is None) else "number" for c in cols.names}
        stream = self.text.open()
        try:
            reader = pcsv.open_csv(
                stream,
                read_options=pcsv.ReadOptions(column_names=self.names, skip_rows=self.skip,
                                              block_size=1 << 22, use_threads=False),
                parse_options=pcsv.ParseOptions(delimiter=self.delimiter, invalid_row_handler=on_invalid),
                convert_options=pcsv.ConvertOptions(
                    include_columns=cols.names, column_types={c: pa.string() for c in cols.names},
                    strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[],
                ),
            )
        except (pa.ArrowInvalid, OSError) as e:  # OSError: a truncated or corrupt compressed stream
            stream.close()
            if bad_rows:
                raise InputError(f"{self.path}: {self._bad_row(bad_rows[0])}") from None
            what = f"{self.text.compression}-compressed " if self.text.compression else ""
            raise InputError(f"{self.path}: not a readable {what}CSV file ({_os_reason(e)})") from None
        start = 0
        with stream:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except (pa.ArrowInvalid, OSError) as e:
                    if bad_rows:
                        raise InputError(f"{self.path}: {self._bad_row(bad_rows[0])}") from None
                    what = f"{self.text.compression}-compressed " if self.text.compression else ""
                    raise InputError(f"{self.path}: not a readable {what}CSV file after its first {start} rows "
                                     f"({_os_reason(e)})") from None
                n = batch.num_rows
                rows = np.arange(start, start + n, dtype=np.int64)
                start += n
                if n == 0:
                    continue
                if skip_missing:
                    miss = np.zeros(n, dtype=bool)
                    for c in cols.names:
                        miss |= _missing_mask(batch.column(c))
                    if miss.any():
                        keep = ~miss
                        batch = batch.filter(pa.array(keep))
                        yield rows[miss], None  # skipped rows, counted by the reader
                        rows = rows[keep]
                        if rows.shape[0] == 0:
                            continue
                arrays, bad = {}, []
                for c in cols.names:
                    try:
                        arrays[c] = _text_column(batch.column(c), c, kinds[c], self.path, rows, self.where,
                                                 self.delimiter)
                    except _CellError as e:
                        bad.append(e)
                if bad:  # the first bad row, whichever column it is in
                    raise InputError(str(min(bad, key=lambda e: e.index))) from None
                if cols.multiclass:  # the cells as printed, for rows that need their digits (_Reducer)
                    arrays.update({(_PRINTED, c): batch.column(c) for c in cols.p})
                yield rows, arrays

    def printed(self, rows, arrays, at, columns):
        """The cells of ``columns`` at positions ``at`` of a chunk, as printed (pyarrow strings)."""
        return [arrays[(_PRINTED, c)].take(at) for c in columns]

    def _bad_row(self, row):
        fields = row.actual_columns
        # pyarrow counts the rows it skipped (the header and the lines before it) from 1
        where = self.where(row.number - self.skip - 1) if row.number is not None else "a row"
        return (f"{where} has {fields} field{'s' * (fields != 1)}, the header has {row.expected_columns} "
                f"(delimiter {self.delimiter!r}): {row.text[:60]!r}")


class _JSONSource:
    kind = "jsonl"

    def __init__(self, path, compression):
        self.text = _Text(path, compression)
        self.path = "standard input" if self.text.stdin else path
        head = self.text.head()
        if not head.strip(b"\xef\xbb\xbf \t\r\n"):
            raise InputError(f"{self.path}: the file is empty")
        _first_text_line(head, self.path)
        self._reader, self._stream, self._first = self._open()
        self._cursor, self._cursor_next = None, 0  # a second reading of the lines, for printed()
        self.names = self._reader.schema.names

    def _open(self):
        import pyarrow as pa
        import pyarrow.json as pj

        stream = self.text.open()
        try:
            if hasattr(pj, "open_json"):  # pyarrow >= 20: streaming
                reader = pj.open_json(stream, read_options=pj.ReadOptions(block_size=1 << 22))
            else:  # older pyarrow reads the whole file, then hands out its batches
                reader = pa.RecordBatchReader.from_batches(
                    *(lambda t: (t.schema, t.to_batches(max_chunksize=CHUNK_ROWS)))(pj.read_json(stream)))
        except (pa.ArrowInvalid, OSError) as e:  # OSError: a truncated or corrupt compressed stream
            stream.close()
            what = f"{self.text.compression}-compressed " if self.text.compression else ""
            raise InputError(f"{self.path}: not a readable {what}JSON-lines file ({_json_reason(e, 0, self.where)})") from None
        return reader, stream, True

    def where(self, record) -> str:
        return _row_and_line(record, self._line(record))

    def printed(self, rows, arrays, at, columns):
        """The values of ``columns`` at positions ``at`` of a chunk as printed in the file (pyarrow
        strings; pyarrow's reader keeps only their float64 values), read again from the file's
        lines; None for standard input, which cannot be read again."""
        import pyarrow as pa

        if self.text.stdin:
            return None
        texts = [[] for _ in columns]
        for line in self._lines_of(rows[at]):
            values = json.loads(line, parse_float=str, parse_int=str)
            for out, c in zip(texts, columns):
                out.append(str(values.get(c, "")))
        return [pa.array(t, pa.string()) for t in texts]

    def _lines_of(self, records):
        """The lines of objects ``records`` (increasing), from a second reading of the file that
        moves forward across chunks (chunks come in order), started again when asked to go back."""
        if self._cursor is None or records[0] < self._cursor_next:
            self._cursor, self._cursor_next = self._nonblank_lines(), 0
        for r in records:
            while True:
                line = next(self._cursor)
                self._cursor_next += 1
                if self._cursor_next > r:
                    break
            yield line

    def _nonblank_lines(self):
        with self.text.open() as stream:
            for line in _text_lines(stream):
                if line.strip():
                    yield line

    def _line(self, record):
        """The line of the file holding object ``record`` (0-based), blank lines counted; None for
        standard input (module docstring)."""
        if self.text.stdin:
            return None
        try:
            with self.text.open() as stream:
                n = -1
                for number, line in enumerate(_text_lines(stream), 1):
                    if line.strip():
                        n += 1
                        if n == record:
                            return number
        except (OSError, UnicodeDecodeError, InputError):
            return None
        return None

    def chunks(self, cols: Columns, skip_missing):
        import pyarrow as pa

        reader, stream = self._reader, self._stream
        start = 0
        with stream:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except (pa.ArrowInvalid, OSError) as e:
                    raise InputError(f"{self.path}: not a readable JSON-lines file "
                                     f"({_json_reason(e, start, self.where)})") from None
                n = batch.num_rows
                rows = np.arange(start, start + n, dtype=np.int64)
                start += n
                yield from _typed_batch(self, batch, cols, rows, skip_missing)


def _json_reason(e, start, where):
    text = _os_reason(e)
    m = re.search(r" in row (\d+)$", text)
    if m:  # pyarrow counts rows within the block being read, from 0
        text = text[: m.start()] + f" at {where(start + int(m.group(1)))}"
    return text


def _row_and_line(record, line) -> str:
    """Where a data row of a text file is: "row 4 (0-based), line 6" (line None: unknown)."""
    return f"row {record} (0-based)" + (f", line {line}" if line is not None else "")


def _text_lines(stream):
    """The lines of a pyarrow input stream of UTF-8 text (a BOM dropped), as csv reads them."""
    return io.TextIOWrapper(io.BufferedReader(_Prefixed(b"", stream)), encoding="utf-8-sig", newline="")


def _typed_batch(source, batch, cols: Columns, rows, skip_missing):
    """Numeric numpy arrays of a pyarrow record batch (Parquet, Feather, JSON lines).

    Yields (skipped rows, None) and (rows, arrays) as the text reader does; InputError for a
    column that is not numeric or boolean, or a null value (unless skipped).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    if n == 0:
        return
    miss = np.zeros(n, dtype=bool)
    for c in cols.names:
        col = batch.column(c)
        t = col.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_null(t)):
            raise InputError(f"{source.path}: column {c!r} has type {t}, not a number")
        if col.null_count:
            nulls = pc.is_null(col).to_numpy(zero_copy_only=False)
            if not skip_missing:
                first = int(np.flatnonzero(nulls)[0])
                raise InputError(f"{source.path}: column {c!r}, {source.where(rows[first])}: missing value (null)")
            miss |= nulls
        if skip_missing and pa.types.is_floating(t):
            miss |= pc.fill_null(pc.is_nan(col), False).to_numpy(zero_copy_only=False)
    if miss.any():
        yield rows[miss], None
        keep = ~miss
        batch = batch.filter(pa.array(keep))
        rows = rows[keep]
        if rows.shape[0] == 0:
            return
    yield rows, {c: batch.column(c).to_numpy(zero_copy_only=False) for c in cols.names}


class _ParquetSource:
    kind = "parquet"

    def __init__(self, path):
        import pyarrow.parquet as pq

        self.path = path
        _check_file(path)
        try:
            self.file = pq.ParquetFile(path)
        except Exception as e:  # pyarrow raises several types for unreadable files
            raise InputError(f"{path}: not a readable Parquet file ({_os_reason(e)})") from None
        self.names = self.file.schema_arrow.names

    def where(self, record) -> str:
        return f"row {record} (0-based)"

    def chunks(self, cols: Columns, skip_missing):
        start = 0
        with self.file:
            batches = self.file.iter_batches(batch_size=CHUNK_ROWS, columns=cols.names)
            while True:
                try:
                    batch = next(batches)
                except StopIteration:
                    return
                except Exception as e:  # a corrupt page surfaces here, mid-file
                    raise InputError(f"{self.path}: not a readable Parquet file after its first {start} rows "
                                     f"({_os_reason(e)})") from None
                rows = np.arange(start, start + batch.num_rows, dtype=np.int64)
                start += batch.num_rows
                yield from _typed_batch(self, batch, cols, rows, skip_missing)


class _ArrowSource:
    kind = "arrow"

    def __init__(self, path):
        import pyarrow as pa

        self.path = path
        _check_file(path)
        try:
            self.reader = pa.ipc.open_file(pa.memory_map(str(path), "r"))
            self.stream = False
        except (pa.ArrowInvalid, OSError):
            try:
                self.reader = pa.ipc.open_stream(pa.OSFile(str(path), "rb"))
                self.stream = True
            except (pa.ArrowInvalid, OSError) as e:
                raise InputError(f"{path}: not a readable Feather (v2) or Arrow IPC file ({_os_reason(e)})") from None
        self.names = self.reader.schema.names

    def where(self, record) -> str:
        return f"row {record} (0-based)"

    def _batches(self):
        if self.stream:
            yield from self.reader
        else:
            for i in range(self.reader.num_record_batches):
                yield self.reader.get_batch(i)

    def chunks(self, cols: Columns, skip_missing):
        import pyarrow as pa

        start = 0
        batches = self._batches()
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            except (pa.ArrowInvalid, OSError) as e:
                raise InputError(f"{self.path}: not a readable Arrow IPC file after its first {start} rows "
                                 f"({_os_reason(e)})") from None
            batch = batch.select(cols.names)
            for lo in range(0, batch.num_rows, CHUNK_ROWS):
                part = batch.slice(lo, CHUNK_ROWS)
                rows = np.arange(start, start + part.num_rows, dtype=np.int64)
                start += part.num_rows
                yield from _typed_batch(self, part, cols, rows, skip_missing)


def _check_file(path):
    if not path.exists():
        raise InputError(f"{path}: cannot read: No such file or directory")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")


def _numpy_arrays(source, arrays: dict, cols: Columns, skip_missing):
    """Chunks of CHUNK_ROWS of named 1-D numpy arrays (.npz, .npy)."""
    lengths = {c: arrays[c].shape[0] for c in cols.names}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{source.path}: arrays have different lengths {lengths}")
    n = lengths[cols.y]
    for start in range(0, n, CHUNK_ROWS):
        rows = np.arange(start, min(n, start + CHUNK_ROWS), dtype=np.int64)
        chunk = {c: np.asarray(arrays[c][start : start + CHUNK_ROWS]) for c in cols.names}
        if skip_missing:
            miss = np.zeros(rows.shape[0], dtype=bool)
            for a in chunk.values():
                if a.dtype.kind == "f":
                    miss |= np.isnan(a)
            if miss.any():
                yield rows[miss], None
                rows = rows[~miss]
                chunk = {c: a[~miss] for c, a in chunk.items()}
        if rows.shape[0]:
            yield rows, chunk


class _NpySource:
    kind = "npy"

    def __init__(self, path):
        self.path = path
        _check_file(path)
        with path.open("rb") as fh:
            magic = fh.read(6)
        if magic != _NPY_MAGIC:
            raise InputError(f"{path}: not a .npy file (no numpy header)")
        try:
            self.array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            raise InputError(f"{path}: not a readable .npy file ({_os_reason(e)})") from None
        if self.array.dtype.names is None:
            raise InputError(
                f"{path}: a .npy file must hold a structured array with named fields (y, p, ...); this one "
                f"holds a plain {self.array.dtype} array of shape {self.array.shape}, whose columns have no "
                "names. Save named columns with np.savez(path, y=y, p=p) or a structured array")
        if self.array.ndim != 1:
            raise InputError(f"{path}: the structured array must be 1-D, got shape {self.array.shape}")
        self.names = list(self.array.dtype.names)

    def where(self, record) -> str:
        return f"row {record} (0-based)"

    def chunks(self, cols: Columns, skip_missing):
        for c in cols.names:
            if self.array.dtype[c].kind not in "biuf" or self.array.dtype[c].shape:
                raise InputError(f"{self.path}: field {c!r} must be numeric, got dtype {self.array.dtype[c]}")
        yield from _numpy_arrays(self, {c: self.array[c] for c in cols.names}, cols, skip_missing)


class _NpzSource:
    kind = "npz"

    def __init__(self, path):
        self.path = path
        self.names = None

    def where(self, record) -> str:
        return f"row {record} (0-based)"

    def chunks(self, cols: Columns, skip_missing):
        arrays = self.arrays
        for c in cols.names:
            a = arrays[c]
            if a.ndim != 1:
                raise InputError(f"{self.path}: array {c!r} must be 1-D, got shape {a.shape}")
            if a.dtype.kind not in "biuf":
                raise InputError(f"{self.path}: array {c!r} must be numeric, got dtype {a.dtype}")
        yield from _numpy_arrays(self, arrays, cols, skip_missing)

    def load(self):
        """Read the archive (a zip of arrays: loaded whole, each array read once)."""
        self.arrays = _load_npz(self.path)
        self.names = list(self.arrays)


def _load_npz(path: Path) -> dict:
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
            arrays = {}
            for c in data.files:
                try:
                    arrays[c] = data[c]
                except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
                    raise InputError(f"{path}: array {c!r} is not readable ({e})") from None
    return arrays


def open_source(path, fmt=None, delimiter=None):
    """The reader of a file (or "-", standard input), by its format (see :func:`detect_format`)."""
    kind, comp = detect_format(path, fmt)
    if str(path) != "-":
        path = Path(path)
        if path.is_dir():
            raise InputError(f"{path}: is a folder, not a file of predictions")
        if not path.exists():
            raise InputError(f"{path}: cannot read: No such file or directory")
    if delimiter is not None:
        if kind != "csv":
            raise InputError(f"--delimiter applies to delimited text files, not to {_KIND_NAMES[kind]} files")
        if delimiter not in DELIMITERS and len(delimiter) != 1:
            raise InputError(f"--delimiter must be one character or tab, comma, semicolon, pipe; got {delimiter!r}")
        delimiter = DELIMITERS.get(delimiter, delimiter)
    if kind in ("csv", "jsonl"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError("reading text files needs pyarrow (a dependency of fastcdl, missing here): pip install pyarrow") from None
        return _CSVSource(path, comp, delimiter) if kind == "csv" else _JSONSource(path, comp)
    if str(path) == "-":
        raise InputError(f"standard input is read as CSV or JSON lines (--format csv or jsonl), not as "
                         f"{_KIND_NAMES[kind]}: pass the file's path")
    if kind in ("parquet", "arrow"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(f"reading {_KIND_NAMES[kind]} needs pyarrow (a dependency of fastcdl, missing here): pip install pyarrow") from None
        return _ParquetSource(path) if kind == "parquet" else _ArrowSource(path)
    if kind == "npy":
        return _NpySource(path)
    src = _NpzSource(path)
    src.load()
    return src


# -- reducing chunks into tables --------------------------------------------------------------


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
                hint = ("; JSON lines on standard input cannot be read again for the digits they were printed "
                        "with: pass the file's path" if self.digits_unread else
                        "; normalise the rows if they are meant to sum to 1")
                raise InputError(f"{path}: {e.describe(subject, where=self.source.where(rows[i]))}{hint}") from None
            raise InputError(f"{path}: {e.describe(f'column {col!r}', where=self.source.where(rows[i]))}") from None
        span = f" (in rows {rows[0]}..{rows[-1]}, 0-based)" if rows.shape[0] else ""
        raise InputError(f"{path}: {e}{span}") from None

    def add(self, rows, arrays):
        from fastcdl import metrics

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
                    metrics.bucket_stats(yy, pp, bins=self.bins, n_jobs=self.n_jobs)
                    tables.append(None)
                else:
                    tables.append(metrics.bucket_stats(yy, pp, bins=self.bins, sample_weight=w, n_jobs=self.n_jobs))
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
        return [None if not stack else stack[0] if len(stack) == 1 else _merge_exact(stack)
                for stack in self.stacks]

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
        return FileStats(stats, per_class, cols, self.n_rows, self.skipped, self.integer_weights, rows,
                         self.printed_slack, self.rows_over)


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


def read_file(path, *, y_col="y", p_col=None, p_cols=None, p_prefix=None, multiclass=None, weight_col=None,
              bins=None, strategy="uniform", n_jobs=None, fmt=None, delimiter=None, skip_missing=False,
              max_rows=1000) -> FileStats:
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
    source = open_source(path, fmt, delimiter)
    cols = resolve_columns(source.names, source.path, y_col=y_col, p_col=p_col, p_cols=p_cols, p_prefix=p_prefix,
                           weight_col=weight_col, multiclass=multiclass)
    reducer = _Reducer(source, cols, chunk_bins, n_jobs, max_rows)
    _rechunk(source.chunks(cols, skip_missing), reducer)
    fs = reducer.result()
    if not rebin:
        return fs
    return dataclasses.replace(
        fs, stats=None if fs.stats is None else fs.stats.rebin(bins, strategy=strategy),
        per_class=None if fs.per_class is None else tuple(t.rebin(bins, strategy=strategy) for t in fs.per_class),
    )


def read_stats(path, *, y_col="y", p_col="p", weight_col=None, bins=None, strategy="uniform", n_jobs=None,
               **options) -> BucketStats:
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
    return read_file(path, y_col=y_col, p_col=p_col, weight_col=weight_col, bins=bins, strategy=strategy,
                     n_jobs=n_jobs, **options).stats


def _file_stats(path: Path, kind: str, cols: list[str], bins, n_jobs=None):
    """(merged BucketStats of a file's chunks, number of rows read), for fastcdl.dask.

    ``cols`` is [y, p] or [y, p, weight]. The table is None when no row carries weight (no
    rows, or all weights zero), so callers that merge several files can decide whether that
    is an error.
    """
    source = open_source(path, kind)
    missing = [c for c in cols if c not in source.names]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing}; the file has {_shown(source.names)}")
    columns = Columns(cols[0], (cols[1],), cols[2] if len(cols) > 2 else None, None)
    reducer = _Reducer(source, columns, bins, n_jobs, 0)
    _rechunk(source.chunks(columns, False), reducer)
    return reducer.totals()[0], reducer.n_rows
