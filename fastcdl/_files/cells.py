"""Text cells to numbers, strictly: decimals and exponents, outcomes also as true/false.

A cell that is not a number is an error naming its column and row; missing cells (empty, NA,
N/A, NaN, null, None) are found for skip_missing; the digits a cell was printed with are kept
for the class columns that need them (printed_half_units).
"""

from __future__ import annotations

import numpy as np

from fastcdl._files.formats import MISSING

# a number as text: the digits after the point and the exponent say where its last digit is
_NUMBER_DIGITS = r"^\s*[+-]?\d*(?:\.(?P<frac>\d*))?(?:[eE]\+?(?P<exp>-?\d+))?\s*$"
PRINTED = "printed"  # arrays[(PRINTED, column)]: a chunk's cells of a class column as printed


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


def text_column(arr, col, kind, source, rows, where, delimiter):
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
            return data[out.offset :].copy()
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
    raise CellError(i, f"{source}: column {col!r}, {where(rows[i])}: {what}")


class CellError(Exception):
    """A cell that is not a number: its index in the batch and the message naming it."""

    def __init__(self, index, message):
        super().__init__(message)
        self.index = index


def missing_mask(arr):
    """True where a text cell is empty, NA, N/A, NaN, null or None (any case, spaces around)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
    return pc.is_in(t, value_set=pa.array(sorted(MISSING))).to_numpy(zero_copy_only=False)
