"""A trial store packed for the repository: ``trials.sqlite.xz`` beside the CSV files.

A large search stores tens of thousands of trials; the bucket table of each (the largest
column) matters for the runs a folder reports, not for every candidate a search scored. So
:func:`pack` copies the store, keeps the bucket tables of the rows that ``keep_tables``
selects (an SQL condition) and drops the others' (their metrics stay), compacts it and
compresses it with xz; :func:`unpack` restores ``trials.sqlite`` from it, so a run resumes
from the packed store as from the original (its keys and metrics are the same).

>>> import tempfile, pathlib
>>> from fastcdl.experiments.store import TrialStore
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> TrialStore(d / "trials.sqlite").close()
>>> pack(d / "trials.sqlite", "1 = 1").name
'trials.sqlite.xz'
>>> (d / "trials.sqlite").unlink(); unpack(d).name
'trials.sqlite'
"""

from __future__ import annotations

import lzma
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

__all__ = ["pack", "unpack"]


def pack(store: Path, keep_tables: str) -> Path:
    """Write ``store``.xz next to ``store``: a compacted copy whose bucket tables are kept
    where the SQL condition ``keep_tables`` holds and dropped elsewhere (atomic: a temporary
    file renamed into place). Cost: one copy and one xz pass over the store."""
    store = Path(store)
    out = store.with_name(store.name + ".xz")
    with tempfile.TemporaryDirectory(dir=store.parent) as tmp:
        copy = Path(tmp) / store.name
        src = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
        finally:
            src.close()
        dst.execute(f"UPDATE trials SET bucket_table = NULL WHERE NOT ({keep_tables})")
        dst.commit()
        dst.execute("PRAGMA journal_mode = DELETE")
        dst.execute("VACUUM")
        dst.close()
        part = Path(tmp) / out.name
        with open(copy, "rb") as fin, lzma.open(part, "wb", preset=9) as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        os.chmod(part, 0o666 & ~_umask())
        os.replace(part, out)
    return out


def unpack(folder: Path) -> Path:
    """``folder``/trials.sqlite from ``folder``/trials.sqlite.xz, if the first is absent (atomic)."""
    folder = Path(folder)
    store, packed = folder / "trials.sqlite", folder / "trials.sqlite.xz"
    if store.exists() or not packed.exists():
        return store
    fd, part = tempfile.mkstemp(dir=folder, prefix=".trials.sqlite.")
    try:
        with os.fdopen(fd, "wb") as fout, lzma.open(packed, "rb") as fin:
            shutil.copyfileobj(fin, fout, 1 << 20)
        os.chmod(part, 0o666 & ~_umask())
        os.replace(part, store)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return store


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
