"""Shared hypothesis strategies for bucket tables and raw rounds.

The strategies aim at the places where exact answers differ from approximate ones:
predictions at exactly 0, 1/2 and 1; a prediction equal to another bucket's empirical
frequency qhat_j (a jump of f sitting on a kink: q on the grid k/8 with n <= 8 makes
s/n land on the grid); a single round; one bucket; calibrated buckets (q_i = qhat_i).
Tables stay at <= 12 buckets so the linear-programming references stay fast.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

settings.register_profile(
    "fastcdl",
    deadline=None,  # numba compiles on first call; a deadline would flag compilation, not bugs
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
    # CI runs a fixed sequence of examples (reproducible verdicts); local runs keep exploring
    derandomize=os.environ.get("CI") == "true",
)
settings.load_profile("fastcdl")

# The command line's compile helper (fastcdl.prefetch) would start a process beside the two
# pytest workers whenever a test runs `fastcdl metrics` before the kernels are cached: the suite
# turns it off (subprocesses inherit this); tests/test_prefetch.py turns it on where it tests it.
os.environ.setdefault("FASTCDL_PREFETCH", "0")

GRID8 = [k / 8 for k in range(9)]
SPECIAL = [0.0, 0.5, 1.0]
MAX_LP_BUCKETS = 12

unit_floats = st.floats(0.0, 1.0, allow_subnormal=False)


def _table(q, n, s):
    return (
        np.asarray(q, dtype=np.float64),
        np.asarray(n),
        np.asarray(s),
    )


@st.composite
def grid_tables(draw, max_buckets=9):
    """q on {k/8}, n in 1..8: many q_i equal some qhat_j, and some buckets are calibrated."""
    ks = draw(st.lists(st.integers(0, 8), min_size=1, max_size=min(max_buckets, 9), unique=True))
    q, n, s = [], [], []
    for k in sorted(ks):
        ni = draw(st.integers(1, 8))
        if draw(st.booleans()) and (k * ni) % 8 == 0:
            si = k * ni // 8  # calibrated bucket
        else:
            si = draw(st.integers(0, ni))
        q.append(k / 8)
        n.append(ni)
        s.append(si)
    return _table(q, n, s)


@st.composite
def float_tables(draw, max_buckets=MAX_LP_BUCKETS, weighted=False):
    """Distinct q in [0,1] mixing random floats, 0, 1/2, 1 and other buckets' qhat_j."""
    m = draw(st.integers(1, max_buckets))
    if weighted:
        n = draw(st.lists(st.floats(0.01, 10.0, allow_subnormal=False), min_size=m, max_size=m))
        frac = st.one_of(st.sampled_from([0.0, 0.5, 1.0]), unit_floats)
        s = [min(ni, draw(frac) * ni) for ni in n]
    else:
        n = draw(st.lists(st.integers(1, 20), min_size=m, max_size=m))
        s = [draw(st.integers(0, ni)) for ni in n]
    qhat = [si / ni for si, ni in zip(s, n)]
    choice = st.one_of(
        st.sampled_from(SPECIAL),
        st.sampled_from(qhat),  # ties q_i == qhat_j (including calibrated q_i == qhat_i)
        unit_floats,
    )
    q = draw(st.lists(choice, min_size=m, max_size=m, unique=True))
    return _table(q, n, s)


@st.composite
def calibrated_tables(draw, max_buckets=MAX_LP_BUCKETS):
    """q_i = qhat_i for every bucket (every metric is 0; UCal is 0 too only by accident)."""
    pairs = draw(
        st.lists(
            st.integers(1, 12).flatmap(lambda ni: st.tuples(st.just(ni), st.integers(0, ni))),
            min_size=1,
            max_size=max_buckets,
            unique_by=lambda t: t[1] / t[0],
        )
    )
    n = [ni for ni, _ in pairs]
    s = [si for _, si in pairs]
    return _table([si / ni for ni, si in pairs], n, s)


def tables(max_buckets=MAX_LP_BUCKETS):
    """Any of the table strategies (unweighted)."""
    return st.one_of(
        grid_tables(min(max_buckets, 9)),
        float_tables(max_buckets),
        calibrated_tables(max_buckets),
    )


@st.composite
def rounds(draw, max_size=40, pool=None):
    """Raw (y, p) with p drawn from a small pool so buckets repeat; sometimes T = 1."""
    T = draw(st.integers(1, max_size))
    if pool is None:
        pool = draw(st.lists(st.one_of(st.sampled_from(GRID8), unit_floats), min_size=1, max_size=8))
    p = draw(st.lists(st.sampled_from(pool), min_size=T, max_size=T))
    y = draw(st.lists(st.integers(0, 1), min_size=T, max_size=T))
    return np.array(y, dtype=np.int64), np.array(p, dtype=np.float64)


@st.composite
def binned_rounds(draw, max_size=60):
    """(y, p, m) with many predictions exactly on the float edges i/m, and at 0 and 1."""
    m = draw(st.integers(1, 12))
    T = draw(st.integers(1, max_size))
    on_edge = st.integers(0, m).map(lambda i: i / m)
    p = draw(st.lists(st.one_of(on_edge, st.sampled_from(SPECIAL), unit_floats), min_size=T, max_size=T))
    y = draw(st.lists(st.integers(0, 1), min_size=T, max_size=T))
    return np.array(y, dtype=np.int64), np.array(p, dtype=np.float64), m


