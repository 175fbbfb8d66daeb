"""The resumable trial store: one SQLite row per finished trial, one transaction per row.

A trial is keyed by (forecaster, its params, adversary, its params, T, seed, algorithm
version); see :mod:`fastcdl.online.versions`. A killed run loses only the trials in
flight: a row is either committed whole or absent, so re-running the same command skips
every finished trial. Opening a store adds the columns it lacks (``ALTER TABLE``) and
re-keys rows stored before algorithm versions existed when their code version is one
that was verified to replay bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from fastcdl.online.versions import LEGACY_CODE_VERSIONS, algorithm_version

def _columns():
    from fastcdl.trial_metrics import METRICS

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
    )
    return fixed + metric_columns + tail


# The fixed columns, one or more per metric of fastcdl.trial_metrics, then timing and the
# table: a metric added to the registry becomes a column, added to existing stores on opening.
COLUMNS = _columns()
NAMES = tuple(c for c, _ in COLUMNS)


class TrialStore:
    """SQLite file of finished trials (WAL journal, so readers never block the writer).

    >>> import tempfile, os
    >>> store = TrialStore(os.path.join(tempfile.mkdtemp(), "trials.sqlite"))
    >>> len(store.done_keys())
    0
    """

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        cols = ", ".join(f"{c} {t}" for c, t in COLUMNS)
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS trials ({cols})")
        self._migrate()

    def _migrate(self) -> None:
        """Add missing columns; re-key legacy rows whose code version is verified (one transaction)."""
        have = {r[1] for r in self._conn.execute("PRAGMA table_info(trials)")}
        legacy = tuple(LEGACY_CODE_VERSIONS)
        marks = ", ".join("?" for _ in legacy)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for c, t in COLUMNS:
                if c not in have:
                    self._conn.execute(f"ALTER TABLE trials ADD COLUMN {c} {t.replace('NOT NULL', '')}")
            old = self._conn.execute(
                "SELECT key, forecaster, forecaster_params, adversary, adversary_params, T, seed FROM trials "
                f"WHERE algorithm_version IS NULL AND code_version IN ({marks})", legacy).fetchall()
            for key, f, fp, a, ap, T, seed in old:
                version = algorithm_version(f, a, initial=True)
                self._conn.execute("UPDATE OR REPLACE trials SET key = ?, algorithm_version = ? WHERE key = ?",
                                   (trial_key(f, fp, a, ap, T, seed, version), version, key))
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def done_keys(self) -> set[str]:
        return {k for (k,) in self._conn.execute("SELECT key FROM trials")}

    def add(self, row: dict) -> None:
        """Insert one finished trial in its own transaction."""
        values = [row.get(c) for c in NAMES]
        marks = ", ".join("?" for _ in NAMES)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.execute(f"INSERT OR REPLACE INTO trials ({', '.join(NAMES)}) VALUES ({marks})", values)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def set_table(self, key: str, blob: bytes) -> None:
        """Store the bucket table of an existing trial (scripts/backfill_tables.py)."""
        self._conn.execute("UPDATE trials SET bucket_table = ? WHERE key = ?", (blob, key))

    def rows(self, keys=None) -> list[dict]:
        """All stored trials (or those with the given keys) as dicts, in a stable order."""
        cur = self._conn.execute(f"SELECT {', '.join(NAMES)} FROM trials ORDER BY forecaster_label, adversary_label, T, seed_index")
        out = [dict(zip(NAMES, r)) for r in cur]
        if keys is not None:
            keys = set(keys)
            out = [r for r in out if r["key"] in keys]
        return out

    def checkpoint(self) -> None:
        """Fold the WAL into the main file (so the .sqlite alone is complete, e.g. before a commit)."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.checkpoint()
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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

    from fastcdl.stats import BucketStats

    with np.load(io.BytesIO(zlib.decompress(blob))) as z:
        return BucketStats.from_table(z["q"], z["n"], z["s"])


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def trial_key(forecaster, forecaster_params, adversary, adversary_params, T, seed, algorithm_version) -> str:
    """The store's primary key of a trial: a hash of everything its numbers depend on."""
    ident = [forecaster, forecaster_params, adversary, adversary_params, int(T), int(seed), algorithm_version]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:32]
