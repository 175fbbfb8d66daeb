"""How every fastcdl kernel is compiled: one decorator, one cache policy.

``kernel`` is numba's ``njit`` with fastcdl's defaults:

- the on-disk cache is on, unless the environment sets ``FASTCDL_CACHE=0``;
- one specialisation per argument type, not per constant: a call from compiled code with a
  literal argument (``_block(x, 0, n)``) is typed with the argument's plain type
  (``int64``), so the kernel compiles once for both ``_block(x, 0, n)`` and
  ``_block(x, lo, n)``. numba's dispatchers otherwise compile a second version for the
  literal (results/benchmarks/compile_profile.md, "Literal[int]"). A kernel that types only
  with the literal (a branch pruned on a constant) still gets it: the plain types are tried
  first, then the literal ones;
- one specialisation for read-only and writable arrays where a kernel only reads them:
  ``@kernel(read_only=...)`` types those arguments read-only for callers in compiled code,
  and Python callers pass :func:`readonly` arrays (numba would compile one version per kind);
- every serial kernel releases the GIL (``nogil=True``), so that all of them compile with
  the same flags: numba compiles a helper overload such as ``np.empty`` once per set of its
  caller's flags;
- a kernel is compiled once across processes: its compile holds a lock file of its own in the
  cache folder, so a second process that needs it meanwhile waits and then loads it;
- the cache cannot go stale across files. numba invalidates a cached function only when
  its *own* source file changes, so a caller in ``simulate.py`` would keep the machine
  code of an old ``msmwc.update_bucket`` after an edit or an upgrade that changed only
  ``msmwc.py``. Next to the cache, a stamp file records a hash of all kernel sources
  (this folder's ``*.py`` and every package module that imports ``kernel``); when the
  hash differs, every fastcdl cache entry in that
  folder is dropped before the first kernel is loaded, under a file lock so that
  concurrent processes (pool workers, Dask workers) agree.

>>> from fastcdl._compiled._jit import kernel
>>> @kernel(cache=False)  # a function typed at a prompt has no file to cache beside
... def twice(x):
...     return 2 * x
>>> twice(21)
42
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from numba import njit
from numba.core import errors, sigutils, types

_HERE = Path(__file__).resolve().parent
STAMP = "fastcdl-kernels.hash"
_checked: set[str] = set()
_locked: set[str] = set()  # the compile locks this process holds (numba compiles one kernel at a time)


def cache_enabled() -> bool:
    """False when the environment sets FASTCDL_CACHE to 0, false, no or off."""
    return os.environ.get("FASTCDL_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


_PACKAGE = _HERE.parent
_MARK = b"fastcdl._compiled._jit import kernel"


def kernel_sources():
    """The package's files that define kernels: this folder's, and any that import ``kernel``."""
    for f in sorted(_PACKAGE.rglob("*.py")):
        if f.parent == _HERE or _MARK in f.read_bytes():
            yield f


def sources_hash() -> str:
    """sha256 of the kernel sources (paths and bytes of :func:`kernel_sources`), hex."""
    h = hashlib.sha256()
    for f in kernel_sources():
        h.update(f.relative_to(_PACKAGE).as_posix().encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _cache_files(directory: Path):
    for pattern in ("*.nbi", "*.nbc"):
        yield from directory.glob(pattern)


def ensure_fresh(directory) -> bool:
    """Drop the cache entries in ``directory`` unless its stamp matches the sources.

    Returns True when entries were dropped (or the stamp was missing). Safe to call from
    several processes at once: the check and the removal run under an exclusive lock.
    """
    directory = Path(directory)
    key = str(directory)
    if key in _checked:
        return False
    try:
        directory.mkdir(parents=True, exist_ok=True)
        current = sources_hash()
        with open(directory / (STAMP + ".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            stamp = directory / STAMP
            try:
                stored = stamp.read_text().strip()
            except OSError:
                stored = None
            dropped = stored != current
            if dropped:
                for f in _cache_files(directory):
                    f.unlink(missing_ok=True)
                tmp = directory / (STAMP + f".{os.getpid()}.tmp")
                tmp.write_text(current + "\n")
                os.replace(tmp, stamp)
    except OSError:
        # A read-only cache location: numba itself falls back or runs uncached.
        dropped = False
    _checked.add(key)
    return dropped


def _typed_without_literals(dispatcher, read_only=()):
    """Make calls from compiled code type ``dispatcher`` with unliteral argument types first,
    and the arrays at the positions ``read_only`` as read-only arrays (see :func:`kernel`)."""
    typed = dispatcher.get_call_template

    def plain_type(i, a):
        a = types.unliteral(a)
        if i in read_only and isinstance(a, types.Array) and a.mutable:
            return a.copy(readonly=True)  # numba passes a writable array where a read-only one is typed
        return a

    def get_call_template(args, kws):
        plain = tuple(plain_type(i, a) for i, a in enumerate(args))
        plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
        if plain != tuple(args) or plain_kws != kws:
            try:
                return typed(plain, plain_kws)
            except errors.TypingError:
                pass  # the kernel needs the constant (a branch pruned on it): its literal version
        # (Arrays are left as they are: typing a kernel with its arrays read-only first, to share
        # one version between read-only and writable callers, cost more than it saved, since a
        # kernel that writes to an argument fails that typing only at its end: tried and measured.)
        return typed(args, kws)

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _compiled_once(dispatcher, path):
    """Make ``dispatcher.compile`` hold an exclusive lock on a file of its own in the cache
    folder: two processes that need the same kernel at once (pytest workers, a pool's workers)
    compile it once, and the second loads what the first saved (numba's compile looks in the
    cache first). Locks follow the call graph, callers before callees, so they cannot cycle."""
    compile_ = dispatcher.compile
    py = dispatcher.py_func
    lock_path = os.path.join(path, f"{py.__module__}.{py.__qualname__}.compile.lock")

    def compile(sig):
        if lock_path in _locked:  # a recursive compile in this process: its lock is held already
            return compile_(sig)
        if tuple(sigutils.normalize_signature(sig)[0]) in dispatcher.overloads:
            return compile_(sig)  # compiled already: numba returns it (no lock file opened and locked)
        try:
            lock = open(lock_path, "a+")
        except OSError:  # a read-only cache folder: compile unlocked
            return compile_(sig)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _locked.add(lock_path)
            try:
                return compile_(sig)
            finally:
                _locked.discard(lock_path)

    dispatcher.compile = compile
    return dispatcher


def kernel(*args, read_only=(), **options):
    """numba.njit with fastcdl's cache policy. Use as ``@kernel``, ``@kernel(parallel=True)``
    or ``@kernel("float64(float64[:])")`` (an explicit signature compiles at import).

    ``read_only``: the positions of array arguments the kernel never writes. Called from
    compiled code, it is typed with those arrays read-only whether the caller's are or not, so
    that callers holding a table's (frozen) arrays and callers holding fresh ones share one
    compilation instead of two (numba types a read-only array apart from a writable one; it
    passes a writable one where a read-only one is typed, at no cost). A kernel that writes
    such an argument fails that typing and is typed as numba would (one compilation per kind
    again). Python callers share the read-only version by passing :func:`readonly` arrays."""
    options.setdefault("cache", cache_enabled())
    if not options.get("parallel"):
        # every serial kernel releases the GIL: numba compiles an overload (np.empty, max, ...)
        # once per set of its caller's flags, so kernels that differed only in nogil compiled
        # each such helper twice (74 -> 68 compilations in the first report from the flags
        # alone; 20 to 30 ns more per call from Python: docs/compile-time.md)
        options.setdefault("nogil", True)
    read_only = frozenset(read_only)

    def wrap(func, sig=None):
        # Compile only after the freshness check, so a stale entry is never loaded.
        dispatcher = _typed_without_literals(njit(**options)(func), read_only)
        path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
        if options["cache"] and path is not None:
            ensure_fresh(path)
            _compiled_once(dispatcher, path)
        if sig is not None:
            for s in sig if isinstance(sig, (list, tuple)) else [sig]:
                dispatcher.compile(s)
            dispatcher.disable_compile()
        return dispatcher

    if len(args) == 1 and callable(args[0]) and not options.keys() - {"cache", "nogil"}:
        return wrap(args[0])
    sig = args[0] if args else None
    return lambda func: wrap(func, sig)


def readonly(a):
    """``a`` as a read-only array (a view, no copy; ``a`` itself when it is read-only already).

    numba compiles a kernel once per argument type, and a read-only array is another type than
    a writable one: a kernel that Python calls with a table's (frozen) arrays in one place and
    with fresh ones in another compiles twice. Passing both through here compiles it once.

    >>> import numpy as np
    >>> readonly(np.zeros(3)).flags.writeable
    False
    """
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view
