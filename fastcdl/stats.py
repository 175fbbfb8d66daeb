"""Deprecated: ``fastcdl.stats`` is now :mod:`fastcdl.bucket_table` (the bucket table, BucketStats).

Importing it warns once (DeprecationWarning); every name of fastcdl.bucket_table is reachable here for
one release.
"""

from fastcdl import bucket_table as _target
from fastcdl._deprecation import moved_module, warn_deprecated

warn_deprecated("fastcdl.stats", "fastcdl.bucket_table")
__getattr__ = moved_module("fastcdl.stats", _target)
__all__ = list(getattr(_target, "__all__", [n for n in vars(_target) if not n.startswith("_")]))
