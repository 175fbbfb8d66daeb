"""Writing files: an OSError of a failed write names the file it was writing; several files
replaced at once, never left half written; rows as CSV text."""

from __future__ import annotations

import contextlib
import csv
import io
import os

__all__ = ["atomic_write", "csv_text", "writing_to"]


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


def atomic_write(texts: dict) -> None:
    """Write {path: text}: every file to a temporary name first, then each renamed over its
    target (os.replace): a crash or a signal never leaves a truncated file, and only the
    renames (microseconds) separate the files' changes."""
    tmps = {path: path.with_name(f".{path.name}.tmp{os.getpid()}") for path in texts}
    try:
        for path, text in texts.items():
            with writing_to(path):
                tmps[path].write_text(text)
        for path, tmp in tmps.items():
            os.replace(tmp, path)
    finally:
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)


def csv_text(rows, columns) -> str:
    """Rows (dicts) as CSV text with a header of ``columns``; floats by repr (they read back
    exactly), keys outside ``columns`` left out."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        # float(v): numpy's float64 is a float whose repr is "np.float64(...)" since numpy 2
        w.writerow({k: (repr(float(v)) if isinstance(v, float) else v) for k, v in r.items() if k in columns})
    return buf.getvalue()
