"""When fastcdl may launch numba's thread pool, and with how many threads.

The binning kernels (fastcdl._kernels.buckets._bin_chunks*) are ``parallel=True``. Numba's
``workqueue`` threading layer is not thread-safe: two threads launching parallel
kernels at once abort the whole process (SIGABRT), which is what Dask's threaded
scheduler does with fastcdl.dask.bucket_stats. As numbagg does, a call made off the
main thread while the layer is (or will be) ``workqueue`` runs the serial kernel; tbb
and omp are thread-safe and keep the parallel one. The serial kernel fills the same
chunks in the same order, so the result is the same either way.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading

import numba

__all__ = ["parallel_safe", "threading_layer", "num_threads"]

_THREADSAFE = ("tbb", "omp")
# numba's layer categories (numba docs, "The Threading Layers")
_CATEGORIES = {
    "default": ("tbb", "omp", "workqueue"),
    "safe": ("tbb",),
    "threadsafe": ("tbb", "omp"),
    "forksafe": ("tbb", "workqueue") if sys.platform == "linux" else ("tbb", "omp", "workqueue"),
}


def threading_layer() -> str:
    """numba's threading layer: the running one, or the one numba will pick when it starts.

    Before any parallel kernel has run, numba.threading_layer() raises; the choice is
    then resolved from NUMBA_THREADING_LAYER (a layer or a category) and the priority
    list, trying to import each layer's pool module, as numba itself does.
    """
    try:
        return numba.threading_layer()
    except ValueError:  # not started yet
        pass
    wanted = numba.config.THREADING_LAYER
    allowed = _CATEGORIES.get(wanted)
    if allowed is None:
        return wanted  # named explicitly
    for layer in numba.config.THREADING_LAYER_PRIORITY:
        if layer not in allowed:
            continue
        if layer != "workqueue":
            try:
                importlib.import_module(f"numba.np.ufunc.{layer}pool")
            except ImportError:
                continue
        return layer
    return "workqueue"  # pragma: no cover - numba would refuse to start; stay serial


def parallel_safe() -> bool:
    """False where launching the thread pool could abort the process: off the main thread
    with the workqueue layer (several threads may launch parallel kernels at once)."""
    if threading.current_thread() is threading.main_thread():
        return True
    return threading_layer() in _THREADSAFE


@contextlib.contextmanager
def num_threads(n):
    """Run the block with numba's thread count (thread-local in numba) set to ``n``, then
    restore the previous count, also on errors. ``n`` None leaves the count alone."""
    if n is None:
        yield
        return
    previous = numba.get_num_threads()
    if n == previous:
        yield
        return
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
