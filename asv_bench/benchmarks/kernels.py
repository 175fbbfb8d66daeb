"""fastcdl.kernels from a user's njit loop, next to the internal kernel and the Python API.

KernelsInNjitSuite times fastcdl.kernels.cdl_of_table called from an njit loop against the internal
envelope kernel (fastcdl._compiled.envelope.cdl_kernel) called from the same kind of loop with
the breakpoints and argsorts of fastcdl._compiled.envelope.curve_inputs (so without the sort the
public kernel does itself); ``track_ratio`` records public / internal (target: <= 1.2 at m =
100). PythonOverheadSuite times the Python API on small inputs next to the compiled path a
user writes with the public kernels. The loops, tables and arguments below are the definitions
scripts/bench_kernels.py times too (results/benchmarks/kernels.md). setup() compiles everything
first.
"""

import time

import numpy as np
from numba import njit

import fastcdl as fc
from ._compat import optional, require

K = optional("fastcdl.kernels")
env = optional("fastcdl._compiled.envelope")

# the table's CDL as fastcdl.kernels names it: cdl_of_table, and cdl at the commits before the
# rename (asv runs this suite against them too)
CDL = (getattr(K, "cdl_of_table", None) or getattr(K, "cdl")) if K else None  # None: an older fastcdl

REPS = 1000


@njit
def public_loop(q, n, s, reps):
    acc = 0.0
    for _ in range(reps):
        acc += CDL(q, n, s)
    return acc


@njit
def internal_loop(q, qhat, n, s, coef, b, ox, oq, T, reps):
    acc = 0.0
    for _ in range(reps):
        acc += env.cdl_kernel(q, qhat, n, s, coef, b, ox, oq, T)[0]
    return acc


@njit
def stream_then_cdl(p, y):
    tab = K.table_new(128)
    for t in range(p.shape[0]):
        tab = K.table_add(tab, p[t], y[t])
    q, n, s = K.table_view(tab)
    return CDL(q, n, s)


def table(m, seed=0):
    """The table of metrics.py's suites: q sorted uniform, n in 1..99, s ~ Bin(n, q)."""
    rng = np.random.default_rng(seed)
    q = np.sort(rng.random(m))
    n = rng.integers(1, 100, m)
    s = rng.binomial(n, q)
    return q, n, s


def shuffled_table(m, seed=0):
    """Frequencies independent of the predictions: their sort has no order to exploit."""
    rng = np.random.default_rng(seed)
    q = np.sort(rng.random(m))
    n = rng.integers(1, 100, m)
    s = rng.binomial(n, rng.random(m))
    return q, n, s


def internal_args(q, n, s):
    """What fastcdl.cdl hands cdl_kernel: the float table, numpy's sorts, read-only views."""
    qf, nf, sf = fc.BucketStats(q, n, s, q * n).table()
    qhat, coef, b, ox, oq, T = env.curve_inputs(qf, nf, sf, np.empty(0))
    return qf, qhat, nf, sf, coef, b, ox, oq, T


class KernelsInNjitSuite:
    """REPS calls of cdl on an m-bucket table from inside one njit loop."""

    params = [100, 10**4]
    param_names = ["m"]

    def setup(self, m):
        require(K, env)
        self.q, self.n, self.s = table(m)
        self.iargs = internal_args(self.q, self.n, self.s)
        self.reps = REPS if m <= 1000 else 10
        public_loop(self.q, self.n, self.s, 1)
        internal_loop(*self.iargs, 1)

    def time_public_cdl_in_njit_loop(self, m):
        public_loop(self.q, self.n, self.s, self.reps)

    def time_internal_cdl_kernel_in_njit_loop(self, m):
        internal_loop(*self.iargs, self.reps)

    def track_ratio(self, m):
        """public / internal, the median of 21 loops timed back to back."""
        ratios = []
        for _ in range(21):
            t0 = time.perf_counter()
            public_loop(self.q, self.n, self.s, self.reps)
            t1 = time.perf_counter()
            internal_loop(*self.iargs, self.reps)
            t2 = time.perf_counter()
            ratios.append((t1 - t0) / (t2 - t1))
        return float(np.median(ratios))

    track_ratio.unit = "public / internal"


class PythonOverheadSuite:
    """The Python API on T rounds (predictions on the grid k/100) and the compiled path."""

    params = [10**2, 10**3, 10**4, 10**5]
    param_names = ["T"]

    def setup(self, T):
        require(K, env)
        rng = np.random.default_rng(1)
        self.p = rng.integers(0, 101, T) / 100
        self.y = (rng.random(T) < self.p).astype(np.int64)
        self.stats = fc.bucket_stats(self.y, self.p)
        self.table = (self.stats.values, self.stats.counts, self.stats.positives)
        fc.cdl(self.y, self.p)
        CDL(*self.table)
        stream_then_cdl(self.p, self.y)

    def time_fastcdl_cdl_rounds(self, T):
        fc.cdl(self.y, self.p)

    def time_fastcdl_bucket_stats(self, T):
        fc.bucket_stats(self.y, self.p)

    def time_fastcdl_cdl_table(self, T):
        fc.cdl(self.stats)

    def time_kernels_cdl_from_python(self, T):
        CDL(*self.table)

    def time_compiled_stream_then_cdl(self, T):
        stream_then_cdl(self.p, self.y)
