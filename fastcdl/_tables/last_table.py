"""What was computed last from a table, kept per thread (:class:`LastTable`)."""

from __future__ import annotations

import threading
import weakref

__all__ = ["LastTable"]


def _nothing():
    return None


class LastTable:
    """Values computed from the last table seen on this thread, by key: a BucketStats is
    immutable, so the same object gives the same value again. Each thread keeps its own entry
    (an interval's subsamples run on two), holding the table by a weak reference; a new table
    drops the values of the one before. O(1).

    >>> from fastcdl import BucketStats
    >>> memo, st = LastTable(), BucketStats.from_table([0.5], [2], [1])
    >>> memo.get(st, "k") is None
    True
    >>> memo.put(st, "k", 3.0); memo.get(st, "k")
    3.0
    """

    def __init__(self):
        self._local = threading.local()

    def get(self, st, key):
        """The value stored for ``st`` and ``key`` on this thread, or None."""
        ref, values = getattr(self._local, "entry", (_nothing, None))
        return values.get(key) if ref() is st else None

    def put(self, st, key, value):
        """Store ``value`` for ``st`` and ``key`` (dropping what was stored for another table)."""
        ref, values = getattr(self._local, "entry", (_nothing, None))
        if ref() is not st:
            values = {}
            self._local.entry = (weakref.ref(st), values)
        values[key] = value