@st.composite
def edges_arrays(draw):
    """Strictly increasing edges from 0 to 1 (some interior edges on a grid, some random)."""
    interior = draw(
        st.lists(
            st.one_of(st.sampled_from(GRID8[1:-1]), st.floats(0.0, 1.0, exclude_min=True, exclude_max=True)),
            max_size=8,
            unique=True,
        )
    )
    return np.array([0.0] + sorted(interior) + [1.0])


@st.composite
def payoffs(draw, max_actions=5, grid=False):
    """Payoff matrices (n_actions, 2) in [0, 1]; grid=True puts entries on {k/8} so that
    kinks (indifference points) land exactly on grid predictions and frequencies."""
    a = draw(st.integers(1, max_actions))
    entry = st.sampled_from(GRID8) if grid else st.one_of(st.sampled_from([0.0, 1.0]), unit_floats)
    rows = draw(st.lists(st.tuples(entry, entry), min_size=a, max_size=a))
    return np.array(rows, dtype=np.float64)


# -- the tests `make test` leaves to `make test-slow` ------------------------------------------
# pytest's `slow` marker (pyproject.toml): `make test` runs `-m "not slow"`, `make test-slow` (and so
# `make test-all` and CI) runs `-m slow`. Besides the tests marked at their definition, the ones
# listed in tests/slow_tests.txt (one node id a line, below tests/) are marked here: every test that
# took 3 s or more in the measured run that file names (each file alone, after `fastcdl warmup`),
# except where it was the only test of its kind. Every line must name a collected test, so a renamed
# test does not silently join the fast set.
SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def _slow_ids() -> set[str]:
    lines = SLOW_TESTS.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config, items):
    slow = _slow_ids()
    seen = set()
    for item in items:
        nodeid = item.nodeid.removeprefix("tests/")
        if nodeid in slow:
            item.add_marker(pytest.mark.slow)
            seen.add(nodeid)
    # a listed test whose file was collected but which is no longer there: renamed or removed
    files = {item.nodeid.removeprefix("tests/").split("::")[0] for item in items}
    missing = sorted(n for n in slow - seen if n.split("::")[0] in files)
    if missing and not any("::" in str(a) for a in config.args):  # not when single tests were asked for
        raise pytest.UsageError(f"{SLOW_TESTS.name} names tests that were not collected: {', '.join(missing[:5])}")


# -- what a test needs of the host ------------------------------------------------------------
# Kept here, with the reason, so that a test skipped on some machine says why and checks
# everything it can on every other.
def host_cpu_features() -> set[str]:
    from llvmlite import binding

    return {f[1:] for f in binding.get_host_cpu_features().flatten().split(",") if f.startswith("+")}


def _glibc_at_least(major: int, minor: int) -> bool:
    import platform

    lib, version = platform.libc_ver()
    if lib != "glibc":
        return False
    parts = tuple(int(x) for x in version.split(".")[:2])
    return parts >= (major, minor)


def numba_threads() -> int:
    import numba

    return numba.config.NUMBA_NUM_THREADS


# The committed trials were computed on x86-64 with glibc >= 2.28, whose exp, log and sin pick
# their FMA versions on a CPU with FMA; another libm can round a rare input differently in the
# last bit and so move a discrete choice of a trial (results/benchmarks/oracle.md: one changed
# rounding of exp moved 5 of 4048 trials).
SAME_LIBM_AS_THE_STORES = (
    _glibc_at_least(2, 28) and "fma" in host_cpu_features() and __import__("platform").machine() == "x86_64"
)


# -- compile log (opt-in) ------------------------------------------------------------------
# FASTCDL_COMPILE_LOG=path appends one JSON line per numba compilation (the kernel, its argument
# types, self and total seconds, the test that caused it, the worker): what a run of the suite
# compiles and where (scripts/suite_compiles.py sums it). Off by default: nothing is registered.


def _install_compile_log(path):
    import json
    import time

    import numba.core.event as ev

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    stack = []
    state = {"test": "(collection)"}

    class Log(ev.Listener):
        def on_start(self, event):
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, event):
            start, inner = stack.pop()
            total = time.perf_counter() - start
            if stack:
                stack[-1][1] += total
            py = getattr(event.data["dispatcher"], "py_func", None)
            name = f"{py.__module__}.{py.__qualname__}" if py is not None else "?"
            line = {
                "kernel": name,
                "args": str(event.data["args"]),
                "self": total - inner,
                "total": total,
                "depth": len(stack),
                "test": state["test"],
                "worker": worker,
            }
            with open(path, "a") as f:
                f.write(json.dumps(line) + "\n")

    ev.register("numba:compile", Log())
    return state


_COMPILE_LOG = os.environ.get("FASTCDL_COMPILE_LOG")
_compile_state = _install_compile_log(_COMPILE_LOG) if _COMPILE_LOG else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if _compile_state is not None:  # setup (module fixtures), call and teardown of this test
        _compile_state["test"] = item.nodeid
