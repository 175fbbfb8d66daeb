"""Sources: a file's column names, then its rows in chunks of numeric arrays.

One class per format (delimited text and JSON lines through pyarrow's streaming readers,
Parquet, Feather/Arrow IPC, .npy, .npz); open_source picks it. A source never builds a table:
fastcdl.io reduces the chunks.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np

from fastcdl._files.columns import Columns
from fastcdl._files.formats import (
    KIND_NAMES,
    NPY_MAGIC,
    ZIP_MAGIC,
    DELIMITERS,
    InputError,
    detect_format,
    supported_formats,
)
from fastcdl._files.cells import PRINTED, CellError, missing_mask, text_column

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
            raise InputError(
                f"{self.path}: not a readable {self.compression}-compressed file ({_os_reason(e)})"
            ) from None
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
                    raise InputError(
                        f"standard input: not a readable {self.compression}-compressed file ({_os_reason(error)})"
                    ) from None
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
            raise InputError(
                f"{source}: not a readable text file (not UTF-8: byte {e.start} is "
                f"{head[e.start : e.start + 1]!r}; binary files need their own suffix: "
                f"{supported_formats()})"
            ) from None
        text = head[: e.start].decode("utf-8")
    lines = text.split("\n")
    at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if at is None:
        raise InputError(f"{source}: the file is empty")
    line = lines[at].rstrip("\r")
    if "\x00" in line:  # a binary file, or a sparse one (all zero bytes)
        raise InputError(
            f"{source}: not a readable text file: its first line holds NUL bytes (binary files need "
            f"their own suffix: {supported_formats()})"
        )
    if at == len(lines) - 1 and len(head) > _HEAD_LIMIT:
        raise InputError(
            f"{source}: the first line is longer than {_HEAD_LIMIT >> 20} MiB: not the start of a "
            "text file of predictions"
        )
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
        raise InputError(
            f"{source}: the header line holds a field of more than {csv.field_size_limit()} "
            f"characters with delimiter {delimiter!r}: not a header of column names (is the "
            "delimiter another one? --delimiter names it)"
        ) from None
    return names, delimiter, skip


def _count_outside_quotes(line: str, d: str) -> int:
    n, quoted = 0, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == d and not quoted:
            n += 1
    return n


# The bytes of text pyarrow's CSV reader parses at a time (a batch of rows).
BLOCK_BYTES = 1 << 22


class _CSVSource:
    kind = "csv"

    def __init__(self, path, compression, delimiter, chunk_rows):
        self.chunk_rows = chunk_rows
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
        done = 0
        if not (skip_missing or cols.multiclass is not None or self.text.stdin):
            # numbers read as numbers: pyarrow's reader parses the cells as its cast of text does
            # (the same accepted cells, the same values); at the first batch it does not take (a
            # bad cell, a true/false outcome, a malformed row) the text reader goes on from the
            # first row not yet given, and its messages name the cell
            read_all = []
            for rows, arrays in self._typed_chunks(cols, read_all):
                yield rows, arrays
                done = int(rows[-1]) + 1
            if read_all:
                return
        yield from self._text_chunks(cols, skip_missing, done)

    def _typed_chunks(self, cols, read_all):
        """The chunks read with every column as float64, until the end (then ``read_all`` gets
        an item) or the first batch pyarrow does not convert (then nothing more: the caller
        reads on as text). The file is opened again for the text reader, so standard input
        never comes here."""
        import pyarrow as pa

        try:
            stream, reader = self._open_reader(cols, [], typed=True)
        except (InputError, pa.ArrowInvalid, OSError):
            return
        start = 0
        with stream:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    read_all.append(True)
                    return
                except (pa.ArrowInvalid, OSError):
                    return
                n = batch.num_rows
                if n == 0:
                    continue
                rows = np.arange(start, start + n, dtype=np.int64)
                start += n
                arrays = {}
                for c in cols.names:
                    col = batch.column(c)
                    if col.null_count or col.type != pa.float64():
                        return  # (never: no cell is null with null_values=[])
                    # the data buffer read directly (to_numpy would import pandas when installed)
                    data = np.frombuffer(col.buffers()[1], dtype=np.float64, count=col.offset + len(col))
                    arrays[c] = data[col.offset :].copy()
                yield rows, arrays

    def _text_chunks(self, cols: Columns, skip_missing, done=0):
        """The chunks read as text cells, each parsed strictly (text_column), from data row
        ``done`` on (the rows before were given already)."""
        bad_rows = []  # pyarrow's invalid rows (a wrong number of fields), for the message
        kinds = {c: "outcome" if (c == cols.y and cols.multiclass is None) else "number" for c in cols.names}
        stream, reader = self._open_reader(cols, bad_rows)
        start = 0
        with stream:
            while True:
                batch = self._next_batch(reader, bad_rows, start)
                if batch is None:
                    return
                n = batch.num_rows
                rows = np.arange(start, start + n, dtype=np.int64)
                start += n
                if start <= done:
                    continue
                if rows[0] < done:  # the part of the batch not given yet
                    batch, rows = batch.slice(done - int(rows[0])), rows[done - int(rows[0]) :]
                    n = batch.num_rows
                if n == 0:
                    continue
                if skip_missing:
                    batch, rows, skipped = _drop_missing(batch, rows, cols)
                    if skipped is not None:
                        yield skipped, None  # skipped rows, counted by the reader
                    if rows.shape[0] == 0:
                        continue
                yield rows, self._arrays(batch, cols, kinds, rows)

    def _open_reader(self, cols, bad_rows, typed=False):
        """(stream, pyarrow's streaming CSV reader) of the columns read, every cell as text (or,
        ``typed``, as float64)."""
        import pyarrow as pa
        import pyarrow.csv as pcsv

        def on_invalid(row):
            bad_rows.append(row)
            return "error"

        stream = self.text.open()
        try:
            reader = pcsv.open_csv(
                stream,
                read_options=pcsv.ReadOptions(
                    column_names=self.names, skip_rows=self.skip, block_size=BLOCK_BYTES, use_threads=False
                ),
                parse_options=pcsv.ParseOptions(delimiter=self.delimiter, invalid_row_handler=on_invalid),
                convert_options=pcsv.ConvertOptions(
                    include_columns=cols.names,
                    column_types={c: pa.float64() if typed else pa.string() for c in cols.names},
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                    null_values=[],
                ),
            )
        except (pa.ArrowInvalid, OSError) as e:  # OSError: a truncated or corrupt compressed stream
            stream.close()
            if bad_rows:
                raise InputError(f"{self.path}: {self._bad_row(bad_rows[0])}") from None
            what = f"{self.text.compression}-compressed " if self.text.compression else ""
            raise InputError(f"{self.path}: not a readable {what}CSV file ({_os_reason(e)})") from None
        return stream, reader

    def _next_batch(self, reader, bad_rows, start):
        """The next record batch, or None at the end; a malformed row is an InputError."""
        import pyarrow as pa

        try:
            return reader.read_next_batch()
        except StopIteration:
            return None
        except (pa.ArrowInvalid, OSError) as e:
            if bad_rows:
                raise InputError(f"{self.path}: {self._bad_row(bad_rows[0])}") from None
            what = f"{self.text.compression}-compressed " if self.text.compression else ""
            raise InputError(
                f"{self.path}: not a readable {what}CSV file after its first {start} rows ({_os_reason(e)})"
            ) from None

    def _arrays(self, batch, cols, kinds, rows):
        """{column: parsed values} of a batch (the first bad cell of any column is an InputError);
        k classes also keep the cells as printed (_Reducer reads their digits)."""
        arrays, bad = {}, []
        for c in cols.names:
            try:
                arrays[c] = text_column(batch.column(c), c, kinds[c], self.path, rows, self.where, self.delimiter)
            except CellError as e:
                bad.append(e)
        if bad:  # the first bad row, whichever column it is in
            raise InputError(str(min(bad, key=lambda e: e.index))) from None
        if cols.multiclass:
            arrays.update({(PRINTED, c): batch.column(c) for c in cols.p})
        return arrays

    def printed(self, rows, arrays, at, columns):
        """The cells of ``columns`` at positions ``at`` of a chunk, as printed (pyarrow strings)."""
        return [arrays[(PRINTED, c)].take(at) for c in columns]

    def _bad_row(self, row):
        fields = row.actual_columns
        # pyarrow counts the rows it skipped (the header and the lines before it) from 1
        where = self.where(row.number - self.skip - 1) if row.number is not None else "a row"
        return (
            f"{where} has {fields} field{'s' * (fields != 1)}, the header has {row.expected_columns} "
            f"(delimiter {self.delimiter!r}): {row.text[:60]!r}"
        )


def _drop_missing(batch, rows, cols):
    """(batch, rows, skipped rows or None) without the rows that have a missing cell in a column read."""
    import pyarrow as pa

    miss = np.zeros(batch.num_rows, dtype=bool)
    for c in cols.names:
        miss |= missing_mask(batch.column(c))
    if not miss.any():
        return batch, rows, None
    keep = ~miss
    return batch.filter(pa.array(keep)), rows[keep], rows[miss]


class _JSONSource:
    kind = "jsonl"

    def __init__(self, path, compression, chunk_rows):
        self.chunk_rows = chunk_rows
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
                    *(lambda t: (t.schema, t.to_batches(max_chunksize=self.chunk_rows)))(pj.read_json(stream))
                )
        except (pa.ArrowInvalid, OSError) as e:  # OSError: a truncated or corrupt compressed stream
            stream.close()
            what = f"{self.text.compression}-compressed " if self.text.compression else ""
            raise InputError(
                f"{self.path}: not a readable {what}JSON-lines file ({_json_reason(e, 0, self.where)})"
            ) from None
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
                    raise InputError(
                        f"{self.path}: not a readable JSON-lines file ({_json_reason(e, start, self.where)})"
                    ) from None
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

    def __init__(self, path, chunk_rows):
        self.chunk_rows = chunk_rows
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
            batches = self.file.iter_batches(batch_size=self.chunk_rows, columns=cols.names)
            while True:
                try:
                    batch = next(batches)
                except StopIteration:
                    return
                except Exception as e:  # a corrupt page surfaces here, mid-file
                    raise InputError(
                        f"{self.path}: not a readable Parquet file after its first {start} rows ({_os_reason(e)})"
                    ) from None
                rows = np.arange(start, start + batch.num_rows, dtype=np.int64)
                start += batch.num_rows
                yield from _typed_batch(self, batch, cols, rows, skip_missing)


class _ArrowSource:
    kind = "arrow"

    def __init__(self, path, chunk_rows):
        self.chunk_rows = chunk_rows
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
                raise InputError(
                    f"{self.path}: not a readable Arrow IPC file after its first {start} rows ({_os_reason(e)})"
                ) from None
            batch = batch.select(cols.names)
            for lo in range(0, batch.num_rows, self.chunk_rows):
                part = batch.slice(lo, self.chunk_rows)
                rows = np.arange(start, start + part.num_rows, dtype=np.int64)
                start += part.num_rows
                yield from _typed_batch(self, part, cols, rows, skip_missing)


def _check_file(path):
    if not path.exists():
        raise InputError(f"{path}: cannot read: No such file or directory")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty")


def _numpy_arrays(source, arrays: dict, cols: Columns, skip_missing):
    """Chunks of source.chunk_rows rows of named 1-D numpy arrays (.npz, .npy)."""
    lengths = {c: arrays[c].shape[0] for c in cols.names}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{source.path}: arrays have different lengths {lengths}")
    n = lengths[cols.y]
    size = source.chunk_rows
    for start in range(0, n, size):
        rows = np.arange(start, min(n, start + size), dtype=np.int64)
        chunk = {c: np.asarray(arrays[c][start : start + size]) for c in cols.names}
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

    def __init__(self, path, chunk_rows):
        self.chunk_rows = chunk_rows
        self.path = path
        _check_file(path)
        with path.open("rb") as fh:
            magic = fh.read(6)
        if magic != NPY_MAGIC:
            raise InputError(f"{path}: not a .npy file (no numpy header)")
        try:
            self.array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:
            raise InputError(f"{path}: not a readable .npy file ({_os_reason(e)})") from None
        if self.array.dtype.names is None:
            raise InputError(
                f"{path}: a .npy file must hold a structured array with named fields (y, p, ...); this one "
                f"holds a plain {self.array.dtype} array of shape {self.array.shape}, whose columns have no "
                "names. Save named columns with np.savez(path, y=y, p=p) or a structured array"
            )
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

    def __init__(self, path, chunk_rows):
        self.chunk_rows = chunk_rows
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
        if magic != ZIP_MAGIC:
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


def open_source(path, fmt=None, delimiter=None, *, chunk_rows):
    """The reader of a file (or "-", standard input), by its format (see :func:`detect_format`);
    its record batches hold at most ``chunk_rows`` rows (fastcdl.io.CHUNK_ROWS)."""
    kind, comp = detect_format(path, fmt)
    if str(path) != "-":
        path = Path(path)
        if path.is_dir():
            raise InputError(f"{path}: is a folder, not a file of predictions")
        if not path.exists():
            raise InputError(f"{path}: cannot read: No such file or directory")
    if delimiter is not None:
        if kind != "csv":
            raise InputError(f"--delimiter applies to delimited text files, not to {KIND_NAMES[kind]} files")
        if delimiter not in DELIMITERS and len(delimiter) != 1:
            raise InputError(f"--delimiter must be one character or tab, comma, semicolon, pipe; got {delimiter!r}")
        delimiter = DELIMITERS.get(delimiter, delimiter)
    if kind in ("csv", "jsonl"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(
                "reading text files needs pyarrow (a dependency of fastcdl, missing here): pip install pyarrow"
            ) from None
        return _CSVSource(path, comp, delimiter, chunk_rows) if kind == "csv" else _JSONSource(path, comp, chunk_rows)
    if str(path) == "-":
        raise InputError(
            f"standard input is read as CSV or JSON lines (--format csv or jsonl), not as "
            f"{KIND_NAMES[kind]}: pass the file's path"
        )
    if kind in ("parquet", "arrow"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(
                f"reading {KIND_NAMES[kind]} needs pyarrow (a dependency of fastcdl, missing here): pip install pyarrow"
            ) from None
        return _ParquetSource(path, chunk_rows) if kind == "parquet" else _ArrowSource(path, chunk_rows)
    if kind == "npy":
        return _NpySource(path, chunk_rows)
    src = _NpzSource(path, chunk_rows)
    src.load()
    return src
