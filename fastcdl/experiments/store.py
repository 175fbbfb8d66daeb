"""The resumable trial store: one SQLite row per finished trial, one transaction per row.

A trial is keyed by (forecaster, its params, adversary, its params, T, seed, algorithm
version); see :mod:`fastcdl.online.versions`. A killed run loses only the trials in
flight: a row is either committed whole or absent, so re-running the same command skips
every finished trial. Opening a store for writing adds the columns it lacks (``ALTER
TABLE``) and re-keys rows stored before algorithm versions existed when their code version
is one that was verified to replay bit for bit; opened with ``readonly=True`` it writes
nothing (a read-only folder, a committed results folder being plotted).

A store that cannot be read or written (a damaged file, a full disk, a file-size limit, a
read-only folder) raises :class:`StoreError`, a ValueError whose one-line message names the
file, SQLite's cause and what to do; nothing is changed by the failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from pathlib import Path

from fastcdl.online.versions import LEGACY_CODE_VERSIONS, algorithm_version


def _columns():
    from fastcdl.trial_measures import METRICS

    fixed = (
        ("key", "TEXT PRIMARY KEY"),
        ("forecaster", "TEXT NOT NULL"),
        ("forecaster_label", "TEXT NOT NULL"),
        ("forecaster_params", "TEXT NOT NULL"),
        ("adversary", "TEXT NOT NULL"),
        ("adversary_label", "TEXT NOT NULL"),
        ("adversary_params", "TEXT NOT NULL"),
        ("T", "INTEGER NOT NULL"),
        ("seed_index", "INTEGER NOT NULL"),
        ("seed", "INTEGER NOT NULL"),
        ("code_version", "TEXT NOT NULL"),
        ("algorithm_version", "TEXT"),
    )
    metric_columns = tuple((c, "REAL") for m in METRICS.values() for c in m.columns)
    tail = (
        ("n_buckets", "INTEGER"),
        ("seconds", "REAL"),
        ("rounds_per_second", "REAL"),
        ("finished_at", "TEXT"),
        ("bucket_table", "BLOB"),  # the run's final bucket table (pack_table), for plots and new metrics
        ("pseudo_table", "BLOB"),  # its expected-count table (pack_table; NULL in rows stored before it)
    )
    return fixed + metric_columns + tail


# The fixed columns, one or more per metric of fastcdl.trial_measures, then timing and the
# table: a metric added to the registry becomes a column, added to existing stores on opening.
COLUMNS = _columns()
NAMES = tuple(c for c, _ in COLUMNS)


class StoreError(ValueError):
    """A trial store that cannot be read or written; the message names the file, the cause
    (SQLite's words) and what to do.

    Examples
    --------
    >>> try:
    ...     TrialStore("/nonexistent/trials.sqlite", readonly=True)
    ... except StoreError as e:
    ...     print(e)
    /nonexistent/trials.sqlite: no such trial store
    """


def _advice(code: str) -> str:
    """What to do about a store failure, from SQLite's name for its cause (SQLITE_FULL, ...)."""
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return (
            "the file is damaged and was left as it is: restore it from a copy (a committed results folder: "
            "git checkout it), or move it aside and re-run to compute every trial again"
        )
    if code.startswith(("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_TOOBIG")):
        return (
            "a write failed (a full disk, a file-size limit, a failing disk): make room or raise the limit; "
            "every trial stored before the failure is kept"
        )
    if code.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return "the file or its folder cannot be written: make it writable, or run into another folder"
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return "another process holds it: wait for it to finish"
    return "nothing was changed"


@contextlib.contextmanager
def _failing_as(path: Path, doing: str):
    """Turn a sqlite3 error into a StoreError saying what was being done to which file, why
    (SQLite's words and its error's name) and what to do."""
    try:
        yield
    except sqlite3.Error as e:
        cause = " ".join(str(e).split()) or type(e).__name__
        code = getattr(e, "sqlite_errorname", None) or ""
        shown = f"{cause}, {code}" if code else cause
        raise StoreError(f"{path}: cannot {doing} ({shown}); {_advice(code)}") from None


class TrialStore:
    """SQLite file of finished trials (WAL journal, so readers never block the writer).

    Parameters
    ----------
    path : str or Path
        The file (created when missing, unless ``readonly``).
    readonly : bool, default False
        Open an existing store for reading only: nothing is created, migrated or written,
        so a read-only run folder (or one another process is writing) can be read.

    Raises
    ------
    StoreError
        When the file cannot be opened, created or migrated.

    Examples
    --------
    >>> import tempfile, os
    >>> store = TrialStore(os.path.join(tempfile.mkdtemp(), "trials.sqlite"))
    >>> len(store.done_keys())
    0
    """

    def __init__(self, path, *, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        if readonly:
            if not self.path.is_file():
                raise StoreError(f"{self.path}: no such trial store")
            self._conn = self._open_readonly()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _failing_as(self.path, "open the trial store for writing"):
            self._conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                cols = ", ".join(f"{c} {t}" for c, t in COLUMNS)
                self._conn.execute(f"CREATE TABLE IF NOT EXISTS trials ({cols})")
                self._migrate()
            except BaseException:
                self._conn.close()
                raise

    def _open_readonly(self):
        """A read-only connection. A store with no WAL beside it (every row folded into the file:
        no writer at work, or one that closed) is read as an immutable file, which creates no
        -wal or -shm file and works in a read-only folder; a store with a WAL is read through it
        (the rows of a run in progress, or of one that was killed), falling back to the file
        alone where the folder cannot take the shared-memory file."""
        from urllib.parse import quote

        uri = f"file:{quote(str(self.path.resolve()))}"
        wal = self.path.with_name(self.path.name + "-wal")
        tries = ("mode=ro", "immutable=1") if wal.exists() else ("immutable=1",)
        for i, mode in enumerate(tries):
            conn = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=60, isolation_level=None)
            try:
                with _failing_as(self.path, "read the trial store"):
                    conn.execute("SELECT count(*) FROM trials").fetchone()
                    self._have = {r[1] for r in conn.execute("PRAGMA table_info(trials)")}
                return conn
            except StoreError as e:
                conn.close()
                if i + 1 == len(tries) or "unable to open" not in str(e):
                    raise

    def _migrate(self) -> None:
        """Add missing columns; re-key legacy rows whose code version is verified (one transaction)."""
        have = {r[1] for r in self._conn.execute("PRAGMA table_info(trials)")}
        legacy = tuple(LEGACY_CODE_VERSIONS)
        marks = ", ".join("?" for _ in legacy)
        with self._transaction():
            for c, t in COLUMNS:
                if c not in have:
                    self._conn.execute(f"ALTER TABLE trials ADD COLUMN {c} {t.replace('NOT NULL', '')}")
            old = self._conn.execute(
                "SELECT key, forecaster, forecaster_params, adversary, adversary_params, T, seed FROM trials "
                f"WHERE algorithm_version IS NULL AND code_version IN ({marks})",
                legacy,
            ).fetchall()
            for key, f, fp, a, ap, T, seed in old:
                version = algorithm_version(f, a, initial=True)
                self._conn.execute(
                    "UPDATE OR REPLACE trials SET key = ?, algorithm_version = ? WHERE key = ?",
                    (trial_key(f, fp, a, ap, T, seed, version), version, key),
                )

    @contextlib.contextmanager
    def _transaction(self):
        """BEGIN IMMEDIATE ... COMMIT; on an error, a rollback if SQLite has not rolled back
        already (it does on a full disk), and the error that caused it is the one raised."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            raise

    def done_keys(self) -> set[str]:
        with _failing_as(self.path, "read the trial store"):
            return {k for (k,) in self._conn.execute("SELECT key FROM trials")}

    def add(self, row: dict) -> None:
        """Insert one finished trial in its own transaction."""
        values = [row.get(c) for c in NAMES]
        marks = ", ".join("?" for _ in NAMES)
        with _failing_as(self.path, "store a finished trial"), self._transaction():
            self._conn.execute(f"INSERT OR REPLACE INTO trials ({', '.join(NAMES)}) VALUES ({marks})", values)

    def set_table(self, key: str, blob: bytes) -> None:
        """Store the bucket table of an existing trial (scripts/backfill_tables.py)."""
        with _failing_as(self.path, "store a bucket table"):
            self._conn.execute("UPDATE trials SET bucket_table = ? WHERE key = ?", (blob, key))

    def set_columns(self, key: str, values: dict) -> None:
        """Set columns of an existing trial in one transaction (the measures outside the key,
        :func:`fastcdl.experiments.fill_measures`); the names must be store columns."""
        bad = [c for c in values if c not in NAMES or c == "key"]
        if bad:
            raise ValueError(f"not columns of the trial store that may be set: {', '.join(bad)}")
        names = list(values)
        with _failing_as(self.path, "store a trial's measures"), self._transaction():
            self._conn.execute(
                f"UPDATE trials SET {', '.join(f'{c} = ?' for c in names)} WHERE key = ?",
                [values[c] for c in names] + [key],
            )

    def rows(self, keys=None) -> list[dict]:
        """All stored trials (or those with the given keys) as dicts, in a stable order.

        Read-only, a store written before a column existed gives None in it, and its rows
        stored before algorithm versions (LEGACY_CODE_VERSIONS) carry the version and key that
        opening it for writing would give them."""
        names = [c for c in NAMES if not self.readonly or c in self._have]
        with _failing_as(self.path, "read the trial store"):
            cur = self._conn.execute(
                f"SELECT {', '.join(names)} FROM trials ORDER BY forecaster_label, adversary_label, T, seed_index"
            )
            out = [dict.fromkeys(NAMES) | dict(zip(names, r)) for r in cur]
        if self.readonly:
            for r in out:
                if r["algorithm_version"] is None and r["code_version"] in LEGACY_CODE_VERSIONS:
                    v = algorithm_version(r["forecaster"], r["adversary"], initial=True)
                    r["algorithm_version"] = v
                    r["key"] = trial_key(
                        r["forecaster"],
                        r["forecaster_params"],
                        r["adversary"],
                        r["adversary_params"],
                        r["T"],
                        r["seed"],
                        v,
                    )
        if keys is not None:
            keys = set(keys)
            out = [r for r in out if r["key"] in keys]
        return out

    def checkpoint(self) -> None:
        """Fold the WAL into the main file (so the .sqlite alone is complete, e.g. before a commit)."""
        if not self.readonly:
            with _failing_as(self.path, "fold the journal into the trial store"):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Checkpoint and close. A checkpoint that fails (a full disk) leaves the WAL beside the
        file, every committed row in it: the next opening folds it in."""
        try:
            with contextlib.suppress(StoreError):
                self.checkpoint()
        finally:
            self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


LOCK = "trials.sqlite.lock"


@contextlib.contextmanager
def run_lock(folder):
    """Hold the run folder's lock (``trials.sqlite.lock``, an exclusive flock) while running
    trials into it, so that two runs never run the same trial: a second run into the folder
    raises StoreError at once, naming the process that holds it. The system releases the lock
    when its process ends, however it ends (a stale file is never a stale lock); the file is
    removed when the run ends."""
    import fcntl
    import os

    folder = Path(folder)
    path = folder / LOCK
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as e:
            raise StoreError(
                f"{folder}: cannot write into the run folder ({e.strerror}); resume the run where "
                "it can be written, or run into another folder"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            by = f" (process {holder})" if holder.isdigit() else ""
            raise StoreError(
                f"{folder}: another run is storing trials in this folder{by}, and would run the "
                "same trials; wait for it to end (re-running then skips every stored trial), or run "
                "into another folder"
            ) from None
        try:  # the file this lock is on may have been removed by a run that ended meanwhile
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def pack_table(stats) -> bytes:
    """A BucketStats as compressed bytes (values, counts, positives): the trial's final table."""
    import io
    import zlib

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, q=stats.values, n=stats.counts, s=stats.positives)
    return zlib.compress(buf.getvalue(), 6)


def unpack_table(blob: bytes):
    """The BucketStats stored by :func:`pack_table`."""
    import io
    import zlib

    import numpy as np

    from fastcdl.bucket_table import BucketStats

    with np.load(io.BytesIO(zlib.decompress(blob))) as z:
        return BucketStats.from_table(z["q"], z["n"], z["s"])


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def trial_key(forecaster, forecaster_params, adversary, adversary_params, T, seed, algorithm_version) -> str:
    """The store's primary key of a trial: a hash of everything its numbers depend on."""
    ident = [forecaster, forecaster_params, adversary, adversary_params, int(T), int(seed), algorithm_version]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:32]
