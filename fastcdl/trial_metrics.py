"""Deprecated: ``fastcdl.trial_metrics`` is now :mod:`fastcdl.trial_measures` (the measures a rate-experiment trial records).

Importing it warns once (DeprecationWarning); every name of fastcdl.trial_measures is reachable here for
one release.
"""

from fastcdl import trial_measures as _target
from fastcdl._deprecation import moved_module, warn_deprecated

warn_deprecated("fastcdl.trial_metrics", "fastcdl.trial_measures")
__getattr__ = moved_module("fastcdl.trial_metrics", _target)
__all__ = list(getattr(_target, "__all__", [n for n in vars(_target) if not n.startswith("_")]))
