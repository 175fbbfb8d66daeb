"""Which format a file is: the list of formats and compressions fastcdl reads, and InputError.

The format is chosen by the file name's suffix (or ``fmt=``), checked against the file's
first bytes for the binary ones (docs: fastcdl.io). InputError is the one error of every step
of reading a file (a ValueError naming the file and, where known, the column and the row).
"""

from __future__ import annotations

from pathlib import Path

ZIP_MAGIC = b"PK\x03\x04"
NPY_MAGIC = b"\x93NUMPY"

#: File suffix -> format ("csv", "jsonl", "parquet", ...); compressed text formats add one of
#: COMPRESSIONS.
FORMATS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".feather": "arrow",
    ".arrow": "arrow",
    ".ipc": "arrow",
    ".npz": "npz",
    ".npy": "npy",
}
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}
# names accepted by fmt= (and the command line's --format)
FORMAT_NAMES = {
    "csv": "csv",
    "tsv": "csv",
    "txt": "csv",
    "jsonl": "jsonl",
    "ndjson": "jsonl",
    "parquet": "parquet",
    "feather": "arrow",
    "arrow": "arrow",
    "ipc": "arrow",
    "npz": "npz",
    "npy": "npy",
}
DELIMITERS = {
    ",": ",",
    "comma": ",",
    "\t": "\t",
    "\\t": "\t",
    "tab": "\t",
    ";": ";",
    "semicolon": ";",
    "|": "|",
    "pipe": "|",
}
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})
KIND_NAMES = {
    "csv": "CSV",
    "jsonl": "JSON-lines",
    "parquet": "Parquet",
    "arrow": "Feather/Arrow IPC",
    "npz": ".npz",
    "npy": ".npy",
}


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
    return (
        ".csv, .tsv, .txt, .jsonl, .ndjson (each also .gz, .bz2, .zst), .parquet, .pq, "
        ".feather, .arrow, .ipc, .npz, .npy, or - for standard input"
    )


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
            raise InputError(
                f"--format {fmt!r} is not one of {', '.join(sorted(FORMAT_NAMES))} (optionally with .gz, .bz2 or .zst)"
            )
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
        raise InputError(
            f"{path}: unsupported format {shown}: fastcdl reads {supported_formats()} "
            "(--format names the format of a file with another name)"
        )
    return kind, comp
