"""Running trials on processes: a local pool whose workers die with their parent, a Dask
cluster, and the progress bar of a run.

Shared by the rate experiments (:mod:`fastcdl.experiments.runner`), the worst-case search
(:mod:`fastcdl.experiments.worst_search`) and the leaderboard. A run that stops (Ctrl-C,
SIGTERM, a failed trial) kills its workers at once and keeps every trial that finished; a
worker that dies (out of memory, a crash in compiled code) stops the run with
:class:`WorkerDied`, naming how it ended.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import islice

__all__ = [
    "SCHEDULER_TIMEOUT",
    "TrialPool",
    "WorkerDied",
    "connect",
    "kill_workers",
    "LineProgress",
    "progress_bar",
    "run_local",
    "run_on_dask",
    "watch_parent",
]


def progress_bar(total_rounds, enabled, stream=None):
    """The progress of a run in rounds (None when not enabled): a tqdm bar on a terminal; on
    anything else (a log file, a pipe) one line at each tenth of the rounds, since a bar's
    carriage returns would fill a file with its redrawings. ``stream``: default sys.stderr."""
    if not enabled:
        return None
    stream = stream if stream is not None else sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        return LineProgress(total_rounds, stream)
    from tqdm import tqdm

    return tqdm(
        total=total_rounds,
        unit="round",
        unit_scale=True,
        smoothing=0.05,
        desc="rounds",
        dynamic_ncols=True,
        file=stream,
    )


class LineProgress:
    """Progress as whole lines, for a log: "rounds: 30% (3.1M of 10.5M; 12/40 trials done, ...)"
    at each tenth of the rounds, and once more at the end. The methods a run calls on a tqdm
    bar: update, set_postfix_str, close."""

    def __init__(self, total, stream):
        self.total, self.stream = total, stream
        self.done, self.postfix, self.next_tenth, self.closed = 0, "", 1, False

    def update(self, n):
        self.done += n
        tenth = 10 * self.done // self.total if self.total else 10
        if tenth >= self.next_tenth:
            self.next_tenth = tenth + 1
            self._line()

    def set_postfix_str(self, text):
        self.postfix = text

    def close(self):
        if not self.closed and self.done and self.next_tenth <= 10:
            self._line()
        self.closed = True

    def _line(self):
        share = 100 * self.done // self.total if self.total else 100
        extra = f"; {self.postfix}" if self.postfix else ""
        print(f"rounds: {share}% ({_si(self.done)} of {_si(self.total)}{extra})", file=self.stream, flush=True)


def _si(n) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(int(n))


SCHEDULER_TIMEOUT = 5.0  # seconds to reach a Dask scheduler before giving up


def watch_parent(parent_pid: int) -> None:
    """Pool-worker initializer: exit when the parent dies, so a killed run leaves no orphans.

    On Linux the kernel sends the worker SIGKILL the moment its parent dies (prctl
    PR_SET_PDEATHSIG), even in the middle of a compiled kernel. As a portable fallback a
    daemon thread polls os.getppid() every second (it runs between kernel calls only: a
    kernel holds the GIL). Ctrl-C reaches the whole process group; workers ignore SIGINT
    and leave stopping to the parent, which kills them.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the parent died before the watch was set
        os._exit(1)

    def poll():
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=poll, name="parent-watch", daemon=True).start()


class WorkerDied(RuntimeError):
    """A worker process ended while running trials (killed by the system, out of memory, a
    crash in compiled code): the trials that finished are kept; re-running resumes."""


