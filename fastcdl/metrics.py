"""Deprecated: ``fastcdl.metrics`` is now :mod:`fastcdl.exact` (the exact measures of a bucket table).

Importing it warns once (DeprecationWarning); every name of fastcdl.exact is reachable here for
one release.
"""

from fastcdl import exact as _target
from fastcdl._deprecation import moved_module, warn_deprecated

warn_deprecated("fastcdl.metrics", "fastcdl.exact")
__getattr__ = moved_module("fastcdl.metrics", _target)
__all__ = list(getattr(_target, "__all__", [n for n in vars(_target) if not n.startswith("_")]))
