"""Compile what a command needs later in a helper process, while the command works.

A first ``fastcdl metrics`` on an empty numba cache spends most of its time compiling, one
kernel after another, on one core. On a machine of two cores or more, :func:`start` runs a
helper process that takes the report's steps from the other end (the last ones first) and
compiles them into the shared cache; the command takes them from the front. A kernel the two
need at once is compiled by one and loaded by the other (the compile lock of
fastcdl._compiled._jit), so they meet in the middle and nothing is compiled twice. The helper
computes nothing the command uses: only the machine code it leaves in the cache is shared, and
the command's output is the same bits with or without it.

The helper starts only when it can help: numba's on-disk cache is on (``FASTCDL_CACHE``), the
cache holds no copy of the report's kernels yet (a warm cache starts nothing), two CPUs or more
are available to this process, and ``FASTCDL_PREFETCH`` is not ``0``. It is stopped when the
command exits, finished or not (what it compiled stays in the cache). Only the command line
starts it: a library call never starts a process.

Cost: about a second of the second core to import fastcdl, then the compilations; measured in
results/benchmarks/startup.md (the rows of ``fastcdl metrics`` on an empty cache).

>>> [name for name, _ in report_steps()][-3:]
['subsample tables (intervals)', 'binned ECE of the report', 'diagnostics']
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import warnings

import numpy as np

# the helper's table: one-round buckets (continuous scores), as many as take every path a report
# of 10^5 scores takes (smCE's two programmes side by side from 2^15 buckets, the sorts' large
# paths from 2^14 and 2^16 rounds)
ROUNDS = 1 << 16


def report_steps(rounds: int = ROUNDS) -> list:
    """[(name, step)]: the steps of a report (fastcdl.summary) in the order it takes them, each a
    call on a table of ``rounds`` one-round buckets built without a kernel (the command builds
    its own table first; the helper leaves those kernels to it)."""
    from fastcdl.bucket_table import BucketStats
    from fastcdl.measures import MEASURES

    rng = np.random.default_rng(0)
    q = np.sort(rng.random(rounds))
    y = (rng.random(rounds) < q).astype(np.int64)
    st = BucketStats._owned(q, np.ones(rounds, dtype=np.int64), y, q.copy())
    steps = []
    for key, m in MEASURES.items():
        if m.applies(st):
            steps.append((key, lambda m=m: (m(st), m.extras_of(st) if m.extras else None)))

    def subsamples():
        from fastcdl.uncertainty import intervals

        intervals(["cutoff_ce"], st, n_sub=100, seed=0)

    def binned():
        from fastcdl.summary import binned_ece_of

        binned_ece_of(st)

    def diagnostics():
        from fastcdl.diagnostics import diagnose

        diagnose(st)

    steps += [("subsample tables (intervals)", subsamples), ("binned ECE of the report", binned)]
    steps.append(("diagnostics", diagnostics))
    return steps


PLANS = {"report": report_steps}


# Steps the helper takes first, before the others last first: the largest compilation of the
# report's second half (smCE's programme, about a third of a first report's compile time;
# results/benchmarks/compile_profile.md). Taken from the end, it would be reached too late: the
# command, working from the front, would wait for it.
FIRST = ("smce",)


def helper_order(steps: list) -> list:
    """The helper's order of ``steps`` (the report's order): :data:`FIRST`, then the others
    last first."""
    first = [s for s in steps if s[0] in FIRST]
    return first + [s for s in reversed(steps) if s[0] not in FIRST]


def run(plan: str, rounds: int = ROUNDS) -> None:
    """Take the steps of ``plan`` (on a table of ``rounds`` one-round buckets) in
    :func:`helper_order`: the helper's side. Their warnings are not shown (the tiny sample's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, step in helper_order(PLANS[plan](rounds)):
            step()


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def cold() -> bool:
    """True when numba's cache holds no copy of the report's largest kernel
    (:func:`fastcdl.summary.cache_cold`)."""
    from fastcdl.summary import cache_cold

    return cache_cold()


def wanted() -> bool:
    """Whether :func:`start` would start a helper here (see the module's text)."""
    from fastcdl._compiled._jit import cache_enabled

    if os.environ.get("FASTCDL_PREFETCH", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return cache_enabled() and _cpus() >= 2 and cold()


def start(plan: str = "report"):
    """Start the helper that compiles ``plan``'s steps from the last (a Popen), or None when it
    would not help (:func:`wanted`). It is stopped when this process exits."""
    if plan not in PLANS:
        raise ValueError(f"unknown prefetch plan {plan!r}; choose from {', '.join(PLANS)}")
    if not wanted():
        return None
    proc = subprocess.Popen(
        [sys.executable, "-c", f"from fastcdl.prefetch import run; run({plan!r})"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(stop, proc)
    return proc


def stop(proc) -> None:
    """Stop the helper if it still runs (what it compiled stays in the cache)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