def _died(processes) -> WorkerDied:
    """The WorkerDied of a broken pool, naming how its first dead worker ended (processes: the
    pool's {pid: Process}; the pool sends SIGTERM to the others once one has died)."""
    deadline = time.monotonic() + 2.0  # the pool's own thread may be reaping them: their codes come soon
    while any(p.exitcode is None for p in processes.values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    codes = [p.exitcode for p in processes.values() if p.exitcode not in (None, 0, -signal.SIGTERM)]
    how = "ended abruptly"
    if codes and codes[0] < 0:
        sig = signal.Signals(-codes[0])
        how = f"was killed by {sig.name}"
        if sig == signal.SIGKILL:
            how += " (the system may have run out of memory)"
    elif codes:
        how = f"exited with status {codes[0]}"
    return WorkerDied(f"a worker process {how} while running trials")


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill a pool's workers now: a trial in flight may run for minutes, and the pool's own
    shutdown (also the one at interpreter exit) would wait for it."""
    for p in list((pool._processes or {}).values()):  # Python 3.14 has pool.kill_workers()
        p.kill()


def run_local(todo, workers, keep, fn) -> None:
    """Run fn(trial) for every trial on a local process pool (spawned: no fork after threads;
    fn a module-level function the workers can import, such as runner.run_trial), calling
    keep(row) here as each one finishes.

    On any exception (Ctrl-C, SIGTERM turned into KeyboardInterrupt by the command line, a
    failed trial) no more trials are handed out, the workers are killed at once and the
    trials that had already finished are still kept; then the exception propagates.
    """
    import multiprocessing as mp

    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=mp.get_context("spawn"), initializer=watch_parent, initargs=(os.getpid(),)
    )
    it = iter(todo)
    pending = set()
    try:
        for t in islice(it, 2 * workers):  # at most 2 trials per worker queued: little to cancel
            pending.add(pool.submit(fn, t))
        processes = dict(pool._processes or {})  # the workers, for their exit codes should one die
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    row = fut.result()
                except BrokenProcessPool:
                    raise _died({**processes, **(pool._processes or {})}) from None
                keep(row)
                pending.discard(fut)
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(fn, nxt))
    except BaseException:
        kill_workers(pool)
        for fut in pending:  # finished before the stop (or while keep() was interrupted)
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                keep(fut.result())
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def connect(address: str):
    """A distributed.Client of the scheduler at address; ValueError if none answers within
    SCHEDULER_TIMEOUT seconds (distributed's own default waits 30 s)."""
    from distributed import Client

    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT)
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot reach the Dask scheduler at {address}: {e}") from None


def run_on_dask(todo, client, keep, fn) -> None:
    """Run fn(trial) for every trial on a Dask cluster, calling keep(row) here as each one
    finishes; on any exception the trials not yet finished are cancelled."""
    from distributed import KilledWorker, as_completed

    futures = client.map(fn, todo, pure=False)
    try:
        for fut in as_completed(futures):
            try:
                row = fut.result()
            except KilledWorker as e:
                raise WorkerDied(f"Dask workers died while running trials ({' '.join(str(e).split())})") from None
            keep(row)
    except BaseException:
        client.cancel(futures)
        raise


class TrialPool:
    """One process pool for a whole plan of searches (spawned once: starting workers costs
    seconds), or a Dask client; small horizons run in this process. ``fn`` runs a trial
    (:func:`fastcdl.experiments.runner.run_trial`, or a stand-in)."""

    MIN_T = 2**15

    def __init__(self, workers, fn, client=None):
        self.workers = workers or os.cpu_count() or 1
        self.client = client
        self.fn = fn
        self._pool = None

    def run(self, todo, T, keep):
        from concurrent.futures import FIRST_COMPLETED, wait

        if self.client is not None and todo:
            run_on_dask(todo, self.client, keep, self.fn)
            return
        if T < self.MIN_T or self.workers == 1 or len(todo) == 1:
            for t in todo:
                keep(self.fn(t))
            return
        if self._pool is None:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=mp.get_context("spawn"),
                initializer=watch_parent,
                initargs=(os.getpid(),),
            )
        pending = {self._pool.submit(self.fn, t) for t in todo}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    keep(fut.result())
        except BaseException:
            self.close(kill=True)
            raise

    def close(self, kill=False):
        if self._pool is not None:
            if kill:
                kill_workers(self._pool)
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
