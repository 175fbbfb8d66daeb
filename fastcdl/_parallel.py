"""When fastcdl may launch numba's thread pool, and with how many threads.

The binning kernels (fastcdl._compiled.buckets._bin_chunks*) are ``parallel=True``. Numba's
``workqueue`` threading layer is not thread-safe: two threads launching parallel
kernels at once abort the whole process (SIGABRT), which is what Dask's threaded
scheduler does with fastcdl.dask.bucket_stats. As numbagg does, a call made off the
main thread while the layer is (or will be) ``workqueue`` runs the serial kernel; tbb
and omp are thread-safe and keep the parallel one. The serial kernel fills the same
chunks in the same order, so the result is the same either way.

:func:`pair` runs two GIL-free kernels side by side on a helper thread of fastcdl's own,
without numba's pool, so that a busy second core costs nothing (see its docstring).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import os
import sys
import threading

import numba

__all__ = ["parallel_safe", "threading_layer", "num_threads", "pair", "share", "share_started", "wake"]

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


_helper = None
_helper_lock = threading.Lock()
_HELPER_NAME = "fastcdl-pair"


def _helper_pool():
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=_HELPER_NAME)
        return _helper


def _forget_helper():  # a forked child has no helper thread: start a new one when needed
    global _helper, _helper_lock
    _helper = None
    _helper_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helper)


def wake():
    """Nudge the helper thread of :func:`pair` awake ahead of a pair soon to come (it runs a
    no-op): a helper idle for a while took about 120 us to start a task, against about 15 us
    when it had run within the last millisecond (measured on the 2-core machine)."""
    _helper_pool().submit(_nothing)


def _nothing():
    pass


def pair(first, second):
    """Run ``first()`` here and ``second()`` on a helper thread, at once; if the helper has
    not started ``second`` by the time ``first`` returns, run it here as well. Returns when
    both are done (an error of either is raised).

    Both must release the GIL (``nogil`` kernels) and write disjoint outputs. With a free
    second core the two run side by side; with the other core busy, waking a thread can
    take milliseconds (about 5 ms measured for numba's pool), and the calling thread then
    simply does both, so the cost is never much above running them one after the other.
    """
    claimed = threading.Lock()

    def helper():
        if claimed.acquire(blocking=False):
            second()

    future = _helper_pool().submit(helper)
    try:
        first()
    finally:
        if claimed.acquire(blocking=False):
            second()  # the helper had not started it: its task will find it taken
        else:
            future.result()


def share_started(n, take, work):
    """:func:`share` begun on the helper thread now and finished later: returns ``join``,
    which makes the calling thread take the i not yet taken and waits for all of them (an
    error of either thread is raised there). Between the two calls this thread is free for
    other work (its kernels and the helper's run side by side where they release the GIL).
    ``take`` is called under a lock in the order of i, as in :func:`share`. ``join.cancel()``
    instead stops the work (no new i; it waits for the one the helper is doing), for a caller
    that will not join (its own work failed)."""
    lock = threading.Lock()
    state = {"next": 0, "failed": False}

    def run():
        while True:
            with lock:
                i = state["next"]
                if i >= n or state["failed"]:
                    return
                state["next"] = i + 1
                taken = take(i)
            try:
                work(i, taken)
            except BaseException:
                state["failed"] = True
                raise

    def cancel():
        state["failed"] = True  # no new i for either thread

    if n <= 0 or threading.current_thread().name.startswith(_HELPER_NAME):
        run.cancel = cancel  # (from the helper's own work: all of it here, at join)
        return run
    future = _helper_pool().submit(run)

    def join():
        try:
            run()
        finally:
            future.result()

    def abandon():
        cancel()
        future.exception()  # wait for the i it was doing; its error, if any, goes with it

    join.cancel = abandon
    return join


def share(n, take, work):
    """Do ``work(i, taken)`` for i = 0 .. n - 1, each once, on this thread and the helper
    thread of :func:`pair` at once; ``taken = take(i)`` is called under a lock in the order of
    i (so that what it draws from a random generator does not depend on the threads' timing).
    Returns when every i is done; an error of either thread is raised, and the other takes no
    new i after it.

    The first i runs here before the helper joins, so that any kernel it meets compiles on one
    thread. ``work`` gains from the helper only in what its kernels run without the GIL
    (``nogil``), and must write disjoint outputs. With the other core busy the calling thread
    takes nearly every i itself, so the cost stays about that of one thread.
    """
    lock = threading.Lock()
    state = {"next": 0, "failed": False}

    def run():
        while True:
            with lock:
                i = state["next"]
                if i >= n or state["failed"]:
                    return
                state["next"] = i + 1
                taken = take(i)
            try:
                work(i, taken)
            except BaseException:
                state["failed"] = True
                raise

    if n <= 0:
        return
    with lock:
        state["next"] = 1
        taken = take(0)
    work(0, taken)
    if n == 1:
        return
    if threading.current_thread().name.startswith(_HELPER_NAME):
        run()  # called from the helper's own work: it cannot wait for itself
        return
    future = _helper_pool().submit(run)
    try:
        run()
    finally:
        future.result()
