"""Writing files: an OSError of a failed write names the file it was writing."""

from __future__ import annotations

import contextlib


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
