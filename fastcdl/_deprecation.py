"""Names that moved: the old name keeps working for one release and warns once with its
replacement (a DeprecationWarning attributed to the code that used the old name)."""

from __future__ import annotations

import sys
import warnings

__all__ = ["moved_module", "warn_deprecated"]

_warned: set = set()


def warn_deprecated(old: str, new: str) -> None:
    """Warn once per process that ``old`` is deprecated in favour of ``new``."""
    if old in _warned:
        return
    _warned.add(old)
    warnings.warn(f"{old} is deprecated: use {new} (the same object)", DeprecationWarning, stacklevel=_caller())


def _caller() -> int:
    """The stack level of the first frame outside importlib and this package's own aliases,
    so that the warning names the user's line (and Python's default filter shows it there)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None:
        internal = "importlib" in frame.f_code.co_filename and "_bootstrap" in frame.f_code.co_filename
        if not internal:  # warnings.warn does not count importlib's frames either
            if not frame.f_globals.get("__name__", "").startswith("fastcdl"):
                return level
            level += 1
        frame = frame.f_back
    return 2


def moved_module(old: str, new_module) -> callable:
    """The ``__getattr__`` of a module that moved: every name of ``new_module`` reachable."""

    def __getattr__(name):
        return getattr(new_module, name)

    return __getattr__
