"""Compile every kernel once, so that later processes load machine code from the cache.

A fresh install, a CI job, a container image or a Dask worker on a new host otherwise
pays numba's compilation on its first calls (seconds per entry point). ``fastcdl
warmup`` (or :func:`warmup`) calls each public entry point on tiny inputs, with the
argument types the library passes in practice, and reports what it compiled and how
long it took. With a warm cache it takes well under a second per step.

>>> steps = warmup(groups=("metrics",))
>>> steps[0].name
'exact table and its measures (cdl, vcdl, ece, k2, ucal, ...)'
"""

from __future__ import annotations

import fcntl
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np

GROUPS = ("metrics", "binning", "online")


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float


def _metrics():
    import fastcdl as fc

    y = np.array([0, 1, 1, 0, 1], dtype=np.uint8)
    p = np.array([0.1, 0.5, 0.5, 0.9, 0.25])
    w = np.array([1.0, 2.0, 0.5, 1.0, 1.0])

    def exact():
        from fastcdl.measures import exact_measures

        st = fc.bucket_stats(y, p)
        for m in exact_measures():  # every exact measure of the registry (fastcdl.measures)
            m(st)
        from fastcdl._compiled.sort import sort_keys_into

        sort_keys_into(
            np.zeros(2, dtype=np.uint64), np.zeros(2, dtype=np.uint64)
        )  # what sorts the exact table of 2^14 rounds or more
        from fastcdl._compiled._jit import readonly
        from fastcdl._compiled.sort import argsort_stable

        argsort_stable(
            readonly(np.zeros(2))
        )  # the curve's argsorts from 2^12 buckets (typed read-only for every caller)

    def weighted():
        st = fc.bucket_stats(y, p, sample_weight=w)
        for f in (fc.cdl, fc.vcdl, fc.ece, fc.k2, fc.ucal):
            f(st)

    def tasks():
        u = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
        fc.cfdl(y, p, payoff=u)
        fc.cfdl(y, p, kink=0.5)
        fc.swap_regret(y, p, payoff=u)
        fc.swap_report(y, p, payoff=u)
        fc.decision_loss_curve(y, p)
        # tasks over k outcomes, for float64 and float32 (softmax) rows
        P = np.array([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
        for rows in (P, P.astype(np.float32)):
            fc.swap_regret(y, rows, payoff=np.eye(3))

    def outcome_dtypes():
        # checking y reads it in its own dtype; these are the ones arrays and files bring
        from fastcdl._compiled.buckets import outcome_keys_split

        for dtype in (np.int64, np.int32, np.float64, np.float32, np.bool_, np.uint8):
            fc.bucket_stats(y.astype(dtype), p)
            # what writes the keys of 2^16 rounds or more in two parts (sorted side by side)
            outcome_keys_split(y.astype(dtype), p.view(np.uint64), np.uint64(1), np.empty(p.shape[0], dtype=np.uint64))

    def sample_estimators():
        from fastcdl import sample
        from fastcdl.measures import sample_estimators

        st = fc.bucket_stats(y, p)
        for m in sample_estimators():  # every sample estimator of the registry (fastcdl.measures)
            m(st)
        sample.cdl_monotone_report(y, p)
        from fastcdl._compiled import estimators as _k

        # smCE's steps when its two programmes run side by side (from SMCE_THREADS_FROM buckets)
        from fastcdl._compiled._jit import readonly

        q, r, checkpoints, h = np.array([0.1, 0.5, 0.9]), np.array([-0.1, 0.5, 0.1]), np.array([0.0, 0.5]), np.empty(4)
        q = readonly(q)  # as fastcdl.sample passes it
        R, sign, J, S, out = _k.smce_setup(q, checkpoints)
        for side in range(2):
            _k.smce_side(q, r, sign, J, side, checkpoints, h, S, out)
        _k.smce_value(r, 3.0, R, sign, J, h, S, out)

    return [
        ("exact table and its measures (cdl, vcdl, ece, k2, ucal, ...)", exact),
        ("sample estimators (monotone CDL, cutoff CE, smCE, ATB, ...)", sample_estimators),
        ("outcomes as int64, int32, float64, float32, bool", outcome_dtypes),
        ("certificate (cdl_report)", lambda: fc.cdl_report(y, p)),
        ("weighted table and metrics", weighted),
        ("decision tasks (cfdl, swap regret and report, curve, k outcomes)", tasks),
    ]


def _binning():
    import fastcdl as fc
    from fastcdl._compiled.buckets import CHUNK

    rng = np.random.default_rng(0)
    small = (rng.random(64) < 0.5).astype(np.uint8), rng.random(64)
    # one round past a chunk: the parallel kernel, which small inputs never compile
    big = np.zeros(CHUNK + 1, dtype=np.uint8), np.full(CHUNK + 1, 0.5)

    def binned():
        for f in (fc.cdl, fc.ece):
            f(*small, bins=15)
        fc.bucket_stats(*small, bins=np.array([0.0, 0.3, 1.0]))
        fc.bucket_stats(*small, bins=15, sample_weight=np.ones(64))
        fc.bucket_stats(*small, bins=15, strategy="quantile")

    def parallel():
        fc.bucket_stats(*big, bins=15)
        fc.bucket_stats(*big, bins=15, sample_weight=np.ones(CHUNK + 1))
        fc.bucket_stats(*big, bins=15, strategy="quantile")
        # the quantile edges' grid kernels on one thread (n_jobs=1, or off the main thread under workqueue)
        fc.bucket_stats(*big, bins=15, strategy="quantile", n_jobs=1)

    return [
        ("parallel binning (T > 2^20)", parallel),
        ("binned tables (equal width, edges, quantile, weighted)", binned),
    ]


def _online():
    from fastcdl._validate import ValidationError
    from fastcdl.online import make_adversary, make_forecaster, minimax, registry, simulate

    def loops(f, spec):
        for a, aspec in registry.adversaries().items():
            if spec.needs_adversary and not aspec.stochastic:
                continue
            if spec.k_point and not aspec.k_points:  # refused (plugins.check_pairing); no built-in is now
                continue
            if spec.needs_mean and aspec.true_mean is None:  # refused as well: no mean to hand over
                continue
            if spec.needs_external and aspec.external is None:  # refused: no external forecast
                continue
            try:
                simulate(f, a, horizon=64, seed=0)
            except ValidationError as e:
                # a forecaster that reads its adversary refuses the ones it does not know (truthful
                # plays five stochastic built-ins, not informed or spbisect): nothing to compile
                if not (spec.needs_adversary and e.argument == "adversary"):
                    raise

    def adversary(spec, k_points):
        spec.compiled(k_points)
        if not k_points:
            spec.compiled_mean()
            spec.compiled_external()

    def per_round(f, spec):
        extra = {"adversary": ("bernoulli", {})} if spec.needs_adversary else {}
        fc_ = make_forecaster(f, horizon=16, seed=0, **extra)
        # greedy plays two-point and K-point tables (both signatures); a forecaster that needs the
        # round's mean plays a coin, which states it, and one that needs an external forecast the
        # informed environment
        side = spec.side_input
        adv = make_adversary({"mean": "bernoulli", "external": "informed"}.get(side, "greedy"), horizon=16, seed=0)
        for _ in range(4):
            if side == "mean":
                d = fc_.forecast(mean=adv.mean())
            elif side == "external":
                d = fc_.forecast(external=adv.external())
            else:
                d = fc_.forecast()
            y = adv.respond(d)
            p = fc_.draw()
            fc_.observe(y)
            adv.observe(p, y)

    # The adversaries first, one step per adversary and table kind: every forecaster's loop takes
    # them as first-class functions, so the processes of a warmup compile them side by side
    # instead of waiting for each other in the first loops. Then one step per forecaster (its
    # loop against every adversary, then its per-round API), so that the steps are of a size to
    # share out.
    adversaries = [
        (f"adversary {a} ({'K-point' if k else 'two-point'} table)", lambda spec=spec, k=k: adversary(spec, k))
        for a, spec in registry.adversaries().items()
        for k in ((False, True) if spec.k_points else (False,))
    ]
    forecasters = registry.forecasters().items()
    return [
        *adversaries,
        *(
            (f"simulate loop of {f} (against every adversary)", lambda f=f, spec=spec: loops(f, spec))
            for f, spec in forecasters
        ),
        *((f"per-round API of {f}", lambda f=f, spec=spec: per_round(f, spec)) for f, spec in forecasters),
        ("minimax solver", lambda: minimax(np.array([[0.2, -0.1], [-0.3, 0.4]]))),
    ]


def _steps(groups):
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        raise ValueError(f"unknown warmup group {unknown[0]!r}; choose from {', '.join(GROUPS)}")
    makers = {"metrics": _metrics, "binning": _binning, "online": _online}
    # the groups with the longest steps first (the parallel binning kernels, the adversaries and
    # loops), so that the processes of a warmup do not end on one long step; each is in its place
    # whatever the order
    return [step for g in ("binning", "online", "metrics") if g in groups for step in makers[g]()]


def _run_step(name, fn) -> Step:
    from fastcdl.exact import SampleSizeWarning

    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the tiny inputs are not samples anyone measures
        warnings.simplefilter("ignore", SampleSizeWarning)
        fn()
    return Step(name, time.perf_counter() - t0)


def _claim(queue) -> int:
    """The next step's index from the counter file ``queue``, taken under an exclusive lock."""
    with open(queue, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        i = int(f.read() or 0)
        f.seek(0)
        f.truncate()
        f.write(str(i + 1))
        return i


def work_queue(groups, queue, report=None) -> list[Step]:
    """Run the steps of ``groups`` whose indices this process claims from the counter file
    ``queue`` (shared with the other processes of a warmup), until none is left."""
    steps = _steps(groups)
    done = []
    while (i := _claim(queue)) < len(steps):
        step = _run_step(*steps[i])
        done.append(step)
        if report is not None:
            report(step)
    return done


def warmup(groups=GROUPS, report=None, jobs=1) -> list[Step]:
    """Compile the kernels of ``groups`` (metrics, binning, online); returns the timed steps.

    ``report(step)`` is called after each step (the CLI prints them). With ``jobs`` > 1 the
    steps are shared out among this process and jobs - 1 fresh ones, which take them from one
    queue; a kernel two of them need at once is compiled by one and loaded by the other
    (fastcdl._compiled._jit). The steps are then returned in the order they ended. Cost:
    seconds per step on an empty cache, milliseconds on a warm one.
    """
    steps = _steps(groups)
    if jobs <= 1:
        done = []
        for name, fn in steps:
            step = _run_step(name, fn)
            done.append(step)
            if report is not None:
                report(step)
        return done
    import json
    import subprocess
    import sys
    import tempfile
    import threading

    with tempfile.TemporaryDirectory(prefix="fastcdl-warmup-") as tmp:
        queue = os.path.join(tmp, "next")
        code = (
            "import json, sys\nfrom fastcdl.warmup import work_queue\n"
            f"work_queue({tuple(groups)!r}, {queue!r}, report=lambda s: print(json.dumps([s.name, s.seconds]), flush=True))"
        )
        helpers = [
            subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(jobs - 1)
        ]
        done, lock = [], threading.Lock()

        def take(step):
            with lock:
                done.append(step)
                if report is not None:
                    report(step)

        def read(proc):
            with proc.stdout:
                for line in proc.stdout:
                    take(Step(*json.loads(line)))

        readers = [threading.Thread(target=read, args=(p,), daemon=True) for p in helpers]
        for r in readers:
            r.start()
        work_queue(groups, queue, report=take)
        failed = [p.wait() for p in helpers]
        for r in readers:
            r.join()
        if any(failed):
            raise RuntimeError(f"warmup: a helper process failed (exit status {max(failed)})")
    return done
